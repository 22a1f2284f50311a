"""A call's OpenTelemetry: one `voice_turn` span per caller turn with its parts as children, and voice metrics.

Built from the call's trace entries (the session's observers), so it sees exactly what trace.jsonl records.
Per caller turn: `voice_turn` (parent of the run's `invoke_agent` span, which holds `chat` and `execute_tool`),
with children `end_of_turn` (the silence that closed the turn), `speech_to_text` (what the decision waited
for the transcript) and `text_to_speech` (first clause to first audio). Every span carries
`gen_ai.conversation.id` = the call id, which the loop's spans carry too. Metrics: `voiceloop.voice_to_voice`
(histogram, s; measured on the transport's clock when there is one), `voiceloop.latency.part` (histogram, s, per
`voiceloop.latency.part`) and `voiceloop.barge_ins` (counter). A no-op unless an OTel SDK is configured.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import metrics, trace

from loop.otel import SECONDS_BUCKETS
from voice.call.reply import LATENCY_PARTS
from voice.trace import TraceKind

_tracer = trace.get_tracer("voiceloop.voice")
_meter = metrics.get_meter("voiceloop.voice")


@dataclass(frozen=True)
class _Instruments:
    voice_to_voice: metrics.Histogram
    latency_part: metrics.Histogram
    barge_ins: metrics.Counter


@lru_cache(maxsize=8)
def _instruments(meter: metrics.Meter) -> _Instruments:
    return _Instruments(
        meter.create_histogram("voiceloop.voice_to_voice", unit="s",
                               description="End of the caller's speech to the first audio of the reply",
                               explicit_bucket_boundaries_advisory=list(SECONDS_BUCKETS)),
        meter.create_histogram("voiceloop.latency.part", unit="s",
                               description="One part of a turn's voice-to-voice latency",
                               explicit_bucket_boundaries_advisory=list(SECONDS_BUCKETS)),
        meter.create_counter("voiceloop.barge_ins", unit="{barge_in}",
                             description="Times the caller took the turn while the agent spoke or thought"))


@dataclass
class _Turn:
    index: int
    span: trace.Span
    run_ended: bool = False
    tools: int = 0
    measured: set[str] = field(default_factory=set)  # latency dicts already recorded ("voice_to_voice" once)


class CallTelemetry:
    """Attach `observe` to a session's observers; `run_context()` is the context a turn's run starts in."""

    def __init__(self, call_id: str, transport: str = "", clock_ns: Callable[[], int] = time.time_ns) -> None:
        self.call_id, self.transport, self.clock_ns = call_id, transport, clock_ns
        self.turn: _Turn | None = None
        self.turns = 0
        self.approval_pending = False
        self.closing_at: int | None = None  # the caller spoke again: the turn ends then, unless it was over the agent

    def _attrs(self, **extra: Any) -> dict[str, Any]:
        return {"gen_ai.conversation.id": self.call_id, **extra}

    def run_context(self) -> otel_context.Context | None:
        """The open turn's span as the parent of the run about to start, or None."""
        return None if self.turn is None else trace.set_span_in_context(self.turn.span)

    def observe(self, entry: dict[str, Any]) -> None:
        kind = entry.get("kind")
        if self.closing_at is not None:  # speech over the agent pauses it at once: that turn goes on
            closing_at, self.closing_at = self.closing_at, None
            if kind != TraceKind.AGENT_PAUSED:
                self._end_turn(closing_at)
        if kind == TraceKind.CALLER_TURN_ENDED and entry.get("text"):
            self._caller_turn(entry)
        elif kind == TraceKind.APPROVAL_ASKED:
            self.approval_pending = True
        elif kind in (TraceKind.APPROVAL_REPLY, TraceKind.APPROVAL_TIMEOUT, TraceKind.OPERATOR_DECISION):
            self.approval_pending = kind == TraceKind.APPROVAL_REPLY and entry.get("answer") == "unclear"
        elif kind == TraceKind.AGENT_AUDIO_STARTED:
            self._audio_started(entry)
        elif kind == TraceKind.BARGE_IN:
            _instruments(_meter).barge_ins.add(1, {"voiceloop.transport": self.transport})
            self._event("barge_in", heard=entry.get("heard", ""), caller_text=entry.get("caller_text", ""))
        elif kind in (TraceKind.LOOP_RUN_FINISHED, TraceKind.LOOP_RUN_CANCELLED):
            self._run_ended(entry)
        elif kind == TraceKind.LOOP_TOOL_RESULT and self.turn is not None:
            self.turn.tools += 1
        elif kind == TraceKind.CALLER_SPEECH_STARTED and self.turn is not None and self.turn.run_ended \
                and not self.approval_pending:
            self.closing_at = self.clock_ns()
        elif kind == TraceKind.CALL_ENDED:
            self._end_turn()
        elif kind in (TraceKind.AGENT_SAID, TraceKind.AGENT_PAUSED, TraceKind.FALSE_INTERRUPTION_RESUMED):
            self._event(str(kind), **{k: v for k, v in entry.items() if k not in ("kind", "t")})

    # ---- the parts of a turn -----------------------------------------------------------------------------

    def _caller_turn(self, entry: dict[str, Any]) -> None:
        now = self.clock_ns()
        latency = entry.get("latency_ms") or {}
        wait_ns = int((latency.get("endpointing", 0.0) + latency.get("stt", 0.0)) * 1e6)
        if not (self.approval_pending and self.turn is not None):  # an approval answer belongs to its turn
            self._end_turn()
            self.turn = _Turn(self.turns, _tracer.start_span(
                "voice_turn", start_time=now - wait_ns,
                attributes=self._attrs(**{"voiceloop.turn": self.turns, "voiceloop.caller.text": entry["text"],
                                          "voiceloop.caller.speech_s": entry.get("speech_s", 0.0)})))
            self.turns += 1
        end_of_turn = now - int(latency.get("stt", 0.0) * 1e6)
        self._child("end_of_turn", now - wait_ns, end_of_turn, **{"voiceloop.latency_ms": latency.get("endpointing")})
        self._child("speech_to_text", end_of_turn, now, **{"voiceloop.latency_ms": latency.get("stt"),
                                                           "voiceloop.transcript": entry["text"]})

    def _audio_started(self, entry: dict[str, Any]) -> None:
        turn, latency = self.turn, entry.get("latency_ms") or {}
        if turn is None or "voice_to_voice" not in latency or "voice_to_voice" in turn.measured:
            return
        turn.measured.add("voice_to_voice")
        now = self.clock_ns()
        self._child("text_to_speech", now - int(latency.get("tts_first_audio", 0.0) * 1e6), now,
                    **{"voiceloop.latency_ms": latency.get("tts_first_audio")})
        total_ms = latency.get("voice_to_voice_measured", latency["voice_to_voice"])
        attrs = {"voiceloop.transport": self.transport, "voiceloop.tools": turn.tools > 0}
        inst = _instruments(_meter)
        inst.voice_to_voice.record(total_ms / 1000, attrs)
        for part in LATENCY_PARTS:
            inst.latency_part.record(latency.get(part, 0.0) / 1000, {**attrs, "voiceloop.latency.part": part})
        turn.span.set_attributes({f"voiceloop.latency.{k}_ms": float(v) for k, v in latency.items()})

    def _run_ended(self, entry: dict[str, Any]) -> None:
        if self.turn is None or self.approval_pending:
            return
        self.turn.run_ended = True
        outcome = entry.get("outcome") or "CANCELLED"
        self.turn.span.set_attributes({"voiceloop.outcome": outcome, "voiceloop.reason": entry.get("reason", "")})

    def _child(self, name: str, start_ns: int, end_ns: int, **attrs: Any) -> None:
        if self.turn is None:
            return
        parent = trace.set_span_in_context(self.turn.span)
        span = _tracer.start_span(name, context=parent, start_time=start_ns,
                                  attributes=self._attrs(**{k: v for k, v in attrs.items() if v is not None}))
        span.end(end_time=max(start_ns, end_ns))

    def _event(self, name: str, **attrs: Any) -> None:
        if self.turn is not None:
            self.turn.span.add_event(name, {k: v if isinstance(v, str | int | float | bool) else str(v)
                                            for k, v in attrs.items() if v is not None})

    def _end_turn(self, at_ns: int | None = None) -> None:
        """A turn lasts until the caller speaks again (not over the agent) or the call ends."""
        if self.turn is not None:
            turn, self.turn = self.turn, None
            turn.span.end(end_time=at_ns)
