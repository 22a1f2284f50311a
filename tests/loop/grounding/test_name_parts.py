"""A full name fills the argument that holds a part of it with that part: `first_name` and `last_name` of "Oliver
Bennett" are Oliver and Bennett, not the whole name twice (a school office, dev half, heard right, looked up
"Oliver Bennett Oliver Bennett")."""

from __future__ import annotations

import pytest

from loop import Tool
from loop.grounding._arg_kinds import name_part
from loop.grounding.arguments import ground
from loop.types import Message
from tests.helpers import labelled


@pytest.mark.parametrize(("argument", "part"), labelled("name_parts.tsv"))
def test_the_part_of_a_name_an_argument_holds_is_read_from_its_name(argument: str, part: str) -> None:
    assert name_part(argument) == {"first": 0, "last": -1, "whole": None}[part]


def test_a_full_name_fills_first_and_last_name_with_their_parts() -> None:
    def report_absence(first_name: str, last_name: str, class_name: str) -> str: ...

    said = "Hi, I'm calling to say Oliver Bennett in 4B won't be in today."
    tools, _ = ground([Tool(report_absence).openai_schema()], [Message("user", said)])
    props = tools[0]["function"]["parameters"]["properties"]
    assert props["first_name"] == {"enum": ["Oliver"]} and props["last_name"] == {"enum": ["Bennett"]}

