"""A listed value is found in the caller's words however they say it: "a large one" names "large", a short code of
digits and letters ("6B") said a character a word ("six B", "6 b", "four-b")."""

from __future__ import annotations

import pytest

from loop.grounding.arguments import _named

CLASSES = ["1A", "4B", "6A", "6B", "A12"]


@pytest.mark.parametrize(("said", "named"), [
    ("Could you tell me the date of the parents' evening for six B, please?", ["6B"]),
    ("the parents evening for 6 b", ["6B"]),
    ("she's in class four-b", ["4B"]),
    ("my son is in 6A", ["6A"]),
    ("room A one two", ["A12"]),
    ("she's in year six", []),  # a year alone is no class
    ("sixty b", []),
    ("it's the 4th of June, b", []),
])
def test_a_short_code_is_named_a_character_a_word(said: str, named: list[str]) -> None:
    assert _named(CLASSES, said) == named
