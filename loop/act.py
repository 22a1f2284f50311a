"""Act: run approved calls — reads concurrently, then writes serially — and turn every result,
failure or timeout into exactly one observation written for the model."""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from loop.commit_gate import CommitGate
from loop.events import FAILED_STATUSES
from loop.events import ObservationStatus as Status
from loop.grounding.speakable import leaks, sentences
from loop.otel import tool_span
from loop.outcomes import Escalated
from loop.tools import ArgumentError, Tool, ToolOutput
from loop.types import ToolCall

# Sync tools run here. A hung sync tool cannot be killed from Python; its thread is abandoned after the
# timeout, so the pool is larger than any batch to keep later calls from queueing behind it.
_POOL = ThreadPoolExecutor(max_workers=32, thread_name_prefix="voiceloop-tool")


@dataclass
class Observation:
    """The one result of one proposed call, as the model will read it."""

    call: ToolCall
    content: str
    executed: bool
    status: str  # ok | error | timeout | invalid_args | unknown_tool | blocked | denied | declined | unapproved
    #              | skipped | interrupted
    cost_usd: float = 0.0
    escalation: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def failed(self) -> bool:
        return self.status in FAILED_STATUSES

    def to_dict(self) -> dict[str, Any]:
        return {"call": self.call.to_dict(), "content": self.content, "executed": self.executed,
                "status": self.status, "cost_usd": self.cost_usd, "escalation": self.escalation}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Observation:
        return cls(call=ToolCall.from_dict(data["call"]), content=data["content"], executed=data["executed"],
                   status=Status(data["status"]), cost_usd=data.get("cost_usd", 0.0), escalation=data.get("escalation"))


def tools_own_words(tools: Mapping[str, Tool], observations: Sequence[Observation]) -> str:
    """The batch's spoken answer when every call ran fine on a tool whose result is meant for the caller as it is
    (`Tool.answers`), else "". The run says it (`tool_answer`); a speculation that read the same knows it early."""
    if not observations or not all(
        o.status == Status.OK and o.executed and o.escalation is None
        and getattr(tools.get(o.call.name), "answers", False) for o in observations
    ):
        return ""
    return " ".join(o.content.strip() for o in observations if o.content.strip())


def results_in_words(tools: Mapping[str, Tool], observations: Sequence[Observation]) -> str:
    """A batch with a write, as a caller may hear its results, when every call ran fine and each result is a short
    plain sentence (no JSON, no tool name, at most two sentences: "Done: membership 880013 is frozen for 2
    months."), else "". Said when the model asks again for the very calls it just made: a write is never made
    twice, and the model has nothing more to add."""
    if not observations or not all(o.status == Status.OK and o.executed for o in observations):
        return ""
    if not any(getattr(tools.get(o.call.name), "mutates", False) for o in observations):
        return ""  # reads asked for again are the loop's repetition to judge, not an answer
    text = " ".join(" ".join(o.content.split()) for o in observations)
    return "" if not text or leaks(text, tools) or sentences(text) > 2 else text


def not_executed(call: ToolCall, status: Status, content: str) -> Observation:
    return Observation(call=call, content=content, executed=False, status=status)


@dataclass
class ToolRunner:
    """Executes one vetted batch. `recorded` holds results replayed from the journal on resume."""

    max_parallel_reads: int = 8
    parallel_reads: bool = True
    default_timeout_s: float = 30.0
    max_chars: int = 4000
    recorded: dict[str, Observation] = field(default_factory=dict)
    interrupted: set[str] = field(default_factory=set)
    speculative: dict[str, Observation] = field(default_factory=dict)  # read results by call signature
    on_start: Callable[[ToolCall], Awaitable[None] | None] | None = None
    on_finish: Callable[[Observation], None] | None = None  # each write's result, the moment it is known
    # Sync writes that timed out but whose thread still runs (shared by every batch of one agent): until they
    # end, no other write may start, because they can still take effect.
    unsettled: list[tuple[str, Future[Any]]] = field(default_factory=list)
    # A gated write that passed its gate before the deadline is committing: how long to wait for its result.
    commit_grace_s: float = 30.0

    async def run_batch(self, approved: list[tuple[ToolCall, Tool]]) -> list[Observation]:
        """Reads first (concurrently), then writes in proposal order; results come back in proposal order.
        After an escalation nothing else in the batch may mutate."""
        reads = [(c, t) for c, t in approved if not t.mutates]
        writes = [(c, t) for c, t in approved if t.mutates]
        done: dict[str, Observation] = {}
        if self.parallel_reads and len(reads) > 1:
            gate = asyncio.Semaphore(self.max_parallel_reads)

            async def bounded(call: ToolCall, tool: Tool) -> Observation:
                async with gate:
                    return await self.invoke(call, tool)

            for obs in await asyncio.gather(*(bounded(c, t) for c, t in reads)):
                done[obs.call.id] = obs
        else:
            for c, t in reads:
                done[c.id] = await self.invoke(c, t)
        handed_over = next((o.call.name for o in done.values() if o.escalation is not None), "")
        for c, t in writes:
            obs = done[c.id] = await self._write(c, t, handed_over)
            handed_over = handed_over or (c.name if obs.escalation is not None else "")
        return [done[c.id] for c, _ in approved]

    async def _write(self, call: ToolCall, tool: Tool, handed_over: str) -> Observation:
        recorded = self.recorded.get(call.id)
        if recorded is not None and not recorded.executed:  # resume: it was held back then too
            return recorded
        if recorded is None and handed_over:
            return not_executed(call, Status.SKIPPED, f"not run: {handed_over} handed the conversation to a human, "
                                "so nothing else in this batch may change anything.")
        if recorded is None and (busy := self._still_running()):
            return not_executed(call, Status.SKIPPED, f"not run: {busy} timed out earlier and may still take effect, "
                                "so no other change may start until it has finished. Check the current state, "
                                "then try again.")
        obs = await self.invoke(call, tool)  # a recorded result is replayed, never run again
        if self.on_finish is not None:
            self.on_finish(obs)
        return obs

    def _still_running(self) -> str:
        self.unsettled[:] = [(name, f) for name, f in self.unsettled if not f.done()]
        return self.unsettled[0][0] if self.unsettled else ""

    async def invoke(self, call: ToolCall, tool: Tool) -> Observation:
        try:
            kwargs = tool.validate(call.arguments)
        except ArgumentError as exc:
            return not_executed(call, Status.INVALID_ARGS, str(exc))
        if self.on_start is not None and inspect.isawaitable(pending := self.on_start(call)):
            await pending
        if call.id in self.recorded:  # resume: never execute twice what already ran
            return self.recorded[call.id]
        if not tool.mutates and (early := self.speculative.pop(call.signature, None)) is not None:
            # Ran while the caller was still speaking; same signature, so the same read: reuse it.
            return Observation(call, early.content, True, early.status, early.cost_usd, escalation=early.escalation,
                               extra={"speculative": True})
        if call.id in self.interrupted and tool.mutates:  # a read can simply run again; a write cannot
            return reconciled(call, tool)
        timeout = tool.timeout_s or self.default_timeout_s
        with tool_span(call) as span:
            obs = await self._execute(call, tool, kwargs, timeout)
            span.set_attribute("voiceloop.tool.status", obs.status)
        return obs

    async def _execute(self, call: ToolCall, tool: Tool, kwargs: dict[str, Any], timeout: float) -> Observation:
        params = inspect.signature(tool.fn).parameters
        if "idempotency_key" in params:
            kwargs = {**kwargs, "idempotency_key": call.id}
        gate = CommitGate() if "commit_gate" in params else None
        if gate is not None:
            kwargs = {**kwargs, "commit_gate": gate}
        started = time.perf_counter()
        worker: list[Future[Any]] = []
        try:
            value = await asyncio.wait_for(_call(tool, kwargs, worker), timeout)
        except TimeoutError:
            return await self._after_deadline(call, tool, timeout, worker[0] if worker else None, gate, started)
        except asyncio.CancelledError:  # the run was withdrawn (a barge-in) while this call ran
            await self._withdrawn(call, tool, worker[0] if worker else None, gate, started)
            raise
        except Exception as exc:
            return _raised(call, tool, exc)
        return _finished(call, tool, value, started, self.max_chars)

    async def _withdrawn(self, call: ToolCall, tool: Tool, thread: Future[Any] | None, gate: CommitGate | None,
                         started: float) -> None:
        """A write cut off by its run's cancellation: a gated one rolls back, or — already committing — is
        awaited and its real result journaled; an ungated one still running keeps later writes waiting."""
        if not tool.mutates or thread is None or (gate is not None and gate.abandon()):
            return
        if gate is None:
            if not thread.done():
                self.unsettled.append((call.name, thread))
            return
        try:
            value = await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(thread)), self.commit_grace_s)
        except (TimeoutError, asyncio.CancelledError, Exception):
            self.unsettled.append((call.name, thread))
            return
        if self.on_finish is not None:
            self.on_finish(_finished(call, tool, value, started, self.max_chars))

    async def _after_deadline(self, call: ToolCall, tool: Tool, timeout: float, thread: Future[Any] | None,
                              gate: CommitGate | None, started: float) -> Observation:
        """The tool timed out. A gated write either gives up for real or is committing: then its real result
        is awaited, so the journal says what the database holds. An ungated write's effect is unknown."""
        if gate is not None and gate.abandon():
            return Observation(call, _abandoned(tool, timeout), False, Status.TIMEOUT, extra={"abandoned": True})
        if gate is not None and thread is not None:
            try:
                value = await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(thread)), self.commit_grace_s)
            except TimeoutError:
                pass  # committing for longer than the grace period: report it as unknown, and keep writes serial
            except Exception as exc:
                return _raised(call, tool, exc)
            else:
                obs = _finished(call, tool, value, started, self.max_chars)
                obs.extra["past_timeout_s"] = timeout
                return obs
        if tool.mutates and thread is not None and not thread.done():  # a thread cannot be stopped: it may write
            self.unsettled.append((call.name, thread))
        return Observation(call, _timed_out(tool, timeout), True, Status.TIMEOUT, cost_usd=tool.max_cost_usd)


def _finished(call: ToolCall, tool: Tool, value: Any, started: float, max_chars: int) -> Observation:
    cost = value.cost_usd if isinstance(value, ToolOutput) else tool.max_cost_usd
    content = trim(render(value.value if isinstance(value, ToolOutput) else value), max_chars)
    return Observation(call, content, True, Status.OK, cost_usd=cost,
                       extra={"duration_s": round(time.perf_counter() - started, 6)})


def _raised(call: ToolCall, tool: Tool, exc: Exception) -> Observation:
    if isinstance(exc, Escalated):
        return Observation(call, f"Handed over to a human: {exc.reason}", True, Status.OK, escalation=exc.reason)
    return Observation(call, _describe_failure(tool, exc), True, Status.ERROR, cost_usd=tool.max_cost_usd)


def reconciled(call: ToolCall, tool: Tool) -> Observation:
    """A write a restart cut off: its tool's `reconcile` (the idempotency key, looked up where the write lands)
    says whether it committed; without one its effect is unknown."""
    if tool.reconcile is not None:
        done = tool.reconcile(call.id)
        if done is not None:
            return Observation(call, done, True, Status.OK, extra={"reconciled": True})
        return not_executed(call, Status.INTERRUPTED, f"{call.name} was cut off by a restart before it took effect, "
                            "so nothing was changed.")
    return not_executed(call, Status.INTERRUPTED, f"{call.name} was cut off by a restart and its effect is "
                        "unknown. Check the current state before calling it again.")


async def _call(tool: Tool, kwargs: dict[str, Any], worker: list[Future[Any]]) -> Any:
    if tool.is_async:
        return await tool.fn(**kwargs)
    ctx = contextvars.copy_context()  # carry the trace context into the worker thread
    worker.append(_POOL.submit(ctx.run, tool.fn, **kwargs))
    return await asyncio.wrap_future(worker[0])


def _abandoned(tool: Tool, timeout: float) -> str:
    return (f"{tool.name} did not finish within {timeout:g} s, so it was cancelled before it took effect: "
            "nothing was changed.")


def _timed_out(tool: Tool, timeout: float) -> str:
    if tool.mutates:
        return (f"{tool.name} did not answer within {timeout:g} s and may still finish, so its effect is unknown. "
                "Check the current state before calling it again.")
    return (f"{tool.name} did not answer within {timeout:g} s. The service may be slow or down; retrying "
            "unchanged will likely time out again.")


def _describe_failure(tool: Tool, exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
    hint = ("it may work if retried later" if isinstance(exc, (ConnectionError, OSError))
            else "retrying with the same arguments will fail the same way; change the arguments or tell the user")
    return f"{tool.name} failed: {text}. {hint[0].upper()}{hint[1:]}."


def render(value: Any) -> str:
    """Results are written to be read: empty results say so instead of showing `[]`."""
    if value is None:
        return "Done. The tool returned no data."
    if isinstance(value, str):
        return value if value.strip() else "The tool returned an empty text."
    if isinstance(value, (list, dict)) and not value:
        return "No results matched."
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def trim(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    return (text[:max_chars] + f"\n[Trimmed: showing {max_chars} of {len(text)} characters. "
            "Ask for a narrower result if you need the rest.]")
