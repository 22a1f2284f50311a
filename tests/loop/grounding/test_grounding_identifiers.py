"""Which identifier an argument holds: one the schema or the tool's description names (its length, its shape),
never one named as another, and a write that takes only an identifier offered when the caller names it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest

from loop import ScriptedModel, Tool
from loop.grounding._arg_kinds import arg_kind, id_shape, label
from loop.grounding.arguments import ground
from loop.grounding.tool_choice import ask_for
from loop.kinds import count, identifier, person_name
from loop.locale import en
from loop.models.llama.qwen_format import tool_name
from loop.types import Message
from tests import plain_agents as pa

# ---- which identifier is which ------------------------------------------------------------------------------------


def test_an_identifier_named_as_another_or_with_another_length_is_not_offered() -> None:
    def outage_by_postcode(postcode: str) -> dict:
        """Power cuts in an area, by its four-digit postcode"""

    def outage_for_account(account_number: str) -> dict:
        """Whether the power is off at a home, by the five-digit account number"""

    def outage_at(postcode: str) -> dict: ...

    def outage_of(account_number: str) -> dict: ...

    def offered(say: str, *fns: Any) -> list[str]:
        return [tool_name(t) for t in ground([Tool(f).openai_schema() for f in fns], [Message("user", say)])[0]]

    assert offered("Is there a power cut in postcode 3102?", outage_at, outage_of) == ["outage_at"]
    assert offered("Account 51877, why is my power off?", outage_at, outage_of) == ["outage_of"]
    assert offered("Is the power off at 3102?", outage_at, outage_of) == ["outage_at", "outage_of"]  # who knows
    by_length = (outage_by_postcode, outage_for_account)
    assert offered("I live in 3102. Is the power off there?", *by_length) == ["outage_by_postcode"]
    assert offered("It's 51877, is the power off?", *by_length) == ["outage_for_account"]


def test_a_write_that_takes_only_an_identifier_is_offered_when_the_caller_names_it() -> None:
    from loop.grounding.tool_choice import unnamed_id_writes

    tools = [t.openai_schema() for t in pa.hotel(ScriptedModel(["ok"])).tools.values()]
    writes = frozenset({"book_room", "cancel_booking"})

    def offered(say: str) -> set[str]:
        return {tool_name(t) for t in unnamed_id_writes(tools, [Message("user", say)], writes)}

    assert "cancel_booking" not in offered("Can you check my booking? The reference is HB-3091.")  # no cancel
    assert "cancel_booking" in offered("Please cancel booking HB-3091.")
    assert "book_room" in offered("Can you check my booking?")  # it takes more than an identifier


Level = Literal["beginner", "improver", "advanced"]


def _club_tools(*, lookup: bool = False) -> list[dict[str, Any]]:
    """A climbing club's desk: a read by level, a write that joins, one that takes only a membership number; with
    `lookup`, a read that takes the membership number too."""
    def session_times(level: Level) -> dict:
        """Which weekly climbing sessions for a level have places"""

    def join_session(member_name: str, level: Level) -> str:
        """Sign a climber up for a weekly session at their level"""

    def leave_club(membership: Annotated[str, identifier(digits=6)]) -> str:
        """Take a climber off the register, by their six-digit membership number"""

    def membership_details(membership: Annotated[str, identifier(digits=6)]) -> dict:
        """A member's level and sessions, by their six-digit membership number"""

    fns = [session_times, join_session, leave_club, *([membership_details] if lookup else [])]
    return [Tool(f).openai_schema() for f in fns]


def test_a_write_that_takes_only_an_identifier_is_offered_when_the_request_speaks_of_it_alone() -> None:
    """Said in other words than its name ("take my son off the register" for leave_club), the only tool an
    identifier can be for stays offered while the agent asks; with a read that takes one too, it waits for its
    name."""
    from loop.grounding.tool_choice import unnamed_id_writes

    writes = frozenset({"join_session", "leave_club"})

    def offered(tools: list[dict[str, Any]], *said: str) -> set[str]:
        turns = [Message("user" if i % 2 == 0 else "assistant", s) for i, s in enumerate(said)]
        return {tool_name(t) for t in unnamed_id_writes(tools, turns, writes)}

    asked = ("Please take my son off the register, he's moving school.",
             "Could you tell me the level: beginner, improver or advanced?",
             "His membership number is 204518.")
    assert "leave_club" in offered(_club_tools(), asked[0])
    assert "leave_club" in offered(_club_tools(), *asked)  # the request stands while the agent asks
    assert "leave_club" not in offered(_club_tools(), "Which sessions have places for beginners?")
    assert "leave_club" not in offered(_club_tools(lookup=True), asked[0])  # the number may be for the lookup


def test_an_identifier_given_to_a_question_for_something_else_makes_the_call_it_alone_completes() -> None:
    from loop.grounding._completion import volunteered_call
    from loop.types import ModelRequest

    LEVEL_ASKED = "Could you tell me the level: beginner, improver or advanced?"  # what session_times lacks

    def call_after(question: str, answer: str) -> Any:
        turns = [Message("user", "Please take my son off the register, he's moving school."),
                 Message("assistant", question), Message("user", answer)]
        return volunteered_call(ModelRequest(messages=turns, tools=_club_tools(), max_output_tokens=60,
                                             writes=frozenset({"join_session", "leave_club"})))

    made = call_after(LEVEL_ASKED, "His membership number is 204518.")
    assert made is not None and (made.name, made.arguments) == ("leave_club", {"membership": "204518"})
    assert call_after(LEVEL_ASKED, "Beginner, I think.") is None  # no identifier
    assert call_after("Could you tell me the six-digit membership number?", "It's 204518.") is None  # completed_ask's


@pytest.mark.parametrize(("described", "digits"), [
    ("The status of an order, by its five-digit ticket number", 5), ("Look up a ticket by its ticket number", 0),
    ("Find the order for a ticket code", 0), ("Check a 6-digit ticket", 6)])
def test_a_plain_string_argument_the_tools_description_calls_a_number_is_an_identifier(described: str,
                                                                                      digits: int) -> None:
    """`ticket: str` says nothing; the tool's own words do: then only an identifier the caller said fills it (not
    "owe" or "curtains"), with the digits the description gives, and it is asked for as a number."""
    schema = {"type": "string"}
    kind = arg_kind("ticket", schema, described)
    assert kind is not None and kind.kind == "id" and kind.digits == digits
    assert arg_kind("ticket", schema, "Book a delivery of a ticket's items").kind == "text"  # not named so
    tool = {"type": "function", "function": {"name": "order_status", "description": described, "parameters": {
        "type": "object", "properties": {"ticket": schema}, "required": ["ticket"]}}}
    ticket = "60088" + "1" * (max(digits, 5) - 5)
    said = [Message("user", f"How much do I owe on my curtains? The ticket's {ticket}.")]
    (grounded,), _ = ground([tool], said)
    assert grounded["function"]["parameters"]["properties"]["ticket"] == {"enum": [ticket]}  # never "owe"
    counted = f"{('', '', '', '', '', 'five', 'six')[digits]}-digit " if digits else ""
    assert ask_for(["ticket"], tool).endswith(f"the {counted}ticket number?")  # "the five-digit ticket number?"


def test_an_argument_named_by_the_words_that_count_its_digits_is_that_identifier() -> None:
    """`last_four: str` on a tool "by the last four digits": an identifier of four digits, never free text
    ("damaged", "wallet") nor a spoken "three"."""
    described = "Freeze a card so nobody can pay with it, by the last four digits, because it is lost or damaged"
    kind = arg_kind("last_four", {"type": "string"}, described)
    assert kind is not None and kind.kind == "id" and kind.digits == 4
    tool = {"type": "function", "function": {"name": "freeze_card", "description": described, "parameters": {
        "type": "object", "properties": {"last_four": {"type": "string"}}, "required": ["last_four"]}}}
    said = [Message("user", "I need to freeze my card. It ends in 0077."),
            Message("assistant", "Could you tell me the reason?"),
            Message("user", "It's damaged, it snapped in half in my wallet, three days ago.")]
    (grounded,), _ = ground([tool], said)
    assert grounded["function"]["parameters"]["properties"]["last_four"] == {"enum": ["0077"]}



@pytest.mark.parametrize(("described", "shape", "asked"), [
    ("Where a bag is, by its file reference (3 letters, 5 digits)", (3, 5),
     "file reference, three letters and five digits"),
    ("A booking by its booking reference: two letters then four digits", (2, 4),
     "booking reference, two letters and four digits"),
    ("A booking by its reference", (0, 0), "reference"),
    ("Three letters and five digits are on the tag; look up the order by its order number", (0, 0), "order number"),
])
def test_an_identifiers_shape_is_read_from_its_description(described: str, shape: tuple[int, int],
                                                           asked: str) -> None:
    name = "file_reference" if "file" in described else "order_number" if "order" in described else \
        "booking_reference" if "booking reference" in described else "reference"
    assert id_shape(name, described) == shape
    assert label(name, {"type": "string"}, described) == asked
    if shape[1]:  # a reference with fewer digits than it has is not one: "JFK334" when it has five
        tool = {"type": "function", "function": {"name": "look", "description": described, "parameters": {
            "type": "object", "properties": {name: {"type": "string"}}, "required": [name]}}}
        assert ground([tool], [Message("user", "It's JFK334.")])[1] == {"look": [name]}


def test_an_identifiers_shape_in_the_agents_instructions_is_asked_for_and_answered() -> None:
    """"A reference is two letters and four digits" in the prompt: the question says so, and the answer to it
    completes the call (the question is recognised with the shape in it)."""
    from loop.grounding.tool_choice import answered_ask

    tool = {"type": "function", "function": {"name": "booking_details", "description": "A booking by its reference",
                                             "parameters": {"type": "object", "properties": {
                                                 "reference": {"type": "string"}}, "required": ["reference"]}}}
    system = Message("system", "A reference is two letters and four digits, like KX4729.")
    asked = ask_for(["reference"], tool, en, [system, Message("user", "Where do I pick up my car?")])
    assert asked.endswith("Could you tell me the reference, two letters and four digits?")
    messages = [system, Message("user", "Where do I pick up my car?"), Message("assistant", asked),
                Message("user", "It's BT1186.")]
    grounded, _ = ground([tool], messages)
    assert [t["function"]["name"] for t in answered_ask([tool], messages, grounded)] == ["booking_details"]
    assert ground([tool], [*messages[:3], Message("user", "It's 1186.")])[0] == []  # no letters: not one


def test_an_identifier_declared_as_digits_only_takes_the_digits_of_one_heard_with_a_letter() -> None:
    """`identifier(digits=5)` is a five-digit number: "S45127", Whisper's writing of "es 45127" ("it's 45127"),
    gives 45127; an identifier declared with letters keeps them."""
    def reservation(number: Annotated[str, identifier(digits=5)]) -> str:
        """A reservation by its number"""
        return ""

    def parcel(code: Annotated[str, identifier(letters=2, digits=8)]) -> str:
        """A parcel by its tracking code"""
        return ""

    (grounded,), _ = ground([Tool(reservation).openai_schema()], [Message("user", "el número S45127, por favor")], "es")
    assert grounded["function"]["parameters"]["properties"]["number"] == {"enum": ["45127"]}
    (grounded,), _ = ground([Tool(parcel).openai_schema()], [Message("user", "parcel SB12345678 please")])
    assert grounded["function"]["parameters"]["properties"]["code"] == {"enum": ["SB12345678"]}


def test_a_write_the_callers_words_state_whole_is_made_without_a_model() -> None:
    """"Can you book my road bike in for Friday? I'm Sam Lee.": every argument of the booking is a value said
    now, so the booking is proposed (and asked aloud), not a read the model prefers (set 5's bakery looked up
    its cake list for a whole order). A question for part of it, or words that leave one out, make nothing."""
    from loop.grounding._completion import stated_call
    from loop.types import ModelRequest

    def opening_hours() -> str:
        """When the bike shop is open"""

    def book_service(name: Annotated[str, person_name()], bike: Literal["road bike", "mountain bike"],
                     day: Literal["monday", "friday"]) -> str:
        """Book a bike in for a service on a day"""

    tools = [Tool(opening_hours).openai_schema(), Tool(book_service, mutates=True).openai_schema()]

    def stated(said: str) -> Any:
        return stated_call(ModelRequest(messages=[Message("user", said)], tools=tools, max_output_tokens=60,
                                        writes=frozenset({"book_service"})))

    made = stated("Can you book my road bike in for a service on Friday? I'm Sam Lee.")
    assert made is not None and made.name == "book_service"
    assert made.arguments == {"name": "Sam Lee", "bike": "road bike", "day": "friday"}
    assert stated("Can you book my road bike in for a service on Friday?") is None  # no name
    assert stated("What time do you open on Friday?") is None


def test_an_answer_that_names_the_asked_identifier_is_for_it_even_when_it_does_not_fit() -> None:
    """"Membership number is 204," (digits lost in hearing) to "Could you tell me the six-digit membership
    number?": asked again, never taken as a count for another write (through tiny.en, set 7's swimming line
    switched to enrolling with the number as an age)."""
    from loop.grounding.phase import said_without_generating
    from loop.types import ModelRequest

    def leave_club(membership: Annotated[str, identifier(digits=6)]) -> str:
        """Take a climber off the register, by their six-digit membership number"""

    def book_sessions(member_name: Annotated[str, person_name()], sessions: Annotated[int, count()]) -> str:
        """Book a number of climbing sessions for a member"""

    tools = [Tool(leave_club, mutates=True).openai_schema(), Tool(book_sessions, mutates=True).openai_schema()]
    turns = [Message("user", "Please take my son off the register, he's moving school."),
             Message("assistant", "Sure, I can help with that. Could you tell me the six-digit membership number?")]

    def said(answer: str) -> str:
        return said_without_generating(ModelRequest(messages=[*turns, Message("user", answer)], tools=tools,
                                                    max_output_tokens=60,
                                                    writes=frozenset({"leave_club", "book_sessions"})))

    assert said("Membership number is 204,").endswith("the six-digit membership number?")
