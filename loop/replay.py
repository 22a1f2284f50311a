"""Resume: what the journal already knows, served back at the loop's three non-deterministic points
(model output, human approval, tool results) so a resumed run walks the same code path."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from loop.act import Observation
from loop.approvals import ApprovalAnswer
from loop.events import EventKind
from loop.store.journal import Event
from loop.types import ModelEvent, ModelResponse, TextDelta, ToolCallDelta


@dataclass
class Tape:
    goal: str = ""
    deltas: dict[int, list[ModelEvent]] = field(default_factory=dict)
    responses: dict[int, ModelResponse] = field(default_factory=dict)
    approvals: dict[str, ApprovalAnswer] = field(default_factory=dict)
    unasked: set[str] = field(default_factory=set)  # ASKs with no approver: nobody answered
    results: dict[str, Observation] = field(default_factory=dict)
    interrupted: set[str] = field(default_factory=set)  # started, never finished
    finished: dict | None = None

    @classmethod
    def from_events(cls, events: list[Event]) -> Tape:
        tape = cls()
        started: set[str] = set()
        for ev in events:
            p = ev.payload
            if ev.kind == EventKind.RUN_STARTED:
                tape.goal = p["goal"]
            elif ev.kind == EventKind.MODEL_DELTA:
                tape.deltas.setdefault(p["turn"], []).append(_delta(p))
            elif ev.kind == EventKind.MODEL_RESPONSE:
                tape.responses[p["turn"]] = ModelResponse.from_dict(p["response"])
            elif ev.kind == EventKind.APPROVAL and p.get("asked", True):
                tape.approvals[p["call_id"]] = ApprovalAnswer(p["approved"], p.get("reason", ""),
                                                              p.get("end_run", False))
            elif ev.kind == EventKind.APPROVAL:
                tape.unasked.add(p["call_id"])
            elif ev.kind == EventKind.TOOL_STARTED:
                started.add(p["call"]["id"])
            elif ev.kind in (EventKind.TOOL_FINISHED, EventKind.TOOL_RESULT):  # writes: journaled as each completes
                tape.results[p["call"]["id"]] = Observation.from_dict(p)
            elif ev.kind == EventKind.RUN_FINISHED:
                tape.finished = p
        tape.interrupted = started - set(tape.results)
        return tape

    def model_stream(self, turn: int) -> AsyncIterator[ModelEvent] | None:
        if turn not in self.responses:
            return None
        return _replay(self.deltas.get(turn, []), self.responses[turn])


def _delta(p: dict) -> ModelEvent:
    if p["type"] == "text":
        return TextDelta(p["text"])
    return ToolCallDelta(index=p["index"], id=p.get("id"), name=p.get("name"), arguments=p.get("arguments", ""))


async def _replay(deltas: list[ModelEvent], response: ModelResponse) -> AsyncIterator[ModelEvent]:
    for d in deltas:
        yield d
    yield response
