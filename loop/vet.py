"""Vet: every proposed call passes the tool registry, guardrails and policy — for the whole batch —
before any human is asked and before anything runs."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from loop.act import Observation, not_executed
from loop.events import EventKind
from loop.events import ObservationStatus as Status
from loop.journal import EventLog
from loop.policy import Decision, Guardrail, GuardrailHit, Policy, Severity, Verdict, VetContext, tighten, worst_hit
from loop.replay import Tape
from loop.tools import Tool
from loop.types import ToolCall

Approver = Callable[[ToolCall, Verdict], "bool | Awaitable[bool]"]


@dataclass
class Vetted:
    approved: list[tuple[ToolCall, Tool]] = field(default_factory=list)
    refused: dict[str, Observation] = field(default_factory=dict)
    halt: GuardrailHit | None = None  # set: the run must stop before anything in the batch executes


@dataclass
class BatchVetter:
    tools: dict[str, Tool]
    guardrails: Sequence[Guardrail]
    policy: Policy
    approver: Approver | None
    log: EventLog
    tape: Tape

    async def vet(self, calls: list[ToolCall], ctx: VetContext) -> Vetted:
        """Pure pass over the whole batch first (a HALT anywhere runs nothing), then ask for approvals."""
        out = Vetted()
        pending: list[tuple[ToolCall, Tool, Verdict]] = []
        for call in calls:
            tool = self.tools.get(call.name)
            if tool is None:
                out.refused[call.id] = not_executed(call, Status.UNKNOWN_TOOL, f"There is no tool named {call.name!r}. "
                                                    f"Available tools: {', '.join(self.tools) or 'none'}.")
            elif hit := worst_hit(self.guardrails, call, tool, ctx):
                self.log.emit(EventKind.GUARDRAIL, call_id=call.id, severity=hit.severity.value, detail=hit.detail,
                              guardrail=hit.guardrail)
                if hit.severity is Severity.HALT:
                    out.halt = hit
                    return out
                out.refused[call.id] = not_executed(call, Status.BLOCKED, f"Blocked by {hit.guardrail}: {hit.detail}")
            elif (verdict := self._verdict(call, tool)).decision is Decision.DENY:
                out.refused[call.id] = not_executed(
                    call, Status.DENIED, f"Denied by policy ({verdict.rule}): {verdict.reason}. "
                    "Do not retry; tell the user or try another way.")
            else:
                pending.append((call, tool, verdict))
        for call, tool, verdict in pending:
            if verdict.decision is Decision.ASK and not await self._ask(call, verdict):
                out.refused[call.id] = not_executed(call, Status.DECLINED, f"The user declined {call.name}: "
                                                    f"{verdict.reason}. It was not done.")
            else:
                out.approved.append((call, tool))
        return out

    def _verdict(self, call: ToolCall, tool: Tool) -> Verdict:
        verdict = tighten(self.policy.evaluate(call, tool), tool, self.policy.grants)
        self.log.emit(EventKind.VERDICT, call_id=call.id, decision=verdict.decision.value, rule=verdict.rule,
                      reason=verdict.reason)
        return verdict

    async def _ask(self, call: ToolCall, verdict: Verdict) -> bool:
        if call.id in self.tape.approvals:  # resume: the human already answered
            approved = self.tape.approvals[call.id]
        elif self.approver is None:
            approved = False
        else:
            answer = self.approver(call, verdict)
            approved = bool(await answer if inspect.isawaitable(answer) else answer)
        self.log.emit(EventKind.APPROVAL, call_id=call.id, approved=approved, rule=verdict.rule)
        return approved
