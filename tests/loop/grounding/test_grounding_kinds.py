"""Grounding for any agent, no model needed: what an argument holds is read from its schema (not from a `*_id`
name), an argument the conversation cannot fill is asked for, out-of-scope questions are told what the agent is
for, and a spoken clause states no fact nobody gave and never the caller's own words."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
import yaml
from pydantic import Field

from loop import ScriptedModel, Tool
from loop.grounding._arg_kinds import arg_kind, is_id_pattern, label
from loop.grounding._facts import FactCheck
from loop.grounding._scope import out_of_scope, scope_sentence
from loop.grounding._spoken_data import spoken_data
from loop.grounding.arguments import ground, identifier_candidates, proper_names, time_spans, value_pattern
from loop.grounding.speakable import ReplyGuard
from loop.grounding.tool_choice import ask_for, uncued
from loop.models.llama.qwen_format import tool_name
from loop.types import Message, ModelRequest, ToolCall
from tests import plain_agents as pa
from voice.demo.order_desk import order_desk_brain

REPLY_EVAL = "voice/demo/reply_eval.yaml"
TOOL_CHOICE = "voice/demo/tool_choice_eval.yaml"


def _schema(fn: Any) -> dict[str, Any]:
    return Tool(fn).schema["properties"]


def _kinds(fn: Any) -> dict[str, str]:
    return {name: kind.kind if (kind := arg_kind(name, s)) else "" for name, s in _schema(fn).items()}


def _request(agent: str, *said: str, tool_result: str = "") -> ModelRequest:
    messages = [Message("user" if i % 2 == 0 else "assistant", text) for i, text in enumerate(said)]
    if tool_result:
        call = ToolCall("x", {}, "c1")
        messages[-1:-1] = [Message("user", said[0]), Message("assistant", "", [call]),
                           Message("tool", tool_result, tool_call_id="c1")]
        messages.pop(0)
    return pa.AGENTS[agent](ScriptedModel(["ok"])).assembler.build(messages, 0, 96)[0]


def _grounded(agent: str, say: str) -> tuple[dict[str, dict[str, Any]], dict[str, list[str]]]:
    request = _request(agent, say)
    tools, missing = ground(request.tools, request.messages)
    return {tool_name(t): t["function"]["parameters"]["properties"] for t in tools}, missing


# ---- identifiers from the schema ------------------------------------------------------------------------------


def test_identifiers_are_recognised_from_the_schema_not_a_name_convention() -> None:
    def tool(job_number: str, booking_ref: str, postcode: str,
             phone: Annotated[str, Field(description="a phone number")],
             account: Annotated[str, Field(description="the 8-digit account number")],
             code: Annotated[str, Field(pattern=r"^[0-9]{6}$")], ticket: Annotated[str, Field(examples=["12345"])],
             room: int, guests: Annotated[int, Field(description="number of guests")], job_no: int,
             reason: Annotated[str, Field(description="why, e.g. wrong order number")], item: str) -> None: ...

    kinds = _kinds(tool)
    assert {k for k, v in kinds.items() if v == "id"} == {"job_number", "booking_ref", "postcode", "phone", "account",
                                                          "code", "ticket", "job_no"}
    assert kinds["room"] == kinds["guests"] == "integer" and kinds["reason"] == "free" and kinds["item"] == "text"
    assert arg_kind("job_no", _schema(tool)["job_no"]).integer  # type: ignore[union-attr]
    assert is_id_pattern(r"^[A-Z]{1,2}[0-9][A-Z0-9]? ?[0-9][A-Z]{2}$") and not is_id_pattern(r"^[a-z ]+$")
    labels = {name: label(name, s) for name, s in _schema(tool).items()}
    assert labels["account"] == "eight-digit account number" and labels["booking_ref"] == "booking reference"
    assert labels["job_number"] == "job number" and labels["postcode"] == "postcode"


def test_an_identifier_is_only_ever_an_identifier_the_caller_said() -> None:
    tools, missing = _grounded("garage", "check on my repair please")  # the caller's first words clipped
    assert "repair_status" not in tools and missing["repair_status"] == ["job_number"]
    request = _request("garage", "check on my repair please")
    garage_tool = next(t for t in request.tools if tool_name(t) == "repair_status")
    assert ask_for(missing["repair_status"], garage_tool).endswith("Could you tell me the job number?")
    tools, _ = _grounded("garage", "Job four five two one, I have 2 questions")
    assert tools["repair_status"]["job_number"] == {"enum": ["4521"]}
    tools, missing = _grounded("outage", "I want to report a power cut, my account is 12345678")
    assert tools["report_outage"]["account"] == {"enum": ["12345678"]}
    tools, _ = _grounded("outage", "Is there a power cut at LS6 2AB?")
    assert "LS6 2AB" in tools["outage_status"]["postcode"]["enum"]
    tools, missing = _grounded("pizza", "Where is my order 311?")
    assert tools["order_status"]["order_number"] == {"enum": [311]}  # an integer-typed identifier


def test_a_pattern_decides_which_identifiers_fit() -> None:
    tools, missing = _grounded("hotel", "Please cancel booking hb-2291, not 4567")
    assert tools["cancel_booking"]["booking_ref"] == {"enum": ["HB-2291"]}
    _, missing = _grounded("hotel", "Please cancel my booking 4567")
    assert missing["cancel_booking"] == ["booking_ref"]


def test_candidates_for_times_names_and_spans() -> None:
    assert "LS6 2AB" in identifier_candidates("at LS6 2AB at 7pm") and "7pm" not in identifier_candidates("7pm")
    # letters spelled one by one before the digits are one id with them; a pronoun is no letter
    assert "E70346" in identifier_candidates("Staff ID E 70346.")
    assert "E62090" in identifier_candidates("It's E, 62090.")
    assert "HG318840" in identifier_candidates("policy H. G. 318840") and identifier_candidates("I 4567") == ["4567"]
    assert time_spans("Tuesday at 11 for Sam Lee, or 3 p.m.")[:3] == ["Tuesday", "11", "3 p.m."]
    assert proper_names("Sam Lee.") == ["Sam Lee"] and proper_names("Lee.", initial=True) == ["Lee"]
    assert value_pattern("I want to check on my repair", address=True) is None
    assert value_pattern("Hi, do you have any red helmets?") == "^(red( helmets)?|helmets)$"


def test_free_text_is_not_the_request_itself() -> None:
    tools, missing = _grounded("pizza", "I want to check on my pizza")
    assert "order_pizza" not in tools and missing["order_pizza"] == ["address"]
    tools, _ = _grounded("pizza", "A pepperoni to 12 High Street, please")
    assert tools["order_pizza"]["address"]["pattern"].startswith("^(12( High")


def test_enum_values_only_when_named() -> None:
    def book(day: Literal["monday", "friday"], size: Literal["small", "large"] = "small") -> str: ...

    schema = Tool(book).openai_schema()
    tools, missing = ground([schema], [Message("user", "Can I come in on Friday?")])
    assert tools[0]["function"]["parameters"]["properties"] == {"day": {"enum": ["friday"]}}
    _, missing = ground([schema], [Message("user", "Can I come in?")])
    assert missing == {"book": ["day"]}


# ---- out of scope ------------------------------------------------------------------------------------------------


def test_the_scope_sentence_is_built_from_the_tools_or_given() -> None:
    request = _request("hotel", "hi")
    assert scope_sentence(request) == "Sorry, I can only help with room availability and bookings here."
    desk = order_desk_brain().assembler(len).build([Message("user", "hi")], 0, 96)[0]
    assert scope_sentence(desk) == "Sorry, I can only help with orders, deliveries, refunds and addresses here."
    agent = pa.garage(ScriptedModel(["ok"]))
    agent.assembler.scope = "I can help with repairs and services here."
    assert scope_sentence(agent.assembler.build([Message("user", "hi")], 0, 96)[0]).startswith("I can help with rep")


def _order_desk_turns(path: str) -> list[tuple[str, bool]]:
    with open(path) as f:
        cases = yaml.safe_load(f)["cases"]
    turns = [(turn["say"], bool(turn.get("calls")) or bool(turn.get("expect") not in (None, "text")))
             for case in cases for turn in case.get("turns", [case])[:1] if turn.get("say")]
    return turns


def test_out_of_scope_is_decided_without_false_alarms_on_the_order_desk() -> None:
    assembler = order_desk_brain().assembler(lambda text: len(text or "") // 4 + 1)
    def judged(say: str) -> bool:  # as the embedded model's plan judges it: on the tools the caller cued
        request = assembler.build([Message("user", say)], 0, 96)[0]
        return out_of_scope(replace(request, tools=uncued(request.tools, request.messages, request.cues)))

    flagged = [say for path in (REPLY_EVAL, TOOL_CHOICE) for say, _ in _order_desk_turns(path) if judged(say)]
    assert set(flagged) == {"What's the weather like in Lisbon tomorrow?", "Can you tell me a joke?",
                            "What's the capital of France?", "How do I reset my email password?",
                            "Can you book me a table for two at an Italian restaurant tonight?"}


@pytest.mark.parametrize(("agent", "say", "expected"), [
    ("garage", "What is the capital of France?", True), ("garage", "Will it rain tomorrow?", True),
    ("garage", "Is my car ready yet?", False), ("garage", "How much will the repair cost?", False),
    ("garage", "Hi, I'm calling to check on my repair.", False), ("garage", "Hello?", False),
    ("outage", "My power is off.", False), ("outage", "Who won the football last night?", True),
    ("outage", "My lights went out", False), ("hotel", "Do you have a room for Friday?", False),
    ("hotel", "Can you recommend a good film?", True), ("hotel", "I'd like to stay two nights", False),
    ("pizza", "What pizzas do you have?", False), ("pizza", "Where is my order?", False),
    ("pizza", "What's the weather going to be like?", True), ("pizza", "Thanks, bye!", False),
])
def test_out_of_scope_for_agents_that_are_not_the_demo(agent: str, say: str, expected: bool) -> None:
    assert out_of_scope(_request(agent, say)) is expected


def test_a_change_to_a_confirmation_the_caller_declined_is_in_scope() -> None:
    request = _request("garage", "Book a service for Tom on Friday")
    call = ToolCall("book_service", {"day": "friday", "name": "Tom"}, "c1")
    declined = "The user declined book_service: the caller asked for a change. It was not done."
    request.messages += [Message("assistant", "", [call]), Message("tool", declined, tool_call_id="c1"),
                         Message("user", "Yes, but make it Monday.")]
    assert not out_of_scope(request)  # the caller answers the agent's question, whatever their words share


def test_a_follow_up_to_a_tool_result_or_an_answer_to_a_question_is_in_scope() -> None:
    assert not out_of_scope(_request("garage", "Could you tell me the job number?", "Jeff Smith"))
    request = _request("garage", "Job 4521 please", "Is that the blue Ford?",
                       tool_result='{"car": "blue Ford Focus", "status": "waiting for parts"}')
    assert not out_of_scope(request)


# ---- facts in what is said -------------------------------------------------------------------------------------------


def test_a_change_to_what_the_caller_asked_before_is_no_topic_from_nowhere() -> None:
    """"Can we make it 11 instead?" while a booking is being asked for: a reply about that change answers the
    caller, not a question nothing here covers ("instead" is no topic)."""
    facts = FactCheck(_request("garage", "Book a service on Friday at 10.", "Could you tell me the name?",
                               "Can we make it 11 instead?"))
    assert facts.unknown("Sure, I can make it 11 instead.") is None
    facts = FactCheck(_request("garage", "Book a service on Friday at 10.", "Could you tell me the name?",
                               "Can we go to the cinema instead?"))
    assert facts.unknown("Sure, the cinema is open late.") is not None  # "instead" late: no change of theirs


def test_a_reply_told_from_the_prompt_is_no_answer_from_nowhere() -> None:
    """The prompt says how long a repeat takes; the caller asks "How long does it usually take?": a reply whose
    own words all come from the prompt tells its line, whatever word of the caller's ("usually") it repeats. A
    reply that adds nothing of the prompt's (the caller's words back) is still an answer from nowhere."""
    from loop.types import Message as M

    system = 'You answer a repeat line. Timing: "A repeat takes two working days to be ready at the pharmacy."'
    request = _request("garage", "How long does a repeat usually take at the pharmacy?")
    request = replace(request, messages=[M("system", system), *request.messages[1:]])
    facts = FactCheck(request)
    assert facts.unknown("A repeat usually takes two working days to be ready at the pharmacy.") is None
    assert facts.unknown("Yes, a repeat usually does take long at the pharmacy.") is not None
    request = _request("garage", "My car keeps making a funny noise. What should I put on it?")
    system = "You book repairs. We fix brakes and tyres.\nOnly a tool knows a job's status."
    facts = FactCheck(replace(request, messages=[M("system", system), *request.messages[1:]]))
    assert facts.unknown("For a funny noise, put a tool on your brakes.") is not None  # words from all over it


def test_a_clause_states_only_facts_the_conversation_holds() -> None:
    facts = FactCheck(_request("garage", "Job 4521 please", tool_result=(
        '{"job_number": "4521", "car": "blue Ford Focus", "status": "waiting for parts", "ready": "Thursday"}')))
    assert facts.unknown("Your blue Ford Focus is waiting for parts, and should be ready on Thursday.") is None
    assert facts.unknown("Job 4521 will cost 250 dollars.").startswith("fact: a number")
    assert facts.unknown("It will be done on Friday.").startswith("fact: a date")
    forecast = FactCheck(_request("garage", "Will it rain tomorrow?"))
    assert forecast.unknown("Tomorrow it will be sunny, 25 degrees.")
    assert forecast.unknown("Yes, it is going to rain.")  # the caller asked: that is no forecast
    assert forecast.unknown("I can help with repairs here.") is None


def test_the_callers_words_are_never_spoken_as_the_agents() -> None:
    facts = FactCheck(_request("hotel", "I'd like to cancel my booking for Friday please"))
    assert facts.unknown("Okay, I have not done that. I'd like to cancel my booking.").startswith("echo:")
    assert facts.unknown("Your booking for Friday is unchanged.") is None  # naming what was asked about


def _echo_guarded(heard: str, pieces: list[str]) -> tuple[str, ReplyGuard]:
    facts = FactCheck(_request("outage", heard))
    guard = ReplyGuard([], "", "F", vet=facts.unknown, vet_fallback="ASK", echoes=facts.echoes)
    said = "".join(guard.feed(p) for p in pieces) + guard.finish()
    return said, guard


def test_a_reply_that_only_repeats_the_caller_is_not_said() -> None:
    said, guard = _echo_guarded("Yes, please.", ["Yes, ", "please."])
    assert said == "ASK" and guard.fired.startswith("echo")  # the first clause was held, not spoken
    said, _ = _echo_guarded("Yes, please.", ["Yes, ", "I will report it now."])
    assert said == "Yes, I will report it now."  # it began like the caller, then said its own
    said, _ = _echo_guarded("Hello.", ["Hello! ", "How can I help?"])
    assert said == "Hello! How can I help?"  # greeting back is manners
    said, _ = _echo_guarded("no", ["No."])
    assert said == "ASK"


def test_an_earlier_turn_of_the_callers_is_not_said_back_either() -> None:
    """After a failed turn, "Sure." got the caller's earlier "Hello, I've got a question about my holds." back."""
    facts = FactCheck(_request("outage", "Hello, I've got a question about my power.", "Sorry, I couldn't finish that.",
                               "Sure."))
    guard = ReplyGuard([], "", "F", vet=facts.unknown, vet_fallback="ASK", echoes=facts.echoes)
    said = "".join(guard.feed(p) for p in ["Hello, ", "I've got a question about my power."]) + guard.finish()
    assert said == "ASK" and guard.fired.startswith("echo")


def test_the_guard_says_a_question_or_the_scope_instead_of_an_invented_fact() -> None:
    request = _request("garage", "Will it rain tomorrow?")
    guard = ReplyGuard(["repair_status"], "", "F", vet=FactCheck(request).unknown, vet_fallback="SCOPE")
    assert guard.feed("It will be sunny tomorrow, ") == "SCOPE" and guard.done and guard.fired.startswith("fact")
    guard = ReplyGuard([], "", "F", vet=FactCheck(request).unknown, vet_fallback="SCOPE")
    assert guard.feed("I can check a repair for you. It will rain.") == "I can check a repair for you. "
    assert guard.said == "I can check a repair for you. "


def test_plain_data_reads_out_when_the_model_cannot_be_said() -> None:
    assert spoken_data('{"job_number": "4521", "status": "waiting for parts", "found": true}') == (
        "Job number 4521, status waiting for parts.")  # a flag beside the data it flags says nothing more
    assert spoken_data('{"job_number": "33900", "found": false, "note": "no such job; job numbers have four digits"}'
                       ) == "Job number 33900, no such job; job numbers have four digits."
    assert spoken_data("Order 4567 has shipped.") == "" and spoken_data('{"a": {"b": {"c": 1}}}') == ""
    assert spoken_data('{"job": "5186", "ready": "today at 5 p.m."}') == "Job 5186, ready today at 5 p.m."
    rooms = '{"nights": 2, "rooms": [{"type": "double", "free": 2}, {"type": "suite", "free": 0}]}'
    assert spoken_data(rooms) == "Nights 2, rooms: double, free 2; suite, free 0."
    assert spoken_data(rooms, known=[2]) == "Rooms: double, free 2; suite, free 0."  # the caller said how long


def test_a_write_is_named_by_its_own_verb_not_by_a_noun_a_read_shares() -> None:
    from loop.grounding.tool_choice import named_writes

    names = ["book_room", "booking_details", "cancel_booking", "report_outage", "outage_by_postcode"]
    tools = [{"type": "function", "function": {"name": n, "description": "", "parameters": {}}} for n in names]
    writes = frozenset({"book_room", "cancel_booking", "report_outage"})

    def named(say: str) -> list[str]:
        return named_writes(tools, [Message("user", say)], writes, as_verb=True)

    assert named("Can you check my booking? The reference is 3091.") == []
    assert named("I'd like to book a double room") == ["book_room"]
    assert named("Please cancel my booking") == ["cancel_booking"]
    assert named("My power's off. Can you report it?") == ["report_outage"] and named("My power is off") == []


# ---- what the prompt itself says ------------------------------------------------------------------------------------

_GARAGE_PROMPT = """You answer the phone for a garage. One or two short sentences.
"Is job 4712 ready?" -> {"name": "repair_status", "arguments": {"job_number": "4712"}}
What you may tell callers without a tool:
- opening hours: "We're open Monday to Friday from 8 to 6, and Saturday from 9 to 1."
- anything else (selling cars, insurance, the weather): "Sorry, I can only help with repairs here."
"""


def _garage_request(say: str) -> ModelRequest:
    agent = pa.garage(ScriptedModel(["ok"]))
    agent.assembler = type(agent.assembler)(_GARAGE_PROMPT, list(agent.tools.values()), len, 4096)
    return agent.assembler.build([Message("user", say)], 0, 96)[0]


def test_the_prompts_own_replies_are_the_scope_and_the_fallback() -> None:
    from loop.grounding._prompt_answer import quoted_reply

    assert scope_sentence(_garage_request("hi")) == "Sorry, I can only help with repairs here."
    assert quoted_reply(_garage_request("What time do you close on Saturday?")).startswith("We're open Monday")
    assert quoted_reply(_garage_request("Is job 4712 ready?")) != "Is job 4712 ready?"  # a caller's words: no reply


def test_a_word_of_the_prompt_said_capitalised_is_no_name() -> None:
    prompt = yaml.safe_load(Path("examples/hotel/agent.yaml").read_text())["system_prompt"]
    agent = pa.hotel(ScriptedModel(["ok"]))
    agent.assembler = type(agent.assembler)(prompt, list(agent.tools.values()), len, 4096)
    request = agent.assembler.build([Message("user", "What time is Check-out?")], 0, 96)[0]
    assert not out_of_scope(request)  # Whisper's "Check-out" is the prompt's check-out, not a name
    assert out_of_scope(agent.assembler.build([Message("user", "What time is Big Ben?")], 0, 96)[0])


def test_a_reply_the_prompt_quotes_may_be_said_but_not_the_prompt_itself() -> None:
    from loop.grounding.speakable import leaks

    assert not leaks("We're open Monday to Friday from 8 to 6, and Saturday from 9 to 1.", prompt=_GARAGE_PROMPT)
    assert leaks("What you may tell callers without a tool is this.", prompt=_GARAGE_PROMPT)


def test_of_reads_one_identifier_fills_the_callers_words_say_which() -> None:
    from loop.grounding._scope import closest_reads

    def repair_status(job_number: str) -> dict:
        """Where a repair job is, and whether the car is ready"""

    def price_quote(job_number: str) -> dict:
        """The price quoted for a repair job"""

    reads = [Tool(repair_status).openai_schema(), Tool(price_quote).openai_schema()]

    def closest(say: str) -> list[str]:
        request = ModelRequest(messages=[Message("user", say)], tools=reads, max_output_tokens=96)
        return [tool_name(t) for t in closest_reads(reads, request)]

    assert closest("How much is the repair on job 5186 going to cost?") == ["price_quote"]
    assert closest("Is my car ready? Job 4712.") == ["repair_status"]
    assert closest("Job 4712.") == ["repair_status", "price_quote"]


def test_a_leak_ends_the_reply_as_soon_as_its_words_are_whole_not_at_the_clause_end() -> None:
    """The model is stopped at the leak (`done`), so the rest of the clause is never generated."""
    guard = ReplyGuard(["report_outage"], "", "FALLBACK")
    out = [guard.feed(piece) for piece in ["You", " should", " call", " the", " outage", " function"]]
    assert out == [""] * 6 and not guard.done  # "function" may still be "functional": not whole yet
    assert guard.feed(" to") == "FALLBACK" and guard.done and guard.fired.startswith("talks about tools")
    guard = ReplyGuard(["report_outage"], "", "FALLBACK")
    assert guard.feed("Sure, ") == "Sure, " and guard.feed("I will use report") == ""
    # said stays said, and "Sure," alone answers nothing: the fallback follows it
    assert guard.feed("_outage now.") == "FALLBACK" and guard.done and guard.said == "Sure, FALLBACK"
    guard = ReplyGuard(["book_room"], "", "FALLBACK")
    assert guard.feed("I can book") == "" and guard.feed(" a room for you.") == ""
    assert guard.finish() == "I can book a room for you." and guard.fired is None


@pytest.mark.parametrize(("said", "amends"), [
    ("Actually make it the blue one. My sister's coming too.", True), ("Um, Friday instead.", True),
    ("Make it four seats.", True), ("What's the weather like? Make it quick.", False),
    ("Can you tell me a joke?", False)])
def test_a_change_to_what_was_asked_is_never_out_of_scope(said: str, amends: bool) -> None:
    """The caller changes what they asked before: about the conversation whatever its words (the pack's
    ANSWER_CHANGE first thing); the first thing a caller says has nothing before it to change."""
    request = _request("garage", "Book a service for Tom on Friday", "It's booked.", said)
    assert out_of_scope(request) is not amends


def test_a_change_said_first_has_nothing_to_change_and_is_judged_by_its_words() -> None:
    assert out_of_scope(_request("garage", "Actually make it the blue one. My sister's coming too."))
