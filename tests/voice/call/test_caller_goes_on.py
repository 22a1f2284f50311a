"""A caller who only paused is answered once (voice/call/_going_on.py): speech that starts before they could have
reacted to the answer goes on with the turn before, and an answer never starts over them."""

from __future__ import annotations

import numpy as np
import pytest

from loop import Event, Message, RunOutcome, RunResult
from tests.voice.call.test_call_core import Harness
from tests.voice.speech.test_end_of_turn import ScoredHarness, starts
from voice.call.events import AudioPlayed, CancelRun, RunEnded, RunEvent, SpeechKind, SpeechReady, StartRun
from voice.trace import TraceKind


def test_a_caller_who_goes_on_before_hearing_the_answer_is_answered_once_for_the_whole_turn() -> None:
    h = ScoredHarness(0.9)
    h.say("I need a room.", 0.5)
    h.frames(0.3, speech=False)  # ended on the model's word after 0.2 s; the run starts
    first = starts(h)
    assert [s.text for s in first] == ["I need a room."]
    h.log.clear()
    h.say("I need a room. It's for Friday.", 1.5)  # Whisper hears both turns' audio as one (the caller paused)
    h.frames(0.6, speech=False)
    assert [type(c).__name__ for c in h.log if isinstance(c, CancelRun | StartRun)] == ["CancelRun"]
    h.feed(RunEnded(None))  # the withdrawn run unwinds
    assert [s.text for s in starts(h)] == ["I need a room. It's for Friday."]
    assert starts(h)[0].history == first[0].history  # the withdrawn turn left nothing in the history
    assert [t.user_text for t in h.core.talk.turns] == ["I need a room. It's for Friday."]
    assert TraceKind.CALLER_WENT_ON in h.kinds()


def test_a_caller_who_goes_on_before_a_finished_answer_plays_is_answered_once_too() -> None:
    """A quick model (or the virtual clock) has the answer ready before the caller goes on: none of it was heard,
    so it goes, and so do the messages of its run."""
    h = ScoredHarness(0.9)
    h.say("I need a room.", 0.5)
    h.frames(0.3, speech=False)
    before = starts(h)[0].history
    h.feed(RunEvent(Event("r", 1, "model_delta", {"type": "text", "text": "Hello! How can I help? "})))
    said = [Message("user", "I need a room."), Message("assistant", "Hello! How can I help?")]
    h.feed(RunEnded(RunResult("r", RunOutcome.COMPLETED, "", "Hello! How can I help?", [], {}, said)))
    assert h.core.talk.history == said
    h.agent_speaks("Hello! How can I help?")  # handed to the transport, not played yet
    h.log.clear()
    h.say("I need a room. It's for Friday.", 1.5)
    h.frames(0.6, speech=False)
    assert not any(isinstance(c, CancelRun) for c in h.log)  # nothing to cancel
    assert [s.text for s in starts(h)] == ["I need a room. It's for Friday."]
    assert starts(h)[0].history == before and not h.core.run.reply.speaking
    assert [t.user_text for t in h.core.talk.turns] == ["I need a room. It's for Friday."]


def _answered(h: Harness, text: str) -> None:
    """The run finished; its answer's voice is still being synthesised."""
    said = [Message("user", h.core.talk.turns[-1].user_text), Message("assistant", text)]
    h.feed(RunEvent(Event("r", 1, "model_delta", {"type": "text", "text": text + " "})))
    h.feed(RunEnded(RunResult("r", RunOutcome.COMPLETED, "", text, [], {}, said)))


def _synthesised(h: Harness, text: str) -> None:
    h.feed(SpeechReady(text, SpeechKind.REPLY, np.ones(8000, np.int16), h.core.run.reply.generation))


def test_an_answer_ready_before_the_caller_speaks_again_waits_for_their_words() -> None:
    """The answer is synthesised, none of it sent, when the caller starts again ("Thank you. | That's all."):
    it does not start over them. Their words decide: more of the turn withdraws it; a backchannel lets it play."""
    h = ScoredHarness(0.9)
    h.say("Thank you.", 0.5)
    h.frames(0.4, speech=False)  # ended on the model's word; the answer is ready at once
    assert starts(h)
    _answered(h, "You're welcome.")
    h.stt_text = "Thank you."
    h.frames(0.1, speech=True)  # the caller goes on before its voice is ready
    _synthesised(h, "You're welcome.")
    assert h.core.next_frame(h.t) is None and h.core.talk.turns[-1].first_audio_s is None
    h.say("Thank you. That's all.", 1.0)
    assert h.core.next_frame(h.t) is None  # still speaking: still nothing of the answer
    assert TraceKind.CALLER_WENT_ON in h.kinds()  # and their words withdrew it
    h = ScoredHarness(0.9)
    h.say("Thank you.", 0.5)
    h.frames(0.4, speech=False)
    _answered(h, "You're welcome.")
    h.stt_text = "Mhm."
    h.frames(0.1, speech=True)
    _synthesised(h, "You're welcome.")
    h.say("Mhm.", 0.2)  # a backchannel: no words of a turn
    assert h.core.next_frame(h.t) is None
    h.frames(1.5, speech=False)
    assert h.core.next_frame(h.t) is not None and TraceKind.CALLER_WENT_ON not in h.kinds()  # played after it


def test_speech_after_a_pause_longer_than_any_turn_end_waits_is_a_new_turn() -> None:
    """A slow answer (nothing heard yet) does not make words said 1.5 s later part of the turn before."""
    h = ScoredHarness(0.9)
    h.say("Where is my order?", 1.0)
    h.frames(1.5, speech=False)  # the run is still thinking; the caller has heard nothing
    h.log.clear()
    h.say("And can you also change my address please?", 1.5)
    h.frames(0.6, speech=False)
    assert TraceKind.CALLER_WENT_ON not in h.kinds()


def test_speech_well_after_the_answer_began_is_a_new_turn_even_if_the_transport_never_acknowledges() -> None:
    """A transport that sends no playback marks must not make every later turn look like a continuation."""
    h = ScoredHarness(0.9)
    h.say("Where is my order?", 1.0)
    h.frames(0.6, speech=False)
    h.feed(RunEvent(Event("r", 1, "model_delta", {"type": "text", "text": "It shipped on Monday and arrives soon. "})))
    h.agent_speaks("It shipped on Monday and arrives soon.")  # handed over, never acknowledged
    h.frames(1.5, speech=False)
    h.log.clear()
    h.say("And when does it arrive exactly?", 1.5)
    h.frames(0.6, speech=False)
    assert TraceKind.CALLER_WENT_ON not in h.kinds()


def test_speech_after_the_answer_was_heard_is_a_new_turn_not_a_continuation() -> None:
    h = ScoredHarness(0.9)
    h.say("Where is my order?", 1.0)
    h.frames(0.6, speech=False)
    h.feed(RunEvent(Event("r", 1, "model_delta", {"type": "text", "text": "It shipped. "})))
    h.agent_speaks("It shipped.")
    h.feed(AudioPlayed(16000))  # the caller heard the answer
    h.feed(RunEnded(RunResult("r", RunOutcome.COMPLETED, "", "It shipped.", [], {}, [])))
    h.frames(2.0, speech=False)
    h.log.clear()
    h.say("Thanks, and when does it arrive?", 1.5)
    h.frames(0.6, speech=False)
    assert [s.text for s in starts(h)] == ["Thanks, and when does it arrive?"]
    assert TraceKind.CALLER_WENT_ON not in h.kinds()


@pytest.mark.parametrize(("prefix", "text", "fresh"), [
    ("Sure, it's 681.", "Sure, it's 681-3390.", "681-3390."),  # the last word came back longer: not dropped
    ("Sure, it's 681.", "sure it's 681", ""),  # the same words, cased and punctuated again
    ("I want to check my order.", "I want to check my order. It's 4567.", "It's 4567."),
    ("Hello.", "Hello. Hello.", "Hello."),
    ("My card is 4582.", "My card is 45.", ""),  # shorter again: nothing new
    ("", "Anything at all.", "Anything at all."),
])
def test_the_words_after_a_turn_transcribed_again_are_never_lost(prefix: str, text: str, fresh: str) -> None:
    from voice.call.state import fresh_words

    assert fresh_words(prefix, text) == fresh
