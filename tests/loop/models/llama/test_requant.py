"""The 0.5B runs as a local Q4_0 build of its shipped Q4_K_M file: built once, reused, redone when the source
changes, and skipped with VOICELOOP_LLM_REQUANT=0 or under the -q4_k_m name."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from loop.models.llama import weights
from loop.models.llama.requant import requantized


def _shipped() -> Path:
    try:
        return weights.ensure_gguf()
    except (weights.WeightsMissing, weights.WeightsCorrupt) as exc:
        pytest.skip(f"Qwen GGUF not installed ({exc})")


def _file_type(path: Path) -> int:
    import loop.models.llama.model  # noqa: F401  (sets OMP_WAIT_POLICY before llama.cpp loads)

    llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed")
    return int(llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False).metadata["general.file_type"])


def test_the_default_runs_the_q4_0_build_and_the_q4_k_m_name_the_shipped_file() -> None:
    shipped = _shipped()
    built = weights.runnable_gguf()
    assert built != shipped and built.name.endswith(".q4_0.gguf")
    assert _file_type(built) == 2 and _file_type(shipped) == 15  # llama_ftype Q4_0 / Q4_K_M
    assert weights.runnable_gguf("qwen2.5-coder-0.5b-instruct-q4_k_m") == shipped


def test_a_build_is_reused_redone_when_its_source_changes_and_can_be_turned_off(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "m.gguf"
    shutil.copyfile(weights.runnable_gguf(), source)  # a Q4_0 file: requantising it again is quick
    first = requantized(source, "q4_0")
    made = first.stat().st_mtime_ns
    assert requantized(source, "q4_0") == first and first.stat().st_mtime_ns == made  # reused
    os.utime(source)  # the source changed (a reinstall): built again
    assert requantized(source, "q4_0") == first and first.stat().st_mtime_ns != made
    monkeypatch.setenv("VOICELOOP_LLM_REQUANT", "0")
    assert requantized(source, "q4_0") == source
    assert requantized(source, None) == source
