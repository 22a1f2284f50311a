"""Values read from a caller's words in each language: the words each reader takes from the call's pack
(tests/data/values_said.tsv), so a Spanish call reads "y media", "mañana" and "de cinco cifras" as an English one
reads "half past", "tomorrow" and "five-digit"."""

from __future__ import annotations

import re

import pytest

from loop import locale
from loop.grounding._arg_kinds import digits_named, id_shape
from loop.grounding._scope import when_words
from loop.grounding.arguments import (
    Evidence,
    id_words,
    number_candidates,
    retracted_ids,
    time_spans,
    value_pattern,
    words_to_number,
)
from loop.types import Message
from tests.helpers import labelled
from voice.speech.caller_digits import join_spoken_digits

ROWS = [(language, *rest.split("\t")) for language, rest in labelled("values_said.tsv")]


def _read(reader: str, said: str, argument: str, words: object) -> str:
    if reader == "item":
        pattern = value_pattern(said, words=words)
        return "yes" if pattern and re.fullmatch(pattern, argument) else "no"
    if reader in ("date", "time"):
        return "yes" if argument in time_spans(said, reader, words) else "no"
    if reader == "asks_name":
        messages = [Message("assistant", said), Message("user", "Sam Lee.")]
        return "yes" if Evidence.of(messages, words).asked_name else "no"
    readers = {
        "retracted": lambda: " ".join(sorted(retracted_ids(said, words))),
        "amount": lambda: str(words_to_number(said, words)),
        "amounts": lambda: " ".join(map(str, number_candidates(said, words))),
        "id_words": lambda: " ".join(sorted(id_words(said, words))),
        "digits": lambda: str(digits_named(argument, said, words)),
        "shape": lambda: " ".join(map(str, id_shape(argument, said, words))),
        "joined": lambda: join_spoken_digits(said, words=words),
        "when_word": lambda: "yes" if said in when_words(words) else "no",
    }
    return str(readers[reader]())


@pytest.mark.parametrize(("language", "reader", "said", "argument", "read"), ROWS)
def test_a_value_is_read_in_the_calls_language(language: str, reader: str, said: str, argument: str,
                                               read: str) -> None:
    assert _read(reader, said, argument, locale.get(language)) == read


def test_every_language_has_examples_of_every_reader() -> None:
    readers = {(language, reader) for language, reader, *_ in ROWS}
    assert {reader for _, reader in readers} == {reader for language, reader in readers if language == "es"}
