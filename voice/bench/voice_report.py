"""What `voiceloop bench voice` reports: one outcome per call, the summary (voice-to-voice p50/p95 over all
answer turns, with and without tools, the session's breakdown, barge-in stop, quality pass rate) and the per-turn
CSV. The measuring itself is in `voice/bench/voice.py`."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loop.bench.stats import percentile

DEFAULT_CSV = Path("out") / "bench" / "voice_turns.csv"
ANSWER_PARTS = frozenset({"reply", "prompt"})  # what the caller waits for; anything else said first is an ack
BREAKDOWN = ("endpointing", "stt", "llm_first_token", "first_clause", "tts_first_audio")
COLUMNS = ("call", "agent", "turn", "caller_text", "answer_part", "agent_text", "tools", "with_tools", "speech_end_s",
           "voice_to_voice_ms", "first_audio_ms", "ack_first", "turn_detected_ms", "answer_after_turn_ms",
           *(f"{k}_ms" for k in BREAKDOWN), "session_voice_to_voice_ms", "session_measured_ms",
           "call_passed", "call_problems")


@dataclass
class CallOutcome:
    name: str
    rows: list[dict[str, Any]]
    passed: bool
    problems: list[str]
    said: list[str]  # what the agent said, in order
    barge_in_stop_ms: list[float]
    seconds: float
    agent: str = ""  # the name of the agent that answered it
    model_calls: int = 0  # calls made to the model (speculation and withdrawn answers included); 0: scripted
    replies: int = 0  # caller turns the agent answered (turn records)
    cut_offs: int = 0  # turns that ended inside a caller's line: a pause taken for the end of the turn
    went_on: int = 0  # of those, withdrawn before the caller heard anything (answered once, whole)


def _stats(values: Sequence[Any]) -> dict[str, Any]:
    vals = [float(v) for v in values if v != "" and v is not None]
    return {"n": len(vals), "p50": percentile(vals, 50), "p95": percentile(vals, 95)}


def per_agent(calls: Sequence[CallOutcome]) -> dict[str, dict[str, Any]]:
    """Each agent's own pass rate and voice-to-voice: the targets hold for every agent, not only on average."""
    out: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(c.agent for c in calls):
        mine = [c for c in calls if c.agent == name]
        passed = sum(c.passed for c in mine)
        out[name] = {"calls": len(mine), "passed": passed, "rate": passed / len(mine),
                     "voice_to_voice_ms": _stats([r["voice_to_voice_ms"] for c in mine for r in c.rows])}
    return out


def summarise(calls: Sequence[CallOutcome]) -> dict[str, Any]:
    rows = [r for c in calls for r in c.rows]
    stats = _stats
    passed = sum(c.passed for c in calls)
    return {
        "calls": len(calls), "answer_turns": len(rows),
        "voice_to_voice_ms": {
            "all": stats([r["voice_to_voice_ms"] for r in rows]),
            "with_tools": stats([r["voice_to_voice_ms"] for r in rows if r["with_tools"]]),
            "without_tools": stats([r["voice_to_voice_ms"] for r in rows if not r["with_tools"]]),
        },
        "first_agent_audio_ms": stats([r["first_audio_ms"] for r in rows]),
        "ack_first_turns": sum(r["ack_first"] for r in rows),
        "outside": {"turn_detected_ms": stats([r["turn_detected_ms"] for r in rows]),
                    "answer_after_turn_ms": stats([r["answer_after_turn_ms"] for r in rows])},
        "breakdown_ms": {k: stats([r[f"{k}_ms"] for r in rows]) for k in BREAKDOWN},
        "session_voice_to_voice_ms": stats([r["session_voice_to_voice_ms"] for r in rows]),
        "barge_in_stop_ms": stats([s for c in calls for s in c.barge_in_stop_ms]),
        "quality": {"passed": passed, "calls": len(calls), "rate": passed / len(calls) if calls else None,
                    "failed": {c.name: {"problems": c.problems, "said": c.said} for c in calls if not c.passed}},
        "agents": per_agent(calls),
        "model_calls": {"calls": sum(c.model_calls for c in calls), "replies": sum(c.replies for c in calls)},
        "cut_offs": {"turns": sum(c.cut_offs for c in calls), "withdrawn": sum(c.went_on for c in calls)},
    }


def format_summary(s: dict[str, Any], llm: str, speed: float) -> str:
    def line(label: str, st: dict[str, Any]) -> str:
        if not st["n"]:
            return f"{label:<34} {'-':>4}"
        return f"{label:<34} {st['n']:>4} {st['p50']:>9.0f} {st['p95']:>9.0f}"

    v = s["voice_to_voice_ms"]
    out = [f"bench voice --llm {llm}: {s['calls']} calls, {s['answer_turns']} answer turns, wall clock x{speed:g}",
           f"{'(ms, nearest rank)':<34} {'n':>4} {'p50':>9} {'p95':>9}",
           line("voice-to-voice, all answer turns", v["all"]),
           line("  turns with tools", v["with_tools"]),
           line("  turns without tools", v["without_tools"]),
           line("first agent audio", s["first_agent_audio_ms"])
           + f"   (an acknowledgement came first in {s['ack_first_turns']} turns)",
           line("caller stopped -> turn detected", s["outside"]["turn_detected_ms"]),
           line("turn detected -> answer audio", s["outside"]["answer_after_turn_ms"]),
           "the session's own breakdown (reply turns that have one):"]
    out += [line(f"  {k}", s["breakdown_ms"][k]) for k in BREAKDOWN]
    out += [line("  session's sum of the parts", s["session_voice_to_voice_ms"]),
            line("barge-in stop", s["barge_in_stop_ms"])]
    m, cut = s["model_calls"], s["cut_offs"]
    if m["calls"]:
        out.append(f"model calls: {m['calls']} for {m['replies']} replies ({m['calls'] / max(m['replies'], 1):.2f} "
                   "per reply, speculation and withdrawn answers included)")
    out.append(f"endpointing cut-offs: {cut['turns']} turns ended inside a caller's line; {cut['withdrawn']} withdrawn "
               f"before any answer was heard, {cut['turns'] - cut['withdrawn']} answered early")
    q = s["quality"]
    rate = f"{100 * q['rate']:.1f} %" if q["rate"] is not None else "-"
    out.append(f"quality: {q['passed']}/{q['calls']} calls pass ({rate})")
    agents = s.get("agents") or {}
    for name, a in agents.items() if len(agents) > 1 else ():
        v2v = a["voice_to_voice_ms"]
        timing = f"voice-to-voice p50 {v2v['p50']:.0f} / p95 {v2v['p95']:.0f} ms (n={v2v['n']})" if v2v["n"] else "-"
        out.append(f"  {name}: {a['passed']}/{a['calls']} calls pass ({100 * a['rate']:.1f} %), {timing}")
    for name, f in q["failed"].items():
        out.append(f"  FAIL {name}: {'; '.join(f['problems'])}")
        out.append(f"       agent said: {' / '.join(f['said']) or '(nothing)'}")
    return "\n".join(out)


def write_csv(path: Path, calls: Sequence[CallOutcome]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for c in calls:
            writer.writerows(c.rows)


def answered_turn_ends(events: Sequence[tuple[float, float, dict[str, Any]]]) -> list[tuple[float, float, Any]]:
    """The turn ends the agent answered: not noise, and not a turn the caller went on with (`caller_went_on`
    before the next turn end), whose answer was withdrawn; the whole turn's end comes later."""
    ended: list[tuple[float, float, Any]] = []
    for w, c, e in events:
        if e["kind"] == "caller_went_on" and ended:
            ended.pop()
        elif e["kind"] == "caller_turn_ended" and e.get("text"):
            ended.append((w, c, e))
    return ended


def answer_turns(fed: Any, sink: Any, spans: Sequence[tuple[float, float]], turns: Sequence[Any]
                 ) -> list[dict[str, Any]]:
    """One row per caller turn the agent answered, measured from the caller's scheduled speech end."""
    ended = answered_turn_ends(fed.events)
    rows: list[dict[str, Any]] = []
    prev_end = -1.0
    for k, (w_end, call_s, e) in enumerate(ended):
        w_next = ended[k + 1][0] if k + 1 < len(ended) else float("inf")
        window = [(w, ev) for w, _, ev in fed.events if w_end <= w < w_next]
        # what the agent says once an approval has timed out ("I didn't hear a yes.") answers the silence, not this
        # turn: the turn's answer is what came before it (a re-asked question)
        timeout = next((w for w, ev in window if ev["kind"] == "approval_timeout"), None)
        if timeout is not None and any(ev["kind"] == "agent_said" for w, ev in window if w < timeout):
            window = [(w, ev) for w, ev in window if w < timeout]
        said = [(w, ev) for w, ev in window if ev["kind"] == "agent_said" and ev.get("part") != "greeting"]
        # The answer is what follows the turn's last tool result: words said before it ("Let me check that.")
        # are an acknowledgement, whether the session or the model said them.
        results = [w for w, ev in window if ev["kind"] == "loop.tool_result"]
        answers = [(w, ev) for w, ev in said if ev.get("part") in ANSWER_PARTS]
        after = [(w, ev) for w, ev in answers if results and w >= max(results)]
        answer = (after or answers or [None])[0]
        speech = [end for _, end in spans if prev_end < end <= call_s + 1e-9]
        prev_end = max([prev_end, *speech])
        if answer is None or not speech:
            continue  # a backchannel, a cough, speech the agent did not answer
        due = fed.wall(max(speech))  # when the caller's last speech frame of this turn was fed
        first = sink.first_send_after(said[0][0])
        ans = sink.first_send_after(answer[0])
        if ans is None:
            continue
        before = [ev for w, ev in window if w <= answer[0]]
        names = [ev["call"]["name"] for ev in before if ev["kind"] == "loop.tool_result"]
        names += [ev["call"] for ev in before if ev["kind"] == "approval_asked"]  # proposed, held for a yes
        proposed = any(ev["kind"] in ("loop.verdict", "loop.tool_result") for ev in before)
        rows.append({
            "turn": len(rows), "caller_text": e["text"], "answer_part": answer[1]["part"],
            "agent_text": " ".join(ev["text"] for _, ev in said),
            "tools": ";".join(dict.fromkeys(names)), "with_tools": int(bool(names) or proposed),
            "speech_end_s": round(max(speech), 3),
            "voice_to_voice_ms": round((ans - due) * 1000, 1),
            "first_audio_ms": round(((first or ans) - due) * 1000, 1),
            "ack_first": int(said[0][0] < answer[0]),
            "turn_detected_ms": round((w_end - due) * 1000, 1),
            "answer_after_turn_ms": round((ans - w_end) * 1000, 1),
            "_call_s": call_s,
        })
    _attach_breakdown(rows, turns)
    return rows


def _attach_breakdown(rows: list[dict[str, Any]], turns: Sequence[Any]) -> None:
    """The session's own latency parts belong to the last reply of each of its turn records (a confirmation
    question before it has none: the session measures the reply the caller waits for after their yes)."""
    starts = [t.started_s for t in turns]
    for i, rec in enumerate(turns):
        hi = starts[i + 1] if i + 1 < len(starts) else float("inf")
        mine = [r for r in rows if starts[i] - 1e-3 <= r["_call_s"] < hi - 1e-3 and r["answer_part"] == "reply"]
        if mine:
            lat = rec.latency_ms
            for k in BREAKDOWN:
                mine[-1][f"{k}_ms"] = lat.get(k, "")
            mine[-1]["session_voice_to_voice_ms"] = lat.get("voice_to_voice", "")
            mine[-1]["session_measured_ms"] = lat.get("voice_to_voice_measured", "")
    for r in rows:
        r.pop("_call_s")
        for k in COLUMNS:
            r.setdefault(k, "")
