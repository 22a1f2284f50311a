"""A call's timeline as one self-contained HTML page (inline SVG and CSS, no scripts, no external assets):
lanes over call time for the caller's speech, the transcript, the model's runs, the tools with their verdicts,
the agent's audio and the barge-ins; then one row per turn with the latency parts as a stacked bar."""

from __future__ import annotations

import json
import sys
from html import escape
from pathlib import Path
from typing import Any

from voice.call.reply import LATENCY_PARTS
from voice.observe.timeline import Segment, Timeline, ToolMark, TurnView, build_timeline

WIDTH, LEFT, LANE_H = 1100, 110, 34
CHAR_PX = 7.5  # the widest an average 11px character is drawn (digits, capitals): labels are cut to fit their bar
LATENCY_W = 260  # the latency bar; its label is HTML beside it, so it wraps instead of being cut off
LANES = ("caller", "transcript", "model", "tools", "agent", "barge-in")
PART_COLOURS = dict(zip(LATENCY_PARTS, ("#8da0cb", "#66c2a5", "#fc8d62", "#e78ac3", "#a6d854"), strict=True))
VERDICT_COLOURS = {"ALLOW": "#2e7d32", "ASK": "#ef6c00", "DENY": "#c62828", "": "#616161"}
CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:18px;margin:0 0 4px} .meta{color:#555;margin-bottom:10px}
svg text{font:11px system-ui,sans-serif} .lane-label{font-weight:600;fill:#333}
.lanes{overflow-x:auto} .latency-label{display:block;margin:2px 0}
table{border-collapse:collapse;margin-top:14px;width:100%;table-layout:fixed} th,td{border:1px solid #ddd;
padding:4px 6px;vertical-align:top;text-align:left;overflow-wrap:anywhere} th{background:#f4f4f4}
th:first-child{width:24px} th:last-child{width:28%}
svg.latency{display:block;width:100%;max-width:260px;height:14px}
.verdict{font-weight:600} .ALLOW{color:#2e7d32} .ASK{color:#ef6c00} .DENY{color:#c62828}
.legend span{display:inline-block;margin-right:10px} .swatch{display:inline-block;width:10px;height:10px;
margin-right:3px;vertical-align:middle}
"""


def _short(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


class _Lanes:
    """Call time to x; one lane per row."""

    def __init__(self, duration_s: float) -> None:
        self.scale = (WIDTH - LEFT - 10) / max(duration_s, 0.5)

    def x(self, t: float) -> float:
        return round(LEFT + t * self.scale, 1)

    @staticmethod
    def y(lane: str) -> int:
        return 20 + LANES.index(lane) * LANE_H

    def bar(self, lane: str, seg: Segment, colour: str, cls: str, title: str, label: str = "",
            **data: Any) -> str:
        x, w = self.x(seg.start), max(3.0, round((seg.end - seg.start) * self.scale, 1))
        attrs = "".join(f' data-{k}="{escape(str(v))}"' for k, v in data.items())
        # the label is cut to what fits the bar, and drawn in a viewport of the bar's size: never over its neighbour
        fits = int((w - 6) // CHAR_PX)
        text = (f'<svg class="bar-label" x="{x}" y="{self.y(lane) + 4}" width="{w}" height="{LANE_H - 10}">'
                f'<text x="3" y="13" fill="#fff">{escape(_short(label, fits))}</text></svg>'
                if label and fits >= 3 else "")
        return (f'<g class="{cls}"{attrs}><title>{escape(title)}</title><rect x="{x}" y="{self.y(lane) + 4}" '
                f'width="{w}" height="{LANE_H - 10}" rx="3" fill="{colour}"/>{text}</g>')


def _tool_marks(lanes: _Lanes, turn: TurnView) -> list[str]:
    out = []
    for i, tool in enumerate(turn.tools):  # tools of one turn side by side, even at the same instant
        x, y = lanes.x(tool.t) + i * 12, lanes.y("tools") + LANE_H // 2
        colour = VERDICT_COLOURS.get(tool.decision, "#616161")
        out.append(f'<g class="tool-mark" data-turn="{turn.index}" data-tool="{escape(tool.name)}" '
                   f'data-verdict="{escape(tool.decision)}" data-status="{escape(tool.status)}">'
                   f'<title>{escape(_tool_line(tool))}</title>'
                   f'<polygon points="{x},{y - 9} {x + 9},{y} {x},{y + 9} {x - 9},{y}" fill="{colour}"/></g>')
    return out


def _tool_line(tool: ToolMark) -> str:
    verdict = f"{tool.decision} {tool.rule}".strip() or "not vetted"
    answer = "" if tool.approved is None else (" approved" if tool.approved else " declined")
    return f"{tool.name}({json.dumps(tool.arguments)}) [{verdict}{answer}] -> {tool.status}"


def _svg(tl: Timeline) -> str:
    lanes = _Lanes(tl.duration_s)
    height = lanes.y(LANES[-1]) + LANE_H + 24
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" role="img" '
             f'aria-label="call timeline" data-lanes-from="{LEFT}">']
    for lane in LANES:
        parts.append(f'<text class="lane-label" x="{LEFT - 8}" y="{lanes.y(lane) + 20}" text-anchor="end">{lane}</text>'
                     f'<line x1="{LEFT}" x2="{WIDTH - 10}" y1="{lanes.y(lane) + LANE_H}" '
                     f'y2="{lanes.y(lane) + LANE_H}" stroke="#eee"/>')
    step = max(1, round(tl.duration_s / 12))
    for s in range(0, int(tl.duration_s) + 1, step):
        anchor = ' text-anchor="end"' if lanes.x(s) + 30 > WIDTH else ""  # the last second's label stays inside
        parts.append(f'<text x="{lanes.x(s)}" y="{height - 6}" fill="#777"{anchor}>{s}s</text>')
    for seg in tl.caller:
        parts.append(lanes.bar("caller", seg, "#b0bec5" if seg.part else "#1e88e5", "caller-speech",
                               f"caller {seg.start:.2f}-{seg.end:.2f}s: {seg.text or '(no words)'}",
                               seg.text or "noise"))
    for turn in tl.turns:
        parts.append(lanes.bar("transcript", Segment(turn.ended_s, turn.ended_s + 2.5, turn.caller_text), "#5c6bc0",
                               "transcript", f"turn {turn.index}: {turn.caller_text}", turn.caller_text,
                               turn=turn.index))
        if turn.run_end_s is not None:
            parts.append(lanes.bar("model", Segment(turn.ended_s, turn.run_end_s, turn.outcome),
                                   "#fb8c00" if turn.outcome != "COMPLETED" else "#43a047", "model-run",
                                   f"run {turn.index}: {turn.outcome}: {turn.reason}", turn.outcome,
                                   turn=turn.index, outcome=turn.outcome))
        parts += _tool_marks(lanes, turn)
    for seg in tl.agent:
        parts.append(lanes.bar("agent", seg, "#8e24aa" if seg.part == "reply" else "#ab47bc", "agent-audio",
                               f"agent ({seg.part}) {seg.start:.2f}-{seg.end:.2f}s: {seg.text}", seg.text,
                               part=seg.part))
    for barge in tl.barge_ins:
        x = lanes.x(barge.start)
        near_end = x > WIDTH - 70  # its label goes left of the line, inside the picture
        label_at = f'x="{x - 3}" text-anchor="end"' if near_end else f'x="{x + 3}"'
        parts.append(f'<g class="barge-in"><title>caller cut in at {barge.start:.2f}s ("{escape(barge.part)}"); '
                     f'they had heard: {escape(barge.text) or "nothing"}</title><line x1="{x}" x2="{x}" y1="16" '
                     f'y2="{height - 20}" stroke="#d32f2f" stroke-dasharray="4 3"/><text {label_at} '
                     f'y="{lanes.y("barge-in") + 20}" fill="#d32f2f">barge-in</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def _latency_bar(latency: dict[str, float]) -> str:
    total = sum(latency.get(p, 0.0) for p in LATENCY_PARTS)
    if not total:
        return "–"
    scale, x, out = LATENCY_W / max(total, 1.0), 0.0, []
    for part in LATENCY_PARTS:
        w = latency.get(part, 0.0) * scale
        out.append(f'<rect class="latency-part" data-part="{part}" x="{x:.1f}" y="0" width="{w:.1f}" height="14" '
                   f'fill="{PART_COLOURS[part]}"><title>{part}: {latency.get(part, 0.0):.0f} ms</title></rect>')
        x += w
    label = f"{latency.get('voice_to_voice', total):.0f} ms"
    if "voice_to_voice_measured" in latency:
        label += f" (measured {latency['voice_to_voice_measured']:.0f} ms)"
    return (f'<svg viewBox="0 0 {LATENCY_W} 14" preserveAspectRatio="none" class="latency">{"".join(out)}</svg>'
            f'<span class="latency-label">{escape(label)}</span><div>'
            + ", ".join(f"{p} {latency[p]:.0f}" for p in LATENCY_PARTS if p in latency) + "</div>")


def _turn_row(turn: TurnView) -> str:
    tools = "<br>".join(f'<span class="tool">{escape(t.name)}({escape(json.dumps(t.arguments))}) '
                        f'<span class="verdict {escape(t.decision)}">{escape(t.decision or "not vetted")}'
                        f'</span> {escape(t.rule)} → {escape(t.status)}'
                        f'{"" if t.approved is None else (" (approved)" if t.approved else " (declined)")}</span>'
                        for t in turn.tools) or "–"
    said = escape(turn.answer) or "–"
    extra = "".join(f"<div>answer: {escape(a)}</div>" for a in turn.approvals)
    extra += '<div class="barged">cut off by the caller</div>' if turn.barged_in else ""
    return (f'<tr class="turn" data-turn="{turn.index}"><td>{turn.index}</td><td>{escape(turn.caller_text)}{extra}'
            f'</td><td>{tools}</td><td>{said}</td><td>{escape(turn.outcome)}<div>{escape(turn.reason)}</div></td>'
            f'<td>{_latency_bar(turn.latency_ms)}</td></tr>')


def render_timeline(tl: Timeline, title: str = "voiceloop call") -> str:
    """The whole page, as a string."""
    legend = "".join(f'<span><i class="swatch" style="background:{c}"></i>{p}</span>' for p, c in PART_COLOURS.items())
    rows = "".join(_turn_row(t) for t in tl.turns)
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{CSS}</style></head><body><h1>{escape(title)}</h1>"
            f'<div class="meta">{tl.duration_s:.1f} s · {len(tl.turns)} turn(s) · {len(tl.barge_ins)} barge-in(s)'
            f'{" · ended: " + escape(tl.end_reason) if tl.end_reason else ""}</div><div class="lanes">{_svg(tl)}</div>'
            f'<table><thead><tr><th>#</th><th>caller said</th><th>tools (verdict, rule → result)</th>'
            f"<th>agent said</th><th>outcome</th><th>latency (ms)</th></tr></thead><tbody>{rows}</tbody></table>"
            f'<div class="legend">{legend}</div></body></html>')


def write_timeline(path: Path, entries: list[dict[str, Any]], title: str = "voiceloop call") -> Path:
    """`timeline.html` for a call's trace entries; returns the path."""
    path.write_text(render_timeline(build_timeline(entries), title), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> None:
    """`python -m voice.observe.timeline_html trace.jsonl [out.html]`: draw a recorded call."""
    args = (argv if argv is not None else sys.argv[1:]) or ["trace.jsonl"]
    src = Path(args[0])
    entries = [json.loads(line) for line in src.read_text().splitlines() if line.strip()]
    print(write_timeline(Path(args[1]) if len(args) > 1 else src.with_name("timeline.html"), entries, src.stem))


if __name__ == "__main__":
    main()
