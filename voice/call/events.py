"""What goes into a call core and what comes out of it: small typed values, no behaviour.

Inputs are facts a driver observed (a caller frame arrived, a transcript is ready, the run said something,
the transport played audio). Outputs are commands a driver carries out (transcribe this, synthesise that,
start or cancel the run, settle the approval, clear the transport's buffer). The core never does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

import numpy as np

from loop import ApprovalAnswer, Event, Message, RunResult, Tool, ToolCall, Verdict
from voice.speech.incremental_stt import TurnTranscriber


class CallState(StrEnum):
    """Where a call is, from the caller's side."""

    LISTENING = "listening"
    CALLER_SPEAKING = "caller_speaking"
    THINKING = "thinking"
    SPEAKING = "speaking"
    AWAITING_APPROVAL = "awaiting_approval"


class SpeechKind(StrEnum):
    """What a piece of agent speech is for; only `REPLY` counts as the answer a caller waits for."""

    REPLY = "reply"
    PROMPT = "prompt"  # an approval question, or asking again
    HINT = "hint"  # after the question, which keys answer it ("Press 1 to confirm, or 2 to cancel.")
    ACK = "ack"  # "Okay." at once to a yes held a moment before its write commits
    GREETING = "greeting"


class AudioSink(Protocol):
    """The transport's side: queue agent audio for the caller (never blocks), or drop everything queued."""

    def send(self, pcm: np.ndarray) -> None: ...

    def clear(self) -> None: ...


class NullSink:
    def send(self, pcm: np.ndarray) -> None:
        pass

    def clear(self) -> None:
        pass


# ---- inputs --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallerFrame:
    """32 ms of caller audio starting at call time `t`, with its VAD probability and arrival time (`wall`), and
    whether the speech-to-text this call shares with others is busy (back-pressure the core weighs)."""

    pcm: np.ndarray
    t: float
    prob: float
    wall: float
    stt_busy: bool = False


@dataclass(frozen=True)
class TranscriptReady:
    """The transcript of the caller's turn up to `key` (the end of its last speech frame), `took_ms` after
    it was asked for (queueing included)."""

    key: float
    text: str
    took_ms: float
    failed: bool = False  # the speech-to-text failed (a remote server down): the agent asks to hear it again


@dataclass(frozen=True)
class TurnEndScored:
    """How sure the end-of-turn model (`voice.speech.end_of_turn`) is that the caller's turn up to `key` is
    complete, from the audio alone; `took_ms` after it was asked for."""

    key: float
    complete: float
    took_ms: float


@dataclass(frozen=True)
class SpeechReady:
    text: str
    kind: SpeechKind
    audio: np.ndarray
    generation: int


@dataclass(frozen=True)
class AudioPlayed:
    """The transport confirms that `samples` more agent audio reached the caller."""

    samples: int


@dataclass(frozen=True)
class RunEvent:
    event: Event


@dataclass(frozen=True)
class RunEnded:
    """The run task is over: `result` is None when it was cancelled or crashed (`error` says which)."""

    result: RunResult | None
    error: str = ""


@dataclass(frozen=True)
class ApprovalRequested:
    call: ToolCall
    verdict: Verdict
    tool: Tool | None = None  # its description and `confirm` phrase the question
    other_tools: tuple[str, ...] = ()  # the agent's other tools: "yes, and update my address" asks for more


@dataclass(frozen=True)
class OperatorDecision:
    approved: bool


@dataclass(frozen=True)
class ClockTick:
    """Time passes with no caller audio (a stalled transport): timeouts still fire."""

    t: float


@dataclass(frozen=True)
class Note:
    """Something a driver or transport wants in the call's trace (speculation, `transport.*` events)."""

    kind: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class KeyPressed:
    """The caller pressed a key on their phone's keypad (Twilio's `dtmf`): "0"-"9", "*" or "#"."""

    digit: str


@dataclass(frozen=True)
class Hangup:
    reason: str


CallInput = (CallerFrame | TranscriptReady | TurnEndScored | SpeechReady | AudioPlayed | RunEvent | RunEnded
             | ApprovalRequested | OperatorDecision | ClockTick | Note | KeyPressed | Hangup)


# ---- outputs -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Transcribe:
    """Transcribe the caller's turn so far. `optional` ones feed speculation and may be skipped. `turn` keeps
    the text of the turn's finished windows, so only its newest audio is transcribed again."""

    key: float
    audio: np.ndarray
    optional: bool = False
    turn: TurnTranscriber | None = None
    pause: bool = False  # the audio ends in the caller's pause, not in their speech


@dataclass(frozen=True)
class ScoreTurnEnd:
    """Ask the end-of-turn model whether the caller's turn so far sounds finished. A driver without one ignores
    it, and the turn ends by the transcript rules alone."""

    key: float
    audio: np.ndarray


@dataclass(frozen=True)
class Synthesize:
    text: str
    kind: SpeechKind
    generation: int


@dataclass(frozen=True)
class StartRun:
    text: str
    history: list[Message]
    transcript: list[Message]


@dataclass(frozen=True)
class CancelRun:
    reason: str


@dataclass(frozen=True)
class SettleApproval:
    answer: ApprovalAnswer  # approved or not, why, and whether the run ends (the session says what happened)

    @property
    def approved(self) -> bool:
        return self.answer.approved


@dataclass(frozen=True)
class Speculate:
    """Offer the partial transcript for speculative reads (never a mutation, never an approval)."""

    text: str
    history: list[Message]
    in_pause: bool = False  # the caller paused: also start the answer after the reads (a preemptive decision)


@dataclass(frozen=True)
class StopSpeculating:
    """The caller paused: decisions on their older words will not be the turn's, and the CPU they hold is wanted
    for transcribing the words the pause ends on."""


@dataclass(frozen=True)
class WarmModel:
    """The caller started a new turn: the model may read the call so far meanwhile (`Agent.warm_conversation`),
    so the turn's decision evaluates only their new words."""

    history: list[Message]


@dataclass(frozen=True)
class ClearAudio:
    """Drop the agent audio buffered in the transport (the caller started talking)."""


@dataclass(frozen=True)
class DropStaleSpeech:
    """Clauses of replies before `generation` that are still waiting to be synthesised are not wanted any more
    (the caller cut the reply off, or a new one started): skip them."""

    generation: int


@dataclass(frozen=True)
class HandOver:
    """A run escalated and its hand-over line has been heard (or waited for too long): put the caller through to a
    person, if the transport can (a phone call to the configured number, `voice.hosting.transfer`)."""

    reason: str


@dataclass(frozen=True)
class Traced:
    """A trace entry was recorded; drivers hand it to live observers."""

    entry: dict[str, Any]


CallCommand = (Transcribe | ScoreTurnEnd | Synthesize | StartRun | CancelRun | SettleApproval | Speculate
               | StopSpeculating | WarmModel | ClearAudio | DropStaleSpeech | HandOver | Traced)
