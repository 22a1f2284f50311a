"""The grounded-arguments guardrail: a mutation may only use ids and amounts someone actually said."""

from __future__ import annotations

import pytest

from loop import LoopConfig, RunOutcome, ScriptedModel, ToolCall
from loop.policy.guardrails import GroundedArguments, spoken_values
from tests.helpers import agent
from voice.demo.order_desk import OrderDesk


@pytest.mark.parametrize(("text", "value"), [
    ("order 4567", 4567), ("order 4 5 6 7", 4567), ("$20", 20), ("$20.50", 20.5), ("twenty dollars", 20),
    ("four five six seven", 4567), ("one hundred and twenty dollars", 120), ("two thousand twenty", 2020),
    ("twelve dollars and fifty cents", 12.5),
])
def test_spoken_values(text: str, value: float) -> None:
    numbers, _ = spoken_values(text)
    assert float(value) in numbers


def test_invented_refund_for_an_address_change_is_blocked(tmp_path) -> None:
    # the exact case measured with the 1.5B: "change my delivery address" -> issue_refund("1234", 20)
    desk = OrderDesk(tmp_path / "orders.db")
    model = ScriptedModel([ToolCall("issue_refund", {"order_id": "1234", "amount": 20}),
                           "Which order is it, and what is the new address?"])
    result = agent(model, desk.tools(), LoopConfig.profile("chat"), guardrails=[GroundedArguments()],
                   approver=lambda c, v: True).run_sync("I want to change my delivery address.")
    assert result.outcome is RunOutcome.COMPLETED
    assert result.messages[2].content == (
        "Blocked by grounded_arguments: order_id='1234', amount=20 did not come from the caller or from an earlier "
        "tool result. Ask the caller for the missing details; do not guess them.")
    assert desk.db.execute("SELECT count(*) FROM refunds").fetchone()[0] == 0


def test_grounded_refund_passes_with_words_and_tool_results(tmp_path) -> None:
    desk = OrderDesk(tmp_path / "orders.db")
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": "4567"}),
                           ToolCall("issue_refund", {"order_id": "4567", "amount": 59.9}), "Done."])
    result = agent(model, desk.tools(), LoopConfig.profile("chat"), guardrails=[GroundedArguments()],
                   approver=lambda c, v: True).run_sync("Please refund my whole order, four five six seven.")
    # 59.90 was never said by the caller but came from the lookup result: grounded
    assert result.outcome is RunOutcome.COMPLETED
    assert desk.db.execute("SELECT order_id, amount FROM refunds").fetchall() == [("4567", 59.9)]


def test_reads_are_never_blocked(tmp_path) -> None:
    desk = OrderDesk(tmp_path / "orders.db")
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": "9999"}), "No such order."])
    result = agent(model, desk.tools(), guardrails=[GroundedArguments()]).run_sync("hi")
    assert result.messages[2].content.startswith("I can't find an order 9999")
