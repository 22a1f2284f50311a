"""Speculation, as the loop's own work: while the caller is still speaking, the reads the model would propose on
the words so far are run early, so the real turn finds their results ready (`Agent.speculative`).

It is the run's path with the run's rules, only smaller: the request is assembled as a turn's would be; the model
call (its tokens, cost and time: it is no turn of a run) and the reads are admitted by a `BudgetLedger` over the
agent's budget and its tenant's shared ledger before anything is paid for, and settled after; the calls pass the
same `BatchVetter` with nobody to approve, so only what policy ALLOWs outright runs, and a write never does.
Everything is journaled under its own id (`prefetch-...`: `prefetch_started` ... `prefetch_finished`, with the
verdicts and reads between), which `voiceloop report` counts as speculative spend, apart from the runs.

A model that can keep a call for the run that later asks the same (`prime` / `wait`, as a voice session's
`PrimedModel` does) has the decision primed instead of streamed; its handle is marked `paid`, so the run that
reuses it is not charged for it again. With `answer_too`, the answer after the reads is primed as well, its
spend admitted first and settled when it ends (in full, if it was cut off).
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from typing import Any

from loop.act import Observation, ToolRunner, tools_own_words
from loop.budget import BudgetLedger
from loop.events import EventKind, ObservationStatus
from loop.outcomes import BudgetExhausted
from loop.policy.rules import VetContext
from loop.replay import Tape
from loop.store.journal import EventLog
from loop.types import Message, ModelRequest, ModelResponse, ToolCall, Usage
from loop.vet import BatchVetter


@dataclass
class Prefetch:
    """What one speculation did: the reads it ran (their results are in `Agent.speculative`), what it cost, and
    why it stopped short, if it did."""

    id: str
    reads: list[Observation] = field(default_factory=list)
    proposed: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    refused: str = ""  # the budget or the tenant's ledger would not admit it, or the model failed
    # what the run would answer, as far as the speculation knows it: the model's reply itself, or the answer tools'
    # own words (`words`); or the model's handle for the answer it primed after the reads (`answer`), whose text is
    # the answer. A voice synthesises its first clause while the caller's pause lasts (voice/runtime/rehearsal.py).
    words: str = ""
    answer: Any = None


class Prefetcher:
    """One speculation for `agent` (a `loop.Agent`: its model, tools, policy, budget, tenant and journal) on the
    caller's words so far."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.result = Prefetch(f"prefetch-{uuid.uuid4().hex[:12]}")
        self.ledger = BudgetLedger(agent.config.budget, agent.clock, tenant=agent.tenant, run_id=self.result.id)
        self.log = EventLog(agent.journal, self.result.id)  # no listeners: a call's trace says what it needs

    async def run(self, words: str, history: list[Message], answer_too: bool = False) -> Prefetch:
        messages = [*history, Message("user", words)]
        self.log.emit(EventKind.PREFETCH_STARTED, words=words, model=self.agent.model.name)
        try:
            response = await self._decide(self._request(messages), exclusive=answer_too)
            if response is not None:
                await self._read(response, messages)
                self.result.words = self._words(response)
                if answer_too and self._answer_is_next(response):
                    return self._prime_answer(messages, response)
        except BudgetExhausted as exc:  # refused before anything was paid for
            self.result.refused = str(exc)
        except asyncio.CancelledError:  # newer words came: what it held may have been spent, so it is committed
            self.ledger.close()
            self.result.refused = "cancelled"
            self._finish()
            raise
        except Exception as exc:  # speculation is an optimisation: failing it costs the call nothing
            self.ledger.close()
            self.result.refused = f"{type(exc).__name__}: {exc}"[:300]
        self._finish()
        return self.result

    def _request(self, messages: list[Message]) -> ModelRequest:
        cfg = self.agent.config
        request = self.agent.assembler.build(messages, 0, cfg.max_output_tokens, cfg.model_timeout_s)[0]
        self.ledger.check_speculation(self.agent.assembler.input_tokens(messages, cfg.max_output_tokens),
                                      cfg.max_output_tokens, self.agent.model.pricing,
                                      model_timeout_s=cfg.model_timeout_s)
        return request

    async def _decide(self, request: ModelRequest, exclusive: bool) -> ModelResponse | None:
        model = self.agent.model
        if callable(getattr(model, "prime", None)):
            handle = model.prime(request, exclusive)
            events = await model.wait(handle)
            handle.paid = True  # settled here: the run that reuses this call pays nothing again
        else:
            events = [ev async for ev in model.stream(request)]
        response, usage = _response_of(events)
        self.ledger.settle_speculation(usage)
        self.result.usage = usage
        if response is not None:
            self.log.emit(EventKind.MODEL_RESPONSE, turn=0, response=response.to_dict())
        return response

    async def _read(self, response: ModelResponse, messages: list[Message]) -> None:
        agent = self.agent
        self.result.proposed = list(response.tool_calls)
        reads = [c for c in response.tool_calls if (t := agent.tools.get(c.name)) is not None and not t.mutates
                 and c.signature not in agent.speculative]
        if not reads:
            return
        ctx = VetContext(user_text=" ".join(m.content for m in messages if m.role == "user"),
                         observations=[m.content for m in messages if m.role == "tool"], language=agent.language)
        vetted = await BatchVetter(agent.tools, agent.guardrails, agent.policy, None, self.log, Tape(),
                                   agent.config.mutations_need_approval, agent.clock).vet(reads, ctx)
        if vetted.halt is not None or not vetted.approved:
            return
        cfg = agent.config
        self.ledger.check_batch(len(vetted.approved), sum(t.max_cost_usd for _, t in vetted.approved),
                                max(t.timeout_s or cfg.default_tool_timeout_s for _, t in vetted.approved))
        runner = ToolRunner(cfg.max_parallel_reads, cfg.parallel_reads, cfg.default_tool_timeout_s,
                            cfg.max_observation_chars, on_start=self.log.tool_started)
        done = await runner.run_batch(vetted.approved)
        self.ledger.settle_tools(sum(o.executed for o in done), sum(o.cost_usd for o in done))
        for obs in done:
            self.log.emit(EventKind.TOOL_RESULT, **obs.to_dict())
            if obs.status == ObservationStatus.OK and obs.escalation is None:  # a hand-over is no read to reuse
                agent.speculative[obs.call.signature] = obs
        self.result.reads = done

    def _words(self, response: ModelResponse) -> str:
        """The answer the run will give, when this response already holds it: a reply in words, or reads whose
        results are the answer as they stand (`Tool.answers`)."""
        if not response.tool_calls:
            return response.text
        reads = [self.agent.speculative.get(c.signature) for c in response.tool_calls]
        return tools_own_words(self.agent.tools, reads) if all(reads) else ""  # type: ignore[arg-type]

    def _answer_is_next(self, response: ModelResponse) -> bool:
        """Every proposed call was a read that is ready, and the model is asked again after them (unless the
        reads' own results are the answer), and it can keep that call for the run."""
        agent = self.agent
        ready = response.tool_calls and all(c.signature in agent.speculative for c in response.tool_calls)
        return bool(ready) and callable(getattr(agent.model, "prime", None)) and \
            not all(agent.tools[c.name].answers for c in response.tool_calls)

    def _prime_answer(self, messages: list[Message], response: ModelResponse) -> Prefetch:
        agent = self.agent
        results = [Message("tool", agent.speculative[c.signature].content, tool_call_id=c.id, name=c.name)
                   for c in response.tool_calls]
        asked = Message("assistant", response.text, tool_calls=response.tool_calls)
        request = self._request([*messages, asked, *results])  # admitted before it starts
        handle = agent.model.prime(request)
        handle.paid = True
        self.result.answer = handle
        task = asyncio.ensure_future(self._settle_answer(handle))
        agent.pending_prefetches.add(task)
        task.add_done_callback(agent.pending_prefetches.discard)
        return self.result

    async def _settle_answer(self, handle: Any) -> None:
        """The primed answer's spend, once it is known; a call cut off is settled at what was held for it."""
        try:
            events = await self.agent.model.wait(handle)
        except BaseException as exc:  # dropped (newer words came) or failed: what it held is committed
            self.ledger.close()
            self.result.refused = "cancelled" if "cancelled" in str(exc) or isinstance(exc, asyncio.CancelledError) \
                else f"{type(exc).__name__}: {exc}"[:300]
            self._finish()
            if isinstance(exc, asyncio.CancelledError):
                raise
            return
        _, usage = _response_of(events)
        self.ledger.settle_speculation(usage)
        self.result.usage = self.result.usage + usage
        self._finish()

    def _finish(self) -> None:
        r = self.result
        self.log.emit(EventKind.PREFETCH_FINISHED, meta={"usage": self.ledger.snapshot()},
                      reads=[o.call.signature for o in r.reads if o.executed], refused=r.refused,
                      tokens=r.usage.total_tokens, cost_usd=r.usage.cost_usd)


def _response_of(events: list[Any]) -> tuple[ModelResponse | None, Usage]:
    """The finished response among a call's events, and what it consumed."""
    response = next((ev for ev in events if isinstance(ev, ModelResponse)), None)
    return response, response.usage if response is not None else Usage()
