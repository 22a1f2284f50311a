"""The default embedded brain against the spoken-reply eval (voice/demo/reply_eval.yaml): slow (a few minutes on
two cores), so `-m slow`. Needs llama-cpp-python and the Qwen2.5-Coder-0.5B weights; skipped without them."""

from __future__ import annotations

import asyncio

import pytest

from loop.models.llama import weights
from voice.bench.reply_eval import EVAL_SET, evaluate, format_summary, load_cases

pytestmark = pytest.mark.slow


def test_the_default_brain_says_the_right_short_thing() -> None:
    from loop.models.llama.model import LlamaModel  # first: it sets OMP_WAIT_POLICY before llama.cpp's OpenMP loads

    pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed (scripts/install_llama.sh)")
    try:
        weights.ensure_gguf()
    except (weights.WeightsMissing, weights.WeightsCorrupt) as exc:
        pytest.skip(f"Qwen2.5-Coder-0.5B GGUF not installed: {exc}")
    summary = asyncio.run(evaluate(lambda: LlamaModel(state_dir=None), load_cases(EVAL_SET)))
    print(format_summary(summary))
    assert summary["pass_rate"] >= 0.95, format_summary(summary)
    hidden = "the guard hides a broken model: " + format_summary(summary)
    assert summary["guard_fired"] <= 0.05 * summary["turns"], hidden
