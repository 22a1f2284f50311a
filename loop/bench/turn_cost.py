"""`voiceloop bench loop`: the loop's own cost per turn, with the model and the tools taking no time.

Each run is `turns` turns against a zero-latency ScriptedModel: every turn but the last proposes one no-op read
with distinct arguments (so repetition detection never fires), the last answers. A listener stamps
`time.perf_counter()` at every `turn_admitted` and at `run_finished`; the gaps are the per-turn samples, so
they include budgeting, prompt assembly, vetting, acting, observing and (optionally) the SQLite journal.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from loop.agent import Agent
from loop.bench.stats import percentile
from loop.config import Budget, LoopConfig
from loop.events import EventKind
from loop.models.scripted import ScriptedModel
from loop.store.journal import Event
from loop.tools import Tool
from loop.types import ToolCall

TARGET_MS = {"no_journal": 0.5, "journal": 2.0}
_ARGS = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}


async def _noop_read(key: str) -> str:
    return "ok"


def _script(turns: int) -> list[Any]:
    return [ToolCall("noop_read", {"key": f"k{i}"}) for i in range(turns - 1)] + ["done"]


def _config(turns: int) -> LoopConfig:
    budget = Budget.of(turns=turns + 1, tokens=1e12, wall_clock_s=1e9, cost_usd=1e9, tool_calls=turns + 1)
    return LoopConfig.profile("task", budget=budget, context_tokens=10_000_000)


class _Stamps:
    """Listener: perf_counter at each turn boundary."""

    def __init__(self) -> None:
        self.marks: list[float] = []

    def __call__(self, event: Event) -> None:
        if event.kind in (EventKind.TURN_ADMITTED, EventKind.RUN_FINISHED):
            self.marks.append(time.perf_counter())


async def _one_run(turns: int, journal_path: str | None) -> tuple[list[float], float]:
    """Per-turn seconds and whole-run seconds (agent construction excluded) of one run."""
    stamps = _Stamps()
    agent = Agent(ScriptedModel(_script(turns)), [Tool(_noop_read, name="noop_read", args=_ARGS)],
                  config=_config(turns), journal_path=journal_path, listeners=[stamps])
    started = time.perf_counter()
    result = await agent.run("benchmark")
    took = time.perf_counter() - started
    if agent.journal is not None:
        agent.journal.close()
    if result.outcome.value != "COMPLETED" or len(stamps.marks) != turns + 1:
        raise RuntimeError(f"benchmark run ended {result.outcome.value}: {result.reason}")
    return [b - a for a, b in zip(stamps.marks, stamps.marks[1:], strict=False)], took


def _progress(label: str, done: int, total: int) -> None:
    """A self-overwriting counter on a terminal; one line per mode when stderr is a file or pipe."""
    if sys.stderr.isatty():
        sys.stderr.write(f"\rbench loop [{label}] {done}/{total}" + ("\n" if done == total else ""))
    elif done == total:
        sys.stderr.write(f"bench loop [{label}] {done}/{total} runs\n")
    sys.stderr.flush()


async def _measure(turns: int, repeats: int, warmup: int, journal_path: str | None, label: str,
                   progress: Callable[[str, int, int], None] | None) -> dict[str, Any]:
    for _ in range(warmup):
        await _one_run(turns, journal_path)
    per_turn: list[float] = []
    per_run: list[float] = []
    for i in range(repeats):
        samples, took = await _one_run(turns, journal_path)
        per_turn += samples
        per_run.append(took)
        if progress is not None:
            progress(label, i + 1, repeats)
    ms = [s * 1000 for s in per_turn]
    return {"samples": len(ms), "median_ms": _r(percentile(ms, 50)), "p95_ms": _r(percentile(ms, 95)),
            "max_ms": _r(max(ms, default=None)), "run_median_ms": _r(percentile([s * 1000 for s in per_run], 50)),
            "target_ms": TARGET_MS[label]}


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def bench_loop(turns: int = 20, repeats: int = 30, journal: bool = True, *, warmup: int = 3,
               progress: bool = True) -> dict[str, Any]:
    """Per-turn loop overhead without a journal and, if `journal`, with one in a temporary SQLite file."""
    if turns < 1 or repeats < 1:
        raise ValueError("turns and repeats must be at least 1")
    report = _progress if progress else None
    modes: dict[str, Any] = {"no_journal": asyncio.run(_measure(turns, repeats, warmup, None, "no_journal", report))}
    if journal:
        with tempfile.TemporaryDirectory(prefix="voiceloop-bench-") as tmp:
            path = str(Path(tmp) / "bench.db")
            modes["journal"] = asyncio.run(_measure(turns, repeats, warmup, path, "journal", report))
    return {"turns": turns, "repeats": repeats, "warmup": warmup, "python": sys.version.split()[0], "modes": modes}


def format_bench(result: dict[str, Any]) -> str:
    lines = [f"bench loop: {result['turns']} turns x {result['repeats']} runs (after {result['warmup']} warm-up runs), "
             f"zero-latency model and no-op tools, Python {result['python']}",
             f"  {'mode':<11} {'turns':>6} {'median ms':>10} {'p95 ms':>8} {'max ms':>8} {'run ms':>8} {'target':>8}"]
    for name, m in result["modes"].items():
        verdict = "ok" if m["median_ms"] is not None and m["median_ms"] < m["target_ms"] else "OVER"
        lines.append(f"  {name:<11} {m['samples']:>6} {m['median_ms']:>10.3f} {m['p95_ms']:>8.3f} {m['max_ms']:>8.3f} "
                     f"{m['run_median_ms']:>8.2f} {'<' + format(m['target_ms'], 'g'):>6} {verdict}")
    return "\n".join(lines)
