"""The turn loop. One turn = budget, assemble, decide, vet, act, observe. Every exit is a named outcome."""

from __future__ import annotations

import asyncio
import copy
import inspect
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from concurrent.futures import Future
from contextlib import aclosing
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from loop import locale
from loop._agent_parts import refusal_reason, words_after_answer
from loop._agent_parts import related as checked_related
from loop._agent_parts import vocabulary as checked_vocabulary
from loop.act import Observation, ToolRunner, not_executed, results_in_words, tools_own_words
from loop.budget import BudgetLedger
from loop.config import LoopConfig
from loop.errors import ModelError
from loop.events import EventKind, ObservationStatus
from loop.grounding.phase import grounded_stream
from loop.otel import ModelCallMetrics, agent_span, annotate, chat_span, provider_name, record_model_call
from loop.outcomes import (
    ApprovalDenied,
    BudgetExhausted,
    Completed,
    Escalated,
    GuardrailStop,
    LoopDetected,
    RunOutcome,
    Terminal,
    ToolFailure,
)
from loop.policy.rules import Guardrail, Policy, VetContext
from loop.prefetch import Prefetch, Prefetcher
from loop.prompt import PromptAssembler
from loop.repetition import detect_repetition, turn_signature
from loop.replay import Tape
from loop.store.db import open_journal
from loop.store.journal import Event, EventLog, Listener
from loop.store.ledger import TenantBudget
from loop.tools import Tool, check_tools
from loop.types import TOOL_ANSWER, Message, Model, ModelEvent, ModelRequest, ModelResponse, TextDelta, ToolCall
from loop.vet import Approver, BatchVetter


@dataclass
class RunResult:
    run_id: str
    outcome: RunOutcome
    reason: str
    answer: str
    trajectory: list[Observation]  # executed actions, in order
    usage: dict[str, dict[str, float]]
    messages: list[Message]
    headroom: dict[str, float] = field(default_factory=dict)
    budget_dimension: str = ""  # BUDGET_EXHAUSTED: the dimension (or shared resource) that refused


@dataclass
class RunState:
    run_id: str
    messages: list[Message]
    turn: int = 0
    turn_signatures: list[str] = field(default_factory=list)
    turn_observations: list[list[str]] = field(default_factory=list)  # what each turn's calls returned
    trajectory: list[Observation] = field(default_factory=list)
    failures: dict[str, int] = field(default_factory=dict)
    spoken: str = ""  # the last batch's results, already said to the caller as the answer (Tool.answers)
    plain: str = ""  # the last batch's results, when they are plain sentences a caller may hear
    declines_ending: list[str] = field(default_factory=list)  # declines whose approver ends the run (ApprovalAnswer)
    waited_s: float = 0.0  # this turn's wait for a human's approval: not the turn's own time


class Agent:
    def __init__(self, model: Model, tools: Sequence[Tool] = (), policy: Policy | None = None,
                 config: LoopConfig | None = None, journal_path: str | None = None, *,
                 system_prompt: str = "You are a helpful assistant. Use tools when they help.",
                 guardrails: Sequence[Guardrail] = (), approver: Approver | None = None,
                 listeners: Iterable[Listener] = (), clock: Callable[[], float] = time.monotonic,
                 name: str = "voiceloop", tenant: TenantBudget | None = None, conversation_id: str = "",
                 vocabulary: Iterable[str] = (), scope: str = "", language: str = locale.DEFAULT,
                 related: Iterable[Iterable[str]] = ()) -> None:
        self.model, self.policy, self.name, self.clock = model, policy or Policy(), name, clock
        locale.get(language)  # a language voiceloop does not speak fails here, naming the ones it does
        self.language = language  # its fixed sentences and word lists (`loop.locale`)
        # words its callers say (product, street and staff names): plain data; a voice front end biases its
        # speech-to-text towards them (with the tools' enum values, `voice.speech.vocabulary`)
        self.vocabulary: tuple[str, ...] = checked_vocabulary(vocabulary)
        # `gen_ai.conversation.id` of every run: a voice call sets its call id; empty = each run's own id
        self.conversation_id = conversation_id
        self.config = config or LoopConfig.profile("task")
        self.tools = {t.name: t for t in tools}
        check_tools(model, tools)
        self.guardrails, self.approver, self.listeners = list(guardrails), approver, list(listeners)
        self.journal = open_journal(journal_path) if journal_path else None  # a SQLite path or postgresql:// URL
        self.speculative: dict[str, Observation] = {}  # read results prefetched while the caller speaks
        self.pending_prefetches: set[asyncio.Task[None]] = set()  # primed answers whose spend is not yet settled
        self.tenant = tenant  # a shared tenant budget every admission also holds against
        self.unsettled_writes: list[tuple[str, Future[Any]]] = []  # timed-out sync writes still running
        # `scope`: what the agent is for, said to a caller who asks about anything else (the embedded model
        # derives one from the tools' names without it: "Sorry, I can only help with orders and refunds here.")
        self.assembler = PromptAssembler(system_prompt, list(tools), model.count_tokens,
                                         self.config.context_tokens, self.policy.text, scope, language,
                                         checked_related(related))

    def use_model(self, model: Model) -> None:
        """Answer with `model` instead (a command's `--llm` over the agent's own); tokens are counted its way."""
        check_tools(model, list(self.tools.values()))
        self.model = model
        a = self.assembler
        self.assembler = PromptAssembler(a.system, a.tools, model.count_tokens, a.context_tokens, a.policy_text,
                                         a.scope, a.language, a.related)

    def override(self, *, model: Model | None = None, **changes: Any) -> Agent:
        """This agent for one call or session, with `changes` (approver, listeners, conversation_id, journal,
        tenant) and its own per-call state, leaving `self` as it was (pydantic-ai's `override()`): a driver wires
        its approver and listeners into the view, never into the user's object. `model`: answer with it instead
        (see `use_model`)."""
        view = copy.copy(self)
        view.listeners = list(self.listeners)
        view.speculative, view.pending_prefetches, view.unsettled_writes = {}, set(), []
        for name, value in changes.items():
            if not hasattr(self, name):
                raise TypeError(f"Agent.override() got an unknown attribute {name!r}")
            setattr(view, name, value)
        if model is not None:
            view.use_model(model)
        return view

    async def warm(self) -> None:
        """Hand the stable prefix to the model once, before the first turn, so its cache is hot."""
        warm = getattr(self.model, "warm", None)
        if warm is not None:
            request, _ = self.assembler.build([], 0, self.config.max_output_tokens)
            result = warm(request)
            if inspect.isawaitable(result):
                await result

    async def warm_conversation(self, history: Sequence[Message]) -> int:
        """Hand the conversation so far to a model that keeps a cache of it (the embedded one), so the next turn's
        request evaluates only what is new. Never a model call: nothing is generated, journaled or spent.
        Returns how many tokens the model read (0: it keeps no cache, or had them already)."""
        warm = getattr(self.model, "warm_conversation", None)
        if warm is None or not history:
            return 0
        request, _ = self.assembler.build(history, 0, self.config.max_output_tokens)
        return int(await warm(request))

    async def prefetch_reads(self, words: str, history: Sequence[Message] = (), *,
                             answer_too: bool = False) -> Prefetch:
        """Speculation on the caller's words so far (`loop.prefetch`): the reads the model proposes for them, vetted
        as a run's are and admitted against this agent's budget and tenant, run now and kept for the real turn;
        journaled, never a write. `answer_too`: also prime the answer after them, when the model can keep it."""
        return await Prefetcher(self).run(words, list(history), answer_too)

    def run_sync(self, goal: str | None = None, **kwargs: Any) -> RunResult:
        return asyncio.run(self.run(goal, **kwargs))

    async def run(self, goal: str | None = None, *, run_id: str | None = None, history: Sequence[Message] = (),
                  transcript: list[Message] | None = None) -> RunResult:
        """Start a run, or resume `run_id` from the journal through this same path. `history` is earlier
        conversation the model sees before `goal` (counted by admission like the run's own messages).
        `transcript`, if given, is filled in place, so a caller that cancels the run (barge-in) still has
        every finished message."""
        tape = Tape.from_events(self.journal.events(run_id)) if run_id and self.journal else Tape()
        goal = goal if goal is not None else tape.goal
        if transcript is None:
            transcript = []
        transcript[:] = list(history)
        state = RunState(run_id or uuid.uuid4().hex[:16], transcript)
        ledger = BudgetLedger(self.config.budget, self.clock, tenant=self.tenant, run_id=state.run_id)
        log = EventLog(self.journal, state.run_id, self.listeners, elapsed=partial(ledger.used, "wall_clock_s"),
                       on_replayed=partial(_catch_up, ledger))
        answer, dimension = "", ""
        with agent_span(self.name, state.run_id, self.config.name, self.conversation_id,
                        provider_name(self.model)) as span:
            try:
                log.emit(EventKind.RUN_STARTED, goal=goal, profile=self.config.name, model=self.model.name)
                self._append(state, Message("user", goal))
                while True:
                    await self._turn(state, log, ledger, tape)
            except Terminal as stop:
                outcome, reason, answer = stop.outcome, stop.reason, stop.answer
                dimension = getattr(stop, "dimension", "")
            except asyncio.CancelledError as cancel:
                # Not an outcome of the run: its caller withdrew it (a barge-in). Recorded, then re-raised.
                log.emit(EventKind.RUN_CANCELLED, reason=str(cancel.args[0]) if cancel.args else "cancelled",
                         turns=state.turn)
                raise
            except Exception as exc:
                outcome, reason = RunOutcome.ERROR, f"{type(exc).__name__}: {exc}"
            finally:
                ledger.close()
            annotate(span, voiceloop__outcome=outcome.value, voiceloop__reason=reason,
                     voiceloop__turns=state.turn, voiceloop__cost_usd=ledger.used("cost_usd"))
            log.emit(EventKind.RUN_FINISHED, meta={"usage": ledger.snapshot(), "headroom": ledger.headroom(),
                                           "warnings": ledger.warnings},
                     outcome=outcome.value, reason=reason, answer=answer, turns=state.turn,
                     **({"dimension": dimension} if dimension else {}))
        return RunResult(state.run_id, outcome, reason, answer, state.trajectory, ledger.snapshot(),
                         state.messages, ledger.headroom(), dimension)

    async def _turn(self, s: RunState, log: EventLog, ledger: BudgetLedger, tape: Tape) -> None:
        cfg = self.config
        # 0. budget, before anything is assembled or paid for: the whole request, `history=` included
        ledger.check_turn(self.assembler.input_tokens(s.messages, cfg.max_output_tokens), cfg.max_output_tokens,
                          self.model.pricing, model_timeout_s=cfg.model_timeout_s,
                          tool_calls=cfg.tool_calls_reserved_per_turn, tool_cost=cfg.tool_cost_reserved_per_turn,
                          shared=s.turn not in tape.responses)
        log.emit(EventKind.TURN_ADMITTED, meta={"budget": ledger.snapshot()}, turn=s.turn)
        started = self.clock()
        # 1. assemble
        request, dropped = self.assembler.build(s.messages, s.turn, cfg.max_output_tokens, cfg.model_timeout_s)
        request.words_spoken = bool(s.spoken)
        # 2. decide
        response = await self._decide(request, log, tape)
        ledger.settle_model(response.usage)
        s.turn += 1
        # nothing to do but talk, or the very calls whose results were just said again: those words were the answer;
        # the very calls just made, asked for again (a write is never made twice): their results, in plain words
        again = bool(response.tool_calls and s.turn_signatures) and (
            turn_signature(response.tool_calls) == s.turn_signatures[-1])
        if answer := s.spoken if s.spoken and (again or not response.tool_calls) else s.plain if again else "":
            if not s.spoken:
                log.emit(EventKind.TOOL_ANSWER, turn=s.turn - 1, text=answer)
            self._append(s, Message("assistant", answer, name=TOOL_ANSWER))
            self._finish_turn(s, log, ledger, started)
            raise Completed("the tools' results were the answer", answer=answer)
        self._append(s, Message("assistant", response.text, tool_calls=response.tool_calls))
        if response.refused:  # a refusal is not an answer: "content or action refused" (seed's outcome table)
            self._close_batch(s, log, response.tool_calls, {}, "not run: the model refused")
            self._finish_turn(s, log, ledger, started)
            raise GuardrailStop(refusal_reason(self.model.name, response))
        if not response.tool_calls:
            self._finish_turn(s, log, ledger, started)  # the answering turn is the one a caller waits on
            if response.finish_reason == "length":
                raise BudgetExhausted(f"the reply hit max_output_tokens={cfg.max_output_tokens} before it "
                                      "finished", dimension="tokens")
            raise Completed("the model gave a final answer", answer=response.text)
        calls = response.tool_calls
        log.emit(EventKind.PROPOSALS, turn=s.turn - 1, signatures=[c.signature for c in calls], context_dropped=dropped)
        s.turn_signatures.append(turn_signature(calls))
        if why := detect_repetition(s.turn_signatures, cfg.repeat_threshold, s.turn_observations):
            self._close_batch(s, log, calls, {}, "not run: the run stopped because it was repeating itself")
            raise LoopDetected(why)
        observations = await self._vet_act_observe(s, log, ledger, tape, calls)
        s.turn_observations.append([o.content for o in observations])
        self._finish_turn(s, log, ledger, started + s.waited_s)
        self._after_batch(s, observations)
        s.spoken = tools_own_words(self.tools, observations)
        s.plain = results_in_words(self.tools, observations)
        if s.spoken:  # said now; the model is still asked whether anything else needs doing
            log.emit(EventKind.TOOL_ANSWER, turn=s.turn - 1, text=s.spoken)

    async def _vet_act_observe(self, s: RunState, log: EventLog, ledger: BudgetLedger, tape: Tape,
                               calls: list[ToolCall]) -> list[Observation]:
        """3. vet the whole batch, 4. act on what survived, 5. observe every call in proposal order."""
        cfg = self.config
        ctx = VetContext(user_text=" ".join(m.content for m in s.messages if m.role == "user"),
                         observations=[m.content for m in s.messages if m.role == "tool"], language=self.language)
        vetted = await BatchVetter(self.tools, self.guardrails, self.policy, self.approver, log, tape,
                                   cfg.mutations_need_approval, self.clock).vet(calls, ctx)
        ledger.exclude_wait(vetted.waited_s)  # a human taking time to answer is not the run running long
        s.waited_s = vetted.waited_s
        approved, refused = vetted.approved, vetted.refused
        if vetted.halt is not None:
            self._close_batch(s, log, calls, refused, f"not run: {vetted.halt.guardrail} halted the run")
            raise GuardrailStop(f"{vetted.halt.guardrail}: {vetted.halt.detail}")
        reads = [t.timeout_s or cfg.default_tool_timeout_s for c, t in approved if not t.mutates]
        writes = [t.timeout_s or cfg.default_tool_timeout_s for c, t in approved if t.mutates]
        try:
            ledger.check_batch(len(approved), sum(t.max_cost_usd for _, t in approved),
                               (max(reads) if cfg.parallel_reads and reads else sum(reads)) + sum(writes),
                               shared=any(c.id not in tape.results for c, _ in approved))
        except BudgetExhausted:
            self._close_batch(s, log, calls, refused, "not run: the budget would not cover this batch")
            raise
        runner = ToolRunner(cfg.max_parallel_reads, cfg.parallel_reads, cfg.default_tool_timeout_s,
                            cfg.max_observation_chars, tape.results, tape.interrupted, self.speculative,
                            on_start=log.tool_started, on_finish=partial(_log_finish, log),
                            unsettled=self.unsettled_writes)
        results = {o.call.id: o for o in await runner.run_batch(approved)}
        ledger.settle_tools(sum(o.executed for o in results.values()), sum(o.cost_usd for o in results.values()))
        self._close_batch(s, log, calls, {**refused, **results}, "")
        s.declines_ending = vetted.ends_run
        s.trajectory += [results[c.id] for c, t in sorted(approved, key=lambda ct: ct[1].mutates)
                         if results[c.id].executed]  # execution order: reads, then writes
        return [results.get(c.id) or refused[c.id] for c in calls]

    async def _decide(self, request: ModelRequest, log: EventLog, tape: Tape) -> ModelResponse:
        source = tape.model_stream(request.turn) or self._model_stream(request)
        log.emit(EventKind.MODEL_CALL, turn=request.turn, messages=len(request.messages), model=self.model.name)
        response: ModelResponse | None = None
        provider, started, first = provider_name(self.model), time.perf_counter(), None
        with chat_span(self.model.name, request.turn, request.max_output_tokens, provider,
                       self.conversation_id) as span:
            try:
                async with asyncio.timeout(self.config.model_timeout_s), aclosing(source) as events:
                    async for ev in events:
                        if isinstance(ev, ModelResponse):
                            response = ev
                            continue
                        first = first if first is not None else time.perf_counter() - started
                        if isinstance(ev, TextDelta) and request.words_spoken:
                            response = words_after_answer(request, self.model)  # never said: stop generating
                            break
                        if isinstance(ev, TextDelta):
                            log.emit(EventKind.MODEL_DELTA, turn=request.turn, type="text", text=ev.text)
                        else:
                            log.emit(EventKind.MODEL_DELTA, turn=request.turn, type="tool_call", index=ev.index,
                                     id=ev.id, name=ev.name, arguments=ev.arguments)
            except (ModelError, TimeoutError) as exc:
                self._measure(provider, started, first, None, type(exc).__name__)
                if isinstance(exc, ModelError):
                    raise ToolFailure(f"model {self.model.name}: {exc}") from exc
                raise ToolFailure(f"model {self.model.name} did not finish within "
                                  f"{self.config.model_timeout_s:g} s") from exc
            if response is None:
                raise ToolFailure(f"model {self.model.name} ended its stream without a response")
            annotate(span, gen_ai__usage__input_tokens=response.usage.input_tokens,
                     gen_ai__usage__output_tokens=response.usage.output_tokens,
                     gen_ai__response__finish_reasons=[response.finish_reason],
                     gen_ai__response__model=response.model or None)
            self._measure(provider, started, first, response)
        log.emit(EventKind.MODEL_RESPONSE, turn=request.turn, response=response.to_dict())
        return response

    def _model_stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """The model's stream through the grounding phase (`loop.grounding.phase`), unless the model grounds its
        own output (the embedded model, inside its decoding) or says words it was given (a script)."""
        if getattr(self.model, "grounds_output", False):
            return self.model.stream(request)
        return grounded_stream(self.model, request)

    def _measure(self, provider: str, started: float, first_token_s: float | None, response: ModelResponse | None,
                 error: str = "") -> None:
        usage = response.usage if response is not None else None
        record_model_call(ModelCallMetrics(self.model.name, provider, usage.input_tokens if usage else 0,
                                           usage.output_tokens if usage else 0, time.perf_counter() - started,
                                           first_token_s, error))

    def _close_batch(self, s: RunState, log: EventLog, calls: list[ToolCall], done: dict[str, Observation],
                     missing: str) -> None:
        """Exactly one observation per proposed call, in proposal order, as tool messages."""
        for call in calls:
            obs = done.get(call.id) or not_executed(call, ObservationStatus.SKIPPED, missing)
            log.emit(EventKind.TOOL_RESULT, **obs.to_dict())
            self._append(s, Message("tool", obs.content, tool_call_id=call.id, name=call.name))

    def _after_batch(self, s: RunState, observations: list[Observation]) -> None:
        for obs in observations:
            if obs.escalation is not None:
                raise Escalated(obs.escalation)
            n = s.failures[obs.call.name] = s.failures.get(obs.call.name, 0) + 1 if obs.failed else 0
            if n >= self.config.max_consecutive_tool_failures:
                raise ToolFailure(f"{obs.call.name} failed {n} times in a row; last: {obs.content}")
        if s.declines_ending:  # the approver has told the user itself; the run's answer would be a second one
            raise ApprovalDenied("; ".join(s.declines_ending))
        declined = [o for o in observations if o.status == ObservationStatus.DECLINED]
        if declined and self.config.stop_on_decline:
            raise ApprovalDenied(f"the user declined {', '.join(o.call.name for o in declined)}")
        unapproved = [o for o in observations if o.status == "unapproved"]
        if unapproved and self.config.stop_on_decline:
            raise ApprovalDenied(f"{', '.join(o.call.name for o in unapproved)} needed approval and no approver "
                                 "is configured, so nobody was asked")

    def _finish_turn(self, s: RunState, log: EventLog, ledger: BudgetLedger, started: float) -> None:
        # Timings live in `meta`: they differ on replay, while the payload must not.
        took, ceiling = self.clock() - started, self.config.turn_wall_clock_s
        warnings = ledger.warnings + ([f"turn took {took:.3f} s > {ceiling.limit:g} s"] if took > ceiling.limit else [])
        ledger.warnings = []
        log.emit(EventKind.TURN_FINISHED, meta={"took_s": round(took, 6), "warnings": warnings}, turn=s.turn - 1)
        if took > ceiling.limit and ceiling.hard:
            raise BudgetExhausted(f"turn {s.turn - 1} took {took:.3f} s > {ceiling.limit:g} s", "turn_wall_clock_s")

    def _append(self, s: RunState, msg: Message) -> None:
        s.messages.append(msg)


def _log_finish(log: EventLog, obs: Observation) -> None:
    """A write's result is journaled the moment it is known, so a kill later in the batch cannot lose it."""
    log.emit(EventKind.TOOL_FINISHED, **obs.to_dict())


def _catch_up(ledger: BudgetLedger, event: Event) -> None:
    if "elapsed_s" in event.meta:  # resume: time consumed before the interruption still counts
        ledger.resume_at(float(event.meta["elapsed_s"]))
