"""A change to a write the caller was asked to confirm, or declined, made by construction (`loop.grounding._change`),
and what a caller who goes on with another write is asked for: on tool schemas, without a model."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest

from loop import Tool
from loop.kinds import address, count, person_name, when
from loop.locale import en
from loop.types import Message


def test_a_change_that_names_no_new_value_of_any_kind_asks_what_to_change() -> None:
    from loop.grounding._change import changed_call
    from loop.grounding.phase import said_without_generating
    from loop.types import ModelRequest, ToolCall

    tool = {"type": "function", "function": {"name": "book_delivery", "description": "Book a delivery", "parameters": {
        "type": "object", "properties": {"ticket": {"type": "string", "pattern": "^[0-9]{5}$"},
                                         "day": {"type": "string", "enum": ["tuesday", "thursday", "friday"]}},
        "required": ["ticket", "day"]}}}
    call = ToolCall("book_delivery", {"ticket": "48217", "day": "tuesday"}, "c1")

    def request(change: str) -> ModelRequest:
        messages = [Message("user", "Please deliver ticket 48217 on Tuesday."), Message("assistant", "", [call]),
                    Message("tool", f"book_delivery was not approved (the caller asked for a change: {change!r}). "
                                    "It was not done.", tool_call_id="c1"), Message("user", change)]
        return ModelRequest(messages, [tool], 96, writes=frozenset({"book_delivery"}))

    def after(change: str) -> ToolCall | None:
        return changed_call(request(change))

    assert (changed := after("Actually make it Thursday.")) is not None
    assert changed.arguments == {"ticket": "48217", "day": "thursday"}
    assert after("actually make it thirsty.") is None  # no day in it: asked what to change, no model
    assert said_without_generating(request("actually make it thirsty.")) == en.WHICH_CHANGE
    assert after("Thursday or Friday, whichever.") is None  # ambiguous: the model reads it
    assert said_without_generating(request("Thursday or Friday, whichever.")) != en.WHICH_CHANGE
    assert after("Yes, Tuesday.") is None  # nothing new


def test_asked_for_a_price_a_caller_who_gives_a_bookings_date_is_asked_for_the_booking() -> None:
    """"Could you tell me the size and the number of miles?" (a quote) - "A two bedroom house, on Friday the
    twenty-fifth of September.": no quote takes a date, so they go on with the booking, and are asked for what it
    lacks; "A three bedroom house." answers the quote, which still lacks the miles."""
    from loop.grounding.phase import said_without_generating
    from loop.types import ModelRequest

    def quote(size: Literal["studio", "two bedroom", "three bedroom"], miles: Annotated[int, count()]) -> str:
        """A price for a move: the size of home and the miles to the new home"""

    def book_move(name: Annotated[str, person_name()], to_address: Annotated[str, address()],
                  date: Annotated[str, when(date=True)], size: Literal["studio", "two bedroom", "three bedroom"]
                  ) -> str:
        """Book a moving day"""

    tools = [Tool(quote).openai_schema(), Tool(book_move, mutates=True).openai_schema()]

    def reply(said: str) -> str:
        messages = [Message("user", "Hello, I'm after a price for a move."),
                    Message("assistant", "Sure. Could you tell me the size and the number of miles?"),
                    Message("user", said)]
        return said_without_generating(ModelRequest(messages, tools, 96, writes=frozenset({"book_move"})))

    assert "miles" in reply("It's a three bedroom house.")
    asked = reply("It's a two bedroom house, on Friday the twenty-fifth of September.")
    assert "name" in asked and "miles" not in asked
    # what was asked for is complete: the quote is made, whatever the booking could also take from it
    assert reply("A two bedroom house, 12 miles, on Friday the twenty-fifth of September.") == ""


def test_a_corrected_address_changes_the_address_only() -> None:
    """"It's 21 Church Lane, not Road." to a locksmith's booking at 21 Church Road for Ben Hughes: the address
    changes; "Road", a word of the address the call had, is no new name (the booking went to "Road")."""
    from loop.approvals import not_approved
    from loop.grounding._change import changed_call
    from loop.types import ModelRequest, ToolCall

    def book_visit(name: Annotated[str, person_name()], address: Annotated[str, address()]) -> str:
        """Book a locksmith to come out"""

    change = "Oh, sorry, I said it wrong. It's 21 Church Lane, not Road."
    tools = [Tool(book_visit, mutates=True).openai_schema()]
    call = ToolCall("book_visit", {"name": "Ben Hughes", "address": "21 Church Road"}, id="c1")
    messages = [Message("user", "I'm locked out at 21 Church Road. I'm Ben Hughes."), Message("assistant", "", [call]),
                Message("tool", not_approved("book_visit", f"the caller asked for a change: {change!r}"),
                        tool_call_id="c1"), Message("user", change)]
    changed = changed_call(ModelRequest(messages, tools, 96, writes=frozenset({"book_visit"})))
    assert changed is not None and changed.arguments == {"name": "Ben Hughes", "address": "21 Church Lane"}


def test_a_change_asked_after_a_no_is_the_declined_write_changed() -> None:
    """"Go on, I'm away that day." (a no), "Okay, I haven't done that.", then "Can we do the 21st instead?": the
    same booking on the 21st, put to the caller again; never the scope sentence (its words name no topic). After a
    no, only words that ask for a change change it: "What about ticket 50123's status?" is no new delivery."""
    from loop.approvals import not_approved
    from loop.grounding._change import changed_call
    from loop.grounding.phase import said_without_generating
    from loop.types import ModelRequest, ToolCall

    def book_tuning(name: Annotated[str, person_name()], date: Annotated[str, when(date=True)],
                    piano: Literal["upright", "grand"]) -> str:
        """Book a piano tuning visit"""

    tools = [Tool(book_tuning, mutates=True).openai_schema()]
    call = ToolCall("book_tuning", {"name": "Ken Lowry", "date": "16th", "piano": "upright"}, id="c1")

    def request(said: str, reason: str = "the caller said no") -> ModelRequest:
        messages = [Message("user", "Book a tuning on the 16th for my upright, Ken Lowry."),
                    Message("assistant", "", [call]), Message("tool", not_approved("book_tuning", reason),
                                                              tool_call_id="c1"),
                    Message("assistant", "Okay, I haven't done that."), Message("user", said)]
        return ModelRequest(messages, tools, 96, writes=frozenset({"book_tuning"}))

    changed = changed_call(request("can we do the 21st instead?"))
    assert changed is not None and changed.arguments == {"name": "Ken Lowry", "date": "21st", "piano": "upright"}
    assert said_without_generating(request("can we do the 21st instead?")) == ""
    assert changed_call(request("The 21st, what's the weather then?")) is None  # no change asked for
    assert changed_call(request("how about the 21st?", "no answer came")) is not None


@pytest.mark.parametrize(("change", "arguments"), [
    ("Actually it's 16 Birch Avenue, not six.", {"address": "16 Birch Avenue", "problem": "no hot water"}),
    ("Actually make it a leak.", {"address": "6 Birch Avenue", "problem": "leak"}),
    ("Sorry, 16 Birch Avenue, and it's a leak.", {"address": "16 Birch Avenue", "problem": "leak"}),
])
def test_a_change_of_address_is_the_street_address_the_caller_now_said(change: str, arguments: dict[str, str]
                                                                       ) -> None:
    """A plumber's callout to 6 Birch Avenue, changed to 16: the same call with the new street address (it had
    been asked "Sorry, what would you like me to change?": an address is a span of words, and only values
    counted as a change)."""
    from loop.approvals import not_approved
    from loop.grounding._change import changed_call
    from loop.types import ModelRequest, ToolCall

    def book_callout(address: str, problem: Literal["leak", "no hot water"]) -> str:
        """Send a plumber to the caller's street address"""

    tools = [Tool(book_callout, mutates=True).openai_schema()]
    call = ToolCall("book_callout", {"address": "6 Birch Avenue", "problem": "no hot water"}, id="c1")
    messages = [Message("user", "No hot water at 6 Birch Avenue, can someone come out?"),
                Message("assistant", "", [call]),
                Message("tool", not_approved("book_callout", f"the caller asked for a change: {change!r}"),
                        tool_call_id="c1"), Message("user", change)]
    changed = changed_call(ModelRequest(messages, tools, 96, writes=frozenset({"book_callout"})))
    assert changed is not None and changed.arguments == arguments


def test_a_new_time_said_in_words_is_one_new_value_not_two() -> None:
    """"Can we make it nine instead?" to a slot at 10: the new time is 9, whether read as "nine" or "9" (both were
    offered, the change was left ambiguous, and the model asked the same question again: set 6 dev)."""
    from loop.approvals import not_approved
    from loop.grounding._change import changed_call
    from loop.types import ModelRequest, ToolCall

    def book_court(day: Literal["monday", "friday"], time: Annotated[str, when()]) -> str:
        """Book a tennis court on a day at a time"""

    tools = [Tool(book_court, mutates=True).openai_schema()]
    call = ToolCall("book_court", {"day": "friday", "time": "10"}, id="c1")
    for change, new in [("Can we make it nine instead? I've got the school run.", "9"), ("Make it 4 instead.", "4")]:
        messages = [Message("user", "Friday at ten, please."), Message("assistant", "", [call]),
                    Message("tool", not_approved("book_court", f"the caller asked for a change: {change!r}"),
                            tool_call_id="c1"), Message("user", change)]
        changed = changed_call(ModelRequest(messages, tools, 96, writes=frozenset({"book_court"})))
        assert changed is not None and changed.arguments == {"day": "friday", "time": new}
