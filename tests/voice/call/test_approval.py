"""voice.call.approval: questions that sound like a person (the answers: tests/voice/call/test_answers.py)."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest
from pydantic import BaseModel, Field

from loop import Agent, LoopConfig, ScriptedModel, Tool, ToolCall
from tests.fakes import LoudnessVAD, ScriptedSTT, WordChunker, track
from tests.helpers import labelled
from voice.call.approval import action_phrase, confirmation_question, verb_phrase
from voice.demo.order_desk import OrderDesk, order_policy
from voice.runtime.session import CallSession
from voice.speech.spoken import SpokenForm, SpokenTTS

SPEAK = SpokenForm().speak

@pytest.fixture()
def desk_tools(tmp_path: Path) -> dict[str, Tool]:
    return {tool.name: tool for tool in OrderDesk(tmp_path / "orders.db").tools()}


DEMO_QUESTIONS = [
    (ToolCall("issue_refund", {"order_id": "4567", "amount": 20}),
     "Just to confirm: refund $20 on order 4567?",
     "Just to confirm: refund twenty dollars on order four five six seven?"),
    (ToolCall("issue_refund", {"order_id": "4567", "amount": "19.99"}),
     "Just to confirm: refund $19.99 on order 4567?",
     "Just to confirm: refund nineteen dollars and ninety-nine cents on order four five six seven?"),
    (ToolCall("issue_refund", {"order_id": "7788", "amount": 1250.0}),
     "Just to confirm: refund $1,250 on order 7788?",
     "Just to confirm: refund one thousand two hundred fifty dollars on order seven seven eight eight?"),
    (ToolCall("update_address", {"order_id": "4567", "address": "1 Rua Nova, Lisbon"}),
     "Just to confirm: send order 4567 to 1 Rua Nova, Lisbon?",
     "Just to confirm: send order four five six seven to one Rua Nova, Lisbon?"),
]


@pytest.mark.parametrize(("call", "written", "spoken"), DEMO_QUESTIONS)
def test_demo_tools_ask_in_their_own_words(desk_tools: dict[str, Tool], call: ToolCall, written: str,
                                           spoken: str) -> None:
    question = confirmation_question(call, desk_tools[call.name])
    assert question == written  # what the transcript shows
    assert SPEAK(question) == spoken  # what the caller hears


DERIVED = [  # the demo tools without their `confirm` template: the phrase comes from the description
    (ToolCall("issue_refund", {"order_id": "4567", "amount": 20}), "refund $20 for order 4567"),
    (ToolCall("update_address", {"order_id": "4567", "address": "1 Rua Nova"}),
     "change the delivery address of order 4567 to 1 Rua Nova"),
    (ToolCall("lookup_order", {"order_id": "4567"}), "look up order 4567's status and total by its number"),
    (ToolCall("delivery_status", {"city": "Phoenix"}), "delivery status of orders going to Phoenix"),
    (ToolCall("transfer_to_human", {"reason": "billing dispute"}),
     "hand the call to a human agent with reason billing dispute"),
]


@pytest.mark.parametrize(("call", "phrase"), DERIVED)
def test_without_a_template_the_description_gives_the_phrase(desk_tools: dict[str, Tool], call: ToolCall,
                                                             phrase: str) -> None:
    tool = dataclasses.replace(desk_tools[call.name], confirm="")
    assert action_phrase(call, tool) == phrase


UNKNOWN = [  # no Tool at all: the name and the arguments
    (ToolCall("issue_refund", {"order_id": "4567", "amount": 20}), "issue refund of $20 for order 4567"),
    (ToolCall("cancel_subscription", {"subscription_id": "S-88"}), "cancel subscription S-88"),
    (ToolCall("reset_password", {}), "reset password"),
    (ToolCall("send_sms", {"phone": "555-0134", "text": "hi"}), "send sms with phone 555-0134 and text hi"),
    (ToolCall("close_ticket", {"ticket_id": 12, "notify": True}), "close ticket 12 with notify yes"),
]


@pytest.mark.parametrize(("call", "phrase"), UNKNOWN)
def test_an_unknown_tool_is_asked_about_by_name(call: ToolCall, phrase: str) -> None:
    assert action_phrase(call) == phrase
    assert confirmation_question(call) == f"Just to confirm: {phrase}?"


class ChargeArgs(BaseModel):
    customer_id: str
    fee: float = Field(description="Fee in US dollars")


def test_a_docstring_description_and_a_money_argument_named_by_its_schema() -> None:
    def charge_card(customer_id: str, fee: float) -> str:
        """Charges a late fee to the customer's card. Cannot be undone.

        Long details the caller never needs to hear.
        """
        return "ok"

    tool = Tool(charge_card, args=ChargeArgs, mutates=True)
    call = ToolCall("charge_card", {"customer_id": "C12", "fee": 7.5, "idempotency_key": "call_1"})
    assert confirmation_question(call, tool) == "Just to confirm: charge a late fee to customer C12's card of $7.50?"
    assert SPEAK(confirmation_question(call, tool)) == (
        "Just to confirm: charge a late fee to customer C twelve's card of seven dollars and fifty cents?")


def test_a_template_naming_a_missing_argument_falls_back_to_the_description() -> None:
    tool = Tool(lambda order_id: order_id, name="void_order", description="Void an order",
                args={"type": "object", "properties": {"order_id": {"type": "string"}}},
                confirm="void order {order_id} for {reason}")
    assert action_phrase(ToolCall("void_order", {"order_id": "4567"}), tool) == "void order 4567"


def test_the_field_is_optional_and_not_shown_to_the_model() -> None:
    tool = Tool(lambda: None, name="noop")
    assert tool.confirm == ""
    assert "confirm" not in str(tool.openai_schema())


VERB_PHRASES = [
    ("Refunds money for an order. Irreversible.", "x", "refund money for an order"),
    ("Use this to cancel a booking", "x", "cancel a booking"),
    ("Pushes a notification to the caller", "x", "push a notification to the caller"),
    ("Status of a parcel", "x", "status of a parcel"),
    ("SMS the caller a link", "x", "SMS the caller a link"),
    ("", "issue_refund", "issue refund"),
    ("Applies the discount; only once", "x", "apply the discount"),
]


@pytest.mark.parametrize(("description", "name", "phrase"), VERB_PHRASES)
def test_verb_phrase(description: str, name: str, phrase: str) -> None:
    assert verb_phrase(description, name) == phrase


class RecordingTTS:
    def __init__(self) -> None:
        self.heard: list[str] = []

    def synthesize(self, text: str) -> np.ndarray:
        self.heard.append(text)
        return np.zeros(1280 * len(text.split()), dtype=np.int16)


def test_in_a_call_the_caller_hears_words_and_the_trace_keeps_what_was_written(tmp_path: Path) -> None:
    desk = OrderDesk(tmp_path / "orders.db")
    script = [ToolCall("issue_refund", {"order_id": "4567", "amount": 20}), "Refunded $20.00 on order 4567."]
    agent = Agent(model=ScriptedModel(script), tools=desk.tools(), policy=order_policy(),
                  config=LoopConfig.profile("voice"), journal_path=str(tmp_path / "j.db"))
    engine = RecordingTTS()
    stt = ScriptedSTT({60: "refund twenty dollars on order 4567.", 12: "yes please."})
    session = CallSession(agent, LoudnessVAD(), stt, SpokenTTS(engine), WordChunker)
    asyncio.run(session.run_file(track((0.2, 60), (6.0, 12), total_s=12.0)))
    said = " ".join(e["text"] for e in session.trace if e["kind"] == "agent_said")
    assert "$20" in said and "4567" in said  # the trace and transcript: as written
    heard = " ".join(engine.heard)
    assert "twenty dollars" in heard and "four five six seven" in heard
    assert not any(ch.isdigit() for ch in heard)  # the caller: as spoken
    assert desk.db.execute("SELECT order_id, amount FROM refunds").fetchall() == [("4567", 20.0)]


def test_a_spanish_write_without_a_template_is_asked_in_spanish() -> None:
    """A Spanish tool with no `confirm` template: its description and arguments joined by Spanish words, never
    "with ... and" (nor its "a nombre" read as the English article "a")."""
    from loop.locale import es

    def reservar_medicamento(medicamento: str, cajas: int, nombre: str, urgente: bool) -> str:
        """Reserva cajas de un medicamento a nombre del cliente"""

    call = ToolCall("reservar_medicamento", {"medicamento": "ibuprofeno", "cajas": 2, "nombre": "Ana Torres",
                                             "urgente": True})
    question = confirmation_question(call, Tool(reservar_medicamento, mutates=True), es)
    assert question.startswith("Solo para confirmar: ¿reserva cajas de ibuprofeno a nombre del cliente con ")
    assert " y nombre Ana Torres" in question and "urgente sí" in question
    assert not re.search(r"\b(?:with|and|yes)\b", question)


@pytest.mark.parametrize(("language", "template", "value", "phrase"), [
    (row[0], *row[1].split("\t")) for row in labelled("articles.tsv")])
def test_a_confirm_templates_article_agrees_with_the_value(language: str, template: str, value: str,
                                                          phrase: str) -> None:
    """tests/data/articles.tsv: "book a {visit} visit" with "annual service" is asked as "book an annual service
    visit" (set 6: an author's template read "a annual"); Spanish keeps its template's own article."""
    from loop import locale

    def book(visit: str = "", size: str = "", boat: str = "", cake: str = "", item: str = "", name: str = "",
             caja: str = "") -> str:
        """Book it"""
        return "ok"

    keys = re.findall(r"\{(\w+)\}", template)
    arguments = {key: value if i == 0 else "Ann" for i, key in enumerate(keys)}
    tool = Tool(book, mutates=True, confirm=template)
    assert action_phrase(ToolCall("book", arguments), tool, locale.get(language)) == phrase


@pytest.mark.parametrize(("language", "template", "description", "amount", "phrase"), [
    (row[0], *row[1].split("\t")) for row in labelled("money_written.tsv")])
def test_an_amount_is_written_in_the_currency_the_tools_own_words_name(language: str, template: str,
                                                                      description: str, amount: str,
                                                                      phrase: str) -> None:
    """tests/data/money_written.tsv: "pay {amount} pounds" asks "pay 414 pounds", never "pay $414 pounds" (set 7's
    council tax); a description in pounds writes "£20"; nothing named, the pack's first currency."""
    from loop import locale

    def pay(amount: float, account: str) -> str:
        return "ok"

    tool = Tool(pay, name="pay", description=description, mutates=True, confirm=template or None)
    said = action_phrase(ToolCall("pay", {"amount": float(amount), "account": "NB1"}), tool, locale.get(language))
    assert said == phrase


def test_a_yes_may_name_the_currency_its_question_wrote_as_a_symbol() -> None:
    from voice.call.answers import Answer, AnswerContext, read_answer

    question = "Just to confirm: refund £20 on account NB1?"
    ctx = AnswerContext.of(question, {"amount": 20, "account": "NB1"}, ["refund"])
    assert read_answer("Yes, refund the twenty pounds.", ctx).answer == Answer.YES
    assert read_answer("Yes, refund the twenty euros.", ctx).answer != Answer.YES
