"""The answer's first clause synthesised in the caller's pause (voice/runtime/rehearsal.py): from what the pause's
decision already knows, matched to the run's clauses by their exact text, used once, never said on its own."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from loop import Agent, LoopConfig, ModelResponse, ScriptedModel, TextDelta, ToolCall, ToolCallDelta
from loop.prefetch import Prefetch
from voice.call.turns import TurnConfig
from voice.demo.order_desk import OrderDesk, demo_config, order_policy
from voice.runtime.priming import PrimedCall
from voice.runtime.rehearsal import MAX_KEPT, Rehearsal
from voice.runtime.session import CallSession, SessionConfig
from voice.speech.stack import SpeechStack, load_stack
from voice.speech.tts import ClauseChunker
from voice.testing.pacer import PacedSink, drive_realtime
from voice.testing.scripted_call import FIXTURES


class CountingVoice:
    """A voice that says every clause as one second of tone and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def synthesize(self, text: str) -> np.ndarray:
        self.asked.append(text)
        await asyncio.sleep(0)
        return np.ones(16000, np.int16)


def primed(*events: object, done: bool = True) -> PrimedCall:
    return PrimedCall(events=list(events), done=done)  # type: ignore[arg-type]


def rehearse(done: Prefetch, voice: CountingVoice, rehearsal: Rehearsal | None = None) -> tuple[str, Rehearsal]:
    rehearsal = rehearsal or Rehearsal(voice.synthesize, ClauseChunker)

    async def go() -> str:
        clause = await rehearsal.rehearse(done)
        await asyncio.gather(*rehearsal.ready.values())
        return clause

    return asyncio.run(go()), rehearsal


def test_the_first_clause_of_words_the_speculation_knows_is_synthesised_and_used_once() -> None:
    voice = CountingVoice()
    clause, rehearsal = rehearse(Prefetch("p", words="Order 4567 has shipped, and it is on its way."), voice)
    assert clause == "Order 4567 has shipped," and voice.asked == [clause]
    assert rehearsal.take("and it is on its way.") is None  # only the first clause is rehearsed
    task = rehearsal.take(clause)
    assert task is not None and len(task.result()) == 16000
    assert rehearsal.take(clause) is None and rehearsal.used == 1  # used once


def test_a_primed_answer_gives_its_first_clause_and_a_tool_call_gives_none() -> None:
    voice = CountingVoice()
    answer = primed(TextDelta("I can't find "), TextDelta("an order 5151. Could you check"), TextDelta(" it?"),
                    ModelResponse(text="I can't find an order 5151. Could you check it?"))
    assert rehearse(Prefetch("p", answer=answer), voice)[0] == "I can't find an order 5151."
    short = primed(TextDelta("You're welcome"), ModelResponse(text="You're welcome"))
    assert rehearse(Prefetch("p", answer=short), voice)[0] == "You're welcome"  # flushed at the end
    again = primed(ToolCallDelta(0, "c1", "lookup_order", '{"order_id": "1"}'), ModelResponse())
    assert rehearse(Prefetch("p", answer=again), voice)[0] == ""  # a further action: nothing to say yet
    cancelled = PrimedCall(done=True, error=RuntimeError("primed call cancelled"))
    assert rehearse(Prefetch("p", answer=cancelled), voice)[0] == ""
    assert rehearse(Prefetch("p"), voice)[0] == ""  # a write to ask about, or nothing read: no words known
    assert voice.asked == ["I can't find an order 5151.", "You're welcome"]


def test_nothing_is_rehearsed_once_the_turn_no_longer_wants_it_and_old_clauses_make_room() -> None:
    voice = CountingVoice()
    rehearsal = Rehearsal(voice.synthesize, ClauseChunker)
    assert asyncio.run(rehearsal.rehearse(Prefetch("p", words="Hello."), wanted=lambda: False)) == ""
    assert voice.asked == []

    async def many() -> None:
        for i in range(MAX_KEPT + 2):
            await rehearsal.rehearse(Prefetch("p", words=f"Clause {i}."))
        await asyncio.gather(*rehearsal.ready.values())

    asyncio.run(many())
    assert len(rehearsal.ready) == MAX_KEPT and rehearsal.take("Clause 0.") is None
    assert rehearsal.take(f"Clause {MAX_KEPT + 1}.") is not None


# ---- in a call on the wall clock ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def stack() -> SpeechStack:
    return load_stack("tiny.en", tts="piper")


class CountingTTS:
    """The stack's voice, counting what it synthesises."""

    def __init__(self, tts: object) -> None:
        self.tts, self.asked = tts, []  # type: ignore[var-annotated]

    def synthesize(self, text: str) -> np.ndarray:
        self.asked.append(text)
        return self.tts.synthesize(text)  # type: ignore[attr-defined]


@pytest.mark.parametrize("rehearse_on", [True, False])
def test_a_call_says_the_answer_rehearsed_in_the_pause_and_synthesises_it_once(
        stack: SpeechStack, tmp_path: Path, rehearse_on: bool) -> None:
    desk = OrderDesk(tmp_path / "orders.db")
    script = [ToolCall("lookup_order", {"order_id": "4567"}), "Anything else?"]  # the read's own words answer
    agent = Agent(model=ScriptedModel(script), tools=desk.tools(), policy=order_policy(),
                  config=LoopConfig.profile("voice"), journal_path=str(tmp_path / "journal.db"),
                  system_prompt=demo_config()["system_prompt"])
    # a long words-rule wait, so the decision in the pause is done well before the turn ends on any machine
    config = SessionConfig(turns=TurnConfig(endpoint_silence_s=1.0, open_silence_s=1.0), rehearse=rehearse_on)
    tts, sink = CountingTTS(stack.tts), PacedSink()
    stack.vad.reset()
    session = CallSession(agent, stack.vad, stack.stt, tts, stack.chunker, config, sink, realtime=True)
    from voice.audio import load_audio

    caller = np.zeros(16000 * 5, np.int16)
    line = load_audio(FIXTURES / "synthetic/where_is_4567.wav")
    caller[4800:4800 + len(line)] = line
    asyncio.run(drive_realtime(session, sink, caller, speed=1.0))
    said = [e["text"] for e in session.trace if e["kind"] == "agent_said"]
    rehearsed = [e["text"] for e in session.trace if e["kind"] == "speech_rehearsed"]
    assert said[:2] == ["Order 4567 has shipped,", "and it is on its way to Lisbon."]
    assert rehearsed == (["Order 4567 has shipped,"] if rehearse_on else [])
    # rehearsed or not, synthesised once (the voice hears the spoken form)
    assert tts.asked.count("Order four five six seven has shipped,") == 1
