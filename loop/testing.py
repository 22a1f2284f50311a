"""Testing helpers for your own agent, text only (no audio, no model weights): hold a conversation with a
`loop.Agent` and assert on what happened, in the spirit of LiveKit's `session.run(...).expect`.

    from loop import Agent, ScriptedModel, ToolCall
    from loop.testing import Conversation

    agent = Agent(model=ScriptedModel([ToolCall("free_slots", {"day": "friday"}), "Friday at ten is free."]),
                  tools=calendar.tools())
    turn = Conversation(agent).say_sync("Anything free on Friday?")
    turn.expect.called("free_slots", day="friday").executed("free_slots").outcome("COMPLETED").said("ten")

`TestModel` (loop/models/test.py) needs no script at all: it calls every tool once with arguments made from
its schema, then answers with what the tools said. `voice.testing` runs the same assertions over a whole
audio call (`run_audio_call(...).expect`).
Every failed assertion raises `AssertionError` with what did happen, so a test failure reads as a story.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from loop.agent import Agent, RunResult
from loop.models.test import TestModel
from loop.store.journal import Event
from loop.types import Message

__all__ = ["Conversation", "Expect", "Record", "TestModel", "Turn"]

Fragments = str | Sequence[str]  # a fragment, or alternatives of which one must appear


@dataclass
class Record:
    """What a conversation or call did, in order: the user's words, the agent's, tool calls and verdicts."""

    user: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # name, arguments, status, executed
    verdicts: list[dict[str, Any]] = field(default_factory=list)  # tool, decision, rule, reason
    outcomes: list[str] = field(default_factory=list)

    @property
    def outcome(self) -> str:
        return self.outcomes[-1] if self.outcomes else "NO_RUN"

    def add_loop_entries(self, entries: Iterable[Mapping[str, Any]], prefix: str = "") -> None:
        """Journal events as flat mappings (`{"kind": ..., **payload}`; a voice trace's `loop.*` entries)."""
        entries = list(entries)
        names = {e["call"]["id"]: e["call"]["name"] for e in entries if e.get("kind") == prefix + "tool_result"}
        for e in entries:
            kind = str(e.get("kind", "")).removeprefix(prefix)
            if kind == "tool_result":
                call, status = e["call"], e.get("status", "")
                self.tool_calls.append({"name": call["name"], "arguments": dict(call.get("arguments") or {}),
                                        "status": str(getattr(status, "value", status)),
                                        "executed": bool(e.get("executed"))})
            elif kind == "verdict":
                decision = str(getattr(e["decision"], "value", e["decision"]))
                self.verdicts.append({"tool": names.get(e.get("call_id", ""), ""), "decision": decision,
                                      "rule": e.get("rule", ""), "reason": e.get("reason", "")})
            elif kind == "run_finished":
                self.outcomes.append(str(getattr(e["outcome"], "value", e["outcome"])))

    def story(self) -> str:
        calls = [f"{c['name']}({c['arguments']}) -> {c['status']}" for c in self.tool_calls]
        verdicts = [f"{v['tool']}: {v['decision']} {v['rule']}".strip() for v in self.verdicts]
        return (f"user said {self.user}; tool calls {calls}; verdicts {verdicts}; outcomes {self.outcomes}; "
                f"agent said {self.said}")


def _found(fragments: Fragments, text: str) -> bool:
    options = [fragments] if isinstance(fragments, str) else list(fragments)
    return any(o.lower() in text.lower() for o in options)


def _same(want: Any, got: Any) -> bool:
    if isinstance(want, str) and isinstance(got, str):
        return want.strip().lower() == got.strip().lower()
    try:
        return float(want) == float(got)
    except (TypeError, ValueError):
        return bool(want == got)


class Expect:
    """Fluent assertions over a `Record`; each returns self so they chain."""

    def __init__(self, record: Record) -> None:
        self.record = record

    def _fail(self, what: str) -> None:
        raise AssertionError(f"{what}\n  what happened: {self.record.story()}")

    def called(self, name: str, /, **arguments: Any) -> Expect:
        """A call of `name` was proposed whose arguments include these (strings compared without case)."""
        for call in self.record.tool_calls:
            args = call["arguments"]
            if call["name"] == name and all(k in args and _same(v, args[k]) for k, v in arguments.items()):
                return self
        self._fail(f"expected a call {name}({arguments})")
        return self

    def not_called(self, name: str | None = None) -> Expect:
        """No tool call at all, or none of `name`."""
        if any(name is None or c["name"] == name for c in self.record.tool_calls):
            self._fail(f"expected no call{' of ' + name if name else ''}")
        return self

    def executed(self, *names: str) -> Expect:
        """Exactly these tools ran, in this order (denied, declined and unapproved calls did not)."""
        ran = [c["name"] for c in self.record.tool_calls if c["executed"]]
        if ran != list(names):
            self._fail(f"expected executed tools {list(names)}, got {ran}")
        return self

    def verdict(self, tool_or_rule: str, decision: str) -> Expect:
        """Policy decided `decision` (ALLOW/DENY/ASK) on a call of that tool, or by that rule."""
        if not any(tool_or_rule in (v["tool"], v["rule"]) and v["decision"].upper().endswith(decision.upper())
                   for v in self.record.verdicts):
            self._fail(f"expected verdict {decision} for {tool_or_rule}")
        return self

    def outcome(self, outcome: str) -> Expect:
        """The last run ended so (`COMPLETED`, `ESCALATED`, ... or a `RunOutcome`)."""
        want = str(getattr(outcome, "value", outcome)).upper()
        if not self.record.outcome.upper().endswith(want):
            self._fail(f"expected outcome {want}, got {self.record.outcome}")
        return self

    def said(self, *fragments: Fragments) -> Expect:
        """Each fragment (or one of each tuple's alternatives) is in what the agent said."""
        text = " ".join(self.record.said)
        for frag in fragments:
            if not _found(frag, text):
                self._fail(f"expected the agent to say {frag!r}")
        return self

    def not_said(self, *fragments: str) -> Expect:
        text = " ".join(self.record.said)
        for frag in fragments:
            if _found(frag, text):
                self._fail(f"expected the agent not to say {frag!r}")
        return self

    def heard(self, *fragments: Fragments) -> Expect:
        """What the user said (a caller's transcribed words) contains each fragment."""
        text = " ".join(self.record.user)
        for frag in fragments:
            if not _found(frag, text):
                self._fail(f"expected the user's words to contain {frag!r}")
        return self


@dataclass
class Turn:
    """One user turn of a `Conversation`: the run's result, its journal events and assertions on them."""

    text: str
    result: RunResult
    events: list[Event]

    @property
    def record(self) -> Record:
        record = Record(user=[self.text], said=[self.result.answer] if self.result.answer else [])
        record.add_loop_entries({"kind": str(e.kind), **e.payload} for e in self.events)
        return record

    @property
    def expect(self) -> Expect:
        return Expect(self.record)


class Conversation:
    """User turns against one agent, each run with the conversation so far as history.

    approve: how spoken approvals are answered in text (True: yes, False: no, None: the agent's own approver).
    """

    def __init__(self, agent: Agent, approve: bool | None = True) -> None:
        # its own view of the agent (`Agent.override`): the test's approver is never left on the user's object
        self.agent = agent if approve is None else agent.override(approver=lambda _call, _verdict: approve)
        self.messages: list[Message] = []
        self.turns: list[Turn] = []

    async def say(self, text: str) -> Turn:
        events: list[Event] = []
        self.agent.listeners.append(events.append)
        transcript: list[Message] = []
        try:
            result = await self.agent.run(text, history=list(self.messages), transcript=transcript)
        finally:
            self.agent.listeners.remove(events.append)
        self.messages = transcript
        turn = Turn(text, result, events)
        self.turns.append(turn)
        return turn

    def say_sync(self, text: str) -> Turn:
        return asyncio.run(self.say(text))

    @property
    def expect(self) -> Expect:
        """Assertions over every turn so far."""
        record = Record()
        for turn in self.turns:
            r = turn.record
            record.user += r.user
            record.said += r.said
            record.tool_calls += r.tool_calls
            record.verdicts += r.verdicts
            record.outcomes += r.outcomes
        return Expect(record)
