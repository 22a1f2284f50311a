"""The parts `CallCore` (`voice/call/core.py`) keeps its state in, so its two mixins name the few parts they use
rather than every attribute, and a turn that ends is forgotten by making a fresh part rather than field by field.

Each part only holds state; the core and its mixins decide what goes in it.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from loop import Message
from voice.audio import FRAME_S
from voice.call.reply import Reply
from voice.call.state import Barge, ClosedTurn, PendingApproval, TurnRecord
from voice.call.turns import TurnConfig
from voice.call.write_truth import WriteOutcomes
from voice.speech.incremental_stt import TurnTranscriber


@dataclass
class CallerTurn:
    """The caller's turn being heard: its audio, its transcripts and verdicts so far, and speech over the agent."""

    heard: TurnTranscriber  # the turn's finished windows, transcribed once
    audio: list[np.ndarray] = field(default_factory=list)
    # speech end -> (transcript, call time it was ready, whether the transcription failed)
    partials: dict[float, tuple[str, float, bool]] = field(default_factory=dict)
    asked: dict[float, float] = field(default_factory=dict)  # transcriptions in flight: speech end -> call time asked
    wanted: bool | None = None  # a transcript asked for while one was in flight (True: optional)
    # the end-of-turn model: speech end -> (probability complete, call time it was ready), or (None, time asked)
    scores: dict[float, tuple[float | None, float]] = field(default_factory=dict)
    speculation_key: float | None = None  # the speech end a speculation waits for a transcript of
    barge_seen: float = -1.0  # the newest transcript already weighed as a possible interruption
    prefix: str = ""  # the words of the turn this one may go on with: its audio is in front of this one's
    barge: Barge | None = None  # speech over the agent, until it is found to be an interruption or not


@dataclass
class Hearing:
    """What the core keeps of the caller across turns: the frames before this one, the turns before, and when the
    next checks are due (kept when a turn ends, unlike `CallerTurn`)."""

    # the frames before this one: the start of a speech run and the pre-roll before its onset
    recent: deque[np.ndarray]
    # (call time, wall time) per frame: how long the agent took to stop when the caller spoke over it
    arrivals: deque[tuple[float, float]] = field(default_factory=lambda: deque(maxlen=64))
    closed: ClosedTurn | None = None  # ended by silence, waiting for its transcript
    last_turn: tuple[float, np.ndarray] | None = None  # the last closed turn: (speech end, its audio)
    preempted: float = -1.0  # the speech end the model's decision was last started for
    paused_at: float = -1.0  # the speech end the caller last paused after
    next_barge_check: float = 0.0  # call time speech over the agent is next transcribed to weigh it
    next_speculation: float = 0.0  # call time the caller's words so far may next be speculated on

    @classmethod
    def for_turns(cls, turns: TurnConfig, preroll_s: float | None = None) -> Hearing:
        """Room in `recent` for the start of a speech run and the pre-roll before its onset (`preroll_s`, else the
        turns' own), in whole frames."""
        preroll_s = turns.preroll_s if preroll_s is None else preroll_s
        return cls(deque(maxlen=turns.start_frames - 1 + math.ceil(preroll_s / FRAME_S - 1e-9)))


@dataclass
class AgentRun:
    """The agent's side: the reply being said, the run behind it, the approval it waits on, and what comes after."""

    reply: Reply  # the greeting's, until the first caller turn
    writes: WriteOutcomes  # the run's approved writes and how they ended: what the caller may be told
    generation: int = 0  # the newest reply's: clauses of older ones still queued are skipped
    active: bool = False  # a run is in flight
    approval: PendingApproval | None = None  # the confirmation question the run waits on
    waiting_turn: tuple[str, dict[str, float], float] | None = None  # starts when the cut-off run has ended
    decline_line: str = ""  # what the caller hears when the run ends on a declined approval ("" for a change)
    hand_over: tuple[str, float] | None = None  # an escalation's reason and when it was decided, until handed over
    went_on: TurnRecord | None = None  # a withdrawn turn whose run is unwinding (`voice/call/_going_on.py`)


@dataclass
class Conversation:
    """What has been said: the model's history, the run in flight's transcript, and one record per caller turn."""

    history: list[Message] = field(default_factory=list)
    # the history the last turn's run started from (what a withdrawal goes back to)
    history_before: list[Message] = field(default_factory=list)
    transcript: list[Message] = field(default_factory=list)  # the run in flight fills it in place, even if cancelled
    turns: list[TurnRecord] = field(default_factory=list)


@dataclass
class Keypad:
    """Digits keyed in so far, not yet a turn, and when the last key came."""

    digits: str = ""
    at: float = 0.0  # call time of the last key
