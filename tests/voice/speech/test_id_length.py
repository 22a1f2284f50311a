"""An identifier heard a digit long or short is read again at the length the agent declares
(voice/speech/_id_length.py): which runs are tried, where the lengths come from, and the real Whisper tiny.en on
dictated-id recordings (audio_fixtures/synthetic/ids) with their own length declared and with a wrong one."""

from __future__ import annotations

import csv
import re
from typing import Annotated

import pytest

from loop import Agent, TestModel, Tool
from loop.grounding.arguments import id_digit_counts
from loop.kinds import identifier
from tests.paths import AUDIO_FIXTURES
from voice.audio import load_audio
from voice.speech._id_length import digit_runs, lengths_to_try, needs_fitting
from voice.speech.caller_digits import join_spoken_digits
from voice.speech.engines import STT_ENGINES, transcribe_with
from voice.speech.stt import WhisperSTT
from voice.speech.vocabulary import agent_id_digits

IDS = AUDIO_FIXTURES / "synthetic" / "ids"


def test_runs_of_three_digits_or_more_with_one_separator_between() -> None:
    runs = [m.group() for m in digit_runs("Card 681-3390, order 455 0127, 2 pizzas at 8:30 for $120.50 or 4.5")]
    assert runs == ["681-3390", "455 0127"]
    # digits written one by one were each heard alone (the island reading): their count is what was said
    assert [m.group() for m in digit_runs("It's 7 7 8 8, not 5.0.2")] == ["5.0.2"]


def test_only_a_run_a_digit_off_every_declared_length_is_tried() -> None:
    assert lengths_to_try(5, (4,)) == [4]
    assert lengths_to_try(7, (4, 8)) == [8]
    assert lengths_to_try(4, (4, 8)) == []  # a declared length: as heard
    assert lengths_to_try(3, (8,)) == [] and lengths_to_try(6, (4, 8)) == []  # too far off: another number
    assert needs_fitting("It's number 99999.", (4,)) and not needs_fitting("It's number 9999.", (4,))
    assert not needs_fitting("Two pizzas to 22 Baker Street.", (4,))


def lookup(order_number: Annotated[str, identifier(digits=4)]) -> str:
    """Look up an order."""
    return "ok"


def balance(account: str) -> str:
    """The balance of an account, by its eight-digit account number."""
    return "ok"


def bag(file_reference: str) -> str:
    """A delayed bag's status."""
    return "ok"


def test_the_lengths_come_from_what_the_agent_declares() -> None:
    specs = [Tool(lookup).openai_schema(), Tool(balance).openai_schema()]
    assert id_digit_counts(specs) == (4, 8)
    bag_spec = Tool(bag).openai_schema()
    assert id_digit_counts([bag_spec]) == ()
    assert id_digit_counts([bag_spec], "A file reference has three letters and five digits.") == (5,)
    patterned = {"function": {"name": "f", "parameters": {"properties": {
        "code": {"type": "string", "pattern": r"^\d{6}$"}, "ref": {"type": "string", "pattern": r"^[A-Z]{2}\d{4}$"}}}}}
    assert id_digit_counts([patterned]) == (4, 6)
    agent = Agent(TestModel(), tools=[Tool(lookup), Tool(balance)])
    assert agent_id_digits(agent) == (4, 8)


@pytest.fixture(scope="module")
def stt() -> WhisperSTT:
    return WhisperSTT(**STT_ENGINES.spec("tiny.en").options, threads=1)


def ids() -> list[dict[str, str]]:
    with (IDS / "manifest.tsv").open(newline="", encoding="utf-8") as handle:
        return [row for row in csv.DictReader(handle, delimiter="\t") if row["expect"]]


def heard_id(text: str) -> list[str]:
    return re.findall(r"\d+", join_spoken_digits(text))


def test_dictated_ids_with_their_length_declared_come_through_and_a_wrong_length_breaks_none(
        stt: WhisperSTT) -> None:
    rows = ids()
    right_declared = broken = right_plain = 0
    for row in rows:
        audio, expect = load_audio(IDS.parent.parent / row["path"]), row["expect"]
        plain = heard_id(stt.transcribe(audio)) == [expect]
        right_plain += plain
        right_declared += heard_id(transcribe_with(stt, audio, (), (len(expect),))) == [expect]
        if plain:  # a right reading stays right whatever length is declared
            broken += heard_id(stt.transcribe(audio, id_digits=(len(expect) + 1,))) != [expect]
    assert right_declared >= right_plain
    assert broken == 0
