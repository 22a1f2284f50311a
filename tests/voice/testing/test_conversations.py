"""The conversation scripts (audio_fixtures/*.yaml described as "conversation: ...") and the reply checks they carry.

Each script runs through the real VAD, Whisper and Piper on the virtual clock with its scripted model; what the
agent says must state the tool's facts and must never leak tool names, JSON, markdown or its instructions."""

from __future__ import annotations

import asyncio
import copy
import csv
from pathlib import Path

import pytest

from voice.audio import read_wav
from voice.demo.order_desk import demo_config
from voice.speech.stack import SpeechStack, load_stack
from voice.testing.reply_checks import check_call, check_reply, count_sentences, find_leaks, said_in_call, spoken_turns
from voice.testing.scripted_call import FIXTURES, Fixture, run_call

CONVERSATIONS = [p for p in sorted(FIXTURES.glob("*.yaml"))
                 if str(Fixture.load(p).data.get("description", "")).startswith("conversation:")]


# the demo's prompt and policy text (rule reasons are left out: "refunds above $500 must be approved by a
# supervisor" is fine to tell a caller)
DEMO_INSTRUCTIONS = (demo_config()["system_prompt"], demo_config()["policy"].get("text", ""))


# ---- the checks themselves (no audio) ------------------------------------------------------------

@pytest.mark.parametrize("leak", [
    'No tool; say: "Sorry, I can only help with your orders."',
    "No tool; ask for it, for example: Sure, what is the order number?",
    'Deliveries are looking in Phoenix by using the "delivery_status" function.',
    '{"name": "lookup_order", "arguments": {"order_id": "4567"}}',
    "**Order 4567** has shipped.",
    "TypeError",
    "A tool is needed but the order number, amount or address is missing.",
    "Pick the tool by what the caller wants.",
    "Denied by policy (refund.over_limit): refunds above $500 must be approved by a supervisor.",
    "Talk like a friendly person: one or two short sentences, plain words.",  # the prompt, word for word
])
def test_leaks_are_caught(leak: str) -> None:
    assert check_reply(leak, instructions=DEMO_INSTRUCTIONS), leak


@pytest.mark.parametrize("fine", [
    "Sorry, I can only help with your orders.",  # a quoted example of the prompt is meant to be said
    "Sure, what is the order number?",
    "Order 4567 has shipped to Lisbon and cost $59.90.",
    "There are none going to Paris right now.",
    "Refunds above $500 need a supervisor. Shall I transfer you?",
    "Let me get a person to help you with that. Please hold.",
])
def test_good_replies_pass(fine: str) -> None:
    assert check_reply(fine, instructions=DEMO_INSTRUCTIONS) == []


def test_contains_alternatives_regex_and_word_boundaries() -> None:
    assert check_reply("Refunded $20.00 on order 4567.", {"contains": [["20", "twenty"], "re:refund"]}) == []
    assert check_reply("Order 2020 is delayed.", {"contains": [["20", "twenty"]]})  # "20" is not in "2020"
    problems = check_reply("It shipped.", {"contains": ["Lisbon"], "never": ["shipped"]})
    assert any("missing 'Lisbon'" in p for p in problems) and any("must not say 'shipped'" in p for p in problems)


def test_voice_length_limit_counts_spoken_sentences() -> None:
    assert count_sentences("It cost $59.90. It shipped! Anything else?") == 3
    assert count_sentences("6:15 p.m. 25 seats left, 7:30 p.m. sold out, 9:30 p.m. 50 seats left.") == 1
    assert check_reply("One. Two. Three.")[0].startswith("too long for voice: 3 sentences")
    assert check_reply("One. Two. Three.", {"max_sentences": None}) == []
    assert check_reply("One. Two. Three.", {"max_sentences": 3}) == []


def test_instructions_can_be_given() -> None:
    assert find_leaks("always call the weather service first please", instructions=[
        'You must always call the weather service first please. Say "hello".']) != []
    assert find_leaks("hello", instructions=['Say "hello".']) == []
    # the lesson times a tool's result gives are no leak of the prompt that lists them too
    times = "Lessons are at 9 a.m., 11 a.m., 1 p.m., 3 p.m. and 5 p.m. -> free_lessons"
    assert find_leaks("Maggie has free lessons on Tuesday at 1 p.m., 3 p.m. and 5 p.m.", instructions=[times]) == []
    # the agent's own question names its arguments, which the prompt names too: no leak; the prompt's prose is one
    prompt = ["To book, ask for the donor number, the town, the date and the time, then confirm it."]
    asked = "Could you tell me the town, the date and the time?"
    assert find_leaks(asked, instructions=prompt, own_words={"town", "date", "time", "donor", "number"}) == []
    assert find_leaks(asked, instructions=prompt) != []  # without them, as before
    assert find_leaks("To book, ask for the donor number.", instructions=prompt,
                      own_words={"town", "date", "time", "donor", "number"}) != []  # "book": the prompt's


def test_a_fact_is_found_in_its_plural() -> None:
    assert check_reply("Mattresses are taken free.", {"contains": ["mattress"]}) == []
    assert check_reply("We take two dogs.", {"contains": ["dog"]}) == []
    assert check_reply("Order 2020 is delayed.", {"contains": ["202"]}) != []  # a number is whole
    assert check_reply("It is taken on the 15th of each month.", {"contains": ["15"]}) == []  # its ordinal too


def _trace(*items: tuple[float, str, str, str]) -> list[dict]:
    out = []
    for t, kind, part, text in items:
        out.append({"t": t, "kind": kind, "text": text, **({"part": part} if part else {})})
    return out


def test_check_call_per_turn_and_every_answer() -> None:
    trace = _trace((0.0, "agent_said", "greeting", "Hello, order desk."),
                   (2.0, "caller_turn_ended", "", "Where is my order?"),
                   (2.0, "agent_said", "reply", "Sure, what is the order number?"),
                   (6.0, "caller_turn_ended", "", "It's 4567."),
                   (6.0, "agent_said", "reply", "Order 4567 has shipped to Lisbon."))
    assert [a["caller"] for a in spoken_turns(trace)] == ["Where is my order?", "It's 4567."]
    spec = {"turns": [{"contains": ["number"]}, {"contains": ["shipped", "Lisbon"]}]}
    assert check_call(spec, trace, [2.0, 6.0]) == []
    assert check_call({"contains": ["Lisbon"]}, trace, [2.0, 6.0]) == []  # top-level contains: the last turn
    assert check_call({"contains": ["Leeds"]}, trace, [2.0, 6.0]) == [
        "turn 1: missing 'Leeds' in 'Order 4567 has shipped to Lisbon.'"]
    assert "expects replies to 2 turn(s)" in check_call(spec, trace, [2.0])[0]
    leaky = _trace((1.0, "caller_turn_ended", "", "No, don't."),
                   (1.0, "agent_said", "reply", 'No tool; say: "Okay."'))
    assert any("No tool" in p for p in check_call(None, leaky, [1.0]))


# ---- the scripts ----------------------------------------------------------------------------------

def test_there_are_enough_conversations_and_each_states_facts() -> None:
    assert len(CONVERSATIONS) >= 15
    for path in CONVERSATIONS:
        data = Fixture.load(path).data
        reply = data.get("reply") or {}
        assert reply.get("contains") or any(t.get("contains") for t in reply.get("turns", [])), path.stem
        assert data.get("model") and data.get("expect") and "expect_llm" in data, path.stem


def _manifest(path: Path) -> dict[str, dict[str, str]]:
    with path.open() as fh:
        return {row["path"]: row for row in csv.DictReader(fh, delimiter="\t")}


def test_every_caller_line_is_in_a_manifest_with_source_and_licence() -> None:
    synthetic = _manifest(FIXTURES / "synthetic" / "manifest.tsv")
    recordings = _manifest(FIXTURES / "recordings" / "manifest.tsv")
    for path in CONVERSATIONS:
        for u in Fixture.load(path).data["caller"]:
            folder, _, rel = u["audio"].partition("/")
            row = synthetic.get(u["audio"]) if folder == "synthetic" else recordings.get(rel)
            assert row and row["source"] and row["licence"], f"{path.stem}: {u['audio']} not in a manifest"
            if folder == "synthetic" and u["audio"] != "synthetic/vocal_burst.wav":
                assert row["source"].startswith("SYNTHETIC"), u["audio"]
            samples, rate, channels = read_wav(FIXTURES / u["audio"])
            if folder == "synthetic":
                assert (rate, channels) == (16000, 1) and len(samples) / rate < 8, u["audio"]


@pytest.fixture(scope="module")
def stack() -> SpeechStack:
    return load_stack("tiny.en", tts="piper")


@pytest.mark.parametrize("path", CONVERSATIONS, ids=[p.stem for p in CONVERSATIONS])
def test_conversation_with_the_scripted_model(path: Path, stack: SpeechStack, tmp_path: Path) -> None:
    result = asyncio.run(run_call(Fixture.load(path), stack, tmp_path))
    said = [e["text"] for e in result.trace if e["kind"] == "agent_said"]
    assert result.reply_problems == [], "\n".join(result.reply_problems + said)
    assert result.failures == [], "\n".join(result.failures + said)


def test_a_leaked_instruction_fails_the_call(stack: SpeechStack, tmp_path: Path) -> None:
    fixture = Fixture.load(FIXTURES / "out_of_scope_weather.yaml")
    fixture.data = copy.deepcopy(fixture.data)
    fixture.data["model"] = [{"text": 'No tool; say: "Sorry, I can only help with your orders."'}]
    result = asyncio.run(run_call(fixture, stack, tmp_path))
    assert any("No tool" in p for p in result.reply_problems) and result.failures


def test_asking_for_a_person_escalates_with_speculation_on(stack: SpeechStack, tmp_path: Path) -> None:
    fixture = Fixture.load(FIXTURES / "ask_for_person.yaml")
    fixture.data = {k: v for k, v in fixture.data.items() if k != "session"}
    result = asyncio.run(run_call(fixture, stack, tmp_path))
    assert result.failures == [], "\n".join(result.failures)


def test_an_outside_calls_facts_are_looked_for_in_the_whole_call() -> None:
    """`says` of an outside set's call: each fact in any of the agent's words once the caller spoke (the booking
    number before the goodbye, the "not done" of a declined write), `never` in none of them."""
    trace = _trace((0.0, "agent_said", "greeting", "Hello, booking 999 line."),
                   (2.0, "caller_turn_ended", "", "Book it."), (2.1, "agent_said", "reply", "Booked: number 2301."),
                   (6.0, "caller_turn_ended", "", "Thanks."), (6.1, "agent_said", "reply", "You're welcome!"),
                   (7.0, "caller_turn_ended", "", "No."), (7.1, "agent_said", "declined", "I haven't done that."))
    assert said_in_call({"contains": [["booked", "2301"], "haven't"], "never": ["cancelled"]}, trace) == []
    assert said_in_call({"contains": ["999"], "never": ["welcome"]}, trace) == ["never said '999'", "said 'welcome'"]
