"""The real-time driver of a call core (transports): caller audio is taken in at once and never waits; STT and
TTS run in worker threads, runs and speculation in tasks; agent audio goes to the transport as soon as it exists.
What it shares with the virtual driver is `voice.runtime.drivers.CallDriver`."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from typing import Any

import numpy as np

from loop import Message
from loop.grounding.speakable import quoted_replies
from voice.audio import FRAME_S, SAMPLE_RATE, FrameAssembler
from voice.call.events import (
    AudioPlayed,
    CallerFrame,
    ScoreTurnEnd,
    Speculate,
    SpeechKind,
    SpeechReady,
    StartRun,
    Synthesize,
    Transcribe,
    TranscriptReady,
)
from voice.runtime import speech_first
from voice.runtime.drivers import CallDriver, transcript_of, turn_verdict
from voice.runtime.priming import PrimedModel
from voice.runtime.rehearsal import REHEARSAL_AHEAD_S, Rehearsal
from voice.runtime.speculation import speculate_reads
from voice.speech.clause_memo import first_clause, opening_clauses
from voice.speech.engines import QUICK_PASS
from voice.speech.shared_models import SPEECH_AHEAD_S, SharedTurnModel
from voice.trace import TraceKind

log = logging.getLogger("voiceloop.call")


class RealtimeDriver(CallDriver):
    """Transports: `hear` takes caller audio in and returns at once; everything slow runs beside it."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.assembler = FrameAssembler()
        self.stream_s = 0.0  # call time at the end of the caller audio taken in so far
        self.last_wall = time.perf_counter()
        self.speech_queue: asyncio.Queue[Synthesize] = asyncio.Queue()
        self.tasks: set[asyncio.Task] = set()
        self.speculation: asyncio.Task | None = None
        self.speculation_in_pause = False
        self.speech_gate = speech_first.SpeechGate()  # the voice goes first (voice/runtime/speech_first.py)
        speech_first.install(self.agent, self.speech_gate)
        # the answer's first clause synthesised in the caller's pause, when the pause's decision knows it
        self.rehearsal = Rehearsal(self._rehearse_clause, self.core.chunker_cls) \
            if self.core.cfg.preempt and self.core.cfg.rehearse else None
        # `_clause_to_warm`: (clause, kept whatever it holds): fixed lines' openings, and the first clause of each
        # reply the agent's prompt quotes, which is said as it stands ("We're open Monday to Friday")
        self.to_warm = [(c, False) for c in opening_clauses(self.core.words, self.core.chunker_cls)] + [
            (c, True) for line in quoted_replies(self.agent.assembler.system)
            if (c := first_clause(line, self.core.chunker_cls))]

    async def start(self) -> None:
        self._spawn(self._speak_forever())
        await super().start()

    def hear(self, pcm: np.ndarray, wall: float | None = None) -> None:
        """Any amount of 16 kHz caller audio; `wall` is when it arrived (perf_counter), if the transport knows."""
        for frame in self.assembler.push(pcm):
            t, self.stream_s = self.stream_s, self.stream_s + FRAME_S
            self.last_wall = wall if wall is not None else time.perf_counter()
            self.feed(CallerFrame(frame, t, self.vad.prob(frame), self.last_wall, self.stt_busy()))
        self.pump()

    def played(self, samples: int) -> None:
        self.feed(AudioPlayed(samples))
        self.pump()

    def now(self) -> float:
        """Call time on the transport's clock: the caller audio taken in, plus the time since it arrived."""
        return self.stream_s + (time.perf_counter() - self.last_wall)

    def pump(self) -> None:
        """Hand every ready frame to the transport, which buffers it and acknowledges playback."""
        while (chunk := self.core.next_frame(self.now())) is not None:
            self.sink.send(chunk)

    def after_input(self) -> None:
        self.pump()

    def transcribe(self, command: Transcribe) -> None:
        self._spawn(self._transcribe(command))

    def stt_busy(self) -> bool:
        """A shared Whisper busy with other calls (`voice.speech.shared_models`), told the core with each frame."""
        busy = getattr(self.stt, "busy", None)
        return bool(callable(busy) and busy())

    async def _transcribe(self, command: Transcribe) -> None:
        started = time.perf_counter()
        quick = QUICK_PASS.set(command.optional)  # the thread runs in a copy of this context
        try:
            text, error = await asyncio.to_thread(transcript_of, command, self.stt, self.vocabulary, self.id_digits)
        finally:
            QUICK_PASS.reset(quick)
        if error:
            self.trace(TraceKind.STT_FAILED, error=error)
        self.feed(TranscriptReady(command.key, text, (time.perf_counter() - started) * 1000, bool(error)))
        self.pump()

    def score_turn_end(self, command: ScoreTurnEnd) -> None:
        self._spawn(self._score_turn_end(command))

    async def _score_turn_end(self, command: ScoreTurnEnd) -> None:
        model = self.turn_model
        assert model is not None
        shared = model if isinstance(model, SharedTurnModel) else None  # a server's: it may refuse under load
        started = shared.claim() if shared is not None else 0.0
        if started is None:  # the turn ends by the words alone, as with no model
            self.trace(TraceKind.TURN_END_SKIPPED, why="the end-of-turn model is busy with other calls")
            return
        try:
            scored = await asyncio.to_thread(turn_verdict, command, model)
        finally:
            if shared is not None:
                shared.release(started)
        if scored is not None:
            self.feed(scored)
            self.pump()

    def synthesize(self, command: Synthesize) -> None:
        self.speech_gate.queued()
        self.speech_queue.put_nowait(command)

    async def _speak_forever(self) -> None:
        while True:
            if self.speech_queue.empty() and (clause := self._clause_to_warm()):
                await self._warm(*clause)
                continue
            command = await self.speech_queue.get()
            try:
                await self._speak(command)
            finally:
                self.speech_gate.done()

    def _clause_to_warm(self) -> tuple[str, bool] | None:
        """An opening clause of the agent's fixed lines ("Just to confirm:", "We're open Monday to Friday") its
        voice has not said yet, and whether to keep it whatever it holds, while nothing else wants the cores (no
        caller speech, no run, an idle shared voice): when an answer opens with it, the caller hears it at once
        instead of ~50-150 ms later. None when there is none, or not now."""
        spare = getattr(self.tts, "spare", None)
        if self.core.detector.in_turn or self.core.run.active or (callable(spare) and not spare()):
            return None
        while self.to_warm:
            clause, fixed = self.to_warm.pop(0)
            if not self.tts.remembers(clause):
                return clause, fixed
        return None

    async def _warm(self, clause: str, fixed: bool) -> None:
        try:
            await asyncio.to_thread(self.tts.synthesize, clause, fixed)  # kept in the voice's memo
        except Exception as exc:  # a voice that fails here fails for the answers too: they say so, not this
            log.warning("warming the voice failed (%r); no more clauses are synthesised ahead", exc)
            self.to_warm.clear()

    async def _speak(self, command: Synthesize) -> None:
        if command.generation < self.speech_generation:
            return  # the core dropped it before it was synthesised
        # a caller waiting in silence goes first; a clause with audio still playing ahead of it can wait that long
        SPEECH_AHEAD_S.set(self.core.run.reply.playout.unheard_samples() / SAMPLE_RATE)
        try:
            fixed = command.kind == SpeechKind.GREETING  # every call's: kept in the voice's memo whatever its length
            audio = await self._rehearsed(command.text) if command.kind == SpeechKind.REPLY else None
            if audio is None:
                audio = await asyncio.to_thread(self.tts.synthesize, command.text, fixed)
        except Exception as exc:  # the clause is lost, not the call
            log.error("text-to-speech failed: %r", exc)
            self.trace(TraceKind.TTS_FAILED, error=str(exc)[:200], text=command.text)
            audio = np.zeros(0, np.int16)
        self.feed(SpeechReady(command.text, command.kind, audio, command.generation))
        self.pump()

    async def _rehearsed(self, text: str) -> np.ndarray | None:
        """The clause's audio if it was synthesised in the caller's pause (None: synthesise it now)."""
        task = self.rehearsal.take(text) if self.rehearsal is not None else None
        try:
            return await task if task is not None else None
        except Exception:  # the rehearsal failed: the clause is synthesised as any other
            return None

    async def _rehearse_clause(self, text: str) -> np.ndarray:
        SPEECH_AHEAD_S.set(REHEARSAL_AHEAD_S)  # a shared voice serves it after every clause a caller waits for
        self.speech_gate.queued()  # the voice is busy: the loop's check for a further action waits for it too
        try:
            audio = await asyncio.to_thread(self.tts.synthesize, text)
        finally:
            self.speech_gate.done()
        self.trace(TraceKind.SPEECH_REHEARSED, text=text)
        return audio

    def speculate(self, command: Speculate) -> None:
        if self.speculation is not None and not self.speculation.done():
            if not command.in_pause:
                return  # one at a time; the next partial will come
            self.speculation.cancel()  # the caller paused: these words matter more than the older ones
        self.speculation = self._spawn(self._speculate(command))
        self.speculation_in_pause = command.in_pause

    async def _speculate(self, command: Speculate) -> None:
        done = await speculate_reads(self.agent, command.history, command.text, self.trace,
                                     answer_too=command.in_pause)
        spare = getattr(self.tts, "spare", None)  # a server's voices busy with other calls: no work that may be wasted
        if command.in_pause and self.rehearsal is not None and (not callable(spare) or spare()):
            # once the turn's run is under way its own clauses are on their way to the voice: nothing to rehearse
            self._spawn(self.rehearsal.rehearse(done, wanted=lambda: not self.core.run.active))

    def _cancel_older_speculation(self) -> None:
        """Cancel speculation on words from before the caller's pause (a decision started in the pause stays)."""
        if self.speculation is not None and not self.speculation.done() and not self.speculation_in_pause:
            self.speculation.cancel()

    def warm_model(self, history: list[Message]) -> None:
        self._spawn(self.read_ahead(history))

    def stop_speculating(self) -> None:
        self._cancel_older_speculation()
        if isinstance(self.agent.model, PrimedModel):
            self.agent.model.forget()  # a primed call runs on without its speculation task: stop it too

    def start_run(self, command: StartRun) -> None:
        self._cancel_older_speculation()  # older words: the real turn needs the model now
        # a decision started in the pause goes on: it is this turn's, and it primes the answer after its reads
        super().start_run(command)

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task:
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def close(self, reason: str = "call ended", wait_s: float = 5.0) -> None:
        await super().close(reason, wait_s)
        for task in list(self.tasks):
            task.cancel()
        if self.rehearsal is not None:
            self.rehearsal.forget()
