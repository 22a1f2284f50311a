"""What `voiceloop bench load` reports: one row per number of concurrent calls (voice-to-voice p50/p95, barge-in
stop p95, calls dropped, turns unanswered, journal runs left open, server CPU and memory), the largest N that
holds the target, a table, a CSV per step and per turn, and an SVG plot of p95 against N (no plotting library
needed). The measuring is in `voice/bench/load.py`."""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from loop.bench.stats import percentile
from voice.bench.load_caller import CallResult

STEP_COLUMNS = ("calls", "turns", "answered", "unanswered", "v2v_p50_ms", "v2v_p95_ms", "v2v_max_ms",
                "barge_ins", "barge_stop_p95_ms", "dropped", "runs", "runs_open", "server_cpu_pct",
                "cpu_pct_per_call", "cpu_s_per_turn", "rss_idle_mb", "rss_peak_mb", "mb_per_call", "stt_per_turn",
                "stt_mean_ms", "mean_batch", "stt_busy_pct", "tts_busy_pct", "turn_skipped_pct", "callers_cpu_pct",
                "wall_s", "holds", "model_calls_per_turn")
TURN_COLUMNS = ("calls", "call", "turn", "utterance", "barge_in", "voice_to_voice_ms", "barge_stop_ms")


@dataclass
class ServerUsage:
    """What the server process used during a step (from /proc)."""

    cpu_s: float = 0.0
    wall_s: float = 0.0
    rss_idle_mb: float = 0.0  # after loading, before the first call
    rss_peak_mb: float = 0.0  # VmHWM at the end of the step
    runs: int = 0  # journal runs of the step
    runs_open: list[str] = field(default_factory=list)  # last event kind of each run not finished/cancelled
    speech: dict[str, float] = field(default_factory=dict)  # the server's speech work (voice.speech.shared_models)
    callers_cpu_s: float = 0.0  # what the bench's own simulated callers used (same machine)
    parts: dict[str, list[float]] = field(default_factory=dict)  # per answered turn, the server's latency parts
    model_calls: int | None = None  # requests the model stand-in served during the step (speculation included)


# The server's own account of an answer's wait (voice/call/reply.py, voice/call/core.py), in the order it happens.
PARTS = ("endpointing", "stt", "llm_first_token", "first_clause", "tts_first_audio", "unaccounted",
         "voice_to_voice_measured")
PART_COLUMNS = tuple(f"{p}_{q}_ms" for p in PARTS for q in ("p50", "p95"))  # load.csv: each part's p50, p95


@dataclass
class StepRow:
    calls: int
    turns: int
    answered: int
    unanswered: int
    v2v_p50_ms: float | None
    v2v_p95_ms: float | None
    v2v_max_ms: float | None
    barge_ins: int
    barge_stop_p95_ms: float | None
    dropped: int
    runs: int
    runs_open: int
    server_cpu_pct: float
    cpu_pct_per_call: float
    cpu_s_per_turn: float  # server CPU seconds per caller turn: what a turn costs, whatever else the machine runs
    rss_idle_mb: float
    rss_peak_mb: float
    mb_per_call: float
    stt_per_turn: float | None  # transcriptions per caller turn
    stt_mean_ms: float | None  # asked -> text, queueing included
    mean_batch: float | None  # Whisper windows per batch
    stt_busy_pct: float | None  # Whisper busy, % of the step's wall time
    tts_busy_pct: float | None
    turn_skipped_pct: float | None  # pauses whose end-of-turn model was skipped under load (voice.speech.shared_models)
    callers_cpu_pct: float  # the simulated callers' own CPU, % of one core: load the server did not cause
    wall_s: float
    holds: bool  # p95 within the target, nothing dropped or unanswered, no run left open
    parts: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)  # part -> (p50, p95) ms
    model_calls_per_turn: float | None = None  # model requests per answered turn: what speculation costs a paid model


def step_row(n: int, calls: Sequence[CallResult], usage: ServerUsage, target_ms: float) -> StepRow:
    turns = [t for c in calls for t in c.turns]
    v2v = [t.voice_to_voice_ms for t in turns if t.voice_to_voice_ms is not None]
    # an unanswered turn waited longer than any answered one: it counts in the percentiles as infinitely late
    ranked = v2v + [math.inf] * (len(turns) - len(v2v))
    stops = [t.barge_stop_ms for t in turns if t.barge_in and t.barge_stop_ms is not None]
    call_s = sum(c.seconds for c in calls) or 1.0
    dropped = sum(bool(c.dropped) for c in calls)
    p95 = percentile(ranked, 95)
    unanswered = len(turns) - len(v2v)
    holds = p95 is not None and p95 <= target_ms and not dropped and not unanswered and not usage.runs_open
    return StepRow(
        n, len(turns), len(v2v), unanswered, percentile(ranked, 50), p95, max(v2v, default=None),
        sum(t.barge_in for t in turns), percentile(stops, 95), dropped, usage.runs, len(usage.runs_open),
        round(100 * usage.cpu_s / max(usage.wall_s, 1e-9), 1), round(100 * usage.cpu_s / call_s, 1),
        round(usage.cpu_s / max(len(turns), 1), 2),
        round(usage.rss_idle_mb, 1), round(usage.rss_peak_mb, 1),
        round(max(0.0, usage.rss_peak_mb - usage.rss_idle_mb) / max(n, 1), 1), *_speech_columns(usage, len(turns)),
        round(100 * usage.callers_cpu_s / max(usage.wall_s, 1e-9), 1), round(usage.wall_s, 1), holds,
        {p: (percentile(usage.parts[p], 50), percentile(usage.parts[p], 95)) for p in PARTS if usage.parts.get(p)},
        None if usage.model_calls is None else round(usage.model_calls / max(len(v2v), 1), 2))


def _speech_columns(usage: ServerUsage, turns: int) -> tuple[float | None, ...]:
    work, wall = usage.speech, max(usage.wall_s, 1e-9)
    if not work:
        return None, None, None, None, None, None
    pauses = work.get("turn_scored", 0.0) + work.get("turn_skipped", 0.0)
    return (round(work["transcriptions"] / max(turns, 1), 2), round(work["stt_wait_s"] * 1000),
            round(work["windows"] / max(work["batches"], 1), 2), round(100 * work["stt_busy_s"] / wall, 1),
            round(100 * work["tts_busy_s"] / wall, 1),
            round(100 * work["turn_skipped"] / pauses, 1) if pauses else None)


def largest_holding(rows: Sequence[StepRow]) -> int | None:
    """The largest N that holds, counting only up to the first N that does not (a plan, not a lucky step)."""
    best = None
    for row in sorted(rows, key=lambda r: r.calls):
        if not row.holds:
            break
        best = row.calls
    return best


def _num(value: float | None, width: int, digits: int) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}.{digits}f}"


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return "unans." if math.isinf(value) else f"{value:.0f}"


def format_table(rows: Sequence[StepRow], target_ms: float, title: str) -> str:
    head = (f"{'calls':>5} {'turns':>5} {'unans':>5} {'v2v p50':>8} {'v2v p95':>8} {'barge p95':>9} "
            f"{'dropped':>7} {'open runs':>9} {'cpu %':>6} {'cpu %/call':>10} {'cpu s/turn':>10} {'RSS MB':>7} "
            f"{'MB/call':>7} {'stt/turn':>8} {'stt ms':>6} {'batch':>5} {'stt %':>5} {'tts %':>5} "
            f"{'turn skip %':>11} {'callers %':>9} {'llm/turn':>8}  holds")
    out = [title, "(ms; cpu % of one core, server process; barge = barge-in stop; stt ms: asked -> text; "
                  "batch: Whisper windows per batch; stt %, tts %: model busy, % of wall time; turn skip %: pauses "
                  "whose end-of-turn model was skipped under load; "
                  "callers %: the simulated callers' own CPU; llm/turn: model requests per answered turn, "
                  "speculation included)", head]
    for r in rows:
        out.append(f"{r.calls:>5} {r.turns:>5} {r.unanswered:>5} {_ms(r.v2v_p50_ms):>8} {_ms(r.v2v_p95_ms):>8} "
                   f"{_ms(r.barge_stop_p95_ms):>9} {r.dropped:>7} {r.runs_open:>9} {r.server_cpu_pct:>6.0f} "
                   f"{r.cpu_pct_per_call:>10.1f} {r.cpu_s_per_turn:>10.2f} {r.rss_peak_mb:>7.0f} {r.mb_per_call:>7.1f} "
                   f"{_num(r.stt_per_turn, 8, 2)} {_num(r.stt_mean_ms, 6, 0)} {_num(r.mean_batch, 5, 2)} "
                   f"{_num(r.stt_busy_pct, 5, 0)} {_num(r.tts_busy_pct, 5, 0)} {_num(r.turn_skipped_pct, 11, 0)} "
                   f"{r.callers_cpu_pct:>9.0f} {_num(r.model_calls_per_turn, 8, 2)}  "
                   f"{'yes' if r.holds else 'no'}")
    best = largest_holding(rows)
    out.append(f"largest N with p95 voice-to-voice <= {target_ms / 1000:g} s, nothing dropped or unanswered, every "
               f"run finished or cancelled: {best if best is not None else 'none of those measured'}")
    return "\n".join(out)


def format_parts(rows: Sequence[StepRow]) -> str:
    """Where the wait went, by the server's clock: p50/p95 of each part of an answered turn, per N."""
    head = f"{'calls':>5} " + " ".join(f"{p[:17]:>17}" for p in PARTS)
    out = ["where the wait went (server's account, ms p50/p95; unaccounted: the audio's way out, measured - sum)",
           head]
    for r in rows:
        cells = [f"{_ms(r.parts[p][0]) + '/' + _ms(r.parts[p][1]) if p in r.parts else '-':>17}" for p in PARTS]
        out.append(f"{r.calls:>5} " + " ".join(cells))
    return "\n".join(out)


def _part_columns(row: StepRow) -> dict[str, Any]:
    values = [row.parts.get(p, (None, None))[i] for p in PARTS for i in (0, 1)]
    return {name: "" if v is None else v for name, v in zip(PART_COLUMNS, values, strict=True)}


def write_step_csv(path: Path, rows: Sequence[StepRow], meta: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=[*STEP_COLUMNS, *PART_COLUMNS, *meta])
        writer.writeheader()
        for r in rows:
            fields = {k: ("" if v is None else v) for k, v in asdict(r).items() if k != "parts"}
            writer.writerow({**fields, **_part_columns(r), **meta})


def write_turn_csv(path: Path, steps: Sequence[tuple[int, Sequence[CallResult]]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(TURN_COLUMNS)
        for n, calls in steps:
            for c in calls:
                for t in c.turns:
                    writer.writerow([n, c.call, t.turn, t.utterance, int(t.barge_in),
                                     "" if t.voice_to_voice_ms is None else t.voice_to_voice_ms,
                                     "" if t.barge_stop_ms is None else t.barge_stop_ms])


def svg_plot(rows: Sequence[StepRow], target_ms: float, title: str) -> str:
    """p95 (and p50) voice-to-voice against N as a small self-contained SVG, with the target as a dashed line."""
    width, height, left, right, top, bottom = 640, 380, 70, 20, 40, 50
    finite = [r for r in rows if r.v2v_p95_ms is not None and not math.isinf(r.v2v_p95_ms)]
    points = [(r.calls, r.v2v_p95_ms, r.v2v_p50_ms if r.v2v_p50_ms is not None and not math.isinf(r.v2v_p50_ms)
               else None) for r in finite]
    max_n = max([r.calls for r in rows] + [1])
    max_ms = max([target_ms * 1.25] + [p[1] for p in points])
    x = lambda n: left + (width - left - right) * n / max_n  # noqa: E731
    y = lambda ms: top + (height - top - bottom) * (1 - ms / max_ms)  # noqa: E731
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           f'font-size="12"><rect width="100%" height="100%" fill="white"/>',
           f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="14">{_escape(title)}</text>',
           f'<line x1="{left}" y1="{y(0)}" x2="{width - right}" y2="{y(0)}" stroke="black"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{y(0)}" stroke="black"/>']
    for k in range(6):
        ms = max_ms * k / 5
        out.append(f'<text x="{left - 6}" y="{y(ms) + 4:.1f}" text-anchor="end">{ms / 1000:.1f} s</text>')
    for r in rows:
        out.append(f'<text x="{x(r.calls):.1f}" y="{y(0) + 16}" text-anchor="middle">{r.calls}</text>')
    out.append(f'<text x="{(left + width - right) / 2}" y="{height - 12}" text-anchor="middle">concurrent calls'
               f'</text>')
    out.append(f'<line x1="{left}" y1="{y(target_ms):.1f}" x2="{width - right}" y2="{y(target_ms):.1f}" '
               f'stroke="gray" stroke-dasharray="6,4"/><text x="{width - right}" y="{y(target_ms) - 5:.1f}" '
               f'text-anchor="end" fill="gray">target p95 {target_ms / 1000:g} s</text>')
    for index, colour, label in ((1, "#c0392b", "p95"), (2, "#2e86c1", "p50")):
        line = " ".join(f"{x(p[0]):.1f},{y(p[index]):.1f}" for p in points if p[index] is not None)
        out.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>')
        out += [f'<circle cx="{x(p[0]):.1f}" cy="{y(p[index]):.1f}" r="3" fill="{colour}"/>'
                for p in points if p[index] is not None]
        legend_y = top + 14 * index
        out.append(f'<text x="{left + 10}" y="{legend_y}" fill="{colour}">voice-to-voice {label}</text>')
    late = [str(r.calls) for r in rows if r not in finite and r.v2v_p95_ms is not None]
    if late:
        out.append(f'<text x="{width - right}" y="{top + 14}" text-anchor="end" fill="#c0392b">p95 past the answer '
                   f'timeout (unanswered turns) at N = {", ".join(late)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
