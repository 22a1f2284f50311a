"""Values read from what the caller said, no model needed: names however they are cased or introduced, times of
day however said, addresses from their house number, counts that are never a time or a house number, and what a
tool still lacks asked for without a model."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Annotated, Any, Literal

import pytest

from loop import Tool, locale
from loop.grounding._names import labelled_names
from loop.grounding.arguments import counts_said, ground, value_pattern
from loop.grounding.tool_choice import ask_for
from loop.kinds import address, item, person_name
from loop.locale import en
from loop.types import Message, ModelRequest
from tests.helpers import labelled


@pytest.mark.parametrize(("answer", "name"), [
    # answers to "What's the pet's name?" / "What name is it under?", as Whisper may case them
    ("it's biscuit", "Biscuit"), ("um, sam lee.", "Sam Lee"), ("The name's Okafor.", "Okafor"),
    ("yes, it's under priya shah", "Priya Shah"), ("it's for max", "Max"), ("Biscuit", "Biscuit"),
    # no name in them
    ("yes", None), ("no idea", None), ("I don't know", None), ("hang on", None), ("sorry", None),
    ("pardon", None), ("twenty", None), ("my order number is 4567", None),
    ("I want to book a table for four people", None),
])
def test_a_name_asked_for_is_taken_however_it_is_cased(answer: str, name: str | None) -> None:
    from loop.grounding._names import answered_name

    assert answered_name(answer) == ([name] if name else [])


def test_an_asked_for_name_in_lower_case_fills_a_name_argument() -> None:
    from loop.grounding.arguments import ground

    tool = {"type": "function", "function": {"name": "book_groom", "parameters": {
        "type": "object", "properties": {"pet_name": {"type": "string"}}, "required": ["pet_name"]}}}
    messages = [Message("user", "I'd like to book a groom."), Message("assistant", "What's your dog's name?"),
                Message("user", "it's biscuit")]
    (grounded,), missing = ground([tool], messages)
    assert grounded["function"]["parameters"]["properties"]["pet_name"] == {"enum": ["Biscuit"]} and not missing



def test_a_listed_value_the_caller_named_outranks_one_only_a_tool_named() -> None:
    from loop import ToolCall

    tool = {"type": "function", "function": {"name": "add_pack", "parameters": {"type": "object", "properties": {
        "pack": {"enum": ["5 GB", "20 GB", "roaming day pass"]}}, "required": ["pack"]}}}
    looked_up = [Message("assistant", "", tool_calls=[ToolCall("data_left", {}, id="c1")]),
                 Message("tool", '{"plan": "Lumen 20", "data left": "18 GB of 20 GB"}', tool_call_id="c1")]
    said = [Message("user", "Can I get the roaming day pass?"), *looked_up, Message("user", "Yeah, go for it.")]
    (grounded,), _ = ground([tool], said)
    assert grounded["function"]["parameters"]["properties"]["pack"] == {"enum": ["roaming day pass"]}
    (grounded,), _ = ground([tool], [Message("user", "Can I get a pack?"), *looked_up, Message("user", "That one.")])
    assert grounded["function"]["parameters"]["properties"]["pack"] == {"enum": ["20 GB"]}  # the caller named none


@pytest.mark.parametrize(("line", "words"), labelled("own_name.tsv"))
def test_the_callers_own_name_is_read_from_how_they_introduce_themselves(line: str, words: str) -> None:
    from loop.grounding._names import own_name_words

    assert own_name_words(line) == set(words.split())


def test_an_item_or_an_address_is_never_filled_with_the_callers_own_name() -> None:
    def hold_book(title: Annotated[str, item()], patron: Annotated[str, person_name()]) -> str:
        """Put a book on hold for a patron."""
        return "held"

    def deliver(street: Annotated[str, address()], dish: Annotated[str, item()]) -> str:
        """Deliver a dish to an address."""
        return "sent"

    def values(tool: Any, *said: str) -> dict[str, Any]:
        messages = [Message("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(said)]
        (grounded,), _ = ground([{"type": "function", "function": {"name": Tool(tool).name,
                                                                   "parameters": Tool(tool).schema}}], messages)
        return grounded["function"]["parameters"]["properties"]

    def admits(prop: dict[str, Any], text: str) -> bool:
        return "pattern" in prop and re.fullmatch(prop["pattern"], text) is not None

    props = values(hold_book, "Hi, this is Marita.", "How can I help?", "Can you put Circe on hold for Marita?")
    assert admits(props["title"], "Circe") and not admits(props["title"], "Marita")
    assert "Marita" in props["patron"]["enum"]
    answered = [Message("user", "I'd like to put a book on hold."), Message("assistant", "What name is it under?"),
                Message("user", "marita")]
    grounded, missing = ground([{"type": "function", "function": {"name": "hold_book",
                                                                  "parameters": Tool(hold_book).schema}}], answered)
    assert not grounded and missing == {"hold_book": ["title"]}  # the title is asked for, not filled with her name
    props = values(deliver, "my name is Tom Reed, a margherita to 12 High Street please")
    assert admits(props["street"], "12 High Street") and not admits(props["street"], "Tom Reed")
    assert not admits(props["dish"], "Tom") and admits(props["dish"], "margherita")


@pytest.mark.parametrize(("language", "said", "times"), [(row[0], *row[1].split("\t")) for row in labelled(
    "clock_times.tsv")])
def test_times_of_day_are_read_however_they_are_said(language: str, said: str, times: str) -> None:
    from loop.grounding._clock import clock_times

    found = clock_times(said, locale.get(language))
    assert {f"{h}:{m:02d}{half}" for h, m, half in found} == set(times.split())


def test_an_enum_of_times_is_filled_by_the_time_the_caller_said_in_any_form() -> None:
    from loop.grounding._clock import times_named

    shows = ["5 p.m.", "5:30 p.m.", "7 p.m.", "7:30 p.m.", "8:45 p.m.", "9:15 p.m."]
    assert times_named(shows, "Five o'clock, I think.") == ["5 p.m."]
    assert times_named(shows, "for Starfall at seven thirty") == ["7:30 p.m."]
    assert times_named(shows, "quarter to nine") == ["8:45 p.m."]
    assert times_named(shows, "four seats please") == []
    assert times_named(["small", "large"], "at seven") == []  # not an enum of times
    tool = {"type": "function", "function": {"name": "book", "parameters": {"type": "object", "properties": {
        "showtime": {"type": "string", "enum": shows}}, "required": ["showtime"]}}}
    said = [Message("user", "Two for Maggie's Garden please."), Message("assistant", "Which showtime?"),
            Message("user", "Five o'clock, I think.")]
    (grounded,), _ = ground([tool], said)
    assert grounded["function"]["parameters"]["properties"]["showtime"] == {"enum": ["5 p.m."]}


@pytest.mark.parametrize(("language", "turns", "held"), [
    ("en", ["Can I grab a court on Thursday evening, at seven?"], ["7 p.m."]),
    ("en", ["A table at half past seven in the evening, please."], ["7:30 p.m."]),
    ("en", ["Ten in the morning on Tuesday."], ["10 a.m."]),
    ("en", ["Friday at one, please.", "Can we make that two instead of one?"], ["two", "2", "one", "1"]),  # as said
    ("es", ["El jueves por la tarde, a las siete."], ["19:00"]),
])
def test_a_time_argument_holds_the_clock_reading_with_its_half_of_the_day(language: str, turns: list[str],
                                                                           held: list[str]) -> None:
    """What the caller said of the half of the day reaches the tool: not "7" for "Thursday evening, at seven"."""
    tool = {"type": "function", "function": {"name": "book", "parameters": {"type": "object", "properties": {
        "time": {"type": "string", "x-kind": "time"}}, "required": ["time"]}}}
    said = [m for t in turns for m in (Message("assistant", "Sure."), Message("user", t))]
    (grounded,), _ = ground([tool], said, language)
    assert grounded["function"]["parameters"]["properties"]["time"]["enum"][:len(held)] == held


def test_a_count_is_never_the_hour_of_a_time_the_caller_said() -> None:
    """"Five o'clock" gave 5 seats: a count or an amount is not read from a time of day."""
    tool = {"type": "function", "function": {"name": "book", "parameters": {"type": "object", "properties": {
        "seats": {"type": "integer"}, "showtime": {"type": "string", "enum": ["5 p.m.", "7:30 p.m."]}},
        "required": ["seats", "showtime"]}}}
    said = [Message("user", "Tickets for Maggie's Garden please."), Message("assistant", "Which showtime?"),
            Message("user", "Five o'clock, I think.")]
    grounded, missing = ground([tool], said)
    assert not grounded and missing == {"book": ["seats"]}
    said[-1] = Message("user", "Two at seven thirty, and it was $7.30 last time.")
    (grounded,), _ = ground([tool], said)
    props = grounded["function"]["parameters"]["properties"]
    assert props["seats"] == {"enum": [2]} and props["showtime"] == {"enum": ["7:30 p.m."]}


def test_after_the_callers_answer_what_the_asked_for_call_still_lacks_is_asked_without_a_model() -> None:
    """The agent asked for the showtime and the seats; "Five o'clock, I think." gives the first: the number of
    seats is asked for in the words a first ask uses (the small model's own question was "What is the name of
    the Alice?"). A question of the caller's instead is left to the model."""
    from loop.grounding.phase import said_without_generating

    tool = {"type": "function", "function": {"name": "book_seats", "description": "Book seats for a film",
                                             "parameters": {"type": "object", "properties": {
                                                 "seats": {"type": "integer"},
                                                 "showtime": {"type": "string", "enum": ["5 p.m.", "7:30 p.m."]}},
                                                 "required": ["seats", "showtime"]}}}
    first = [Message("system", "You book cinema seats."), Message("user", "I want to book seats for tonight.")]
    _, missing = ground([tool], first)
    asked = ask_for(missing["book_seats"], tool)
    assert asked.endswith("the number of seats and the showtime?")
    answered = [*first, Message("assistant", asked), Message("user", "Five o'clock, I think.")]
    request = ModelRequest(answered, [tool], 96, writes=frozenset({"book_seats"}))
    assert said_without_generating(request).endswith("Could you tell me the number of seats?")
    request = replace(request, messages=[*answered[:-1], Message("user", "What's on at five?")])
    assert said_without_generating(request) == ""



@pytest.mark.parametrize(("said", "address"), labelled("addresses.tsv"))
def test_an_address_starts_on_its_house_number(said: str, address: str) -> None:
    pattern = value_pattern(said, address=True)
    if address:
        assert pattern is not None and re.fullmatch(pattern, address), pattern
    else:
        assert pattern is None, pattern


@pytest.mark.parametrize(("said", "counts"), labelled("counts.tsv"))
def test_a_count_is_never_a_house_number_or_a_time(said: str, counts: str) -> None:
    assert [int(v) for v in counts_said(said)] == [int(c) for c in counts.split(",") if c]


def test_only_the_first_question_for_what_a_tool_lacks_opens_with_a_courtesy() -> None:
    first = ask_for(["order_id"], None, en, [Message("user", "Where is my order?")])
    other = ask_for(["amount"], None, en, [Message("user", "Where is my order?"), Message("assistant", first),
                                           Message("user", "It's 4567. I want a refund.")])
    assert first.startswith(en.ASK_OPENER) and other == "Could you tell me the amount?"


def test_the_same_question_right_after_its_answer_says_it_was_not_caught() -> None:
    first = ask_for(["order_id"], None, en, [Message("user", "Where is my order?")])
    again = ask_for(["order_id"], None, en, [Message("user", "Where is my order?"), Message("assistant", first),
                                             Message("user", "Hmm.")])
    assert again == f"{en.NOT_CAUGHT} Could you tell me the order number?"


@pytest.mark.parametrize(("said", "argument", "name"), [
    (said, *label.split("\t")) for said, label in labelled("labelled_names.tsv")])
def test_a_name_said_after_an_arguments_own_words_is_that_arguments(said: str, argument: str, name: str) -> None:
    labels = [w for w in argument.split("_") if w != "name"]
    assert labelled_names(said, labels) == ([name] if name else [])


def test_two_names_of_one_call_are_not_the_same_name() -> None:
    def vaccinations_due(pet_name: str, owner_surname: str) -> str: ...

    said = "Hi, I'm checking whether Biscuit's jabs are due. The surname's Hughes."
    tools, _ = ground([Tool(vaccinations_due).openai_schema()], [Message("user", said)])
    assert tools[0]["function"]["parameters"]["properties"] == {"pet_name": {"enum": ["Biscuit"]},
                                                                "owner_surname": {"enum": ["Hughes"]}}


@pytest.mark.parametrize(("language", "said", "dates"), [(row[0], *row[1].split("\t")) for row in labelled(
    "calendar_dates.tsv")])
def test_calendar_dates_are_read_with_their_day(language: str, said: str, dates: str) -> None:
    from loop.grounding._dates import calendar_dates

    assert {f"{m}-{d}" for m, d in calendar_dates(said, locale.get(language))} == set(dates.split())



@pytest.mark.parametrize(("language", "said", "values"), [(row[0], *row[1].split("\t")) for row in labelled(
    "weekday_dates.tsv")])
def test_a_weekday_with_its_day_is_one_date(language: str, said: str, values: str) -> None:
    """tests/data/weekday_dates.tsv: "Sunday the nineteenth" is "Sunday 19th", never "Sunday" alone (set 6's theatre
    reserved for a Sunday a week early)."""
    from loop.grounding._dates import when_values

    assert when_values(said, "date", locale.get(language)) == values.split("|")

def test_a_date_argument_holds_the_day_as_well_as_the_month() -> None:
    """"July the sixteenth" reaches the tool as "July 16", not "July"."""
    tool = {"type": "function", "function": {"name": "book", "parameters": {"type": "object", "properties": {
        "arrival": {"type": "string", "x-kind": "date"}}, "required": ["arrival"]}}}
    said = [Message("user", "Can I book a stay for Rocky, arriving July the sixteenth, for five nights?")]
    (grounded,), _ = ground([tool], said)
    assert grounded["function"]["parameters"]["properties"]["arrival"]["enum"][0] == "July 16"
    # the weekday, the month or the day said with it are no other value; a day said in another sentence is
    from loop.grounding._dates import when_values

    assert when_values("For Saturday the twenty-seventh of June.", "date") == ["June 27"]
    assert when_values("On the 3rd of May, a Friday. Or tomorrow.", "date") == ["May 3", "tomorrow"]
    # a day of the month said alone as an ordinal is the day, as when it is written in digits (set 6 dev: "Can we do
    # the twenty-first instead?" read as a change of nothing)
    assert when_values("Could we make it the thirty-first instead?", "date") == ["31st"]
    assert when_values("Is the twelfth any good?", "date") == when_values("Is the 12th any good?", "date") == ["12th"]
    assert when_values("I can do the eleven o'clock one", "date") == []


def test_a_surname_said_after_its_word_is_the_last_names_and_not_the_pets() -> None:
    """"Can I book a stay for Rocky? Surname Doyle, ...": `last_name` Doyle (a word for its part of a name before
    it), `pet_name` Rocky, never "Surname Doyle"."""
    tool = {"type": "function", "function": {"name": "book_stay", "parameters": {"type": "object", "properties": {
        "last_name": {"type": "string", "x-kind": "name"}, "pet_name": {"type": "string", "x-kind": "name"}},
        "required": ["last_name", "pet_name"]}}}
    said = [Message("user", "Can I book a stay for Rocky? Surname Doyle, arriving July the sixteenth.")]
    (grounded,), _ = ground([tool], said)
    props = grounded["function"]["parameters"]["properties"]
    assert props["last_name"]["enum"] == ["Doyle"] and props["pet_name"]["enum"] == ["Rocky"]


def test_one_name_said_fills_one_of_two_name_arguments() -> None:
    """"I'd like to book Biscuit in for a stay": Biscuit is the pet; the last name is asked for, never "Biscuit
    Biscuit"."""
    tool = {"type": "function", "function": {"name": "book_stay", "parameters": {"type": "object", "properties": {
        "last_name": {"type": "string", "x-kind": "name"}, "pet_name": {"type": "string", "x-kind": "name"}},
        "required": ["last_name", "pet_name"]}}}
    said = [Message("user", "Hello, I'd like to book Biscuit in for a stay, please.")]
    grounded, missing = ground([tool], said)
    assert grounded == [] and missing == {"book_stay": ["last_name"]}
    # "From August the fifth": a sentence opening on a word no name is made of opens no name
    said += [Message("assistant", "Which day?"), Message("user", "From August the fifth, for four nights.")]
    assert ground([tool], said)[1] == {"book_stay": ["last_name"]}


@pytest.mark.parametrize(("said", "names"), [
    ("Starting Monday.", []), ("Arriving Friday the 5th.", []), ("From August the fifth, for four nights.", []),
    ("Anna Kowalski.", ["Anna Kowalski"]), ("Sam, Monday.", ["Sam"]), ("Tom Baker on Friday.", ["Tom Baker"]),
    # a day's possessive is the day's (set 6 dev: a visit booked in the name "Friday")
    ("Friday's no good for me, can you do Monday instead?", []), ("Biscuit's jabs.", ["Biscuit"])])
def test_a_sentence_that_opens_into_a_day_opens_no_name(said: str, names: list[str]) -> None:
    """Asked for a start date and a name, "Starting Monday." gives the day, not a customer called Starting."""
    from loop.grounding._names import proper_names

    assert proper_names(said, initial=True) == names


def _book_bay(registration: str, day: Literal["monday", "friday"]) -> str:
    """Book a parking bay. registration: the car's number plate, like LK19 RXT"""
    return registration


@pytest.mark.parametrize(("said", "plates"), [
    ("Friday please, the registration's W F seven two, M Z K.", ["WF72 MZK"]),
    ("Monday. It's BD51 SOU.", ["BD51 SOU"]), ("Monday, plate A B one two C D E.", ["AB12 CDE"]),
    ("Monday for a car, WF72 please.", [])])
def test_an_identifier_shaped_by_an_example_is_read_however_it_is_spelled(said: str, plates: list[str]) -> None:
    """An argument whose description gives an example ("like LK19 RXT") holds an identifier of that shape: letters
    said one by one, digits in words or figures (set 6 dev: a number plate was never taken, or taken as "WF72")."""
    grounded, _ = ground([Tool(_book_bay, mutates=True).openai_schema()], [Message("user", said)])
    props = grounded[0]["function"]["parameters"]["properties"] if grounded else {}
    assert props.get("registration", {}).get("enum", []) == plates
    from loop.grounding._pieces import example_shape

    assert example_shape("the booking reference, like LY4821", {"refer"}) == "AA9999"
    assert example_shape("the date, like July 14", {"date"}) == "" and example_shape("like LK19 RXT", {"x"}) == ""


@pytest.mark.parametrize(("language", "description", "own", "said", "shape", "ids"), [
    (row[0], *row[1].split("\t")) for row in labelled("example_shapes.tsv")])
def test_example_shapes_labelled(language: str, description: str, own: str, said: str, shape: str, ids: str) -> None:
    """tests/data/example_shapes.tsv: the shape an example in a description gives an identifier (the pack's
    EXAMPLE_LEAD), and the caller's words read at it."""
    from loop import locale
    from loop.grounding._pieces import example_shape, ids_of_shape

    words = locale.get(language)
    assert example_shape(description, {own}, words) == shape
    if shape:
        assert ids_of_shape(said, shape, words) == [i for i in ids.split("|") if i]
