"""A voice call: caller audio in, user turns to the loop, streamed speech out, with barge-in,
speculative reads and spoken approval. Runs on an injectable clock; `run_file` drives it frame by frame."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict

from loop import Agent, Decision, Event, Message, ModelResponse, RunOutcome, ToolCall, Verdict
from loop.act import ToolRunner
from loop.policy import VetContext, tighten, worst_hit
from voice.approval import Answer, classify_answer, confirmation_question
from voice.playout import FRAME, PlayoutCursor
from voice.turns import TurnConfig, TurnDetector, is_interruption, looks_finished

FRAME_S = FRAME / 16000


class SpeechEngine(Protocol):
    def synthesize(self, text: str) -> np.ndarray: ...


class Chunker(Protocol):
    def push(self, text: str) -> list[str]: ...
    def flush(self) -> list[str]: ...


class SessionConfig(BaseModel):
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    turns: TurnConfig = TurnConfig()
    """Endpointing and barge-in thresholds."""
    greeting: str = ""
    """Said when the call starts; empty for none."""
    approval_timeout_s: float = 10.0
    """A pending approval with no answer for this long is declined."""
    speculate: bool = True
    """Run authorised reads on partial transcripts while the caller is still speaking."""
    max_tail_s: float = 30.0
    """After the caller's audio ends, keep the call open at most this long for the agent to finish."""


@dataclass
class TurnRecord:
    user_text: str
    started_s: float
    agent_text: str = ""
    heard_text: str = ""
    interrupted: bool = False
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    latency_ms: dict[str, float] = field(default_factory=dict)
    outcome: str = ""
    reason: str = ""

    def summary(self) -> dict[str, Any]:
        return {
            "user_text": self.user_text,
            "agent_text": self.agent_text,
            "heard_text": self.heard_text,
            "interrupted": self.interrupted,
            "tool_calls": self.tool_calls,
            "latency_ms": self.latency_ms,
            "outcome": self.outcome,
            "reason": self.reason,
        }


@dataclass
class PendingApproval:
    call: ToolCall
    asked_s: float
    answer: asyncio.Future[bool]


@dataclass
class Barge:
    onset_s: float
    committed: bool = False


class CallSession:
    def __init__(
        self,
        agent: Agent,
        vad: Any,
        stt: Any,
        tts: SpeechEngine,
        chunker: type,
        config: SessionConfig | None = None,
    ) -> None:
        self.agent, self.vad, self.stt, self.tts, self.chunker_cls = agent, vad, stt, tts, chunker
        self.cfg = config or SessionConfig()
        self.detector = TurnDetector(self.cfg.turns)
        self.playout = PlayoutCursor()
        self.history: list[Message] = []
        self.turns: list[TurnRecord] = []
        self.trace: list[dict[str, Any]] = []
        self.out: list[np.ndarray] = []
        self.now = 0.0
        self.heard: list[np.ndarray] = []  # caller audio of the current turn
        self.preroll: np.ndarray | None = None
        self.barge: Barge | None = None
        self.approval: PendingApproval | None = None
        self.asking = asyncio.Event()
        self.run_task: asyncio.Task | None = None
        self.chunker: Chunker | None = None
        self.marks: dict[str, float] = {}
        self.next_speculation = 0.0
        self.last_partial = ("", 0)
        agent.approver = self.ask_caller
        agent.listeners.append(self._on_event)

    # ---- driving ---------------------------------------------------------------------------

    async def run_file(self, caller: np.ndarray) -> list[TurnRecord]:
        """Play the caller's whole recording through the call on a virtual clock."""
        await self.agent.warm()
        self._trace("prefix_warmed", chars=len(self.agent.assembler.prefix[0].content))
        if self.cfg.greeting:
            self._speak(self.cfg.greeting, "greeting")
        n_frames = -(-len(caller) // FRAME)
        i = 0
        while i < n_frames or (self._busy() and i < n_frames + self.cfg.max_tail_s / FRAME_S):
            frame = caller[i * FRAME : (i + 1) * FRAME]
            await self.step(np.pad(frame, (0, FRAME - len(frame))), i * FRAME_S)
            i += 1
        return self.turns

    async def step(self, frame: np.ndarray, t: float) -> None:
        """One 32 ms tick: play a frame of agent audio, then hear a frame of caller audio."""
        self.now = t
        self._play(t)
        await self._hear(frame, t)
        if self.approval and t - self.approval.asked_s > self.cfg.approval_timeout_s:
            self._trace("approval_timeout", call=self.approval.call.name)
            await self._answer(False)

    def _busy(self) -> bool:
        return self.playout.speaking or self.approval is not None or self.detector.in_turn

    def _play(self, t: float) -> None:
        chunk = self.playout.next_frame()
        self.out.append(chunk if chunk is not None else np.zeros(FRAME, np.int16))
        if chunk is None:
            return
        self.playout.advance(len(chunk))  # the file transport "plays" instantly
        if "first_audio" not in self.marks and self.turns:
            self.marks["first_audio"] = t
            self._trace("agent_audio_started")

    async def _hear(self, frame: np.ndarray, t: float) -> None:
        started = self.detector.update(self.vad.prob(frame), t, FRAME_S)
        if started:
            self.heard = [self.preroll, frame] if self.preroll is not None else [frame]
            self._on_speech_start(t)
        elif self.detector.in_turn:
            self.heard.append(frame)
        self.preroll = frame
        if not self.detector.in_turn:
            return
        if self.barge and not self.barge.committed and self.detector.speech_s() >= self.cfg.turns.min_interrupt_s:
            text = self._partial()
            if is_interruption(text, self.detector.speech_s(), self.cfg.turns):
                self._commit_barge(text)
        silence = self.detector.silence_s(t + FRAME_S)
        if silence >= self.cfg.turns.endpoint_silence_s:
            text = self._partial()
            needed = self.cfg.turns.endpoint_silence_s if looks_finished(text) else self.cfg.turns.hold_silence_s
            if silence >= needed:
                await self._end_of_turn(t + FRAME_S)
        elif silence == 0 and t >= self.next_speculation:
            self.next_speculation = t + self.cfg.turns.speculate_every_s
            await self._speculate()

    def _on_speech_start(self, t: float) -> None:
        self._trace("caller_speech_started", onset_s=round(self.detector.onset_s, 3))
        if self.playout.speaking and self.barge is None:
            self.playout.paused = True  # stop at once; decide later whether it was a real interruption
            self.barge = Barge(self.detector.onset_s)
            self._trace("agent_paused", stop_latency_ms=round((t + FRAME_S - self.detector.onset_s) * 1000, 1))

    # ---- turns -----------------------------------------------------------------------------

    def _partial(self) -> str:
        n = len(self.heard)
        if self.last_partial[1] != n:
            self.last_partial = (self.stt.transcribe(np.concatenate(self.heard)), n)
        return self.last_partial[0]

    async def _end_of_turn(self, t: float) -> None:
        duration = self.detector.speech_s()
        endpoint_ms = (t - self.detector.last_speech_s) * 1000
        t0 = time.perf_counter()
        text = self.stt.transcribe(np.concatenate(self.heard)).strip()
        stt_ms = (time.perf_counter() - t0) * 1000
        self.detector.end_turn()
        self.heard, self.last_partial = [], ("", 0)
        self._trace("caller_turn_ended", text=text, speech_s=round(duration, 3))
        if self.barge and not self.barge.committed:
            if self.approval is not None and text:  # a short "yes" over the question is still the answer
                self.playout.clear()
                self.barge = None
                await self._approval_reply(text)
                return
            if not is_interruption(text, duration, self.cfg.turns):
                self.playout.paused = False
                self.playout.rewind_unheard()
                self.barge = None
                self._trace("false_interruption_resumed", text=text)
                return
            self._commit_barge(text)
        self.barge = None
        if not text:
            self._trace("ignored_noise")
            return
        if self.approval is not None:
            await self._approval_reply(text)
            return
        await self._start_run(text, {"endpointing": round(endpoint_ms, 1), "stt": round(stt_ms, 1)})

    def _commit_barge(self, text: str) -> None:
        assert self.barge is not None
        self.barge.committed = True
        heard = self.playout.heard_text("reply")
        self.playout.clear()
        if self.run_task and not self.run_task.done() and self.approval is None:
            self.run_task.cancel("caller barged in")
        if self.turns and self.turns[-1].agent_text:
            last = self.turns[-1]
            last.interrupted, last.heard_text = True, heard
            for msg in reversed(self.history):  # the model must remember only what was actually said
                if msg.role == "assistant" and msg.content:
                    msg.content = heard
                    break
        self._trace("barge_in", caller_text=text, heard=heard)

    async def _start_run(self, text: str, latency: dict[str, float]) -> None:
        self.playout.reset()
        self.turns.append(TurnRecord(user_text=text, started_s=self.now, latency_ms=latency))
        self.marks = {"run_start": time.perf_counter()}
        self.chunker = self.chunker_cls()
        self.run_task = asyncio.create_task(self.agent.run(text, history=self.history))
        await self._settle()

    async def _settle(self) -> None:
        """Let the run go on until it finishes or waits for the caller's answer."""
        assert self.run_task is not None
        self.asking.clear()
        waiter = asyncio.create_task(self.asking.wait())
        await asyncio.wait({self.run_task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if self.run_task.done():
            self._finish_run(self.run_task)

    def _finish_run(self, task: asyncio.Task) -> None:
        self.run_task = None
        self.agent.speculative.clear()  # reads cached for this utterance are stale after it
        rec = self.turns[-1]
        if task.cancelled():
            rec.outcome, rec.reason = "COMPLETED", "cut short by the caller"
            return
        result = task.result()
        self.history = result.messages
        rec.outcome, rec.reason, rec.agent_text = result.outcome.value, result.reason, result.answer
        if result.outcome is RunOutcome.ESCALATED:
            self._speak("Let me get a person to help you with that. Please hold.", "reply")
        elif result.outcome is not RunOutcome.COMPLETED:
            self._speak("Sorry, I couldn't finish that just now.", "reply")
        self._fill_latency(rec)

    def _fill_latency(self, rec: TurnRecord) -> None:
        lat, m = rec.latency_ms, self.marks
        if "first_token" not in m or "first_audio_ready" not in m:
            return
        lat["llm_first_token"] = round((m["first_token"] - m["run_start"]) * 1000, 1)
        lat["first_clause"] = round((m["first_clause"] - m["first_token"]) * 1000, 1)
        lat["tts_first_audio"] = round((m["first_audio_ready"] - m["first_clause"]) * 1000, 1)
        lat["voice_to_voice"] = round(
            sum(lat[k] for k in ("endpointing", "stt", "llm_first_token", "first_clause", "tts_first_audio")),
            1,
        )

    # ---- approval --------------------------------------------------------------------------

    async def ask_caller(self, call: ToolCall, verdict: Verdict) -> bool:
        """The loop's approver: say the question, then wait for the caller (or an operator)."""
        if verdict.decision is not Decision.ASK:
            return False
        self._speak(confirmation_question(call), "prompt")
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
            self._speak("Sorry, was that a yes or a no?", "prompt")
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
        self.marks = {"run_start": time.perf_counter()}
        await self._settle()

    # ---- speculation -----------------------------------------------------------------------

    async def _speculate(self) -> None:
        """Authorised reads proposed on the partial transcript, run now, reused if the final turn agrees."""
        if not self.cfg.speculate or self.approval or self.run_task or self.barge:
            return
        text = self._partial().strip()
        if not text:
            return
        a = self.agent
        request, _ = a.assembler.build([*self.history, Message("user", text)], 0, a.config.max_output_tokens)
        try:
            response = [ev async for ev in a.model.stream(request) if isinstance(ev, ModelResponse)][-1]
        except Exception as exc:
            self._trace("speculation_failed", error=str(exc)[:200])
            return
        ctx = VetContext(user_text=text)
        for call in response.tool_calls:
            tool = a.tools.get(call.name)
            if tool is None or tool.mutates or call.signature in a.speculative:
                continue
            if tighten(a.policy.evaluate(call, tool), tool).decision is not Decision.ALLOW or worst_hit(
                a.guardrails, call, tool, ctx
            ):
                continue
            obs = await ToolRunner(default_timeout_s=a.config.default_tool_timeout_s).invoke(call, tool)
            if obs.status == "ok":
                a.speculative[call.signature] = obs
            self._trace("speculative_read", partial=text, call=call.signature, status=obs.status)

    # ---- speech out ------------------------------------------------------------------------

    def _on_event(self, ev: Event) -> None:
        if ev.kind == "model_delta" and ev.payload.get("type") == "text" and self.chunker is not None:
            self.marks.setdefault("first_token", time.perf_counter())
            for clause in self.chunker.push(ev.payload["text"]):
                self._speak(clause, "reply")
        elif ev.kind == "model_response" and self.chunker is not None:
            for clause in self.chunker.flush():
                self._speak(clause, "reply")
        elif ev.kind in ("verdict", "tool_result", "approval", "run_finished", "guardrail"):
            self._trace(f"loop.{ev.kind}", **{k: v for k, v in ev.payload.items() if k != "content"})
            if ev.kind == "tool_result" and self.turns:
                self.turns[-1].tool_calls.append(
                    {**ev.payload["call"], "status": ev.payload["status"], "executed": ev.payload["executed"]}
                )

    def _speak(self, text: str, kind: str) -> None:
        if not text.strip():
            return
        if kind == "reply":
            self.marks.setdefault("first_clause", time.perf_counter())
        audio = self.tts.synthesize(text)
        if kind == "reply":
            self.marks.setdefault("first_audio_ready", time.perf_counter())
        self.playout.enqueue(text, audio, kind)
        self._trace("agent_said", part=kind, text=text, seconds=round(len(audio) / 16000, 3))

    def _trace(self, kind: str, **data: Any) -> None:
        self.trace.append({"t": round(self.now, 3), "kind": kind, **data})
