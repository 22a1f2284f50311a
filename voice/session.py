"""A voice call: caller audio in, user turns to the loop, streamed speech out, with barge-in,
speculative reads and spoken approval.

The same session runs in virtual time (`run_file`: a tick per 32 ms frame, compute is instantaneous,
deterministic) and in real time (a transport calls `hear` and `played`; runs, STT and TTS go to tasks
and threads so the caller can cut in while the agent is still thinking).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Any

import numpy as np

from loop import Agent, Decision, Event, Message, RunOutcome, ToolCall, Verdict
from voice.approval import Answer, classify_answer, confirmation_question
from voice.audio import FrameAssembler
from voice.call_state import Barge, PendingApproval, SessionConfig, TurnRecord, complete_pairs
from voice.playout import FRAME, PlayoutCursor
from voice.speculation import speculate_reads
from voice.speech_out import AudioSink, SpeechOut
from voice.turns import TurnDetector, is_interruption, looks_finished

FRAME_S = FRAME / 16000


class CallSession:
    def __init__(self, agent: Agent, vad: Any, stt: Any, tts: Any, chunker: type,
                 config: SessionConfig | None = None, sink: AudioSink | None = None, realtime: bool = False) -> None:
        self.agent, self.vad, self.stt, self.realtime = agent, vad, stt, realtime
        self.cfg = config or SessionConfig()
        self.detector = TurnDetector(self.cfg.turns)
        self.playout = PlayoutCursor()
        self.speech = SpeechOut(tts, chunker, self.playout, sink, realtime, self._said)
        self.history: list[Message] = []
        self.transcript: list[Message] = []  # the run in flight fills this, even if it is cancelled
        self.turns: list[TurnRecord] = []
        self.trace: list[dict[str, Any]] = []
        self.observers: list[Any] = []  # callables(dict) for live views (browser page, operator API)
        self.out: list[np.ndarray] = []
        self.now = 0.0
        self.heard: list[np.ndarray] = []  # caller audio of the current turn
        self.preroll: np.ndarray | None = None
        self.assembler = FrameAssembler()
        self.barge: Barge | None = None
        self.approval: PendingApproval | None = None
        self.asking = asyncio.Event()
        self.run_task: asyncio.Task | None = None
        self.next_speculation = 0.0
        self.last_partial = ("", -1.0)  # (text, end of the speech it covers)
        self.early: tuple[float, asyncio.Future[str]] | None = None
        self.next_barge_check = 0.0
        self.fed_at: deque[tuple[float, float]] = deque(maxlen=64)  # real time: (stream time, wall time) per frame
        self.wall_last_speech = 0.0
        self.speech.on_first_send = self._first_send
        agent.approver = self.ask_caller
        agent.listeners.append(self._on_event)

    # ---- driving ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Call start: warm the model's prompt cache with the stable prefix, then greet."""
        await self.agent.warm()
        self._trace("prefix_warmed", chars=len(self.agent.assembler.prefix[0].content))
        self.speech.start()
        if self.cfg.greeting:
            self.speech.say(self.cfg.greeting, "greeting")

    async def close(self) -> None:
        if self.run_task and not self.run_task.done():
            self.run_task.cancel("call ended")
        await self.speech.close()
        self._trace("call_ended")

    async def run_file(self, caller: np.ndarray) -> list[TurnRecord]:
        """Virtual time: the whole recording, a frame per tick, agent audio played in lockstep."""
        await self.start()
        n_frames = -(-len(caller) // FRAME)
        i = 0
        while i < n_frames or (self._busy() and i < n_frames + self.cfg.max_tail_s / FRAME_S):
            if self.run_task is not None and self.approval is None:
                await self._settle()  # virtual time: thinking takes no time, whoever resumed the run
            frame = caller[i * FRAME:(i + 1) * FRAME]
            self.now = i * FRAME_S
            self._play_tick(self.now)
            await self._hear_frame(np.pad(frame, (0, FRAME - len(frame))), self.now)
            i += 1
        await self.close()
        return self.turns

    async def hear(self, pcm: np.ndarray) -> None:
        """Real time: any amount of 16 kHz caller audio from the transport."""
        for frame in self.assembler.push(pcm):
            self.now += FRAME_S
            self.fed_at.append((self.now, time.perf_counter()))
            await self._hear_frame(frame, self.now)

    def played(self, samples: int) -> None:
        """Real time: the transport confirms that `samples` more agent audio reached the caller."""
        self.playout.advance(samples)

    def _busy(self) -> bool:
        return self.playout.speaking or self.approval is not None or self.detector.in_turn

    def _play_tick(self, t: float) -> None:
        chunk = self.playout.next_frame()
        self.out.append(chunk if chunk is not None else np.zeros(FRAME, np.int16))
        if chunk is not None:
            self.playout.advance(len(chunk))  # the file transport "plays" instantly
            self._first_audio(t)

    def _first_audio(self, t: float) -> None:
        if self.turns and "first_audio_s" not in self.turns[-1].latency_ms:
            self.turns[-1].latency_ms["first_audio_s"] = round(t, 3)
            self._trace("agent_audio_started")

    async def _hear_frame(self, frame: np.ndarray, t: float) -> None:
        if self.approval and t - self.approval.asked_s > self.cfg.approval_timeout_s:
            self._trace("approval_timeout", call=self.approval.call.name)
            await self._answer(False)
        prob = self.vad.prob(frame)
        if prob >= self.cfg.turns.threshold:
            self.wall_last_speech = time.perf_counter()
        started = self.detector.update(prob, t, FRAME_S)
        if started:
            self.heard = [self.preroll, frame] if self.preroll is not None else [frame]
            self._on_speech_start(t)
        elif self.detector.in_turn:
            self.heard.append(frame)
        self.preroll = frame
        if self.detector.in_turn:
            await self._during_speech(t)

    async def _during_speech(self, t: float) -> None:
        turns = self.cfg.turns
        if self.barge and not self.barge.committed and self.detector.speech_s() >= turns.min_interrupt_s \
                and t >= self.next_barge_check:
            self.next_barge_check = t + turns.barge_check_every_s
            text = await self._partial()
            if is_interruption(text, self.detector.speech_s(), turns):
                self._commit_barge(text)
        silence = self.detector.silence_s(t + FRAME_S)
        self._early_transcript(silence)
        if silence >= turns.endpoint_silence_s:
            t0 = time.perf_counter()
            text = await self._partial()
            if silence >= (turns.endpoint_silence_s if looks_finished(text) else turns.hold_silence_s):
                await self._end_of_turn(t + FRAME_S, text, (time.perf_counter() - t0) * 1000)
        elif silence == 0 and t >= self.next_speculation:
            self.next_speculation = t + turns.speculate_every_s
            await self._speculate()

    def _early_transcript(self, silence: float) -> None:
        """Real time: start transcribing as soon as the caller pauses, so the text is ready, or nearly,
        when the pause becomes an end of turn. Speech resuming makes it stale."""
        key = self.detector.last_speech_s
        if self.early and self.early[0] != key:
            self.early[1].cancel()
            self.early = None
        if self.realtime and self.early is None and silence >= self.cfg.turns.early_stt_s:
            self.early = (key, asyncio.ensure_future(self._transcribe(np.concatenate(self.heard))))

    def _on_speech_start(self, t: float) -> None:
        self._trace("caller_speech_started", onset_s=round(self.detector.onset_s, 3))
        thinking = self.run_task is not None and not self.run_task.done() and self.approval is None
        if (self.playout.speaking or thinking) and self.barge is None:
            self.speech.pause()  # stop at once; decide later whether it was a real interruption
            self.barge = Barge(self.detector.onset_s)
            fed = next((w for ft, w in reversed(self.fed_at) if ft <= self.detector.onset_s + 1e-9), None)
            wall = {"stop_latency_wall_ms": round((time.perf_counter() - fed) * 1000, 1)} if fed else {}
            self._trace("agent_paused", stop_latency_ms=round((t + FRAME_S - self.detector.onset_s) * 1000, 1), **wall)

    # ---- turns -----------------------------------------------------------------------------

    async def _transcribe(self, audio: np.ndarray) -> str:
        if self.realtime:  # keep the event loop free for other calls and for playout
            return (await asyncio.to_thread(self.stt.transcribe, audio)).strip()
        return self.stt.transcribe(audio).strip()

    async def _partial(self) -> str:
        """The transcript of the current turn so far; cached until the caller says more."""
        key = self.detector.last_speech_s
        if self.last_partial[1] != key:
            early, self.early = self.early, None
            if early and early[0] == key:
                text = await early[1]
            else:
                text = await self._transcribe(np.concatenate(self.heard))
            self.last_partial = (text, key)
            self._trace("caller_partial", text=text)
        return self.last_partial[0]

    async def _end_of_turn(self, t: float, text: str, stt_ms: float) -> None:
        """`stt_ms` is how long the decision waited for the transcript (not the part hidden in the pause)."""
        duration, endpoint_ms = self.detector.speech_s(), (t - self.detector.last_speech_s) * 1000
        self.detector.end_turn()
        self.heard, self.last_partial = [], ("", -1.0)
        self._trace("caller_turn_ended", text=text, speech_s=round(duration, 3))
        barge, self.barge = self.barge, None
        if barge and not barge.committed and not (self.approval and text):
            if not is_interruption(text, duration, self.cfg.turns):
                self.speech.resume()
                self._trace("false_interruption_resumed", text=text)
                return
            self.barge = barge
            self._commit_barge(text)
            self.barge = None
        if not text:
            self._trace("ignored_noise")
        elif self.approval is not None:
            self.speech.cut_off()  # a short "yes" over the question is still the answer
            if self.turns:  # the reply the caller now waits for follows this answer, not the first question
                self.turns[-1].latency_ms = {"endpointing": round(endpoint_ms, 1), "stt": round(stt_ms, 1)}
                self.turn_speech_end = self.wall_last_speech
            await self._approval_reply(text)
        else:
            await self._start_run(text, {"endpointing": round(endpoint_ms, 1), "stt": round(stt_ms, 1)})

    def _commit_barge(self, text: str) -> None:
        assert self.barge is not None
        self.barge.committed = True
        heard = self.playout.heard_text("reply")
        self.speech.cut_off()
        in_flight = self.run_task is not None and not self.run_task.done()
        if self.turns and self.approval is None:
            self.turns[-1].interrupted, self.turns[-1].heard_text = True, heard
            if in_flight:  # its messages are kept when the cancellation lands (_finish_run)
                self.run_task.cancel("caller barged in")
            else:
                self._truncate_history(heard)
        self._trace("barge_in", caller_text=text, heard=heard)

    def _truncate_history(self, heard: str) -> None:
        """The model must remember only what the caller actually heard; finished tool results stay."""
        for msg in reversed(self.history):
            if msg.role == "assistant" and msg.content:
                msg.content = heard
                return

    def _first_send(self) -> None:
        """Real time: the first frame of this reply left for the caller; measure the whole turn directly."""
        if self.turns and self.realtime and "voice_to_voice_measured" not in self.turns[-1].latency_ms:
            lat = self.turns[-1].latency_ms
            lat["voice_to_voice_measured"] = round((time.perf_counter() - self.turn_speech_end) * 1000, 1)
            if "voice_to_voice" in lat:
                lat["unaccounted"] = round(lat["voice_to_voice_measured"] - lat["voice_to_voice"], 1)

    async def _start_run(self, text: str, latency: dict[str, float]) -> None:
        self.turn_speech_end = self.wall_last_speech
        self.playout.reset()
        self.turns.append(TurnRecord(user_text=text, started_s=self.now, latency_ms=latency))
        self.speech.new_reply()
        self.run_task = asyncio.create_task(self.agent.run(text, history=self.history,
                                                           transcript=self.transcript))
        self.run_task.add_done_callback(self._finish_run)
        if not self.realtime:
            await self._settle()

    async def _settle(self) -> None:
        """Virtual time: let the run go on until it finishes or waits for the caller's answer."""
        if self.run_task is None:
            return
        self.asking.clear()
        waiter = asyncio.create_task(self.asking.wait())
        await asyncio.wait({self.run_task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        await asyncio.sleep(0)  # let the done-callback run

    def _finish_run(self, task: asyncio.Task) -> None:
        if task is not self.run_task:
            return
        self.run_task = None
        self.agent.speculative.clear()  # reads cached for this utterance are stale after it
        rec = self.turns[-1]
        if task.cancelled():
            self.history = [*complete_pairs(self.transcript), Message("assistant", rec.heard_text)]
            rec.outcome, rec.reason = "COMPLETED", "cut short by the caller"
            return
        result = task.result()
        self.history = result.messages
        rec.outcome, rec.reason, rec.agent_text = result.outcome.value, result.reason, result.answer
        if result.outcome is RunOutcome.ESCALATED:
            self.speech.say("Let me get a person to help you with that. Please hold.", "reply")
        elif result.outcome is not RunOutcome.COMPLETED:
            self.speech.say("Sorry, I couldn't finish that just now.", "reply")

    # ---- approval --------------------------------------------------------------------------

    async def ask_caller(self, call: ToolCall, verdict: Verdict) -> bool:
        """The loop's approver: say the question, then wait for the caller (or an operator)."""
        if verdict.decision is not Decision.ASK:
            return False
        self.speech.say(confirmation_question(call), "prompt")
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.approval = PendingApproval(call, self.now, future)
        self._trace("approval_asked", call=call.name, arguments=call.arguments, rule=verdict.rule)
        self.asking.set()
        try:
            return await future
        finally:
            self.approval = None

    async def _approval_reply(self, text: str) -> None:
        answer = classify_answer(text)
        self._trace("approval_reply", text=text, answer=answer.value)
        if answer is Answer.UNCLEAR:
            self.speech.say("Sorry, was that a yes or a no?", "prompt")
            return
        await self._answer(answer is Answer.YES)

    async def decide(self, approved: bool) -> None:
        """Operator override from the API: settles the pending approval whatever the caller says."""
        self._trace("operator_decision", approved=approved)
        await self._answer(approved)

    async def _answer(self, approved: bool) -> None:
        if self.approval is None or self.approval.answer.done():
            return
        self.approval.answer.set_result(approved)
        self.speech.new_reply()
        if not self.realtime:
            await self._settle()

    async def _speculate(self) -> None:
        if not self.cfg.speculate or self.approval or self.run_task or self.barge:
            return
        if getattr(self.stt, "in_flight", 0):  # a shared Whisper busy with other calls: speculation can wait
            self._trace("speculation_skipped", why="speech-to-text busy")
            return
        if text := await self._partial():
            await speculate_reads(self.agent, self.history, text, self._trace)

    # ---- events ----------------------------------------------------------------------------

    def _on_event(self, ev: Event) -> None:
        if ev.kind == "model_delta" and ev.payload.get("type") == "text":
            self.speech.text(ev.payload["text"])
        elif ev.kind == "model_response":
            self.speech.end_of_text()
        elif ev.kind in ("verdict", "tool_result", "approval", "run_finished", "run_cancelled", "guardrail"):
            self._trace(f"loop.{ev.kind}", **{k: v for k, v in ev.payload.items() if k != "content"})
            if ev.kind == "tool_result" and self.turns:
                self.turns[-1].tool_calls.append({**ev.payload["call"], "status": ev.payload["status"],
                                                  "executed": ev.payload["executed"]})

    def _said(self, kind: str, text: str, seconds: float) -> None:
        self._trace("agent_said", part=kind, text=text, seconds=round(seconds, 3))
        if kind == "reply" and self.turns and "voice_to_voice" not in self.turns[-1].latency_ms:
            self.speech.latency(self.turns[-1].latency_ms)  # first reply audio is ready: the turn's latency

    def _trace(self, kind: str, **data: Any) -> None:
        entry = {"t": round(self.now, 3), "kind": kind, **data}
        self.trace.append(entry)
        for observer in self.observers:
            observer(entry)
