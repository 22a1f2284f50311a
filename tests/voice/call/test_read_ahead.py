"""The call read ahead (`WarmModel`): when the caller starts a new turn, the model may read the call so far while
they speak, so the turn's decision evaluates only their new words; never over the agent's own speech."""

from __future__ import annotations

from loop import Event, Message, RunOutcome, RunResult
from tests.voice.call.test_call_core import Harness, run_started
from voice.call.events import AudioPlayed, RunEnded, RunEvent, WarmModel


def test_a_new_turn_lets_the_model_read_the_call_so_far_but_speech_over_the_agent_does_not() -> None:
    h = Harness()
    h.say("Where is my order?", 1.0)
    assert not any(isinstance(c, WarmModel) for c in h.log)  # the first turn: nothing said yet to read
    run_started(h, "Where is my order?")
    h.feed(RunEvent(Event("r", 1, "model_delta", {"type": "text", "text": "Could you tell me the number?"})))
    h.agent_speaks("Could you tell me the number?")
    h.say("it is 4567", 0.3)  # over the agent: a barge-in, whose history is cut to what was heard
    assert not any(isinstance(c, WarmModel) for c in h.log)
    h = Harness()
    run_started(h, "Where is my order?")
    question = "Could you tell me the order number?"
    said = [Message("user", "Where is my order?"), Message("assistant", question)]
    h.feed(RunEvent(Event("r", 1, "model_delta", {"type": "text", "text": question + " "})))
    h.feed(RunEnded(RunResult("r", RunOutcome.COMPLETED, "", question, [], {}, said)))
    h.agent_speaks(question)
    h.feed(AudioPlayed(int(16000 * len(question.split()) * 0.3)))  # heard whole
    h.frames(1.0, speech=False)
    h.log.clear()
    h.say("It is 4567.", 0.3)  # the next turn: the model may read the question and its turn while they speak
    assert [c.history for c in h.log if isinstance(c, WarmModel)] == [said]


