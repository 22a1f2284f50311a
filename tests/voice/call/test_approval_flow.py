"""The call core's side of a spoken approval, frame by frame: when an answer counts, what the agent says back, and
how each way of declining ends the run truthfully (the dialog's own rules: tests/voice/call/test_answers.py)."""

from __future__ import annotations

from loop import Decision, Message, RunOutcome, RunResult, ToolCall, Verdict
from loop.locale import en
from loop.locale.en import NO_YES_HEARD, NOT_APPROVED, SAID_NO
from tests.voice.call.test_call_core import Harness, ask, run_started
from voice.call.events import (
    ApprovalRequested,
    AudioPlayed,
    ClockTick,
    OperatorDecision,
    RunEnded,
    SettleApproval,
    SpeechKind,
    StartRun,
    Synthesize,
)


def asked(h: Harness, heard: bool = True) -> None:
    run_started(h, "Refund twenty dollars on order 4567.")
    ask(h, heard=heard)
    h.log.clear()


def answer(h: Harness, text: str) -> None:
    h.say(text, 0.8)
    h.frames(1.2, speech=False)  # the answer's end (0.45 s), then the held yes's quiet (`approval_hold_s`)


def settled(h: Harness) -> list[SettleApproval]:
    return [c for c in h.log if isinstance(c, SettleApproval)]


def said(h: Harness) -> list[str]:
    return [c.text for c in h.log if isinstance(c, Synthesize)]


def declined_run_ends(h: Harness) -> None:
    """The loop ends the run as APPROVAL_DENIED, as it does when an approver's no ends the run."""
    h.feed(RunEnded(RunResult("r", RunOutcome.APPROVAL_DENIED, "issue_refund was not done", "", [], {},
                              [Message("user", "Refund twenty dollars on order 4567.")])))


def test_a_yes_after_the_whole_question_approves() -> None:
    h = Harness()
    asked(h)
    answer(h, "Yes, go ahead.")
    (settle,) = settled(h)
    assert settle.answer.approved and not any(isinstance(c, StartRun) for c in h.log)


def test_a_yes_is_committed_only_after_a_moment_of_quiet() -> None:
    h = Harness()
    asked(h)
    h.say("Yes.", 0.5)
    h.frames(0.7, speech=False)  # the yes is heard (0.45 s) but held
    assert settled(h) == [] and "approval_held" in h.kinds()
    # the caller hears at once that they were heard, while the write waits its moment
    assert [c.kind for c in h.log if isinstance(c, Synthesize)][-1] == SpeechKind.ACK
    h.frames(0.4, speech=False)
    (settle,) = settled(h)
    assert settle.answer.approved


def test_speech_resuming_after_a_yes_withdraws_it_and_the_whole_answer_is_read_again() -> None:
    h = Harness()
    asked(h)
    h.say("Yes.", 0.5)
    h.frames(0.7, speech=False)  # "Yes." heard and held; 0.7 s later the caller goes on
    answer(h, "but make it thirty dollars.")
    (settle,) = settled(h)
    assert not settle.answer.approved and "change" in settle.answer.reason
    assert "Yes. but make it thirty dollars." in settle.answer.reason
    assert said(h).count(en.HELD_YES) == 1  # "Okay." to the yes, once; not to the change


def test_noise_after_a_yes_does_not_withdraw_it() -> None:
    h = Harness()
    asked(h)
    h.say("Yes.", 0.5)
    h.frames(0.7, speech=False)
    h.say("", 0.5)  # a cough: speech with no words, which ends as a turn only after the long silence
    h.frames(2.0, speech=False)
    (settle,) = settled(h)
    assert settle.answer.approved


def test_an_answer_heard_as_no_words_is_asked_again_not_left_to_the_timeout() -> None:
    """A short "Yes." that speech-to-text returned empty: the caller spoke, so they hear the question again (an
    unclear answer), not ten seconds of silence and "I didn't hear a yes."; twice, and it is declined."""
    h = Harness(approval_timeout_s=10.0)
    asked(h)
    h.say("", 0.3)
    h.frames(2.0, speech=False)
    assert settled(h) == [] and "Please say yes or no" in " ".join(said(h)), said(h)
    again = said(h)[-1]
    h.agent_speaks(again, SpeechKind.PROMPT)
    h.feed(AudioPlayed(int(16000 * len(again.split()) * 0.3)))
    h.log.clear()
    h.say("", 0.3)
    h.frames(2.0, speech=False)
    (settle,) = settled(h)
    assert not settle.answer.approved and "approval_timeout" not in h.kinds()


def test_a_yes_over_the_question_is_not_taken_and_the_question_is_asked_again() -> None:
    h = Harness()
    asked(h, heard=False)  # the question is still being synthesised when the caller says yes
    answer(h, "Yes.")
    assert settled(h) == [] and "shall I issue refund of $20 for order 4567?" in " ".join(said(h))
    h.agent_speaks(said(h)[-1], SpeechKind.PROMPT)
    h.feed(AudioPlayed(sum(len(s.audio) for s in h.core.run.reply.playout.queue)))
    answer(h, "Yes.")
    assert [s.answer.approved for s in settled(h)] == [True]


def test_a_backchannel_over_the_question_lets_it_play_on() -> None:
    h = Harness()
    asked(h, heard=False)
    h.agent_speaks("Just to confirm: refund $20 on order 4567?", SpeechKind.PROMPT)
    h.say("mhm", 0.5)
    h.frames(1.3, speech=False)  # a trailing "mhm" waits for the long silence
    assert settled(h) == [] and "false_interruption_resumed" in h.kinds()
    assert h.core.run.reply.speaking and not h.core.run.reply.playout.paused


def test_a_no_declines_ends_the_run_and_the_session_says_so() -> None:
    h = Harness()
    asked(h)
    answer(h, "No, don't do that.")
    (settle,) = settled(h)
    assert not settle.answer.approved and settle.answer.end_run and "said no" in settle.answer.reason
    declined_run_ends(h)
    assert " ".join(said(h)) == SAID_NO
    assert h.core.talk.history[-1].content == SAID_NO and h.core.talk.turns[-1].agent_text == SAID_NO


def test_silence_declines_without_claiming_a_no() -> None:
    h = Harness(approval_timeout_s=3.0)
    asked(h)
    h.feed(ClockTick(h.t + 3.5))
    (settle,) = settled(h)
    assert "timed out" in settle.answer.reason and "approval_timeout" in h.kinds()
    declined_run_ends(h)
    assert " ".join(said(h)) == "I haven't done that: I didn't hear a yes." == NO_YES_HEARD
    assert "said no" not in " ".join(said(h))


def test_a_question_is_answered_from_the_pending_call() -> None:
    h = Harness()
    asked(h)
    answer(h, "How much is it?")
    assert settled(h) == []
    assert " ".join(said(h)) == "I'm asking you this: shall I issue refund of $20 for order 4567?"


def test_a_change_declines_and_the_callers_words_start_the_next_run() -> None:
    h = Harness()
    asked(h)
    answer(h, "Yes, but make it thirty dollars.")
    (settle,) = settled(h)
    assert not settle.answer.approved and "change" in settle.answer.reason
    declined_run_ends(h)
    (start,) = [c for c in h.log if isinstance(c, StartRun)]
    assert start.text == "Yes, but make it thirty dollars." and said(h) == []  # the new run answers


def test_the_agents_own_question_heard_back_changes_nothing() -> None:
    h = Harness()
    asked(h)
    answer(h, "Just to confirm: refund $20 on order 4567?")
    assert settled(h) == [] and said(h) == []
    assert h.core.run.approval is not None


def test_an_operator_decline_is_said_as_such() -> None:
    h = Harness()
    asked(h)
    h.feed(OperatorDecision(False))
    (settle,) = settled(h)
    assert "operator" in settle.answer.reason
    declined_run_ends(h)
    assert " ".join(said(h)) == NOT_APPROVED


def test_the_time_to_answer_starts_when_the_question_has_been_said() -> None:
    """A long question ("Just to confirm: book Grace Holloway in on Wednesday at 10 a.m.?") takes seconds to say:
    the caller's 10 s start at its end, not when it was queued (a dentist's caller who answered 9 s after hearing
    it was told "I didn't hear a yes.")."""
    h = Harness(approval_timeout_s=3.0)
    call = ToolCall("issue_refund", {"order_id": "4567", "amount": 20})
    run_started(h, "Refund twenty dollars on order 4567.")
    (question,) = h.feed(ApprovalRequested(call, Verdict(Decision.ASK, "refunds need a yes", "ask_refunds")))
    h.agent_speaks(question.text, SpeechKind.PROMPT)
    h.frames(3.5, speech=False)  # still being said: the caller has not had it all yet
    assert "approval_timeout" not in h.kinds()
    h.feed(AudioPlayed(16000 * 60))  # the question has been heard to its end
    h.frames(2.0, speech=False)
    assert "approval_timeout" not in h.kinds()
    h.frames(1.5, speech=False)
    assert "approval_timeout" in h.kinds()
