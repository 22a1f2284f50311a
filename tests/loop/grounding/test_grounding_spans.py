"""Values read as a span of the caller's words, no model needed: free text (a note, a card's message) that holds
no other argument's value and starts and ends on words that say something, and street addresses, read whole,
whenever they were said."""

from __future__ import annotations

import re
from typing import Annotated, Literal

import pytest

from loop import Tool
from loop.grounding.arguments import ground
from loop.kinds import address, free_text, person_name
from loop.tools import tool_name
from loop.types import Message


def _order_pie(name: Annotated[str, person_name()], note: Annotated[str, free_text()] = "") -> str:
    """Order a pie for collection, with an optional note for the baker"""
    return name


def test_free_text_holds_no_other_arguments_value() -> None:
    """"Joe Okafor." in answer to the name is the name's; a cake's optional message is not filled with it (set 5
    dev: the cake said "Joe Okafor" on top). Words no other argument took still fill it."""
    def props(*turns: str) -> dict:
        messages = [Message("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(turns)]
        (grounded,), _ = ground([Tool(_order_pie, mutates=True).openai_schema()], messages)
        return grounded["function"]["parameters"]["properties"]

    answered = props("Can I order a pie?", "Could you tell me the name?", "Joe Okafor.")
    assert answered["name"] == {"enum": ["Joe Okafor"]} and "note" not in answered
    noted = props("A pie for Joe Okafor, and no nuts please.")
    assert re.fullmatch(noted["note"]["pattern"], "no nuts please") and not re.fullmatch(noted["note"]["pattern"],
                                                                                         "Joe Okafor")



@pytest.mark.parametrize(("said", "fits", "never"), [
    ("A pie for Joe Okafor. I'm at the station.", "I'm at the station", ["I'm at", "I'm", "the station"]),
    ("A pie for Joe Okafor, I'm going to a party.", "going to a party", ["I'm", "I'm going to"]),
    ("A pie for Joe Okafor, and please go easy on the salt.", "go easy on the salt", ["and please", "easy on the"])])
def test_free_text_starts_and_ends_on_words_that_say_something(said: str, fits: str, never: list[str]) -> None:
    """A note is a run of the caller's words that holds a word besides their request's ("I'm", "please") and starts
    and ends on no joiner ("at", "to"): set 7's locksmith booked with the note "I'm at"."""
    (grounded,), _ = ground([Tool(_order_pie, mutates=True).openai_schema()], [Message("user", said)])
    pattern = grounded["function"]["parameters"]["properties"]["note"]["pattern"]
    assert re.fullmatch(pattern, fits)
    assert not any(re.fullmatch(pattern, span) for span in never), pattern

def _send_flowers(flowers: Literal["tulips", "orchids"], recipient: Annotated[str, person_name()],
                  card: Annotated[str, free_text()]) -> str:
    """Send flowers to someone, with a card"""
    return recipient


def test_free_text_runs_neither_across_a_taken_value_nor_past_an_open_choice() -> None:
    """Words other arguments took leave a break, not a join ("send the to at"); names offered as a choice
    (the recipient or the card's words?) stay the model's to place (set 4 dev: a card message read as "I'd like
    to send the to at 42")."""
    messages = [Message("user", "Could you send orchids to Dana Fox, and the card should read Warm Wishes, Aunt Bea.")]
    (grounded,), _ = ground([Tool(_send_flowers, mutates=True).openai_schema()], messages)
    card = grounded["function"]["parameters"]["properties"]["card"]["pattern"]
    assert re.fullmatch(card, "Warm Wishes, Aunt Bea") and re.fullmatch(card, "send")
    assert not re.fullmatch(card, "send to") and not re.fullmatch(card, "Could you send to")


def _book_visit(name: Annotated[str, person_name()], address: Annotated[str, address()],
                visit: Literal["service", "repair"]) -> str:
    """Book an engineer's visit to a home"""
    return name


def test_an_address_given_before_the_last_question_still_fills_the_booking() -> None:
    """Asked for the name, the address and the visit, the caller gives the first two, then the visit when asked
    again: the street address they said a turn before is still theirs (set 6 dev: it was asked for again, and again).
    An address said this turn is read first."""
    def props(*turns: str) -> dict:
        messages = [Message("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(turns)]
        grounded, _ = ground([Tool(_book_visit, mutates=True).openai_schema()], messages)
        return grounded[0]["function"]["parameters"]["properties"] if grounded else {}

    said = ("Can someone come and look at my boiler?", "Could you tell me the name, the address and the visit?",
            "It's Mia Stone, 14 Larch Avenue.", "Could you tell me the visit: service or repair?")
    assert re.fullmatch(props(*said, "A repair, please.")["address"]["pattern"], "14 Larch Avenue")
    moved = props(*said, "A repair, and it's at 3 Mill Lane now.")["address"]["pattern"]
    assert re.fullmatch(moved, "3 Mill Lane") and not re.fullmatch(moved, "14 Larch Avenue")



def _book_move(name: Annotated[str, person_name()], from_address: Annotated[str, address()],
               to_address: Annotated[str, address()]) -> str:
    """Book a removal van from one home to another"""
    return name


def test_addresses_given_a_turn_before_are_values_that_complete_the_asked_call() -> None:
    """"From 8 Poplar Close to 40 Hill Street." then, asked for the name, "Dan Whitaker.": each address is one of the
    two streets (never both joined by "to"), and the answer completes the booking (set 7 dev: the 0.5B asked for a
    "move reference" instead, of another tool)."""
    from loop.grounding.tool_choice import answered_ask

    turns = ("We need a van to move house.", "Could you tell me the name, the from address and the to address?",
             "From 8 Poplar Close to 40 Hill Street.", "Could you tell me the name?", "Dan Whitaker.")
    messages = [Message("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(turns)]
    tools = [Tool(_book_move, mutates=True).openai_schema()]
    grounded, _ = ground(tools, messages)
    pattern = grounded[0]["function"]["parameters"]["properties"]["from_address"]["pattern"]
    assert re.fullmatch(pattern, "8 Poplar Close") and re.fullmatch(pattern, "40 Hill Street")
    assert not re.fullmatch(pattern, "8 Poplar Close to 40 Hill Street")
    assert [tool_name(t) for t in answered_ask(tools, messages, grounded, frozenset({"_book_move"}))] == ["_book_move"]
