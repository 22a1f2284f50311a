"""Grounding is a phase of the loop for every model: an agent on an OpenAI-compatible model (a real HTTP server
speaking the chat-completions SSE protocol, scripted per test) gets the reply guard, the scope sentence, the words
said without generating and the argument grounding the embedded model has."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest

from loop import Agent, LoopConfig, RunOutcome, ScriptedModel, Tool
from loop.approvals import ApprovalAnswer
from loop.grounding.arguments import ground
from loop.grounding.phase import pursued_writes
from loop.kinds import address, person_name, when
from loop.locale import en
from loop.models.openai import OpenAICompatModel
from loop.types import Message
from tests.openai_server import OpenAIServer, text_reply, tool_calls_reply
from voice.demo.order_desk import OrderDesk, order_policy

PROMPT = "You are the order desk of a shop. Help callers with their orders."


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as srv:
        yield srv


def _agent(server: OpenAIServer, tmp_path: Path) -> tuple[Agent, OrderDesk]:
    desk = OrderDesk(tmp_path / "orders.db")
    model = OpenAICompatModel(model="test-model", base_url=server.base_url, timeout_s=5.0, max_retries=0)
    agent = Agent(model=model, tools=desk.tools(), policy=order_policy(), system_prompt=PROMPT,
                  config=LoopConfig.profile("voice"))
    return agent, desk


def test_a_fact_no_tool_gave_is_not_said(server: OpenAIServer, tmp_path: Path) -> None:
    """A remote model's "Your card's interest rate is 7.9 percent a year, ..." with no tool behind it is never
    spoken: the caller hears what the agent is for, or a question for what a tool needs."""
    server.enqueue(text_reply("Your order's interest rate is 7.9 percent a year, ",
                              "and your limit is 4200 dollars."))
    agent, _ = _agent(server, tmp_path)
    result = agent.run_sync("What's the interest rate on my order?")
    assert "7.9" not in result.answer and "4200" not in result.answer and result.answer.strip()


def test_thanks_and_out_of_scope_are_answered_without_asking_the_model(server: OpenAIServer,
                                                                         tmp_path: Path) -> None:
    agent, _ = _agent(server, tmp_path)
    bye = agent.run_sync("Thanks, bye!")
    france = agent.run_sync("What is the capital of France?")
    assert server.requests == []  # neither was sent to the model
    assert "bye" in bye.answer.lower() and "sorry" in france.answer.lower() and "paris" not in france.answer.lower()


def test_an_argument_heard_one_way_is_taken_as_heard(server: OpenAIServer, tmp_path: Path) -> None:
    server.enqueue(tool_calls_reply([("c1", "lookup_order", json.dumps({"order_id": "4576"}))]),
                   text_reply("It has shipped."))
    agent, _ = _agent(server, tmp_path)
    result = agent.run_sync("Where is my order 4567?")
    assert [o.call.arguments for o in result.trajectory] == [{"order_id": "4567"}]


def test_a_write_with_a_value_nobody_said_is_not_made_and_the_caller_is_asked(server: OpenAIServer,
                                                                              tmp_path: Path) -> None:
    server.enqueue(tool_calls_reply([("c1", "issue_refund", json.dumps({"order_id": "4567", "amount": 35}))]))
    agent, desk = _agent(server, tmp_path)
    asked: list = []
    agent.approver = lambda call, verdict: asked.append(call)  # never reached: nothing is proposed to approve
    result = agent.run_sync("I want a refund on order 4567.")
    assert result.outcome is RunOutcome.COMPLETED and result.trajectory == [] and asked == []
    assert "amount" in result.answer.lower() and result.answer.rstrip().endswith("?")
    assert desk.db.execute("SELECT count(*) FROM refunds").fetchone() == (0,)


def test_a_question_nothing_here_answers_gets_an_honest_answer_and_the_scope(server: OpenAIServer,
                                                                            tmp_path: Path) -> None:
    """"Do my orders come with a free gift?" touches the agent's domain (orders), but nothing it knows speaks of a
    gift: the model's "Yes, every order comes with a free gift." is not said, nor is a bare "Yes,"."""
    server.enqueue(text_reply("Yes, ", "every order comes with a free gift."))
    agent, _ = _agent(server, tmp_path)
    answer = agent.run_sync("Do my orders come with a free gift?").answer
    assert "gift" not in answer.lower() and not answer.lower().startswith("yes")
    assert "can't tell you" in answer.lower() and "order" in answer.lower(), answer


def test_a_question_that_shares_only_a_word_of_a_writes_description_is_not_answered_with_its_question(
        server: OpenAIServer, tmp_path: Path) -> None:
    """"Do you make much money?" shares "money" with issue_refund's description ("Refund money for an order"), and
    the model's answer holds a number nobody gave: what is said is what the agent is for, never "Could you tell me
    the order number and the amount?" (a write answers no question)."""
    server.enqueue(text_reply("We make ", "about 2 million dollars a year."))
    agent, _ = _agent(server, tmp_path)
    answer = agent.run_sync("Do you make much money from the shop?").answer
    assert "2 million" not in answer and not answer.rstrip().endswith("?") and "sorry" in answer.lower(), answer


def test_an_answer_to_the_agents_question_is_asked_again_not_told_it_cannot_be_answered(
        server: OpenAIServer, tmp_path: Path) -> None:
    """The caller answers the agent's question with a word nothing covers ("Yes, outside."): the model's statement
    about it is not said, and neither is "I can't tell you that here" (they asked nothing): the question again."""
    server.enqueue(text_reply("Great, ", "your outside order is on its way."))
    agent, _ = _agent(server, tmp_path)
    history = [Message("user", "I want to check an order."),
               Message("assistant", "Sure, I can help with that. Could you tell me the order number?")]
    answer = agent.run_sync("Yes, outside.", history=history).answer
    assert "outside" not in answer.lower() and "can't tell" not in answer.lower(), answer
    assert "order" in answer.lower() and answer.rstrip().endswith("?"), answer


@pytest.mark.parametrize(("said", "asks"), [
    ("Are there any good restaurants near the cinema?", True), ("what time is yoga tomorrow", True),
    ("Oh, um, how much do I owe", True), ("Hi. Do you sell gift cards?", True), ("Yes, outside.", False),
    ("It's 4089 3341.", False), ("Five o'clock, I think.", False), ("Yes please.", False),
    ("My card ends in 0077.", False), ("and is it open on Sunday", True),
])
def test_a_question_is_told_from_an_answer(said: str, asks: bool) -> None:
    from loop.grounding._facts import asks as caller_asks

    assert caller_asks(said) is asks


def test_a_question_back_and_a_reply_on_known_ground_are_said_as_they_are(server: OpenAIServer,
                                                                         tmp_path: Path) -> None:
    server.enqueue(text_reply("Sure, ", "which order is the gift for?"),
                   text_reply("Yes, ", "I can help with your order."))
    agent, _ = _agent(server, tmp_path)
    assert agent.run_sync("Can I add a gift note to my order?").answer == "Sure, which order is the gift for?"
    assert agent.run_sync("Can you help with my order?").answer == "Yes, I can help with your order."


def test_the_write_just_made_is_not_proposed_again(server: OpenAIServer) -> None:
    """The caller approved the booking and it was made; a model that proposes the same booking again (the 0.5B did,
    and the run ended as a loop: "I did book ..., but I couldn't finish the rest") is not asked a second time: what
    the booking did is the answer, and it is made once. (A result of three sentences is not said without asking
    the model, as a short one is.)"""
    booked: list[str] = []

    def book_tuning(name: Annotated[str, person_name()], date: Annotated[str, when(date=True)]) -> str:
        """Book a piano tuning visit"""
        booked.append(date)
        return f"Booked: the tuner comes on {date}. It's $110, paid on the day. Your visit number is 5501."

    call = ("c1", "book_tuning", json.dumps({"name": "Ken Lowry", "date": "July 21"}))
    server.enqueue(tool_calls_reply([call]), tool_calls_reply([("c2", *call[1:])]))
    model = OpenAICompatModel(model="test-model", base_url=server.base_url, timeout_s=5.0, max_retries=0)
    agent = Agent(model=model, tools=[Tool(book_tuning, mutates=True)], system_prompt="You book piano tunings.",
                  config=LoopConfig.profile("voice"), approver=lambda call, verdict: True)
    result = agent.run_sync("Book a tuning on July 21 for Ken Lowry, please.")
    assert result.outcome is RunOutcome.COMPLETED, result.reason
    assert booked == ["July 21"] and "5501" in result.answer



def test_no_read_is_made_after_the_write_just_made(server: OpenAIServer) -> None:
    """The caller approved the booking and it was made; a model that then looks up the day's visits (set 6's blood
    donation read the sessions and said them, never the appointment) makes no call: the booking's result is said."""
    looked: list[str] = []

    def book_tuning(name: Annotated[str, person_name()], date: Annotated[str, when(date=True)]) -> str:
        """Book a piano tuning visit"""
        return f"Booked for {date}. Your visit number is 5501."

    def visits_on(date: Annotated[str, when(date=True)]) -> str:
        """The tuner's free visits on a date"""
        looked.append(date)
        return "Free visits on July 21: 9 a.m. and 2 p.m."

    call = ("c1", "book_tuning", json.dumps({"name": "Ken Lowry", "date": "July 21"}))
    server.enqueue(tool_calls_reply([call]), tool_calls_reply([("c2", "visits_on", json.dumps({"date": "July 21"}))]))
    model = OpenAICompatModel(model="test-model", base_url=server.base_url, timeout_s=5.0, max_retries=0)
    agent = Agent(model=model, tools=[Tool(book_tuning, mutates=True), Tool(visits_on)],
                  system_prompt="You book piano tunings.", config=LoopConfig.profile("voice"),
                  approver=lambda call, verdict: True)
    result = agent.run_sync("Book a tuning on July 21 for Ken Lowry, please.")
    assert result.outcome is RunOutcome.COMPLETED, result.reason
    assert looked == [] and "5501" in result.answer

def test_a_change_to_a_write_being_confirmed_is_the_same_write_with_the_new_value(server: OpenAIServer,
                                                                                tmp_path: Path) -> None:
    """"Just to confirm: refund $20 on order 4567?" - "No wait, make it thirty dollars.": the refund is proposed
    again with $30 and the same order, without asking the model (nothing is enqueued for it), then confirmed."""
    server.enqueue(tool_calls_reply([("c1", "issue_refund", json.dumps({"order_id": "4567", "amount": 20}))]))
    agent, desk = _agent(server, tmp_path)
    change = "No wait, make it thirty dollars."
    agent.approver = lambda call, verdict: ApprovalAnswer(False, f"the caller asked for a change: {change!r}",
                                                          end_run=True)
    first = agent.run_sync("I want a refund of $20 on order 4567.")
    assert first.outcome is RunOutcome.APPROVAL_DENIED
    proposed: list = []
    agent.approver = lambda call, verdict: proposed.append(call.arguments) or False
    second = agent.run_sync(change, history=first.messages)
    assert [{k: v for k, v in a.items() if k != "idempotency_key"} for a in proposed] == \
        [{"order_id": "4567", "amount": 30}], second
    assert desk.db.execute("SELECT count(*) FROM refunds").fetchone() == (0,)


@pytest.mark.parametrize(("said", "nothing_asked"), [("Yes, that's right.", True), ("Yeah.", True),
                                                     ("Yes, please.", True), ("Yes, the other order.", False)])
def test_a_yes_to_an_answer_asks_for_nothing(said: str, nothing_asked: bool) -> None:
    """"Yes, that's right." after a result was read out is no request and not out of scope; after a write was
    declined it is about that write, and left to the loop."""
    from loop.grounding.phase import said_without_generating
    from loop.types import ModelRequest, ToolCall

    read = [Message("user", "Where is ticket 48217?"), Message("assistant", "Ticket 48217 is ready to collect."),
            Message("user", said)]
    reply = said_without_generating(ModelRequest(read, [], 96))
    assert (reply == en.ANYTHING_ELSE) is nothing_asked
    call = ToolCall("book_delivery", {"ticket": "48217", "day": "tuesday"}, "c1")
    declined = [Message("user", "Deliver ticket 48217 on Tuesday."), Message("assistant", "", [call]),
                Message("tool", "book_delivery was not approved (no answer came). It was not done.",
                        tool_call_id="c1"), Message("assistant", "I haven't done that: I didn't hear a yes."),
                Message("user", said)]
    assert said_without_generating(ModelRequest(declined, [], 96)) != en.ANYTHING_ELSE


def _cinema(model: Any) -> Agent:
    def showtimes(film: Literal["Starfall", "Paper Moons"]) -> dict[str, str]:
        """Tonight's showtimes for a film, with the seats left at each"""
        return {"7:30 p.m.": "sold out"}

    def book_seats(film: Literal["Starfall", "Paper Moons"], seats: int, name: str) -> str:
        """Book seats for a film tonight, under the caller's name"""
        return "booked"

    return Agent(model=model, tools=[Tool(showtimes), Tool(book_seats, mutates=True)],
                 system_prompt="You answer the phone at a cinema.", config=LoopConfig.profile("voice"))


def test_a_question_about_what_a_write_would_take_is_answered_by_the_read(server: OpenAIServer) -> None:
    """"Are there any seats left for Starfall?" names the booking only by its object: a remote model that
    proposes the booking gets the read the caller's words fill instead, never a question for a name."""
    server.enqueue(tool_calls_reply([("c1", "book_seats", json.dumps({"film": "Starfall", "seats": 2,
                                                                       "name": "Lee"}))]),
                   text_reply("Starfall is sold out at 7:30."))
    model = OpenAICompatModel(model="test-model", base_url=server.base_url, timeout_s=5.0, max_retries=0)
    result = _cinema(model).run_sync("Are there any seats left for Starfall tonight?")
    assert [(o.call.name, o.call.arguments) for o in result.trajectory] == [("showtimes", {"film": "Starfall"})]


@pytest.mark.parametrize(("said", "pursued"), [
    ("Are there any seats left for Starfall tonight?", False),
    ("Can I book two seats for Starfall?", True),
    ("Two seats for Starfall please.", True),
])
def test_a_write_is_pursued_when_asked_for_not_asked_about(said: str, pursued: bool) -> None:
    agent = _cinema(ScriptedModel(["ok"]))
    request = agent.assembler.build([Message("user", said)], 0, 96)[0]
    _, missing = ground(request.tools, request.messages)
    assert ("book_seats" in pursued_writes(request, missing)) is pursued


def test_the_question_is_for_the_write_the_caller_gave_part_of_not_a_tool_they_gave_nothing_of() -> None:
    """"I need a plumber urgently, there's a leak": whichever tool a model names, the caller is asked for the
    callout's address (they gave its problem), not a job number for an arrival time they never asked about."""

    from loop.grounding._scope import scope_sentence
    from loop.grounding.phase import questions_for_missing
    from loop.types import ModelRequest

    def arrival_window(job_number: str) -> str:
        """When the plumber will arrive for an existing job, by its four-digit job number"""

    def book_callout(address: str, problem: Literal["leak", "blocked drain", "no hot water"]) -> str:
        """Send a plumber to the caller's street address for one of: leak, blocked drain, no hot water"""

    tools = [Tool(arrival_window).openai_schema(), Tool(book_callout, mutates=True).openai_schema()]

    def asks(said: str) -> dict[str, str]:
        request = ModelRequest([Message("user", said)], tools, 96, writes=frozenset({"book_callout"}))
        _, missing = ground(tools, request.messages)
        return questions_for_missing(request, missing, scope_sentence(request))

    urgent = asks("I need a plumber urgently, there's a leak coming through the ceiling!")
    assert urgent["arrival_window"].endswith("the address?") and urgent["book_callout"].endswith("the address?")
    waiting = asks("Hi, I'm waiting in for a plumber. When will they get here?")  # gave nothing of either
    assert waiting["arrival_window"].endswith("job number?")


def test_the_callers_answer_completes_the_call_it_was_asked_for_without_the_model(server: OpenAIServer,
                                                                                 tmp_path: Path) -> None:
    """"Could you tell me the order number?" - "It's 4567.": the lookup it was asked for is made on any model, not
    left to one that may talk instead; the model is asked only to say what it found."""
    from loop.grounding.tool_choice import ask_for

    server.enqueue(text_reply("Order 4567 has shipped."))
    agent, _ = _agent(server, tmp_path)
    lookup = next(t for t in agent.tools.values() if t.name == "lookup_order").openai_schema()
    history = [Message("user", "Where is my order?"), Message("assistant", ask_for(["order_id"], lookup))]
    result = agent.run_sync("It's 4567.", history=history)
    assert [(o.call.name, o.call.arguments) for o in result.trajectory] == [("lookup_order", {"order_id": "4567"})]
    assert len(server.requests) <= 1  # the call was made without asking; at most the answer was


def test_a_number_said_with_a_count_arguments_noun_is_that_arguments_alone() -> None:
    """"Actually, make it three passengers." to a taxi for 2 at 6 p.m.: 3 passengers, never "three" as the time
    (which made the change ambiguous, and a model then wrote "three passengers" as the pickup address); a house
    number is never a time either."""
    from loop.approvals import not_approved
    from loop.grounding._change import changed_call
    from loop.types import ModelRequest, ToolCall

    def book_taxi(pickup_address: Annotated[str, address()], time: Annotated[str, when()], passengers: int,
                  name: Annotated[str, person_name()]) -> str:
        """Book a taxi from a pickup street address at a time, for 1 to 6 passengers"""

    tools = [Tool(book_taxi, mutates=True).openai_schema()]
    first = "Can I book a cab from 8 Mill Street at six p.m. for two passengers? Name's Tom Baker."
    grounded, _ = ground(tools, [Message("user", first)])
    props = grounded[0]["function"]["parameters"]["properties"]
    assert props["passengers"] == {"enum": [2]} and "8" not in props["time"]["enum"]
    call = ToolCall("book_taxi", {"pickup_address": "8 Mill Street", "time": "6 p.m", "passengers": 2,
                                  "name": "Tom Baker"}, id="c1")
    change = "Actually, make it three passengers."
    messages = [Message("user", first), Message("assistant", "", [call]),
                Message("tool", not_approved("book_taxi", f"the caller asked for a change: {change!r}"),
                        tool_call_id="c1"), Message("user", change)]
    changed = changed_call(ModelRequest(messages, tools, 96, writes=frozenset({"book_taxi"})))
    assert changed is not None and changed.arguments == {**call.arguments, "passengers": 3}


def test_values_for_a_write_after_an_answer_are_its_next_question_not_the_scope() -> None:
    """Told the price of a tuning, the caller goes on with the date alone ("Wednesday the 22nd of July."): when the
    model's reply cannot be said (it echoed the date), the fallback asks for what the booking still lacks, never the
    scope sentence (set 6 dev through tiny.en)."""
    from loop.grounding.phase import _unknown_fallback
    from loop.types import ModelRequest, ToolCall

    def tuning_price(piano: Literal["upright", "grand"]) -> str:
        """What a tuning costs for a kind of piano"""

    def book_tuning(name: Annotated[str, person_name()], address: Annotated[str, address()],
                    date: Annotated[str, when(date=True)], piano: Literal["upright", "grand"]) -> str:
        """Book a tuner to come to the caller's home"""

    tools = [Tool(tuning_price).openai_schema(), Tool(book_tuning, mutates=True).openai_schema()]
    price = ToolCall("tuning_price", {"piano": "grand"}, id="p1")
    messages = [Message("user", "Could somebody come and tune our piano? It's a grand."),
                Message("assistant", "", [price]), Message("tool", "A grand is $160.", tool_call_id="p1"),
                Message("assistant", "Tuning a grand piano is $160."), Message("user", "Wednesday the 22nd of July.")]
    request = ModelRequest(messages, tools, 96, writes=frozenset({"book_tuning"}), scope="I only tune pianos.")
    asked = _unknown_fallback(request)
    assert "name" in asked and "address" in asked and "only" not in asked
    from loop.grounding._heard import value_pattern

    assert value_pattern("Wednesday the 22nd of July.", address=True) is None  # a date's day is no house number
    assert value_pattern("It's 22 Hill Road.", address=True) is not None
