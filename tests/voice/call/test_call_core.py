"""The call core alone: inputs in, commands out. No audio models, no threads, no event loop."""

from __future__ import annotations

from typing import Any

import numpy as np

from loop import Decision, Event, RunOutcome, RunResult, ToolCall, Verdict
from tests.fakes import WordChunker
from voice.audio import FRAME_S
from voice.call.core import CallCore
from voice.call.events import (
    ApprovalRequested,
    AudioPlayed,
    CallerFrame,
    CallState,
    CancelRun,
    ClockTick,
    RunEnded,
    RunEvent,
    SettleApproval,
    SpeechKind,
    SpeechReady,
    StartRun,
    Synthesize,
    Traced,
    Transcribe,
    TranscriptReady,
)
from voice.call.playout import FRAME
from voice.call.state import SessionConfig

SILENT, LOUD = np.zeros(FRAME, np.int16), np.full(FRAME, 1000, np.int16)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Harness:
    """Drives a core frame by frame; answers Transcribe with the text given for the next transcription."""

    def __init__(self, **cfg: Any) -> None:
        self.core = CallCore(SessionConfig(**cfg), WordChunker, Clock())
        self.t = 0.0
        self.log: list[Any] = []  # every command, in order
        self.stt_text = ""

    def feed(self, event: Any) -> list[Any]:
        out = [c for c in self.core.handle(event) if not isinstance(c, Traced)]
        self.log.extend(out)
        for cmd in out:
            if isinstance(cmd, Transcribe):
                self.feed(TranscriptReady(cmd.key, self.stt_text, 0.0))
        return out

    def frames(self, seconds: float, speech: bool) -> None:
        for _ in range(round(seconds / FRAME_S)):
            self.feed(CallerFrame(LOUD if speech else SILENT, self.t, 1.0 if speech else 0.0, 0.0))
            self.t += FRAME_S

    def say(self, text: str, seconds: float = 2.0) -> None:
        """The caller speaks for `seconds`; Whisper will hear `text`."""
        self.stt_text = text
        self.frames(seconds, speech=True)

    def agent_speaks(self, text: str, kind: SpeechKind = SpeechKind.REPLY) -> None:
        audio = np.ones(int(16000 * len(text.split()) * 0.3), np.int16)
        self.feed(SpeechReady(text, kind, audio, self.core.run.reply.generation))
        while (chunk := self.core.next_frame(self.t)) is not None:  # the transport buffers all of it
            assert len(chunk) == FRAME

    def names(self) -> list[str]:
        return [type(c).__name__ for c in self.log]

    def kinds(self) -> list[str]:
        return [e["kind"] for e in self.core.trace]


def run_started(h: Harness, text: str) -> StartRun:
    h.say(text)
    h.frames(0.6, speech=False)
    start = next(c for c in h.log if isinstance(c, StartRun))
    h.log.clear()
    return start


def test_a_finished_sentence_ends_the_turn_after_the_short_silence_and_starts_one_run() -> None:
    h = Harness()
    h.say("Where is my order?", 1.0)
    assert h.core.state is CallState.CALLER_SPEAKING
    h.frames(0.6, speech=False)
    starts = [c for c in h.log if isinstance(c, StartRun)]
    assert [s.text for s in starts] == ["Where is my order?"]
    assert h.core.state is CallState.THINKING
    rec = h.core.talk.turns[0]
    assert rec.latency_ms["endpointing"] == 448.0 and rec.latency_ms["stt"] == 0.0  # 0.42 s on the frame grid


def test_each_change_of_state_is_traced_once_from_the_calls_own_state() -> None:
    """The page's state line (listening, thinking, speaking, waiting for a yes) is these entries, not a guess."""
    h = Harness()
    states = lambda: [e["state"] for e in h.core.trace if e["kind"] == "call_state"]  # noqa: E731
    h.frames(0.3, speech=False)
    assert states() == ["listening"]
    run_started(h, "Where is my order?")
    assert states() == ["listening", "caller_speaking", "thinking"]
    h.feed(RunEvent(Event("r", 1, "model_delta", {"type": "text", "text": "It shipped to Lisbon yesterday."})))
    h.feed(RunEnded(RunResult("r", RunOutcome.COMPLETED, "done", "", [], {}, [])))
    assert states()[-1] == "thinking"  # the run is over but its words are still being synthesised: not listening
    h.agent_speaks("It shipped to Lisbon yesterday.")
    assert states()[-1] == "speaking"
    h.feed(AudioPlayed(16000 * 3))  # the caller heard all of it
    assert states() == ["listening", "caller_speaking", "thinking", "speaking", "listening"]
    ask(h)
    assert states()[-1] == "awaiting_approval" and h.core.state is CallState.AWAITING_APPROVAL


def test_the_paused_utterance_is_held_open_and_stays_one_turn() -> None:
    h = Harness()
    h.say("so what i wanted", 1.0)
    h.frames(0.9, speech=False)  # past 0.42 s, but the words are unfinished
    assert not any(isinstance(c, StartRun) for c in h.log)
    h.say("so what i wanted was to ask about my order.", 1.0)
    h.frames(0.6, speech=False)
    assert [c.text for c in h.log if isinstance(c, StartRun)] == ["so what i wanted was to ask about my order."]


def test_speech_over_the_agent_pauses_at_once_and_a_real_interruption_cancels_the_run() -> None:
    h = Harness()
    run_started(h, "Where is my order?")
    h.feed(RunEvent(Event("r", 1, "model_delta", {"type": "text", "text": "It shipped to Lisbon yesterday."})))
    h.agent_speaks("It shipped to Lisbon yesterday.")
    h.feed(AudioPlayed(int(16000 * 0.6)))  # the caller heard two words
    h.log.clear()
    h.say("no wait that is the wrong order", 0.1)
    assert h.names()[:1] == ["ClearAudio"]  # paused within one VAD window plus one frame
    h.say("no wait that is the wrong order", 1.0)
    assert any(isinstance(c, CancelRun) for c in h.log)
    h.feed(RunEnded(None))
    assert h.core.talk.turns[0].outcome == "CANCELLED" and h.core.talk.turns[0].interrupted
    assert h.core.talk.history[-1].content == h.core.talk.turns[0].heard_text != ""


def test_a_backchannel_over_the_agent_resumes_it() -> None:
    h = Harness()
    run_started(h, "Tell me about my order.")
    h.agent_speaks("Your order shipped yesterday and should arrive on Tuesday.")
    h.say("uh-huh", 0.6)
    h.frames(1.3, speech=False)
    assert "false_interruption_resumed" in h.kinds()
    assert not any(isinstance(c, CancelRun) for c in h.log) and h.core.run.reply.speaking
    assert not h.core.run.reply.playout.paused


def ask(h: Harness, heard: bool = True) -> None:
    """The refund's question is asked; `heard`: the caller heard all of it before answering."""
    call = ToolCall("issue_refund", {"order_id": "4567", "amount": 20})
    out = h.feed(ApprovalRequested(call, Verdict(Decision.ASK, "refunds need a yes", "ask_refunds")))
    assert [type(c) for c in out] == [Synthesize] and out[0].kind is SpeechKind.PROMPT
    assert h.core.state is CallState.AWAITING_APPROVAL
    if heard:
        question = out[0].text
        h.agent_speaks(question, SpeechKind.PROMPT)
        h.feed(AudioPlayed(int(16000 * len(question.split()) * 0.3)))


def test_a_spoken_yes_settles_the_approval_and_a_no_declines_it() -> None:
    for answer, approved in (("Yes, go ahead.", True), ("No, don't do that.", False)):
        h = Harness()
        run_started(h, "Refund twenty dollars on order 4567.")
        ask(h)
        h.say(answer, 0.8)
        h.frames(1.2, speech=False)  # a yes is committed after a moment's quiet (`approval_hold_s`)
        assert [c.approved for c in h.log if isinstance(c, SettleApproval)] == [approved]
        assert not any(isinstance(c, StartRun) for c in h.log)  # the answer is not a new question


def test_an_unclear_answer_is_asked_again() -> None:
    h = Harness()
    run_started(h, "Refund twenty dollars on order 4567.")
    ask(h)
    h.say("maybe later perhaps.", 0.8)
    h.frames(0.6, speech=False)
    assert not any(isinstance(c, SettleApproval) for c in h.log)
    assert [c.text for c in h.log if isinstance(c, Synthesize)][-1] == (
        "Sorry, I need a clear answer. Shall I issue refund of $20 for order 4567? Please say yes or no.")


def test_no_answer_declines_after_the_timeout_even_with_no_audio() -> None:
    h = Harness(approval_timeout_s=3.0)
    run_started(h, "Refund twenty dollars on order 4567.")
    ask(h)
    assert h.feed(ClockTick(h.t + 2.0)) == []
    assert [type(c) for c in h.feed(ClockTick(h.t + 3.5))] == [SettleApproval]
    assert "approval_timeout" in h.kinds()


def test_words_without_punctuation_that_do_not_trail_off_end_the_turn_before_the_long_hold() -> None:
    h = Harness()
    h.say("My order number is 7788", 1.0)
    h.frames(0.9, speech=False)  # past 0.75 s, short of the 1.2 s hold for words that trail off
    assert [c.text for c in h.log if isinstance(c, StartRun)] == ["My order number is 7788"]
    assert h.core.talk.turns[0].latency_ms["endpointing"] == 768.0  # 0.75 s on the frame grid
    trailing = Harness()
    trailing.say("I would like to check my order and", 1.0)
    trailing.frames(0.9, speech=False)
    assert not any(isinstance(c, StartRun) for c in trailing.log)


def test_an_escalation_hands_the_call_over_once_its_hand_over_line_has_been_heard() -> None:
    from voice.call.events import HandOver

    h = Harness()
    run_started(h, "Can I speak to a person?")
    h.feed(RunEnded(RunResult("r", RunOutcome.ESCALATED, "the caller asked for a person", "", [], {}, [])))
    line = [c for c in h.log if isinstance(c, Synthesize)]
    assert "".join(c.text for c in line).startswith("Let me get a person")
    h.feed(ClockTick(h.t))
    assert not any(isinstance(c, HandOver) for c in h.log)  # not while the line is still to be synthesised
    for clause in line:
        h.agent_speaks(clause.text)
    h.feed(ClockTick(h.t))
    assert not any(isinstance(c, HandOver) for c in h.log)  # nor while it plays
    h.feed(AudioPlayed(16000 * 30))  # the caller has heard all of it
    assert [c for c in h.log if isinstance(c, HandOver)] == [HandOver("the caller asked for a person")]
    h.feed(ClockTick(h.t + 1))
    assert sum(isinstance(c, HandOver) for c in h.log) == 1 and "hand_over" in h.kinds()


def test_a_hand_over_line_that_never_ends_still_hands_the_call_over() -> None:
    from voice.call.events import HandOver

    h = Harness()
    run_started(h, "Can I speak to a person?")
    h.feed(RunEnded(RunResult("r", RunOutcome.ESCALATED, "asked for a person", "", [], {}, [])))
    h.feed(ClockTick(h.t + 20))  # never synthesised, never played
    assert any(isinstance(c, HandOver) for c in h.log)
