"""A language's spoken form is its pack's (`spoken_form()`): how "$20", "4:30 pm" and "No. 5" are said in English,
"20 €" and "10%" in Spanish (tests/data/spoken_forms.tsv)."""

from __future__ import annotations

import pytest

from loop import locale
from tests.helpers import labelled

ROWS = [(language, *rest.split("\t")) for language, rest in labelled("spoken_forms.tsv")]


@pytest.mark.parametrize(("language", "written", "said"), ROWS)
def test_a_reply_is_said_by_its_languages_spoken_form(language: str, written: str, said: str) -> None:
    assert locale.get(language).spoken_form().speak(written) == said


def test_every_language_has_a_spoken_form_with_examples() -> None:
    assert {language for language, *_ in ROWS} == set(locale.LANGUAGES)
