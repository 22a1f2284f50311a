"""What a call keeps between frames: its configuration, one record per caller turn, a pending approval,
a barge-in being decided, and the rule that keeps a cut-off run's history valid."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from loop import ApprovalAnswer, Message, ToolCall
from voice.call.approval_dialog import ApprovalDialog
from voice.call.turns import TurnConfig


class SessionConfig(BaseModel):
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    turns: TurnConfig = TurnConfig()
    """Endpointing and barge-in thresholds."""
    greeting: str = ""
    """Said when the call starts; empty for none."""
    language: str = "en"
    """The language of the agent's fixed sentences (`loop.locale`); a session takes its agent's."""
    id_digits: tuple[int, ...] = ()
    """How many digits the agent's identifiers have (`voice.speech.vocabulary.agent_id_digits`); a session takes
    its agent's: words that end on fewer are an id being dictated (`voice.call.turns.short_of_an_id`)."""
    approval_timeout_s: float = 10.0
    """A pending approval with no answer for this long is declined."""
    approval_hold_s: float = 0.55
    """A caller's yes is committed only after this much more quiet (on top of the answer's own end of turn, 0.45 s):
    speech that resumes before then is read together with the yes ("Yes." ... "but make it thirty")."""
    speculate: bool = False
    """While the caller is still speaking, offer their words so far to the model every `speculate_every_s` for
    reads policy allows outright (`loop.prefetch`): each offer is a model call. Off by default: with the decision
    started in the pause (`preempt`) it bought no latency and cost 5.65 model calls per reply instead of 2.00
    (`bench voice --llm local` over every example agent, README); a free local model may turn it on."""
    preempt: bool = True
    """Start the model's decision in the caller's pause, on the words so far (its allowed reads too); the run
    reuses it if the words are the same when the turn ends (`voice/runtime/priming.py`). One call per pause."""
    rehearse: bool = True
    """With `preempt`: synthesise the first clause of the answer the pause's decision already knows, so it is ready
    when the turn ends (`voice/runtime/rehearsal.py`; transports only: on the virtual clock speech takes no time)."""
    keypad: bool = False
    """The caller has a phone keypad (set for Twilio calls): approval questions offer keys 1 and 2, and digits
    keyed in are a turn of their own (an order number, say)."""
    keys_gap_s: float = 3.0
    """Keyed digits end with '#', or after this long without another key ('*' starts again)."""
    join_digits: bool = True
    """Join a number the caller dictated in pieces ("4 5 6 7", "12, 34") before anything reads the words
    (`voice/speech/caller_digits.py`)."""
    max_tail_s: float = 30.0
    """After the caller's audio ends, keep a file call open at most this long for the agent to finish."""


SPECULATION = {  # `--speculate`: what is started before the caller's turn has ended
    "speech": {"speculate": True, "preempt": True},  # reads on partial words while they speak, and the pause's decision
    "pause": {"speculate": False, "preempt": True},  # only the decision in the caller's pause
    "off": {"speculate": False, "preempt": False},  # nothing: one model call per step of the turn's own run
}


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
    speech_end_s: float = 0.0
    """Call time the caller stopped speaking (end of the last speech frame of the turn)."""
    first_audio_s: float | None = None
    """Call time the first audio of the reply was handed to the transport."""

    def audio_started(self, t: float) -> None:
        """The reply's first audio was handed to the transport at call time `t`: the whole turn measured directly on
        the transport's clock, from the caller's last speech frame to that audio, beside the sum of its parts."""
        self.first_audio_s = round(t, 3)
        lat = self.latency_ms
        lat["voice_to_voice_measured"] = round((self.first_audio_s - self.speech_end_s) * 1000, 1)
        if "voice_to_voice" in lat:
            lat["unaccounted"] = round(lat["voice_to_voice_measured"] - lat["voice_to_voice"], 1)

    def summary(self) -> dict[str, Any]:
        return {"user_text": self.user_text, "agent_text": self.agent_text, "heard_text": self.heard_text,
                "interrupted": self.interrupted, "tool_calls": self.tool_calls, "latency_ms": self.latency_ms,
                "outcome": self.outcome, "reason": self.reason, "first_audio_s": self.first_audio_s}


@dataclass
class PendingApproval:
    call: ToolCall
    asked_s: float  # call time the question (or its latest re-ask) was put; the timeout counts from here
    dialog: ApprovalDialog
    over_question: bool = False  # the caller's current turn began before the question had been heard out
    held: tuple[float, ApprovalAnswer] | None = None  # a yes waiting to be committed: (call time heard, answer)


@dataclass
class Barge:
    onset_s: float
    committed: bool = False
    went_on: str | None = None  # the words of the turn the caller went on with (its answer was withdrawn)


@dataclass
class ClosedTurn:
    """A caller turn whose speech is over: where it ended, how long it was, and speech over the agent in it."""

    speech_end: float
    duration: float
    barge: Barge | None
    capped: bool = False  # closed at max_turn_s while the caller was still talking, not by silence
    prefix: str = ""  # the words of the turn before, transcribed with it (the caller may be going on with it)


def _plain_word(word: str) -> str:
    return re.sub(r"[^\w']", "", word.lower())


def fresh_words(prefix: str, text: str) -> str:
    """The words of a transcript that are not those of the turn transcribed in front of it (`prefix`). Transcribed
    again with more speech, the prefix's last words may come back changed ("Sure, it's 681." then "Sure, it's
    681-3390."): from the first word that differs, what grew is new, never dropped."""
    if not prefix:
        return text
    said, now = prefix.split(), text.split()
    same = 0
    while same < min(len(said), len(now)) and _plain_word(said[same]) == _plain_word(now[same]):
        same += 1
    if same == len(said):
        return " ".join(now[same:])
    grew = len("".join(map(_plain_word, now[same:]))) > len("".join(map(_plain_word, said[same:])))
    return " ".join(now[same:]) if grew else ""


def complete_pairs(messages: list[Message]) -> list[Message]:
    """Drop a trailing assistant tool request whose results never arrived, so history stays valid."""
    out = list(messages)
    while out and out[-1].role == "assistant" and out[-1].tool_calls:
        out.pop()
    if out and out[-1].role == "tool":
        i = len(out) - 1
        while i >= 0 and out[i].role == "tool":
            i -= 1
        wanted = {c.id for c in out[i].tool_calls} if i >= 0 else set()
        if wanted - {m.tool_call_id for m in out[i + 1:]}:
            out = out[:i]
    return out


def heard_history(messages: list[Message], heard: str) -> list[Message]:
    """What the model may remember of a reply the caller cut off: finished tool results stay, a tool request
    whose results never came goes, and the last thing the agent said is only what the caller heard."""
    out = complete_pairs(messages)
    if out and out[-1].role == "assistant" and not out[-1].tool_calls:
        out[-1] = Message("assistant", heard)
    else:
        out.append(Message("assistant", heard))
    return out
