"""A tool that cannot work as declared fails when it is made, in one line naming the tool, the parameter and the
fix: an untyped parameter here; a type the embedded model's grammar cannot hold with the real model below."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import Field

from loop import Agent, Message, ModelRequest, Tool, ToolDefinitionError
from loop.grounding._arg_kinds import arg_kind
from loop.kinds import identifier, item, person_name, when
from tests.helpers import embedded_model
from voice.agents.source import load_agent
from voice.agents.spec import AgentConfigError


def test_an_untyped_parameter_is_refused_naming_the_tool_and_the_parameter() -> None:
    def check_bread(loaf, day: str) -> str:  # the mistake under test: no type on loaf
        return "yes"

    with pytest.raises(ToolDefinitionError) as err:
        Tool(check_bread)
    message = str(err.value)
    assert "'check_bread'" in message and "'loaf'" in message and "loaf: str" in message and "\n" not in message


def test_an_agent_file_with_an_untyped_tool_fails_at_load(tmp_path: Path) -> None:
    (tmp_path / "bakery.py").write_text("def check_bread(loaf):\n    return 'yes'\n")
    (tmp_path / "agent.yaml").write_text("name: bakery\ntools: [bakery:check_bread]\nmodel: script\n"
                                         "script:\n  - text: Hello.\n")
    with pytest.raises(AgentConfigError, match=r"check_bread.*'loaf' has no type"):
        load_agent(str(tmp_path / "agent.yaml")).maker(tmp_path / "data")("c1")


# ---- the embedded model's grammar ----------------------------------------------------------------


@pytest.fixture(scope="module")
def model() -> Any:
    return embedded_model()


def test_a_pattern_with_regex_shorthands_is_written_by_the_grammar(model: Any) -> None:
    """`Field(pattern=r"^\\d{6}$")`, as the README teaches: the grammar spells \\d as [0-9] (llama.cpp's converter
    copied it as an escape GBNF does not know, and every turn ended as TOOL_FAILURE)."""

    def lookup_membership(member_id: Annotated[str, Field(pattern=r"^\d{6}$")]) -> str:
        """Look up a gym membership by its six-digit member id."""
        return f"Member {member_id} is active."

    tool = Tool(lookup_membership)
    agent = Agent(model, [tool])  # checked at load: no error
    request = ModelRequest(messages=[Message("system", "Call lookup_membership for the caller's member id."),
                                     Message("user", "My member id is 482913.")],
                           tools=[tool.openai_schema()], max_output_tokens=40)
    response = asyncio.run(_respond(agent.model, request))
    (call,) = response.tool_calls
    assert call.name == "lookup_membership" and call.arguments == {"member_id": "482913"}


async def _respond(model: Any, request: ModelRequest) -> Any:
    return [event async for event in model.stream(request)][-1]


def test_a_parameter_the_grammar_cannot_hold_fails_at_load_naming_it(model: Any) -> None:
    schema = {"type": "object", "properties": {"day": {"type": "string"}, "notes": {"description": "anything"}},
              "required": ["day", "notes"]}
    tool = Tool(lambda **_: "ok", name="book_visit", args=schema)
    with pytest.raises(ToolDefinitionError) as err:
        Agent(model, [tool])
    assert "'book_visit'" in str(err.value) and "'notes'" in str(err.value) and "\n" not in str(err.value)


# ---- declared argument kinds ---------------------------------------------------------------------


def test_a_declared_kind_wins_over_the_name() -> None:
    def book(pet: Annotated[str, person_name()], card: Annotated[str, identifier(digits=4)],
             treat: Annotated[str, item()], day: Annotated[str, when(date=True)], notes: str) -> str:
        return "ok"

    props = Tool(book).schema["properties"]
    kinds = {name: arg_kind(name, schema) for name, schema in props.items()}
    assert kinds["pet"].kind == "name" and kinds["card"].kind == "id" and kinds["card"].digits == 4
    assert kinds["treat"].kind == "text" and kinds["day"].when == "date"
    assert kinds["notes"].kind == "free"  # undeclared: read from the name, as before


def test_an_agent_file_declares_kinds_and_a_wrong_one_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "kind_cards.py").write_text("def freeze_card(card: str, why: str) -> str:\n    return 'frozen'\n")
    good = "tools: [{use: kind_cards:freeze_card, kinds: {card: 'id:4', why: free}}]"
    (tmp_path / "agent.yaml").write_text(f"name: cards\n{good}\nmodel: script\nscript:\n  - text: Hello.\n")
    agent = load_agent(str(tmp_path / "agent.yaml")).maker(tmp_path / "data")("c1")
    schema = agent.tools["freeze_card"].schema["properties"]["card"]
    assert arg_kind("card", schema).digits == 4
    (tmp_path / "agent.yaml").write_text("name: cards\ntools: [{use: kind_cards:freeze_card, kinds: {card: idd}}]\n")
    with pytest.raises(AgentConfigError, match=r"unknown argument kind 'idd'"):
        load_agent(str(tmp_path / "agent.yaml")).maker(tmp_path / "data")("c1")


def test_two_agent_files_with_a_module_of_the_same_name_each_get_their_own(tmp_path: Path) -> None:
    for shop, stock in (("north", "2"), ("south", "7")):
        (tmp_path / shop).mkdir()
        (tmp_path / shop / "cards.py").write_text(
            f'def stock(item: str) -> str:\n    """Stock"""\n    return "{stock}"\n')
        (tmp_path / shop / "agent.yaml").write_text("tools: [cards:stock]\nmodel: script\nscript:\n  - text: Hi.\n")
    agents = [load_agent(str(tmp_path / shop / "agent.yaml")).maker(tmp_path / f"d{shop}")("c")
              for shop in ("north", "south")]
    tools = [a.tools if isinstance(a.tools, dict) else {t.name: t for t in a.tools} for a in agents]
    assert [t["stock"].fn(item="x") for t in tools] == ["2", "7"]


def test_an_identifier_declared_with_letters_and_digits_is_asked_for_and_taken_whole(tmp_path: Path) -> None:
    """`identifier(letters=2, digits=8)` (agent file: "id:2+8"): a tracking code is asked for by its shape and
    only a code of that shape is taken ("SB12345678", never the bare "12345678")."""
    from loop.grounding._arg_kinds import label
    from loop.grounding.arguments import ground
    from loop.kinds import parse_kind
    from loop.types import Message

    def track_parcel(tracking_code: Annotated[str, identifier(letters=2, digits=8)]) -> str:
        return "ok"

    schema = Tool(track_parcel).openai_schema()
    code = schema["function"]["parameters"]["properties"]["tracking_code"]
    assert label("tracking_code", code) == "tracking code, two letters and eight digits"
    tools, _ = ground([schema], [Message("user", "Where is my parcel? It's SB12345678.")])
    assert tools[0]["function"]["parameters"]["properties"]["tracking_code"] == {"enum": ["SB12345678"]}
    assert ground([schema], [Message("user", "Parcel 12345678 please")])[1] == {"track_parcel": ["tracking_code"]}
    assert parse_kind("id:2+8") == {"x-kind": "id", "x-digits": 8, "x-letters": 2}
    with pytest.raises(ValueError, match="id:L\\+N"):
        parse_kind("id:two+8")
