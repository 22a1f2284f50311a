"""Settle on start: every run a killed process left open is resumed or closed, and its writes reconciled.

A run with no closing event in the journal was cut off by a kill. On start, `settle_unfinished` goes through
each one. If `resume(run_id)` gives an Agent, the run is resumed through the normal path (`agent.run(run_id=...)`:
recorded model output, approvals and results are replayed, a write cut off mid-flight is reconciled). Otherwise —
a voice run, whose caller went with the killed process — it is closed here:

- a write that was started but never journaled as finished is reconciled through its tool's `reconcile` (the
  call id is the write's idempotency key): its real result is journaled as its `tool_finished`, or that it never
  took effect; a tool without `reconcile` is journaled as `interrupted`, effect unknown;
- a write still waiting for its approval was never run; a write that had finished keeps its result;
- then `run_interrupted` closes the run with a reason that says all of that, and `writes`, one entry per write.

So after a restart no run is open, the journal says what each write did to the database, and `voiceloop report`
lists each settled run with its reason.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from loop.act import Observation, not_executed, reconciled
from loop.agent import Agent
from loop.events import INTERRUPTED_BY_RESTART, RUN_ENDS, EventKind
from loop.events import ObservationStatus as Status
from loop.policy.rules import Decision
from loop.store.journal import Event, EventLog, Journal, JournalDivergence
from loop.tools import Tool
from loop.types import ModelResponse, ToolCall

log = logging.getLogger(__name__)


@dataclass
class Settlement:
    """How one unfinished run was settled."""

    run_id: str
    how: str  # "resumed" | "closed"
    outcome: str  # the resumed run's RunOutcome value, or INTERRUPTED
    reason: str
    writes: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _OpenRun:
    """What the journal says about a run that never closed."""

    calls: dict[str, ToolCall] = field(default_factory=dict)  # every proposed call, by id, in order
    asked: list[str] = field(default_factory=list)  # calls whose verdict was ASK
    approvals: dict[str, bool] = field(default_factory=dict)
    started: list[str] = field(default_factory=list)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)  # observation payloads by call id
    turns: int = 0

    @classmethod
    def read(cls, events: list[Event]) -> _OpenRun:
        run = cls()
        for ev in events:
            p = ev.payload
            if ev.kind == EventKind.MODEL_RESPONSE:
                run.turns += 1
                run.calls.update((c.id, c) for c in ModelResponse.from_dict(p["response"]).tool_calls)
            elif ev.kind == EventKind.VERDICT and p["decision"] == Decision.ASK:
                run.asked.append(p["call_id"])
            elif ev.kind == EventKind.APPROVAL:
                run.approvals[p["call_id"]] = bool(p["approved"])
            elif ev.kind == EventKind.TOOL_STARTED:
                run.started.append(p["call"]["id"])
            elif ev.kind in (EventKind.TOOL_FINISHED, EventKind.TOOL_RESULT):
                run.results[p["call"]["id"]] = p
        return run


async def settle_unfinished(journal: Journal, tools: Mapping[str, Tool], *,
                            resume: Callable[[str], Agent | None] | None = None,
                            reason: str = "server restarted") -> list[Settlement]:
    """Resume or close every run the journal holds open (see the module docstring). Call it before new runs
    start. A run that another live process still runs (a shared PostgreSQL journal: `Journal.claim_run`) is
    left alone; so is one another starting process settled first."""
    settled = []
    for run_id in journal.unfinished_run_ids():
        if not journal.claim_run(run_id):
            log.info("run %s is open in another live process: left to it", run_id)
            continue
        try:
            if journal.events(run_id)[-1].kind in RUN_ENDS:  # settled by another process since we listed it
                continue
            settled.append(await _settle(journal, run_id, tools, resume, reason))
        finally:
            journal.release_run(run_id)
        log.info("settled run %s: %s (%s)", run_id, settled[-1].outcome, settled[-1].reason)
    return settled


async def _settle(journal: Journal, run_id: str, tools: Mapping[str, Tool],
                  resume: Callable[[str], Agent | None] | None, reason: str) -> Settlement:
    speculation = journal.events(run_id)[0].kind == EventKind.PREFETCH_STARTED  # reads only: nothing to resume
    agent = resume(run_id) if resume is not None and not speculation else None
    if agent is None:
        return close_run(journal, run_id, tools, reason)
    try:
        result = await agent.run(run_id=run_id)
    except JournalDivergence as exc:  # it cannot walk the same path again: close it instead
        return close_run(journal, run_id, tools, f"{reason}; resuming failed ({exc})")
    return Settlement(run_id, "resumed", result.outcome.value, result.reason)


def close_run(journal: Journal, run_id: str, tools: Mapping[str, Tool], reason: str) -> Settlement:
    """Reconcile the run's cut-off writes into the journal, then close it with `run_interrupted`."""
    events = journal.events(run_id)
    run = _OpenRun.read(events)
    events_log = EventLog(journal, run_id)
    events_log.seq = events[-1].seq + 1 if events else 0
    for call_id in run.started:
        if call_id not in run.results and call_id in run.calls:
            obs = _cut_off(run.calls[call_id], tools.get(run.calls[call_id].name))
            events_log.emit(EventKind.TOOL_FINISHED, **obs.to_dict())  # what it really did, for the record
            run.results[call_id] = obs.to_dict()
    writes = _writes(run, tools)
    said = "; ".join(w["note"] for w in writes) or "nothing had been changed"
    full_reason = f"{reason}: {said}"
    events_log.emit(EventKind.RUN_INTERRUPTED, reason=full_reason, turns=run.turns, writes=writes)
    return Settlement(run_id, "closed", INTERRUPTED_BY_RESTART, full_reason, writes)


def _cut_off(call: ToolCall, tool: Tool | None) -> Observation:
    if tool is not None and not tool.mutates:
        return not_executed(call, Status.INTERRUPTED, f"{call.name} was cut off by a restart; a read changes nothing.")
    if tool is None:
        return not_executed(call, Status.INTERRUPTED, f"{call.name} was cut off by a restart and its effect is "
                            "unknown (no such tool any more).")
    return reconciled(call, tool)


def _writes(run: _OpenRun, tools: Mapping[str, Tool]) -> list[dict[str, Any]]:
    """One entry per write the run proposed that got as far as a verdict or a start, with what became of it."""
    out = []
    for call_id, call in run.calls.items():
        tool = tools.get(call.name)
        if tool is not None and not tool.mutates:
            continue
        result = run.results.get(call_id)
        if result is None and call_id in run.asked and call_id not in run.approvals:
            effect, note = "not made", f"{call.name} was waiting for approval and was not run"
        elif result is None and run.approvals.get(call_id):
            effect, note = "not made", f"{call.name} was approved but never started"
        elif result is None:
            continue
        elif result["status"] == Status.OK and result["executed"]:
            effect = "made"
            note = f"{call.name} had taken effect ({result['content']}); the caller may not have heard so"
        elif result["executed"]:
            effect, note = "unknown", f"{call.name} ended {result['status']} and its effect is unknown"
        else:
            effect, note = "not made", f"{call.name} did not take effect ({result['status']})"
        out.append({"call": call.to_dict(), "effect": effect, "status": result["status"] if result else "pending",
                    "note": note})
    return out
