"""A voice call: caller audio in, user turns to the loop, streamed speech out, with barge-in,
speculative reads and spoken approval.

`CallSession` is the handle transports, fixtures and tests hold: a `CallCore` (the call's state, no I/O,
`voice/call/core.py`) run by one of two drivers (`voice/runtime/drivers.py`) — the virtual clock for recordings
(`run_file`), the wall clock for transports (`hear`, `played`).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np

from loop import Agent, Message
from voice.call.core import CallCore
from voice.call.events import AudioSink, CallState, KeyPressed, NullSink, OperatorDecision
from voice.call.playout import PlayoutCursor
from voice.call.state import PendingApproval, SessionConfig, TurnRecord
from voice.observe.otel import CallTelemetry
from voice.runtime.drivers import Observer, VirtualDriver
from voice.runtime.realtime import RealtimeDriver
from voice.speech.engines import STT, TTS, VAD, Chunker, EndOfTurn
from voice.speech.vocabulary import agent_id_digits
from voice.trace import transport_trace_kind

__all__ = ["CallSession", "SessionConfig", "TurnRecord"]


class CallSession:
    def __init__(self, agent: Agent, vad: VAD, stt: STT, tts: TTS, chunker: Callable[[], Chunker],
                 config: SessionConfig | None = None, sink: AudioSink | None = None, realtime: bool = False,
                 clock: Callable[[], float] = time.perf_counter, call_id: str = "", transport: str = "",
                 turn_model: EndOfTurn | None = None) -> None:
        """`turn_model`: the end-of-turn model (`SpeechStack.turn`); None: turns end by the transcript rules."""
        config = config or SessionConfig()
        if config.language != agent.language:  # the agent's fixed sentences are said in its own language
            config = config.model_copy(update={"language": agent.language})
        if not config.id_digits:  # ... and a number shorter than its identifiers is one being dictated
            config = config.model_copy(update={"id_digits": agent_id_digits(agent)})
        # one id for the whole call: every run's gen_ai.conversation.id, the telemetry's and the timeline's
        self.call_id = call_id or uuid.uuid4().hex[:12]
        agent = agent.override(conversation_id=self.call_id)  # the call's own view: the user's agent is left as is
        self.core = CallCore(config, chunker, clock)
        args = (self.core, agent, vad, stt, tts, sink or NullSink(), turn_model)
        self.driver: RealtimeDriver | VirtualDriver = (
            RealtimeDriver(*args) if realtime else VirtualDriver(*args, max_tail_s=config.max_tail_s))
        self.telemetry = CallTelemetry(self.call_id, transport or ("realtime" if realtime else "file"))
        self.driver.observers.append(self.telemetry.observe)
        self.driver.run_context = self.telemetry.run_context

    @property
    def agent(self) -> Agent:
        """The call's own view of the agent (`Agent.override`): what its runs use, and report to."""
        return self.driver.agent

    # ---- driving -----------------------------------------------------------------------------------------

    async def start(self) -> None:
        await self.driver.start()

    async def run_file(self, caller: np.ndarray) -> list[TurnRecord]:
        """Virtual time: the whole recording, a frame per tick, agent audio played in lockstep."""
        assert isinstance(self.driver, VirtualDriver), "run_file needs a session made with realtime=False"
        await self.start()
        await self.driver.play_file(caller)
        await self.close()
        return self.turns

    async def hear(self, pcm: np.ndarray, wall: float | None = None) -> None:
        """Real time: any amount of 16 kHz caller audio from the transport. Returns at once: taking audio in
        never waits for speech-to-text, the model or speculation."""
        assert isinstance(self.driver, RealtimeDriver), "hear needs a session made with realtime=True"
        self.driver.hear(pcm, wall)

    def played(self, samples: int) -> None:
        """Real time: the transport confirms that `samples` more agent audio reached the caller."""
        assert isinstance(self.driver, RealtimeDriver)
        self.driver.played(samples)

    def on_hand_over(self, hand_over: Callable[[str], Awaitable[None]]) -> None:
        """What putting the caller through to a person means on this call's transport: called with the escalation's
        reason once the core has said the hand-over line and it has been heard (`voice.call.events.HandOver`)."""
        self.driver.hand_over_to.append(hand_over)

    async def decide(self, approved: bool) -> None:
        """Operator override from the API: settles the pending approval whatever the caller says."""
        self.driver.feed(OperatorDecision(approved))
        if isinstance(self.driver, VirtualDriver):
            await self.driver.catch_up()

    def note(self, kind: str, **data: Any) -> None:
        """A transport's own event, in the trace as `transport.<kind>`."""
        self.driver.trace(transport_trace_kind(kind), **data)

    def key_pressed(self, digit: str) -> None:
        """A key on the caller's phone keypad (Twilio `dtmf`): it may answer the question or key in a number."""
        self.driver.feed(KeyPressed(digit))
        self.driver.after_input()

    async def close(self, reason: str = "call ended", wait_s: float = 5.0) -> None:
        await self.driver.close(reason, wait_s)

    # ---- what a call shows -------------------------------------------------------------------------------

    @property
    def state(self) -> CallState:
        return self.core.state

    @property
    def turns(self) -> list[TurnRecord]:
        return self.core.talk.turns

    @property
    def trace(self) -> list[dict[str, Any]]:
        return self.core.trace

    @property
    def history(self) -> list[Message]:
        return self.core.talk.history

    @property
    def approval(self) -> PendingApproval | None:
        return self.core.run.approval

    @property
    def playout(self) -> PlayoutCursor:
        return self.core.run.reply.playout

    @property
    def speaking(self) -> bool:
        """Agent audio the caller has not heard yet, here or in the transport's buffer."""
        return self.core.run.reply.speaking

    @property
    def busy(self) -> bool:
        """The caller is mid-turn, a run is on, an approval waits or agent audio is unheard."""
        return self.core.busy

    @property
    def run_active(self) -> bool:
        return self.core.run.active

    @property
    def observers(self) -> list[Observer]:
        return self.driver.observers

    @property
    def out(self) -> list[np.ndarray]:
        """Virtual time: the agent's side of the call, a frame per tick."""
        assert isinstance(self.driver, VirtualDriver)
        return self.driver.out
