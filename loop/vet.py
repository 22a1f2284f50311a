"""Vet: every proposed call passes the tool registry, guardrails and policy — for the whole batch —
before any human is asked and before anything runs."""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from loop.act import Observation, not_executed
from loop.approvals import ApprovalAnswer, not_approved
from loop.events import EventKind
from loop.events import ObservationStatus as Status
from loop.policy.rules import (
    Decision,
    Guardrail,
    GuardrailHit,
    Policy,
    Severity,
    Verdict,
    VetContext,
    tighten,
    worst_hit,
)
from loop.replay import Tape
from loop.store.journal import EventLog
from loop.tools import ArgumentError, Tool
from loop.types import ToolCall

Approver = Callable[[ToolCall, Verdict], "bool | ApprovalAnswer | Awaitable[bool | ApprovalAnswer]"]


@dataclass
class Vetted:
    approved: list[tuple[ToolCall, Tool]] = field(default_factory=list)
    refused: dict[str, Observation] = field(default_factory=dict)
    halt: GuardrailHit | None = None  # set: the run must stop before anything in the batch executes
    ends_run: list[str] = field(default_factory=list)  # declines whose approver ended the run, with their reasons
    waited_s: float = 0.0  # time spent waiting for a human's answer (not the run's own work)


@dataclass
class BatchVetter:
    tools: dict[str, Tool]
    guardrails: Sequence[Guardrail]
    policy: Policy
    approver: Approver | None
    log: EventLog
    tape: Tape
    mutations_need_approval: bool = False
    clock: Callable[[], float] = time.monotonic
    _answers: dict[str, ApprovalAnswer] = field(default_factory=dict)

    async def vet(self, calls: list[ToolCall], ctx: VetContext) -> Vetted:
        """Pure pass over the whole batch first (a HALT anywhere runs nothing), then ask for approvals."""
        out = Vetted()
        pending: list[tuple[ToolCall, Tool, Verdict]] = []
        for call in calls:
            screened = self._screen(call, ctx)
            if isinstance(screened, GuardrailHit):
                out.halt = screened
                return out
            if isinstance(screened, Observation):
                out.refused[call.id] = screened
            else:
                pending.append((call, self.tools[call.name], screened))
        for call, tool, verdict in pending:
            asked_at = self.clock()
            refusal = await self._ask(call, verdict) if verdict.decision is Decision.ASK else None
            out.waited_s += self.clock() - asked_at
            if refusal is not None:
                out.refused[call.id] = refusal
                if (answer := self.tape.approvals.get(call.id) or self._answers.get(call.id)) and answer.end_run:
                    out.ends_run.append(f"{call.name} was not done: {answer.reason}")
            else:
                out.approved.append((call, tool))
        return out

    def _screen(self, call: ToolCall, ctx: VetContext) -> Observation | GuardrailHit | Verdict:
        """Unknown tool, guardrails, argument validation, policy. Guardrails and policy judge the validated
        arguments, the ones the tool will receive ({"amount": "500"} is judged as 500.0)."""
        tool = self.tools.get(call.name)
        if tool is None:
            return not_executed(call, Status.UNKNOWN_TOOL, f"There is no tool named {call.name!r}. "
                                f"Available tools: {', '.join(self.tools) or 'none'}.")
        try:
            checked, invalid = ToolCall(call.name, tool.validate(call.arguments), call.id), ""
        except ArgumentError as exc:
            checked, invalid = call, str(exc)
        if hit := worst_hit(self.guardrails, checked, tool, ctx):
            self.log.emit(EventKind.GUARDRAIL, call_id=call.id, severity=hit.severity.value, detail=hit.detail,
                          guardrail=hit.guardrail)
            if hit.severity is Severity.HALT:
                return hit
            return not_executed(call, Status.BLOCKED, f"Blocked by {hit.guardrail}: {hit.detail}")
        if invalid:
            return not_executed(call, Status.INVALID_ARGS, invalid)
        verdict = self._verdict(checked, tool)
        if verdict.decision is Decision.DENY:
            return not_executed(call, Status.DENIED, f"Denied by policy ({verdict.rule}): {verdict.reason}. "
                                "Do not retry; tell the user or try another way.")
        return verdict

    def _verdict(self, call: ToolCall, tool: Tool) -> Verdict:
        verdict = tighten(self.policy.evaluate(call, tool), tool, self.policy.grants,
                          mutations_need_approval=self.mutations_need_approval)
        self.log.emit(EventKind.VERDICT, call_id=call.id, decision=verdict.decision.value, rule=verdict.rule,
                      reason=verdict.reason)
        return verdict

    async def _ask(self, call: ToolCall, verdict: Verdict) -> Observation | None:
        """None when a human approved; otherwise the observation saying why the call was not done."""
        if call.id in self.tape.unasked or (self.approver is None and call.id not in self.tape.approvals):
            # Nobody was asked, so nobody declined: say exactly that (and say it again on resume).
            self.log.emit(EventKind.APPROVAL, call_id=call.id, approved=False, rule=verdict.rule, asked=False)
            return not_executed(call, Status.UNAPPROVED, f"{call.name} needs approval ({verdict.reason}) and no one "
                                "can approve it in this run, so it was not done. Tell the user it needs approval.")
        if call.id in self.tape.approvals:  # resume: the human already answered
            answer = self.tape.approvals[call.id]
        else:
            assert self.approver is not None
            given = self.approver(call, verdict)
            answer = ApprovalAnswer.of(await given if inspect.isawaitable(given) else given)
            self._answers[call.id] = answer
        said = {"reason": answer.reason, "end_run": answer.end_run} if answer.reason or answer.end_run else {}
        self.log.emit(EventKind.APPROVAL, call_id=call.id, approved=answer.approved, rule=verdict.rule, **said)
        if answer.approved:
            return None
        if answer.reason:
            return not_executed(call, Status.DECLINED, not_approved(call.name, answer.reason))
        return not_executed(call, Status.DECLINED, f"The user declined {call.name}: {verdict.reason}. It was not done.")
