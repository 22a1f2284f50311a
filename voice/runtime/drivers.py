"""The two drivers of a call core: they carry out its commands with the real models, the agent and the
transport, and feed the results back as inputs.

- `VirtualDriver` (fixtures, `voiceloop call`): a tick per 32 ms frame; compute takes no call time, so a
  transcription, a synthesis or a whole run finishes before the next frame. Deterministic.
- `RealtimeDriver` (transports, `voice/runtime/realtime.py`): caller audio is taken in at once and never waits;
  STT and TTS run in worker threads, runs and speculation in tasks; agent audio goes to the transport at once.

The driver is the agent's approver and one of its listeners for the call: the core decides, the driver acts.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import numpy as np
from opentelemetry import context as otel_context

from loop import Agent, ApprovalAnswer, Event, Message, ToolCall, Verdict
from voice.audio import FRAME_S, FRAME_SAMPLES
from voice.call.core import CallCore
from voice.call.events import (
    ApprovalRequested,
    AudioPlayed,
    AudioSink,
    CallCommand,
    CallerFrame,
    CallInput,
    CancelRun,
    ClearAudio,
    DropStaleSpeech,
    HandOver,
    Hangup,
    Note,
    RunEnded,
    RunEvent,
    ScoreTurnEnd,
    SettleApproval,
    Speculate,
    SpeechReady,
    StartRun,
    StopSpeculating,
    Synthesize,
    Traced,
    Transcribe,
    TranscriptReady,
    TurnEndScored,
    WarmModel,
)
from voice.runtime.priming import PrimedModel
from voice.runtime.speculation import speculate_reads
from voice.speech.engines import EndOfTurn, transcribe_with
from voice.speech.spoken import SpokenForm, SpokenTTS
from voice.speech.vocabulary import agent_id_digits, agent_vocabulary
from voice.trace import TraceKind

log = logging.getLogger("voiceloop.call")
Observer = Callable[[dict[str, Any]], None]


class CallDriver:
    """What both drivers share: the agent's wiring, the run task, and carrying out commands."""

    def __init__(self, core: CallCore, agent: Agent, vad: Any, stt: Any, tts: Any, sink: AudioSink,
                 turn_model: EndOfTurn | None = None) -> None:
        self.turn_model = turn_model  # None: turns end by the transcript rules alone
        # the ear hears the spoken form ("four five six seven"); transcript and history keep the written one
        self.core, self.vad, self.stt, self.sink = core, vad, stt, sink
        self.tts = SpokenTTS(tts, SpokenForm(core.cfg.language))
        self.vocabulary = agent_vocabulary(agent)  # every transcription of the call leans towards the agent's words
        self.id_digits = agent_id_digits(agent)  # ... and reads a dictated id again at the lengths the agent declares
        self.observers: list[Observer] = []
        self.run_task: asyncio.Task | None = None
        self.approval_future: asyncio.Future[ApprovalAnswer] | None = None
        # the tracing context a run starts in (the caller turn's span, `voice/observe/otel.py`); None: the current one
        self.run_context: Callable[[], otel_context.Context | None] = lambda: None
        # what a hand-over means on this call's transport (a phone transfer); none: the caller stays with the agent
        self.hand_over_to: list[Callable[[str], Awaitable[None]]] = []
        self.handing_over: set[asyncio.Future[None]] = set()
        self.speech_generation = 0  # clauses of older replies are skipped (`DropStaleSpeech`)
        # the call's own view of the agent: its approver and listener are wired there, never into the user's object
        self.agent = agent.override(approver=self.ask_approval, listeners=[*agent.listeners, self._on_run_event])
        if core.cfg.preempt and not isinstance(self.agent.model, PrimedModel):
            self.agent.model = PrimedModel(self.agent.model)  # decisions started in the caller's pause are kept

    def feed(self, event: CallInput) -> None:
        for command in self.core.handle(event):
            self.carry_out(command)

    def carry_out(self, command: CallCommand) -> None:
        match command:
            case Traced(entry=entry):
                for observer in self.observers:
                    observer(entry)
            case ClearAudio():
                self.sink.clear()
            case Transcribe():
                self.transcribe(command)
            case ScoreTurnEnd():
                if self.turn_model is not None:
                    self.score_turn_end(command)
            case Synthesize():
                self.synthesize(command)
            case StartRun():
                self.start_run(command)
            case CancelRun(reason=reason):
                if self.run_task is not None and not self.run_task.done():
                    self.run_task.cancel(reason)
            case SettleApproval(answer=answer):
                if self.approval_future is not None and not self.approval_future.done():
                    self.approval_future.set_result(answer)
                self.approval_settled()
            case Speculate():
                self.speculate(command)
            case StopSpeculating():
                self.stop_speculating()
            case WarmModel(history=history):
                self.warm_model(history)
            case DropStaleSpeech(generation=generation):
                self.speech_generation = max(self.speech_generation, generation)
            case HandOver(reason=reason):
                self.handing_over |= {asyncio.ensure_future(hand_over(reason)) for hand_over in self.hand_over_to}

    # ---- the agent ---------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Call start: warm the model's prompt cache with the stable prefix, then greet."""
        await self.agent.warm()
        for command in self.core.greet(len(self.agent.assembler.prefix[0].content)):
            self.carry_out(command)
        self.after_input()

    def start_run(self, command: StartRun) -> None:
        context = contextvars.copy_context()
        if (parent := self.run_context()) is not None:
            context.run(otel_context.attach, parent)  # a copy only this run's task sees: never detached
        self.run_task = asyncio.create_task(
            self.agent.run(command.text, history=command.history, transcript=command.transcript), context=context)
        self.run_task.add_done_callback(self._run_done)

    def _run_done(self, task: asyncio.Task) -> None:
        self.agent.speculative.clear()  # reads and decisions made for this utterance are stale after it
        if isinstance(self.agent.model, PrimedModel):
            self.agent.model.forget()
        if task is self.run_task:
            self.run_task = None
        if task.cancelled():
            ended = RunEnded(None)
        elif (exc := task.exception()) is not None:
            log.error("run crashed: %r", exc)
            ended = RunEnded(None, error=f"{type(exc).__name__}: {exc}")
        else:
            ended = RunEnded(task.result())
        self.feed(ended)
        self.after_input()

    async def ask_approval(self, call: ToolCall, verdict: Verdict) -> ApprovalAnswer:
        """The loop's approver: the core asks the caller; the answer (or an operator, or a timeout) settles it."""
        future: asyncio.Future[ApprovalAnswer] = asyncio.get_running_loop().create_future()
        self.approval_future = future
        self.feed(ApprovalRequested(call, verdict, self.agent.tools.get(call.name), tuple(self.agent.tools)))
        self.approval_asked()
        try:
            return await future
        finally:
            self.approval_future = None

    def _on_run_event(self, event: Event) -> None:
        self.feed(RunEvent(event))
        self.after_input()

    def trace(self, kind: TraceKind, **data: Any) -> None:
        self.feed(Note(kind, data))

    async def close(self, reason: str = "call ended", wait_s: float = 5.0) -> None:
        """Hang up: a run in flight is cancelled and given `wait_s` to reach the journal as cancelled."""
        task = self.run_task
        self.feed(Hangup(reason))
        if task is not None and not task.done():
            await asyncio.wait({task}, timeout=wait_s)
        self.trace(TraceKind.CALL_ENDED, reason=reason)

    # ---- what differs between the drivers ----------------------------------------------------------------

    def transcribe(self, command: Transcribe) -> None:
        raise NotImplementedError

    def score_turn_end(self, command: ScoreTurnEnd) -> None:
        raise NotImplementedError

    def synthesize(self, command: Synthesize) -> None:
        raise NotImplementedError

    def speculate(self, command: Speculate) -> None:
        raise NotImplementedError

    def stop_speculating(self) -> None:
        """Drop decisions on older words (the caller paused)."""

    def warm_model(self, history: list[Message]) -> None:
        """Let the model read the call so far while the caller speaks."""

    async def read_ahead(self, history: list[Message]) -> None:
        started = time.perf_counter()
        if tokens := await self.agent.warm_conversation(history):
            self.trace(TraceKind.CALL_READ_AHEAD, tokens=tokens, ms=round((time.perf_counter() - started) * 1000, 1))

    def approval_asked(self) -> None:
        """The run now waits for the caller."""

    def approval_settled(self) -> None:
        """The run may go on."""

    def after_input(self) -> None:
        """Something may have changed what the transport can play."""


class VirtualDriver(CallDriver):
    """Fixtures: the recording a frame per tick; agent audio played and acknowledged in lockstep."""

    def __init__(self, *args: Any, max_tail_s: float = 30.0) -> None:
        super().__init__(*args)
        self.max_tail_s = max_tail_s
        self.out: list[np.ndarray] = []
        self.speculations: list[Speculate] = []
        self.warming: list[list[Message]] = []
        self.settle_due = False
        self.asking = asyncio.Event()

    async def play_file(self, caller: np.ndarray) -> None:
        n_frames = -(-len(caller) // FRAME_SAMPLES)
        i = 0
        while i < n_frames or (self.core.busy and i < n_frames + self.max_tail_s / FRAME_S):
            if self.run_task is not None and self.core.run.approval is None:
                await self._settle()  # thinking takes no time, whoever resumed the run (an operator, say)
            t = i * FRAME_S
            chunk = self.core.next_frame(t)
            self.out.append(chunk if chunk is not None else np.zeros(FRAME_SAMPLES, np.int16))
            if chunk is not None:
                self.feed(AudioPlayed(len(chunk)))  # the file transport "plays" at once
            frame = caller[i * FRAME_SAMPLES:(i + 1) * FRAME_SAMPLES]
            frame = np.pad(frame, (0, FRAME_SAMPLES - len(frame)))
            self.feed(CallerFrame(frame, t, self.vad.prob(frame), time.perf_counter()))
            await self.catch_up()
            i += 1

    async def catch_up(self) -> None:
        """Finish what the last inputs started: speculation, then the run until it ends or asks the caller."""
        while self.speculations or self.settle_due or self.warming:
            if self.warming:
                await self.read_ahead(self.warming.pop(0))
            elif self.speculations:
                command = self.speculations.pop(0)
                await speculate_reads(self.agent, command.history, command.text, self.trace,
                                      answer_too=command.in_pause)
            else:
                self.settle_due = False
                await self._settle()

    async def _settle(self) -> None:
        if self.run_task is None or self.core.run.approval is not None:
            return  # no run, or it waits for the caller (perhaps asked already, while the last one was ending)
        self.asking.clear()
        waiter = asyncio.create_task(self.asking.wait())
        await asyncio.wait({self.run_task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        await asyncio.sleep(0)  # let the run's done-callback land

    def transcribe(self, command: Transcribe) -> None:
        started = time.perf_counter()
        text, error = transcript_of(command, self.stt, self.vocabulary, self.id_digits)
        if error:
            self.trace(TraceKind.STT_FAILED, error=error)
        self.feed(TranscriptReady(command.key, text, (time.perf_counter() - started) * 1000, bool(error)))

    def score_turn_end(self, command: ScoreTurnEnd) -> None:
        assert self.turn_model is not None
        if (scored := turn_verdict(command, self.turn_model)) is not None:
            self.feed(scored)

    def synthesize(self, command: Synthesize) -> None:
        audio = self.tts.synthesize(command.text)
        self.feed(SpeechReady(command.text, command.kind, audio, command.generation))

    def speculate(self, command: Speculate) -> None:
        self.speculations.append(command)

    def warm_model(self, history: list[Message]) -> None:
        self.warming.append(history)

    def start_run(self, command: StartRun) -> None:
        super().start_run(command)
        self.settle_due = True

    def approval_asked(self) -> None:
        self.asking.set()

    def approval_settled(self) -> None:
        self.settle_due = True


def transcript_of(command: Transcribe, stt: Any, vocabulary: Sequence[str], id_digits: Sequence[int] = ()
                  ) -> tuple[str, str]:
    """(text, error), biased towards the call's `vocabulary` (the agent's words, `voice.speech.vocabulary`), its
    identifiers read at the lengths the agent declares (`id_digits`) where a digit seems dropped or doubled; a
    turn's transcriber keeps its finished windows' text, so only its newest audio is heard again. A failed
    transcription is a turn the agent asks to hear again, not a dead call. (The command is data; the driver runs
    the engine.)"""
    try:
        if command.turn is not None:
            key = command.key if command.pause else None
            return command.turn.transcribe(stt, command.audio, vocabulary, key, id_digits).strip(), ""
        return transcribe_with(stt, command.audio, vocabulary, id_digits).strip(), ""
    except Exception as exc:
        log.error("speech-to-text failed: %r", exc)
        return "", str(exc)[:200]


def turn_verdict(command: ScoreTurnEnd, model: EndOfTurn) -> TurnEndScored | None:
    """The end-of-turn model's verdict; None if it failed (the turn then ends by the transcript rules)."""
    started = time.perf_counter()
    try:
        complete = model.complete(command.audio)
    except Exception as exc:
        log.error("the end-of-turn model failed: %r", exc)
        return None
    return TurnEndScored(command.key, complete, (time.perf_counter() - started) * 1000)
