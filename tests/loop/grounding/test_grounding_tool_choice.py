"""Which tool a caller's words are for, by what they gave: an identifier they dictated belongs to a tool with a
place for it; a value only a write has a place for (a day) makes that write the call; a house number is a number
said, not an identifier dictated. No model: the phase's own functions on tool schemas."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field

from loop import Tool
from loop.grounding._arg_kinds import arg_kind
from loop.grounding.arguments import ground
from loop.grounding.phase import pursued_writes, said_without_generating
from loop.grounding.tool_choice import ask_for, asked_for, fresh_reads, fuller_writes
from loop.kinds import address, free_text, identifier, person_name, when
from loop.tools import tool_name
from loop.types import Message, ModelRequest
from tests.helpers import labelled

Area = Literal["city centre", "old town", "airport"]
Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]


def _cabs() -> tuple[list[dict[str, Any]], frozenset[str]]:
    def pickup_wait(area: Area) -> str:
        """How many minutes a taxi would take right now to reach a pickup area"""

    def booking_details(booking_number: Annotated[str, identifier(digits=5)]) -> str:
        """A taxi booking's pickup, time, passengers and driver, by its five-digit booking number"""

    def book_taxi(pickup_address: Annotated[str, address()], time: Annotated[str, when()], passengers: int,
                  name: Annotated[str, person_name()]) -> str:
        """Book a taxi from a pickup street address at a time, for 1 to 6 passengers"""

    tools = [Tool(pickup_wait), Tool(booking_details), Tool(book_taxi, mutates=True)]
    return [t.openai_schema() for t in tools], frozenset({"book_taxi"})


def test_a_dictated_identifier_is_for_the_tool_with_a_place_for_it() -> None:
    """"I've got a taxi booked, booking number 48215, can you check it?": the booking's details, not a new booking
    (which has no place for the number and would ask for passengers and a name)."""
    tools, writes = _cabs()
    said = "Hello, I've got a taxi booked for tonight, booking number 48215. Can you check it's all okay?"
    request = ModelRequest([Message("user", said)], tools, 96, writes=writes)
    _, missing = ground(tools, request.messages)
    assert "book_taxi" in missing and "book_taxi" not in pursued_writes(request, missing)
    assert [t["function"]["name"] for t in fresh_reads(tools, request.messages, writes)] == ["booking_details"]


def test_an_identifier_given_to_the_wrong_question_is_not_asked_the_question_again() -> None:
    """"Could you tell me the area?" - "Oh yeah, it's 72048.": the number is the booking's; asking for the area
    again would go round in circles."""
    tools, writes = _cabs()
    asked = ask_for(["area"], tools[0])
    history = [Message("user", "Hi, I just want to check on my taxi booking, please."), Message("assistant", asked)]
    answered = ModelRequest([*history, Message("user", "Oh yeah, it's 72048.")], tools, 96, writes=writes)
    assert "area" not in said_without_generating(answered)
    unanswered = ModelRequest([*history, Message("user", "Yes, it's for me.")], tools, 96, writes=writes)
    # no number: the question stands
    assert said_without_generating(unanswered).endswith("the area: city centre, old town or airport?")


def test_a_question_cut_off_while_asked_again_is_still_the_question_answered() -> None:
    """The caller cut in over "Sorry," of "Sorry, I didn't catch that. Could you tell me the area?": their next
    words answer the area question they had heard before, and what it still lacks is asked, not a new topic."""
    tools, writes = _cabs()
    asked = ask_for(["area"], tools[0])
    history = [Message("user", "Hi, I just want to check on my taxi booking, please."), Message("assistant", asked),
               Message("user", "Yes."), Message("assistant", "Sorry,")]
    cut = ModelRequest([*history, Message("user", "Right.")], tools, 96, writes=writes)
    assert asked_for(tools, cut.messages, writes) == asked_for(tools, [*history[:3]], writes) != {}
    assert said_without_generating(cut).endswith("the area: city centre, old town or airport?")
    other = [*history[:3], Message("assistant", "Sure,"), Message("user", "Right.")]  # not a question asked again
    assert asked_for(tools, other, writes) == {}


def _courier() -> tuple[list[dict[str, Any]], frozenset[str]]:
    def track_parcel(tracking_code: Annotated[str, identifier(letters=2, digits=8)]) -> str:
        """Where a parcel is and when it will be delivered, by its tracking code"""

    def rearrange_delivery(tracking_code: Annotated[str, identifier(letters=2, digits=8)], day: Weekday) -> str:
        """Move a parcel's delivery to another weekday"""

    def leave_with_neighbour(tracking_code: Annotated[str, identifier(letters=2, digits=8)],
                             house_number: Annotated[int, Field(ge=1, le=9999)]) -> str:
        """Have a parcel left with a neighbour on the same street, by the neighbour's house number"""

    tools = [Tool(track_parcel), Tool(rearrange_delivery, mutates=True), Tool(leave_with_neighbour, mutates=True)]
    return [t.openai_schema() for t in tools], frozenset({"rearrange_delivery", "leave_with_neighbour"})


def _fuller(said: str) -> list[str]:
    tools, writes = _courier()
    messages = [Message("user", said)]
    grounded, _ = ground(tools, messages)
    reads = fresh_reads(tools, messages, writes)
    return [t["function"]["name"] for t in fuller_writes(tools, grounded, reads, messages, writes)]


def test_a_value_only_a_write_has_a_place_for_makes_that_write_the_call() -> None:
    assert _fuller("I won't be in today. Can you bring parcel SB48207315 on Tuesday instead?") == [
        "rearrange_delivery"]
    assert _fuller("Where is my parcel? It's SB48207315.") == []  # nothing but the code: the read
    assert _fuller("Is parcel SB48207315 coming today?") == []  # "today" is no weekday the write holds


def test_a_write_with_no_place_for_the_dictated_identifier_is_not_the_fuller_call() -> None:
    """"I'm chasing job 40213, the one about my e-bike brakes": the name, the bike and the fault fill a new service
    booking, but the job number they dictated is the status read's, and the booking has no place for it."""
    def job_status(job_number: Annotated[str, identifier(digits=5)]) -> str:
        """Where a bike repair job stands, by its five-digit job number"""

    def book_service(name: Annotated[str, person_name()], bike: Literal["road bike", "mountain bike", "e-bike"],
                     fault: Annotated[str, free_text()]) -> str:
        """Book a bike in for a service or a repair"""

    tools = [t.openai_schema() for t in (Tool(job_status), Tool(book_service, mutates=True))]
    writes = frozenset({"book_service"})

    def fuller(said: str) -> list[str]:
        messages = [Message("user", said)]
        reads = fresh_reads(tools, messages, writes)
        return [t["function"]["name"] for t in fuller_writes(tools, ground(tools, messages)[0], reads, messages,
                                                              writes)]

    assert fuller("Hi, it's Sam Okoro. I'm chasing job 40213, the one about my e-bike brakes.") == []


def test_a_tool_named_that_lacks_something_gives_way_to_the_fuller_write_not_the_read_it_ruled_out() -> None:
    """The model naming leave_with_neighbour (no house number) is answered with the call the caller's words make,
    the rearranged delivery, not the tracking read that has no place for their Tuesday (the Spanish dev call
    "quería traer dos bicis el viernes para cambiarles la cadena. Me llamo Javier Moreno Ruiz." got the price)."""
    from loop.models.llama.decoding import plan_for
    from loop.prompt import PromptAssembler

    tools, _ = _courier()
    said = "I won't be in today. Can you bring parcel SB48207315 on Tuesday instead?"
    assembler = PromptAssembler("You answer a courier's phone.", [], lambda text: len(text) // 4 + 1, 4096)
    request = replace(assembler.build([Message("user", said)], 0, 96)[0], tools=tools,
                      writes=frozenset({"rearrange_delivery", "leave_with_neighbour"}))
    plan = plan_for(request, lambda gbnf: gbnf)
    assert plan.missing == {"leave_with_neighbour": ["house_number"]}
    assert [c.split('"')[3] for c in plan.instead_calls] == ["rearrange_delivery"]


def _warranty() -> tuple[list[dict[str, Any]], frozenset[str]]:
    def repair_status(repair_number: Annotated[str, identifier(digits=6)]) -> str:
        """Where a boiler repair stands, by its six-digit repair number"""

    def log_fault(warranty_number: Annotated[str, identifier(letters=3, digits=5)],
                  fault: Annotated[str, free_text()]) -> str:
        """Log a boiler fault under a warranty: what is wrong with it"""

    tools = [Tool(repair_status), Tool(log_fault, mutates=True)]
    return [t.openai_schema() for t in tools], frozenset({"log_fault"})


def test_a_tool_lacking_its_own_identifier_gives_way_to_the_one_the_callers_identifier_fills() -> None:
    """"I need a repair, the boiler's leaking; warranty WTY40213": the model naming repair_status (six digits,
    none given) is answered with the fault log the warranty number fills, not "Could you tell me the repair
    number?" (a boiler warranty line written for this test; the failure was an insurance line's dev call)."""
    from loop.models.llama.decoding import plan_for
    from loop.prompt import PromptAssembler

    tools, writes = _warranty()
    said = "I need a repair, the boiler is leaking all over the floor. My warranty number is WTY40213."
    assembler = PromptAssembler("You answer a boiler warranty line.", [], lambda text: len(text) // 4 + 1, 4096)
    request = replace(assembler.build([Message("user", said)], 0, 96)[0], tools=tools, writes=writes)
    plan = plan_for(request, lambda gbnf: gbnf)
    assert plan.missing == {"repair_status": ["repair_number"]}
    assert plan.yields("repair_status") and [c.split('"')[3] for c in plan.instead_calls] == ["log_fault"]
    # a repair number given: the read is filled, and nothing gives way to the fault log
    asked = plan_for(replace(request, messages=[*request.messages[:-1], Message("user", "Where's repair 400213?")]),
                     lambda gbnf: gbnf)
    assert "repair_status" not in asked.missing and asked.yielding is None


def test_a_house_number_is_a_number_said_not_an_identifier() -> None:
    """`house_number: int` is part of an address: "at number 14" fills it (an identifier needs 3 characters)."""
    kind = arg_kind("house_number", {"type": "integer", "minimum": 1, "maximum": 9999})
    assert kind is not None and kind.kind == "integer"
    tools, _ = _courier()
    said = "Could you leave my parcel with my neighbour at number 14? It's SX55120947."
    grounded, missing = ground(tools, [Message("user", said)])
    assert not missing.get("leave_with_neighbour")
    neighbour = next(t for t in grounded if t["function"]["name"] == "leave_with_neighbour")
    assert neighbour["function"]["parameters"]["properties"]["house_number"]["enum"] == [14]


@pytest.mark.parametrize(("said", "label"), labelled("one_counted.tsv"))
def test_an_article_counts_one_of_the_arguments_own_noun(said: str, label: str) -> None:
    """"a box of ibuprofen" for `boxes`, "una caja" for `cajas`: 1, in the call's language; "a table" counts no
    seats. (A Spanish call's other numbers reach the grounding in digits: the call core writes them so.)"""
    from loop import locale

    language, argument, counts = label.split("\t")
    schema = {"type": "function", "function": {"name": "book", "description": "Book it", "parameters": {
        "type": "object", "properties": {argument: {"type": "integer"}}, "required": [argument]}}}
    text = locale.get(language).numbers_in_digits(said)
    grounded, _ = ground([schema], [Message("user", text)], language)
    found = grounded[0]["function"]["parameters"]["properties"][argument]["enum"] if grounded else []
    assert found == [int(c) for c in counts.split(",") if c]


@pytest.mark.parametrize(("line", "label"), labelled("own_name_es.tsv"))
def test_a_spanish_callers_own_name_is_read_from_how_they_introduce_themselves(line: str, label: str) -> None:
    """"Soy Pablo Serrano": the name is Pablo Serrano, never "Soy Pablo Serrano" (the words that introduce a
    name are the call's language's)."""
    from loop import locale
    from loop.grounding._names import own_name_words, proper_names

    words, names = label.split("\t")
    es = locale.get("es")
    assert own_name_words(line, es) == set(words.split())
    assert proper_names(line, False, es) == [n for n in names.split("|") if n]


@pytest.mark.parametrize(("said", "label"), labelled("listed_values.tsv"))
def test_a_listed_value_is_named_however_the_caller_says_it(said: str, label: str) -> None:
    from loop import locale
    from loop.grounding.arguments import _named

    language, values, named = label.split("\t")
    assert _named(values.split("|"), said, locale.get(language)) == [v for v in named.split("|") if v]


def test_the_question_is_for_the_call_the_callers_request_had_begun() -> None:
    """"Can I get the roaming day pass?" - "Could you tell me the mobile number?" - "It's 0498002740.": a lookup
    and two writes all lacked only the number, but the request had named add_pack's pack: the answer completes
    that one (it is then asked aloud), not the lookup."""
    from loop.grounding.tool_choice import asked_for

    def data_left(mobile_number: Annotated[str, identifier(digits=10)]) -> str:
        """Data left on a mobile number"""
        return ""

    def add_pack(mobile_number: Annotated[str, identifier(digits=10)],
                 pack: Literal["5 GB", "roaming day pass"]) -> str:
        """Add a data pack to a mobile number"""
        return ""

    def bar_sim(mobile_number: Annotated[str, identifier(digits=10)]) -> str:
        """Bar a lost phone's SIM by its mobile number"""
        return ""

    tools = [Tool(data_left).openai_schema(), Tool(add_pack, mutates=True).openai_schema(),
             Tool(bar_sim, mutates=True).openai_schema()]
    question = ask_for(["mobile_number"], tools[1])
    messages = [Message("user", "I'm off to France, can I get the roaming day pass?"), Message("assistant", question),
                Message("user", "It's 0498002740.")]
    assert set(asked_for(tools, messages, frozenset({"add_pack", "bar_sim"}))) == {"add_pack"}
    plain = [Message("user", "Something about my phone."), Message("assistant", question), messages[-1]]
    assert set(asked_for(tools, plain, frozenset({"add_pack", "bar_sim"}))) == {"data_left"}  # nothing begun


def test_an_identifier_given_unasked_makes_the_one_call_it_completes() -> None:
    """"Can I grab a court on Thursday, at seven?" - (availability read) - "All four courts are free." - "yes,
    it's 60417.": only book_court has a place for the member number; its day and time are the read's."""
    from dataclasses import replace

    from loop import ToolCall
    from loop.grounding.phase import volunteered_call

    def court_availability(day: str, time: Annotated[str, when(time=True)]) -> str:
        """Which courts are free on a day at a time"""
        return ""

    def book_court(member_number: Annotated[str, identifier(digits=5)], day: str,
                   time: Annotated[str, when(time=True)]) -> str:
        """Book a court for a member"""
        return ""

    tools = [Tool(court_availability).openai_schema(), Tool(book_court, mutates=True).openai_schema()]
    read = ToolCall("court_availability", {"day": "Thursday", "time": "7"}, id="c1")
    messages = [Message("user", "Can I grab a court on Thursday evening, at seven?"),
                Message("assistant", "", tool_calls=[read]), Message("tool", "All four courts are free.",
                                                                     tool_call_id="c1"),
                Message("assistant", "All four courts are free."), Message("user", "yes, it's 60417.")]
    request = ModelRequest(messages=messages, tools=tools, max_output_tokens=80, writes=frozenset({"book_court"}))
    made = volunteered_call(request)
    assert made is not None and made.name == "book_court"
    assert made.arguments == {"member_number": "60417", "day": "Thursday", "time": "7 p.m."}  # "evening, at seven"
    asked = [*messages[:-2], Message("assistant", "Would you like to book one?"), messages[-1]]
    assert volunteered_call(replace(request, messages=asked)) is None


def test_a_question_for_one_listed_argument_says_its_choices() -> None:
    """"Could you tell me the area: city centre, old town or airport?": a caller who does not know the words the
    line takes hears them; a long list, or several things asked at once, is not read out."""
    tools, _ = _cabs()
    assert ask_for(["area"], tools[0]).endswith("the area: city centre, old town or airport?")
    asked = ask_for(["pickup_address", "passengers"], tools[2])
    assert asked.endswith("the pickup address and the number of passengers?")


def test_a_plural_or_a_possessive_speaks_of_what_its_singular_names() -> None:
    """"Can you check on my bookings?" is about the booking's details as "my booking" is: a plural or a possessive
    stems as its singular ("bookings", "booking's" -> "book"), so the question is for the booking number, not for
    the pickup area of a read the words do not name (set 4 dev: "check my bookings" was asked for a day)."""
    from loop.grounding._heard import stem
    from loop.grounding.phase import questions_for_missing

    assert {stem(w) for w in ("booking", "bookings", "booking's", "booked")} == {"book"}
    assert stem("sailings") == stem("sailing") and stem("class") == "clas" and stem("things") == "thing"
    tools, writes = _cabs()
    for said in ("Hi, can you check on my bookings for me?", "Could you look at my taxi booking's pickup time?"):
        request = ModelRequest([Message("user", said)], tools, 96, writes=writes)
        _, missing = ground(tools, request.messages)
        assert "booking number" in questions_for_missing(request, missing, "")["pickup_wait"]


def test_a_question_a_read_of_the_callers_words_answers_is_that_read() -> None:
    """"Do you take old mattresses at the tip?": a read whose argument is a span of the caller's words (the item),
    asked of by a word only it has, is filled by their question: the model calls it rather than answer in words
    it has no ground for (set 6 dev: "Yes, we take old mattresses" caught, then "I can't tell you that here")."""
    def item_taken(item: str) -> str:
        """Whether the tip takes something, like a mattress or paint, and what it costs"""

    def book_visit(day: Weekday) -> str:
        """Book a visit to the tip on a day"""

    tools = [Tool(item_taken).openai_schema(), Tool(book_visit, mutates=True).openai_schema()]

    def reads(said: str) -> list[str]:
        return [t["function"]["name"] for t in fresh_reads(tools, [Message("user", said)], frozenset({"book_visit"}))]

    assert reads("Hi, do you take old mattresses at the tip?") == ["item_taken"]
    assert reads("I've got some old mattresses.") == []  # no question: the model decides
    assert reads("Can I come on Monday?") == []


def test_after_the_write_just_made_the_embedded_model_calls_no_read_and_says_what_it_did() -> None:
    """The fault was logged (the caller said yes); the embedded model's plan then admits no read (set 6's blood
    donation read the sessions after the booking and said them, never its number): the write's result is said."""
    from loop.models.llama.decoding import plan_for
    from loop.prompt import PromptAssembler
    from loop.types import ToolCall

    tools, writes = _warranty()
    said = "My boiler is leaking, warranty WTY40213. Please log it."
    logged = ToolCall("log_fault", {"warranty_number": "WTY40213", "fault": "leaking"}, id="c1")
    assembler = PromptAssembler("You answer a boiler warranty line.", [], lambda text: len(text) // 4 + 1, 4096)
    request = replace(assembler.build([Message("user", said)], 0, 96)[0], tools=tools, writes=writes)
    after = [*request.messages, Message("assistant", "", tool_calls=[logged]),
             Message("tool", "Logged: fault 77120 under WTY40213; an engineer calls you today.", tool_call_id="c1")]
    plan = plan_for(replace(request, messages=after), lambda gbnf: gbnf)
    assert plan.sampler is None and "77120" in plan.say


def test_asked_how_much_a_read_that_says_prices_is_the_one_the_words_fill() -> None:
    """"What bouquets do you do, and how much are they?": "bouquet" is every tool's word; "how much" sets apart the
    list that gives prices (set 5's cakes: the list was called only while a mis-stemmed plural set it apart)."""

    def bouquet_list() -> dict:
        """The bouquets the shop makes, and the price of each size"""

    def order_bouquet(name: Annotated[str, person_name()], bouquet: Literal["roses", "lilies"]) -> str:
        """Order a bouquet for delivery"""

    tools = [Tool(bouquet_list).openai_schema(), Tool(order_bouquet, mutates=True).openai_schema()]

    def read(said: str) -> list[str]:
        return [tool_name(t) for t in fresh_reads(tools, [Message("user", said)], frozenset({"order_bouquet"}))]

    assert read("What bouquets do you do, and how much are they?") == ["bouquet_list"]
    assert read("What does a bouquet cost?") == ["bouquet_list"]
    assert read("I'd like to order a bouquet.") == []
