"""Clauses an agent says again (voice/speech/clause_memo.py): synthesised once per voice, then the same audio; the
opening clauses of the agent's fixed lines are synthesised while a call is idle, so an approval question's
"Just to confirm:" is heard at once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np

from loop import Agent, LoopConfig, ScriptedModel
from loop.locale import en
from voice.runtime.session import CallSession, SessionConfig
from voice.speech.clause_memo import ClauseMemo, first_clause, memo_for, opening_clauses, recurs
from voice.speech.spoken import SpokenTTS
from voice.speech.tts import ClauseChunker
from voice.speech.vad import SileroVAD
from voice.testing.pacer import PacedSink, drive_realtime


class Voice:
    """A voice that says every clause as a tenth of a second of a level its number of syntheses sets."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def synthesize(self, text: str) -> np.ndarray:
        self.asked.append(text)
        return np.full(1600, len(self.asked), np.int16)


def test_a_short_clause_without_digits_is_synthesised_once_and_every_caller_gets_its_own_copy() -> None:
    voice = Voice()
    tts = SpokenTTS(voice)
    first = tts.synthesize("Just to confirm:")
    first[:] = 0  # what a call does with its copy never reaches the kept audio
    again = SpokenTTS(voice).synthesize("Just to confirm:")  # another call on the same voice
    assert voice.asked == ["Just to confirm:"] and (again == 1).all()
    assert memo_for(voice).work == {"reused": 1, "kept": 1}


def test_what_is_particular_to_one_turn_is_synthesised_every_time() -> None:
    voice = Voice()
    tts = SpokenTTS(voice)
    for _ in range(2):
        tts.synthesize("Order 4567 has shipped,")  # digits: this caller's order
        tts.synthesize("and it is on its way to Lisbon, which is a long way from the warehouse.")  # long
    assert len(voice.asked) == 4
    assert voice.asked[0] == "Order four five six seven has shipped,"  # the voice hears the spoken form


def test_the_greeting_is_kept_whatever_its_length() -> None:
    voice = Voice()
    greeting = "Hello, and thank you for calling Hartley's Garage, the friendliest garage in 2026."
    for _ in range(3):
        SpokenTTS(voice).synthesize(greeting, fixed=True)
    assert len(voice.asked) == 1 and "twenty" in voice.asked[0]  # in its spoken form, once


def test_the_memo_keeps_the_most_recently_used_clauses_within_its_bounds() -> None:
    memo = ClauseMemo(max_clauses=2, max_samples=10_000)
    say = Voice().synthesize
    for text in ("Okay,", "Sure,", "Okay,", "Sorry,"):  # "Okay," used again: "Sure," is the oldest
        memo.synthesize(text, say, keep=True)
    assert "Okay," in memo and "Sorry," in memo and "Sure," not in memo
    big = ClauseMemo(max_samples=2000)
    big.synthesize("Okay,", say, keep=True)
    big.synthesize("Sure,", say, keep=True)  # 3200 samples together: the older goes
    assert "Sure," in big and "Okay," not in big
    memo.synthesize("Hello.", lambda _: np.zeros(0, np.int16), keep=True)
    assert "Hello." not in memo  # nothing said: nothing kept


def test_the_fixed_lines_open_with_clauses_that_recur() -> None:
    openers = opening_clauses(en, ClauseChunker)
    assert "Just to confirm:" in openers and "Okay," in openers and "Sure," in openers
    assert all(recurs(c) and "{" not in c for c in openers)
    assert len(openers) == len(set(openers))


def test_a_call_warms_its_openers_while_idle_and_the_next_call_on_the_voice_needs_none(tmp_path: Path) -> None:
    voice = Voice()

    def one_call() -> list[str]:
        agent = Agent(model=ScriptedModel(["Fine."]), tools=[], config=LoopConfig.profile("voice"),
                      journal_path=str(tmp_path / "journal.db"))
        sink = PacedSink()
        session = CallSession(agent, SileroVAD(), None, voice, ClauseChunker,
                              SessionConfig(greeting="Hello, how can I help?"), sink, realtime=True)
        asked = len(voice.asked)
        asyncio.run(drive_realtime(session, sink, np.zeros(3 * 16000, np.int16), speed=4.0))
        return voice.asked[asked:]

    first = one_call()
    assert first[0] == "Hello, how can I help?"  # the greeting first, then the openers
    assert {"Just to confirm:", "Okay,", "Sorry,"} <= set(first[1:])
    assert one_call() == []  # greeting and openers all from the voice's memo


class BrokenVoice(Voice):
    tried = 0

    def synthesize(self, text: str) -> np.ndarray:
        self.tried += 1
        if text != "Hello, how can I help?":
            raise ConnectionError("the speech server is down")
        return super().synthesize(text)


def test_a_voice_that_fails_while_warming_stops_the_warming_not_the_call(tmp_path: Path) -> None:
    voice = BrokenVoice()
    agent = Agent(model=ScriptedModel(["Fine."]), tools=[], config=LoopConfig.profile("voice"),
                  journal_path=str(tmp_path / "journal.db"))
    sink = PacedSink()
    session = CallSession(agent, SileroVAD(), None, voice, ClauseChunker,
                          SessionConfig(greeting="Hello, how can I help?"), sink, realtime=True)
    asyncio.run(drive_realtime(session, sink, np.zeros(2 * 16000, np.int16), speed=4.0))
    assert voice.asked == ["Hello, how can I help?"] and voice.tried == 2  # one clause failed to warm, then none
    assert [e["text"] for e in session.trace if e["kind"] == "agent_said"] == ["Hello, how can I help?"]


def test_the_first_clause_of_each_reply_the_prompt_quotes_is_warmed_too(tmp_path: Path) -> None:
    """A reply the agent's prompt quotes is said as it stands (`prompt_answer`): its first clause is synthesised
    while the call is idle and kept whatever it holds ("from 3 p.m." too), so the answer is heard at once."""
    voice = Voice()
    prompt = ('You answer a hotel\'s phone.\n- the stay: "Check-in is from 3 p.m. and check-out is by 11 a.m."\n'
              '- "Where is booking 3091?" -> booking_details\n- anything else: "Sorry, I can only help with rooms."')
    agent = Agent(model=ScriptedModel(["Fine."]), tools=[], config=LoopConfig.profile("voice"),
                  journal_path=str(tmp_path / "journal.db"), system_prompt=prompt)
    sink = PacedSink()
    session = CallSession(agent, SileroVAD(), None, voice, ClauseChunker, SessionConfig(greeting="Hello."), sink,
                          realtime=True)
    asyncio.run(drive_realtime(session, sink, np.zeros(3 * 16000, np.int16), speed=4.0))
    check_in = next(c for c in voice.asked if c.startswith("Check-in"))
    assert "three" in check_in and not any("Where is" in c for c in voice.asked)  # a caller's words: not a reply
    assert SpokenTTS(voice).remembers(first_clause("Check-in is from 3 p.m. and check-out is by 11 a.m.",
                                                   ClauseChunker))
