"""A word heard a letter or two off one of the call's words is read as it when the audio finds that likelier
(voice/speech/_near_terms.py): which words propose a term, and that the audio's score decides."""

from __future__ import annotations

import pytest

from voice.speech._near_terms import edits, fit_terms, near_term

TERMS = ("farmacia sol", "farmacia", "reserva", "caja", "ibuprofeno", "paracetamol", "loratadina", "loperamida",
         "miligramos")


@pytest.mark.parametrize(("word", "term"), [
    ("Loratamíra", "loratadina"), ("Paracetamola", "paracetamol"), ("ibiprofelo", "ibuprofeno"),
    ("loratadina", None),  # heard right
    ("Semara", None), ("cajas", None),  # short words are near too many others
    ("Poratadina", None),  # another first letter
    ("lorazepam", None),  # too far
])
def test_a_long_word_a_letter_or_two_off_one_term_proposes_it(word: str, term: str | None) -> None:
    assert near_term(word, TERMS) == term


def test_a_word_near_two_terms_proposes_neither() -> None:
    assert near_term("lopatadina", ("loratadina", "loperadina")) is None


def test_the_audio_decides() -> None:
    heard = "Buenas, tienen Loratamíra de 10 miligramos."
    likelier_as_heard = lambda texts: [0.0, -1.0]  # noqa: E731
    likelier_as_term = lambda texts: [-3.0, -1.0]  # noqa: E731
    assert fit_terms(heard, TERMS, likelier_as_heard) == heard
    assert fit_terms(heard, TERMS, likelier_as_term) == "Buenas, tienen Loratadina de 10 miligramos."


def test_edits_count_letters_put_in_taken_out_or_changed() -> None:
    assert (edits("loratamira", "loratadina"), edits("paracetamola", "paracetamol"), edits("", "abc")) == (2, 1, 3)
