"""Agents that are not the demo, written the way the README teaches (tests/plain_agents.py: plain functions
returning plain data), in text conversations with the real embedded model (Qwen2.5-Coder 0.5B on llama.cpp):
the right tool with the right argument, a question when something is missing, the scope sentence when asked
about something else, and no invented fact. Needs llama-cpp-python and the 0.5B weights; skipped without them.
The quick ones run in the default suite (one shared model, a few seconds each); the rest are `-m slow`."""

from __future__ import annotations

import re
from typing import Any

import pytest

from loop import Budget, LoopConfig
from loop.testing import Conversation
from tests import plain_agents as pa
from tests.helpers import embedded_model

# the voice profile, with time enough that a busy 2-core machine evaluating a new agent's prompt is no timeout
CONFIG = LoopConfig.profile("voice", model_timeout_s=60.0, budget=Budget.of(
    turns=4, tokens=16_000, wall_clock_s=120, cost_usd=0.10, tool_calls=8))

_FACT = re.compile(r"\d|\b(?:sunny|rain\w*|degrees|cloud\w*|dollars?|pounds?)\b", re.IGNORECASE)


@pytest.fixture(scope="module")
def model() -> Any:
    return embedded_model()


def _talk(model: Any, agent: str, approve: bool = False) -> Conversation:
    return Conversation(pa.AGENTS[agent](model, CONFIG), approve=approve)


def _said(turn: Any) -> str:
    return " ".join(turn.record.said)


def test_a_job_number_is_looked_up_and_its_status_said(model: Any) -> None:
    turn = _talk(model, "garage").say_sync("Hi, can you check job 4521 for me?")
    turn.expect.called("repair_status", job_number="4521").executed("repair_status")
    turn.expect.said(("parts", "Thursday", "Ford"))


def test_a_clipped_request_without_the_job_number_is_asked_for_it(model: Any) -> None:
    turn = _talk(model, "garage").say_sync("check on my repair please")  # the caller's first words cut off
    turn.expect.not_called().said("job number")


def test_a_question_no_tool_covers_gets_the_scope_sentence_not_a_forecast(model: Any) -> None:
    turn = _talk(model, "garage").say_sync("What will the weather be like tomorrow?")
    turn.expect.not_called().said("only help with").not_said(("sunny", "rain", "degrees"))


def test_a_report_needs_the_account_number(model: Any) -> None:
    turn = _talk(model, "outage").say_sync("I want to report a power cut.")
    turn.expect.not_called().said("account number")


def test_a_day_only_the_write_holds_makes_the_write_not_the_read(model: Any) -> None:
    """"Bring parcel SB48207315 on Tuesday instead": the code fills the tracking read too, but only the write has
    a place for the Tuesday (tests/loop/grounding/test_grounding_tool_choice.py); the write is proposed, and here
    declined."""
    turn = _talk(model, "courier").say_sync("I won't be in today. Can you bring parcel SB48207315 on Tuesday instead?")
    turn.expect.called("rearrange_delivery", day="tuesday")


@pytest.mark.slow
def test_an_outage_is_looked_up_by_postcode(model: Any) -> None:
    turn = _talk(model, "outage").say_sync("Is there a power cut at LS6 2AB?")
    turn.expect.executed("outage_status").said(("power", "LS6", "6"))
    assert "LS6" in turn.record.tool_calls[0]["arguments"]["postcode"].upper()


@pytest.mark.slow
def test_the_hotel_answers_the_capital_of_france_with_what_it_is_for(model: Any) -> None:
    turn = _talk(model, "hotel").say_sync("What is the capital of France?")
    turn.expect.not_called().said("only help with").not_said("Paris")


@pytest.mark.slow
def test_a_room_is_looked_up_for_the_nights_asked(model: Any) -> None:
    turn = _talk(model, "hotel").say_sync("Do you have a room from Friday for two nights?")
    turn.expect.called("room_availability", nights=2).executed("room_availability")


@pytest.mark.slow
def test_the_pizza_menu_comes_from_the_tool(model: Any) -> None:
    turn = _talk(model, "pizza").say_sync("What pizzas do you have?")
    turn.expect.executed("menu").said(("margherita", "pepperoni", "veggie"))


@pytest.mark.slow
def test_an_order_without_its_number_is_asked_for_it_then_looked_up(model: Any) -> None:
    talk = _talk(model, "pizza")
    talk.say_sync("Where is my order?").expect.not_called().said("order number")
    talk.say_sync("It's three one one.").expect.called("order_status", order_number=311).said("ten minutes")


@pytest.mark.slow
def test_a_price_nobody_gave_is_never_said(model: Any) -> None:
    turn = _talk(model, "garage").say_sync("How much will my repair cost?")
    turn.expect.not_called()
    assert not _FACT.search(_said(turn)), _said(turn)
