"""What the embedded model may do with a caller's words: the grammar plan per request (no model needed)."""

from __future__ import annotations

from typing import Any

import pytest

from loop.grounding.arguments import proper_names
from loop.grounding.remarks import acknowledgement, affirmation, closing_remark, closing_reply
from loop.grounding.speakable import ReplyGuard, sentences
from loop.grounding.tool_choice import fresh_reads, uncued
from loop.models.llama.decoding import Plan, plan_for
from loop.models.llama.qwen_format import tool_name
from loop.prompt import PromptAssembler
from loop.types import Message, ModelRequest
from tests.helpers import labelled
from voice.demo.order_desk import OrderDesk, order_desk_brain


def _assembler() -> PromptAssembler:
    return order_desk_brain().assembler(lambda text: len(text) // 4 + 1)


def _request(*said: str) -> ModelRequest:
    messages = [Message("user" if i % 2 == 0 else "assistant", text) for i, text in enumerate(said)]
    return _assembler().build(messages, 0, 96)[0]


def _offered(name: str, text: str) -> bool:
    """Is the order desk's tool `name` offered to the embedded model after the caller says `text`?"""
    tools = OrderDesk(":memory:").tools()
    cues = {t.name: t.cues for t in tools if t.cues}
    schemas = [t.openai_schema() for t in tools]
    return name in [tool_name(t) for t in uncued(schemas, [Message("user", text)], cues)]


def _plan(*said: str) -> tuple[Plan, list[str]]:
    grammars: list[str] = []

    def compiled(gbnf: str) -> Any:
        grammars.append(gbnf)
        return gbnf  # the plan keeps whatever the compiler returns: the grammar text is enough to look at

    return plan_for(_request(*said), compiled), grammars


def test_the_request_names_the_writes_and_the_cued_tools() -> None:
    request = _request("hello")
    assert request.writes == frozenset({"issue_refund", "update_address"})
    assert "person" in request.cues["transfer_to_human"]


def test_a_read_the_caller_asks_about_yields_to_the_read_their_words_fill() -> None:
    plan, _ = _plan("Which city is order 1234 going to?")
    assert plan.missing["delivery_status"] == ["city"] and plan.yields("delivery_status")
    assert plan.instead_calls == ['{"name": "lookup_order", "arguments": {"order_id": "1234"}}']
    # a write the caller spoke of by no word of its own ("order" is every tool's) gives way to the read too
    assert plan.yields("issue_refund")


def test_a_refund_without_an_amount_asks_for_it_and_a_stray_remark_is_steered_to_the_order() -> None:
    plan, _ = _plan("I'd like a refund for order 4567.")
    assert plan.missing["issue_refund"] == ["amount"] and plan.instead is not None  # lookup_order(4567) is fresh
    assert not plan.yields("issue_refund")
    stray, _ = _plan("I'm playing a single hand in what looks like a losing game.")  # nothing the desk is for
    assert stray.say == "Sorry, I can only help with orders, deliveries, refunds and addresses here."
    vague, _ = _plan("My order has a problem and I want a refund")  # a refund it lacks the amount and order of
    assert vague.asks["issue_refund"].endswith("Could you tell me the order number and the amount?")
    assert vague.asks["lookup_order"].endswith("Could you tell me the order number?")
    remark, _ = _plan("Do you have the parcel with the blue lid?")  # in scope, but not about a refund
    assert remark.asks["issue_refund"] == remark.asks["lookup_order"]  # so asked what the read lacks


def test_a_question_about_an_order_the_caller_named_is_answered_by_a_tool_not_in_words() -> None:
    plan, grammars = _plan("Why is my order 2020 running late?")
    assert grammars[0].startswith("root ::= calls") and "lookup_order" not in plan.missing
    _, chat = _plan("Hello, who am I talking to?")
    assert chat[0].startswith("root ::= text | calls")  # nothing to look up: words are allowed


def test_thanks_and_goodbye_get_words_only() -> None:
    plan, grammars = _plan("Great, thanks, that's all. Bye!")
    assert plan.say == "You're welcome. Goodbye!" and not grammars  # said at once: no tool, nothing generated
    assert closing_remark("Thank you, that's all, goodbye!") and closing_remark("Cheers, bye.")
    assert not closing_remark("Thanks, can you check order 1234?") and not closing_remark("Yes, go ahead.")
    assert closing_reply("Thank you, goodbye.") == "You're welcome. Goodbye!"
    assert closing_reply("Great, thanks.").startswith("You're welcome.") and "anything else" in closing_reply("Thanks!")


def test_a_hand_over_is_offered_only_after_the_caller_asks_for_a_person() -> None:
    def offered(text: str) -> bool:
        return _offered("transfer_to_human", text)

    assert offered("Can I speak to a real person?") and offered("Get me your manager.")
    assert not offered("I'm playing a single hand in what looks like a losing game.")
    assert not offered("Great, thanks.")


def test_a_city_in_a_question_about_something_else_is_no_delivery_lookup() -> None:
    def offered(text: str) -> bool:
        return _offered("delivery_status", text)

    assert not offered("What will the weather be like in Lisbon tomorrow?")
    for asked in ("Is anything going to Denver?", "Any deliveries for Paris?", "What's heading to Leeds?",
                  "The amount of things being delivered to Paris.", "Any orders for Austin?",
                  "Is anything delayed for Austin?", "How are the shipments to New York doing?"):
        assert offered(asked), asked


def test_fresh_reads_take_values_not_loose_words() -> None:
    schemas = [t.openai_schema() for t in OrderDesk(":memory:").tools()]
    writes = frozenset({"issue_refund", "update_address"})
    assert [tool_name(t) for t in fresh_reads(schemas, [Message("user", "Order 7788 been delivered")], writes)] == [
        "lookup_order"]
    assert fresh_reads(schemas, [Message("user", "Where is my order?")], writes) == []  # "order" is no value


def test_a_name_the_caller_addresses_is_not_a_place() -> None:
    assert proper_names("Lord, but I am glad to see you again, Phil.") == []
    assert proper_names("Any deliveries going to New York?") == ["New York"]


def _garage_plan(said: str) -> Plan:
    from examples.garage.workshop import Workshop

    tools = Workshop(":memory:").tools()
    assembler = PromptAssembler("You answer a garage's phone.", tools, lambda text: len(text) // 4 + 1, 4096)
    return plan_for(assembler.build([Message("user", said)], 0, 96)[0], lambda gbnf: gbnf)


def test_a_decision_with_one_possible_call_is_made_before_generating() -> None:
    status = '{"name": "repair_status", "arguments": {"job_number": "4712"}}'
    # book_collection lacks the day and the time and gives way to the read: whatever the model names, this call
    assert _garage_plan("Hi, is my car ready? The job number is 4712").sole_call() == status
    price = _garage_plan("How much is the repair on job 5186 going to cost?")  # "repair", "job": every tool's words
    assert price.sole_call() == '{"name": "price_quote", "arguments": {"job_number": "5186"}}'
    # the caller spoke of a collection: naming it asks for the day and time, so the model still decides
    assert _garage_plan("I want to collect my car, job 6021.").sole_call() == ""
    booked = '{"name": "book_collection", "arguments": {"job_number": "6021", "day": "friday", "time": "10 a.m."}}'
    assert _garage_plan("Can I collect job 6021 on Friday at 10 a.m.?").sole_call() == booked  # one clock reading
    assert _garage_plan("Can I collect job 6021 on Friday at 10 or at 11?").sole_call() == ""  # several whole calls
    assert _garage_plan("Is my car ready yet?").sole_call() == ""  # nothing to fill a call with
    # an address is a house number and its street: "4567" alone is none, so the look-up is the one call
    plan, _ = _plan("Where is my order 4567?")
    assert plan.sole_call() == '{"name": "lookup_order", "arguments": {"order_id": "4567"}}'
    # with a street said, update_address may take any of its spans: never whole, so the model decides
    plan, _ = _plan("Is my order 4567 going to 12 High Street?")
    assert plan.sole_call() == ""
    refund, _ = _plan("I'd like a refund for order 4567.")
    assert not refund.yields("issue_refund") and refund.sole_call() == ""  # it asks for the amount


def test_an_acknowledgement_after_an_answer_gets_the_offer_of_more_help() -> None:
    """"Brilliant." after a read's answer: no tool answers it and it is not outside what the agent is for, so not
    the scope sentence either; "Okay." to the agent's own question is left to the model (a number may follow)."""
    answered, _ = _plan("Where is my order 4567?", "Order 4567 has shipped.", "Brilliant.")
    assert answered.say == "Is there anything else I can help with?"
    for said in ("Oh, great.", "Okay, perfect.", "Lovely"):
        assert _plan("Where is my order 4567?", "Order 4567 has shipped.", said)[0].say == answered.say, said
    asked, _ = _plan("Where is my order?", "Could you tell me the order number?", "Okay.")
    assert asked.say != answered.say
    more, _ = _plan("Where is my order 4567?", "Order 4567 has shipped.", "Great, and order 1234?")
    assert more.say == ""  # more than an acknowledgement


def test_a_reply_caught_mid_sentence_after_a_result_ends_with_the_result() -> None:
    """"To book seats for Starfall at 7.30," then "the caller should call the function": the caller still hears
    what the tool said, not half a sentence."""
    guard = ReplyGuard(["showtimes"], fallback="7:30 p.m. sold out.", ending="7:30 p.m. sold out.")
    said = guard.feed("To book seats for Starfall at 7.30, ") + guard.feed("the caller should call the function. ")
    assert guard.done and said.endswith("7:30 p.m. sold out.") and "caller" not in said
    whole = ReplyGuard(["showtimes"], ending="7:30 p.m. sold out.")
    said = whole.feed("It's sold out at 7.30. ") + whole.feed("The caller should call the function. ")
    assert said == "It's sold out at 7.30. "


@pytest.mark.parametrize(("text", "count"), [
    ("6:15 p.m. 25 seats left, 7:30 p.m. sold out.", 1), ("It costs $5.50. Thanks!", 2), ("Open at 9 a.m. daily", 1),
    ("Hi. There.", 2)])
def test_the_dots_of_a_time_do_not_end_a_sentence(text: str, count: int) -> None:
    assert sentences(text) == count


@pytest.mark.parametrize(("said", "kind"), labelled("remarks.tsv"))
def test_what_asks_for_nothing_is_told_from_a_request(said: str, kind: str) -> None:
    found = [name for name, reads in (("closing", closing_remark), ("acknowledgement", acknowledgement),
                                      ("affirmation", affirmation)) if reads(said)]
    assert (found[:1] or ["none"]) == [kind]


@pytest.mark.parametrize(("said", "kind"), labelled("remarks_es.tsv"))
def test_what_a_spanish_caller_says_that_asks_for_nothing_is_told_from_a_request(said: str, kind: str) -> None:
    """"Muchas gracias, adiós." is a closing remark in a Spanish call (it had got the scope sentence)."""
    from loop import locale

    es = locale.get("es")
    found = [name for name, reads in (("closing", closing_remark), ("acknowledgement", acknowledgement),
                                      ("affirmation", affirmation)) if reads(said, es)]
    assert (found[:1] or ["none"]) == [kind]


@pytest.mark.parametrize("fallback", ["Could you tell me the file reference?",
                                      "Sure, I can help with that. Could you tell me the file reference?"])
def test_a_reply_caught_after_its_courtesy_still_says_its_fallback(fallback: str) -> None:
    """"Sure, I can help with that." then "Here's the json object": the caller hears the question, once."""
    guard = ReplyGuard(["change_delivery_address"], fallback=fallback)
    said = guard.feed("Sure, I can help with that. ") + guard.feed("Here's the json object ") + guard.finish()
    assert said == "Sure, I can help with that. Could you tell me the file reference?"
