"""`voiceloop report runs.db` (or `--db postgresql://...`): what a journal says about how runs end.

Reads only the kinds that start and end runs and prefetches, and model responses — read-only (SQLite opened
`mode=ro`; PostgreSQL only SELECTs), so it can run against a journal live agents still append to. Speculation
(`loop.prefetch`) is no run: its spend is reported on its own, apart from the outcomes.
A run its caller cut off (a barge-in) is counted as cancelled, and a killed run closed on restart (`loop.run.settle`) as
interrupted, apart from the outcomes: neither ended for a reason of its own. Each interrupted run is listed with
its reason (what became of its writes).
Percentiles are nearest-rank: every figure shown is a value some run actually had.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loop.bench.stats import percentile
from loop.config import DIMENSIONS, PROFILES
from loop.events import EventKind
from loop.outcomes import RunOutcome
from loop.repetition import repeated_intent_depth
from loop.store.db import open_journal, redact
from loop.types import ToolCall

UNFINISHED = "unfinished (no terminal outcome)"
CANCELLED = "cancelled by the caller (barge-in)"
INTERRUPTED = "interrupted (settled on restart)"
LOW_HEADROOM = 0.05  # a completion with less than this fraction left of a resource counts as "close"
_KINDS = (EventKind.RUN_STARTED, EventKind.MODEL_RESPONSE, EventKind.RUN_FINISHED, EventKind.RUN_CANCELLED,
          EventKind.RUN_INTERRUPTED, EventKind.PREFETCH_STARTED, EventKind.PREFETCH_FINISHED)


@dataclass
class _Run:
    run_id: str
    profile: str | None = None
    calls: list[ToolCall] = field(default_factory=list)
    finished: dict[str, Any] | None = None  # run_finished payload
    finished_meta: dict[str, Any] = field(default_factory=dict)
    cancelled: bool = False
    interrupted: dict[str, Any] | None = None  # run_interrupted payload
    prefetch: dict[str, Any] | None = None  # speculation, not a run (`loop.prefetch`): its prefetch_finished payload


def _read_runs(journal_url: str | Path) -> list[_Run]:
    journal = open_journal(journal_url, read_only=True)
    try:
        events = journal.events_of_kinds(_KINDS)
        all_ids = journal.run_ids()
    finally:
        journal.close()
    runs = {run_id: _Run(run_id) for run_id in all_ids}  # a run with no run_started still shows up
    for event in events:
        run, kind, data = runs[event.run_id], event.kind, event.payload
        if kind == EventKind.RUN_STARTED:
            run.profile = data.get("profile")
        elif kind in (EventKind.PREFETCH_STARTED, EventKind.PREFETCH_FINISHED):
            run.prefetch = data if kind == EventKind.PREFETCH_FINISHED else run.prefetch or {}
        elif kind == EventKind.MODEL_RESPONSE:
            run.calls += [ToolCall.from_dict(c) for c in data.get("response", {}).get("tool_calls", [])]
        elif kind == EventKind.RUN_CANCELLED:
            run.cancelled = True
        elif kind == EventKind.RUN_INTERRUPTED:
            run.interrupted = data
        else:
            run.finished, run.finished_meta = data, event.meta
    return list(runs.values())


def _speculation(prefetches: list[_Run]) -> dict[str, Any]:
    """What speculation spent: it is paid for like a run, but ends in no outcome of its own."""
    done = [r.prefetch or {} for r in prefetches]
    return {"prefetches": len(done), "reads": sum(len(d.get("reads", [])) for d in done),
            "tokens": sum(int(d.get("tokens", 0)) for d in done),
            "cost_usd": round(sum(float(d.get("cost_usd", 0.0)) for d in done), 6),
            "refused": sum(bool(d.get("refused")) and d.get("refused") != "cancelled" for d in done),
            "cancelled": sum(d.get("refused") == "cancelled" for d in done)}


def _outcomes(runs: list[_Run]) -> dict[str, dict[str, float]]:
    names = [o.value for o in RunOutcome] + [CANCELLED, INTERRUPTED, UNFINISHED]
    counts = dict.fromkeys(names, 0)
    for run in runs:
        key = run.finished.get("outcome", RunOutcome.ERROR.value) if run.finished else (
            CANCELLED if run.cancelled else INTERRUPTED if run.interrupted else UNFINISHED)
        counts[key] = counts.get(key, 0) + 1  # an outcome this version does not know still gets a row
    total = len(runs)
    return {k: {"count": n, "percent": round(100 * n / total, 1) if total else 0.0} for k, n in counts.items()}


def _depths(runs: list[_Run]) -> dict[str, Any]:
    depths = {r.run_id: repeated_intent_depth(r.calls) for r in runs}
    known = [r for r in runs if r.profile in PROFILES]
    reached = [r.run_id for r in known if depths[r.run_id] >= PROFILES[r.profile].repeat_threshold]
    deepest = max(depths, key=lambda k: depths[k], default=None)
    values = list(depths.values())
    return {"runs": len(values), "max": max(values, default=None), "p50": percentile(values, 50),
            "p95": percentile(values, 95), "deepest_run": deepest if values and max(values) else None,
            "threshold_known": len(known), "reached_threshold": len(reached), "reached_runs": reached}


def _headroom(completed: list[_Run]) -> dict[str, dict[str, Any]]:
    out = {}
    for dim in DIMENSIONS:
        values = [float(h[dim]) for r in completed if dim in (h := r.finished_meta.get("headroom", {}))]
        out[dim] = {"runs": len(values), "p50": percentile(values, 50), "p5": percentile(values, 5),
                    "under_5pct": sum(v < LOW_HEADROOM for v in values)}
    return out


def build_report(journal_path: str | Path) -> dict[str, Any]:
    """Outcome histogram, turns to completion, repeated-intent depth and budget headroom of a journal: a SQLite
    file or a `postgresql://` URL (every server's runs, when several share it)."""
    everything = _read_runs(journal_path)
    runs = [r for r in everything if r.prefetch is None]
    completed = [r for r in runs if r.finished and r.finished.get("outcome") == RunOutcome.COMPLETED.value]
    turns = [int(r.finished["turns"]) for r in completed if r.finished and "turns" in r.finished]
    return {
        "journal": redact(journal_path),
        "runs": len(runs),
        "outcomes": _outcomes(runs),
        "unfinished_runs": [r.run_id for r in runs if not r.finished and not r.cancelled and not r.interrupted],
        "interrupted_runs": [{"run_id": r.run_id, "reason": r.interrupted["reason"],
                              "writes": r.interrupted.get("writes", [])} for r in runs if r.interrupted],
        "turns_to_completion": {"runs": len(turns), "p50": percentile(turns, 50), "p95": percentile(turns, 95)},
        "repeated_intent_depth": _depths(runs),
        "headroom_at_completion": _headroom(completed),
        "speculation": _speculation([r for r in everything if r.prefetch is not None]),
    }


def _num(value: float | None, fmt: str = "g") -> str:
    return "-" if value is None else format(value, fmt)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _table(header: Sequence[str], rows: list[Sequence[str]]) -> list[str]:
    """Left-aligned first column, right-aligned numbers, two-space gutters."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  " + "  ".join(cells).rstrip())
    return lines


def format_report(report: dict[str, Any]) -> str:
    """Plain-text tables for a terminal."""
    lines = [f"voiceloop report: {report['journal']} ({report['runs']} runs)", "", "Outcomes"]
    lines += _table(["outcome", "runs", "%"], [[k, str(v["count"]), f"{v['percent']:.1f}"]
                                               for k, v in report["outcomes"].items()])
    if report["unfinished_runs"]:
        shown = report["unfinished_runs"][:10]
        more = len(report["unfinished_runs"]) - len(shown)
        lines.append(f"  unfinished run ids: {', '.join(shown)}" + (f" (+{more} more)" if more else ""))
    if report.get("interrupted_runs"):
        lines += ["", "Interrupted runs (killed, settled on restart)"]
        lines += [f"  {r['run_id']}: {r['reason']}" for r in report["interrupted_runs"][:20]]
        if len(report["interrupted_runs"]) > 20:
            lines.append(f"  (+{len(report['interrupted_runs']) - 20} more)")
    t = report["turns_to_completion"]
    lines += ["", f"Turns to completion (COMPLETED runs: {t['runs']})",
              f"  p50 {_num(t['p50'])}   p95 {_num(t['p95'])}"]
    d = report["repeated_intent_depth"]
    lines += ["", f"Repeated-intent depth (most uses of one call signature in a run; {d['runs']} runs)",
              f"  max {_num(d['max'])}   p50 {_num(d['p50'])}   p95 {_num(d['p95'])}"
              + (f"   deepest: {d['deepest_run']}" if d["deepest_run"] else ""),
              f"  reached the profile's repeat threshold: {d['reached_threshold']} of {d['threshold_known']} runs"
              " with a known profile"]
    h = report["headroom_at_completion"]
    lines += ["", "Budget headroom at completion (fraction of the ceiling left; COMPLETED runs)"]
    lines += _table(["resource", "runs", "p50", "p5", "< 5% left"],
                    [[dim, str(v["runs"]), _pct(v["p50"]), _pct(v["p5"]), str(v["under_5pct"])]
                     for dim, v in h.items()])
    s = report.get("speculation")
    if s and s["prefetches"]:
        lines += ["", "Speculative spend (reads prefetched while callers spoke; not runs, paid for all the same)",
                  f"  prefetches {s['prefetches']}   reads {s['reads']}   tokens {s['tokens']}   "
                  f"cost ${s['cost_usd']:.4f}   refused by the budget {s['refused']}   cancelled {s['cancelled']}"]
    return "\n".join(lines)
