"""A call's timeline, read from its trace (the entries of trace.jsonl, or a live call's events): who spoke when,
what the caller was heard to say, each run with its tools and their verdicts, the agent's audio, the barge-ins,
and the parts of each turn's latency. `voice/observe/timeline_html.py` draws it.

Times are call time (seconds). The agent's audio is laid out as it was played: clauses one after the other from
when each was synthesised, cut where the caller barged in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from voice.trace import TraceKind


@dataclass
class Segment:
    start: float
    end: float
    text: str
    part: str = ""  # agent audio: reply, prompt, greeting...; caller speech: "noise" for a turn with no words


@dataclass
class ToolMark:
    t: float
    name: str
    arguments: dict[str, Any]
    decision: str  # the policy's verdict: ALLOW, ASK, DENY (or "" when the call was never vetted)
    rule: str
    status: str  # ok, declined, denied, unapproved, error...
    approved: bool | None = None  # an ASK: what the caller (or operator) answered


@dataclass
class TurnView:
    index: int
    caller_text: str
    speech: Segment
    ended_s: float  # endpointing closed the turn
    run_end_s: float | None = None
    outcome: str = ""
    reason: str = ""
    answer: str = ""
    tools: list[ToolMark] = field(default_factory=list)
    latency_ms: dict[str, float] = field(default_factory=dict)
    barged_in: bool = False
    approvals: list[str] = field(default_factory=list)  # what the caller answered to confirmation questions


@dataclass
class Timeline:
    duration_s: float
    caller: list[Segment] = field(default_factory=list)
    agent: list[Segment] = field(default_factory=list)
    turns: list[TurnView] = field(default_factory=list)
    barge_ins: list[Segment] = field(default_factory=list)  # a point (start == end) with what had been heard
    end_reason: str = ""


class _Reader:
    """Walks the trace once, in order."""

    def __init__(self) -> None:
        self.tl = Timeline(0.0)
        self.onset: float | None = None
        self.play_cursor = 0.0
        self.verdicts: dict[str, tuple[str, str]] = {}
        self.approvals: dict[str, bool] = {}
        self.approval_pending = False

    def read(self, entries: Iterable[dict[str, Any]]) -> Timeline:
        for e in entries:
            self.tl.duration_s = max(self.tl.duration_s, float(e.get("t", 0.0)))
            self.on(e)
        self.tl.duration_s = max([self.tl.duration_s, *(s.end for s in self.tl.agent + self.tl.caller)])
        return self.tl

    @property
    def turn(self) -> TurnView | None:
        return self.tl.turns[-1] if self.tl.turns else None

    def on(self, e: dict[str, Any]) -> None:
        kind, t = e.get("kind"), float(e.get("t", 0.0))
        if kind == TraceKind.CALLER_SPEECH_STARTED:
            self.onset = float(e.get("onset_s", t))
        elif kind == TraceKind.CALLER_TURN_ENDED:
            self._caller_turn(e, t)
        elif kind == TraceKind.AGENT_SAID:
            start = max(self.play_cursor, t)
            self.play_cursor = start + float(e.get("seconds", 0.0))
            self.tl.agent.append(Segment(start, self.play_cursor, e.get("text", ""), e.get("part", "")))
        elif kind == TraceKind.AGENT_AUDIO_STARTED and self.turn is not None and e.get("latency_ms"):
            self.turn.latency_ms = dict(e["latency_ms"])
        elif kind == TraceKind.BARGE_IN:
            self._barge_in(e, t)
        elif kind == TraceKind.APPROVAL_ASKED:
            self.approval_pending = True
        elif kind == TraceKind.APPROVAL_REPLY and self.turn is not None:
            self.turn.approvals.append(f"{e.get('text', '')} ({e.get('answer', '')})")
            self.approval_pending = e.get("answer") == "unclear"
        elif kind in (TraceKind.APPROVAL_TIMEOUT, TraceKind.OPERATOR_DECISION) and self.turn is not None:
            self.turn.approvals.append("no answer: declined" if kind == TraceKind.APPROVAL_TIMEOUT
                                       else f"operator {'approved' if e.get('approved') else 'declined'}")
            self.approval_pending = False
        elif kind == TraceKind.LOOP_VERDICT:
            self.verdicts[e.get("call_id", "")] = (e.get("decision", ""), e.get("rule", ""))
        elif kind == TraceKind.LOOP_APPROVAL:
            self.approvals[e.get("call_id", "")] = bool(e.get("approved"))
        elif kind == TraceKind.LOOP_TOOL_RESULT and self.turn is not None:
            call = e.get("call") or {}
            decision, rule = self.verdicts.get(call.get("id", ""), ("", ""))
            self.turn.tools.append(ToolMark(t, call.get("name", "?"), call.get("arguments") or {}, decision, rule,
                                            e.get("status", ""), self.approvals.get(call.get("id", ""))))
        elif kind in (TraceKind.LOOP_RUN_FINISHED, TraceKind.LOOP_RUN_CANCELLED) and self.turn is not None:
            turn = self.turn
            turn.run_end_s = t
            turn.outcome = e.get("outcome") or "CANCELLED"
            turn.reason, turn.answer = e.get("reason", ""), e.get("answer", "")
        elif kind == TraceKind.CALL_ENDED:
            self.tl.end_reason = e.get("reason", "")

    def _caller_turn(self, e: dict[str, Any], t: float) -> None:
        onset = self.onset if self.onset is not None else t
        end = float(e.get("speech_end_s", onset + float(e.get("speech_s", 0.0))))
        text = e.get("text", "")
        speech = Segment(onset, max(onset, end), text, "" if text else "noise")
        self.tl.caller.append(speech)
        self.onset = None
        if text and not self.approval_pending:
            self.tl.turns.append(TurnView(len(self.tl.turns), text, speech, t,
                                          latency_ms=dict(e.get("latency_ms") or {})))

    def _barge_in(self, e: dict[str, Any], t: float) -> None:
        self.tl.barge_ins.append(Segment(t, t, e.get("heard", ""), e.get("caller_text", "")))
        for seg in self.tl.agent:  # what was still to play was never heard
            seg.end = min(seg.end, max(seg.start, t))
        self.tl.agent = [s for s in self.tl.agent if s.end > s.start or s.start < t]
        self.play_cursor = t
        if self.turn is not None:
            self.turn.barged_in = True


def build_timeline(entries: Iterable[dict[str, Any]]) -> Timeline:
    """The timeline of a call from its trace entries, in the order they were recorded."""
    return _Reader().read(entries)
