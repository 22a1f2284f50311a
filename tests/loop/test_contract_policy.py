"""Issue 10, items 0, 2 and the no-approver part of 10: approval in the voice profile, policy on validated
arguments that fails closed, and an ASK nobody could answer."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from loop import (
    Decision,
    GuardrailHit,
    LoopConfig,
    Policy,
    Rule,
    RunOutcome,
    ScriptedModel,
    Severity,
    Tool,
    ToolCall,
)
from tests.helpers import Calls, agent, read_tool, write_tool
from voice.demo.order_desk import OrderDesk, order_policy


class Refund(BaseModel):
    order_id: str
    amount: float


def refund_tool(paid: list[tuple[str, float]]) -> Tool:
    def refund(order_id: str, amount: float) -> str:
        paid.append((order_id, amount))
        return f"refunded {amount} on {order_id}"

    return Tool(refund, args=Refund, mutates=True)


def asking(asked: list[tuple[str, str]], answer: bool = False):
    return lambda call, verdict: asked.append((call.name, verdict.rule)) or answer


# ---- item 0: mutations wait for a yes in the voice profile --------------------------------------


def test_voice_profile_holds_a_reversible_mutation_that_policy_allows_by_default() -> None:
    calls, asked = Calls(), []
    model = ScriptedModel([ToolCall("update_address", {"order_id": "1"}), "Okay, I left it as it was."])
    result = agent(model, [write_tool(calls, "update_address")], LoopConfig.profile("voice"),
                   approver=asking(asked)).run_sync("has my order shipped")
    assert asked == [("update_address", "profile.mutations_ask")]
    assert calls.log == []
    assert result.messages[2].content.startswith("The user declined update_address")
    assert LoopConfig.profile("voice").mutations_need_approval is True


def test_the_setting_is_a_loop_config_field_and_other_profiles_keep_their_default() -> None:
    calls, asked = Calls(), []
    tool = write_tool(calls, "update_address")
    agent(ScriptedModel([ToolCall("update_address", {"order_id": "1"}), "done"]), [tool],
          LoopConfig.profile("chat"), approver=asking(asked, True)).run_sync("x")
    assert asked == [] and calls.log == [("update_address", {"order_id": "1"})]
    config = LoopConfig.profile("chat", mutations_need_approval=True)
    agent(ScriptedModel([ToolCall("update_address", {"order_id": "2"}), "done"]), [tool], config,
          approver=asking(asked, True)).run_sync("x")
    assert asked == [("update_address", "profile.mutations_ask")]


def test_a_rule_that_names_the_mutation_pre_approves_it_and_a_grant_does_too() -> None:
    calls, asked = Calls(), []
    tool = write_tool(calls, "update_address")
    policy = Policy(rules=[Rule("address.pre_approved", "update_address", Decision.ALLOW, "caller verified")])
    agent(ScriptedModel([ToolCall("update_address", {"order_id": "1"}), "done"]), [tool],
          LoopConfig.profile("voice"), policy=policy, approver=asking(asked)).run_sync("x")
    granted = Policy()
    granted.grant("update_address")
    agent(ScriptedModel([ToolCall("update_address", {"order_id": "2"}), "done"]), [tool],
          LoopConfig.profile("voice"), policy=granted, approver=asking(asked)).run_sync("x")
    assert asked == [] and [a["order_id"] for _, a in calls.log] == ["1", "2"]


def test_demo_policy_on_a_voice_call_asks_before_a_misheard_address_change(tmp_path: Path) -> None:
    """The reported call: "has my order shipped?" misheard, and the model proposes update_address."""
    desk, asked = OrderDesk(tmp_path / "orders.db"), []
    misheard = ToolCall("update_address", {"order_id": "1234", "address": "as my order shift"})
    model = ScriptedModel([[ToolCall("lookup_order", {"order_id": "1234"}), misheard], "Okay."])
    result = agent(model, desk.tools(), LoopConfig.profile("voice"), policy=order_policy(),
                   approver=asking(asked)).run_sync("has my order one two three four shipped")
    assert asked == [("update_address", "profile.mutations_ask")]  # the read was not asked about
    assert desk.db.execute("SELECT address FROM orders WHERE id='1234'").fetchone()[0] == ""
    assert [o.call.name for o in result.trajectory] == ["lookup_order"]


# ---- item 2: policy judges the validated arguments and fails closed ----------------------------


def test_a_deny_rule_is_not_bypassed_by_a_number_sent_as_a_string() -> None:
    paid: list[tuple[str, float]] = []
    policy = Policy(rules=[Rule("refund.limit", "refund", Decision.DENY, "over $100",
                                when=lambda a: a["amount"] > 100)])
    batch = [ToolCall("refund", {"order_id": "1", "amount": 500}), ToolCall("refund", {"order_id": "2",
                                                                                      "amount": "500"})]
    result = agent(ScriptedModel([batch, "done"]), [refund_tool(paid)], policy=policy).run_sync("x")
    assert paid == []
    assert [m.content for m in result.messages if m.role == "tool"] == [
        "Denied by policy (refund.limit): over $100. Do not retry; tell the user or try another way."] * 2


def test_a_condition_that_raises_fails_closed_and_names_its_rule() -> None:
    paid: list[tuple[str, float]] = []
    events: list = []
    policy = Policy(rules=[Rule("refund.vip", "refund", Decision.DENY, when=lambda a: a["tier"] == "vip")])
    result = agent(ScriptedModel([ToolCall("refund", {"order_id": "1", "amount": 5}), "done"]),
                   [refund_tool(paid)], policy=policy, listeners=[events.append]).run_sync("x")
    assert paid == []
    verdict = next(e.payload for e in events if e.kind == "verdict")
    assert (verdict["decision"], verdict["rule"]) == ("DENY", "refund.vip")
    assert "could not check these arguments (KeyError" in verdict["reason"]
    assert result.messages[2].content.startswith("Denied by policy (refund.vip): rule refund.vip could not check")


def test_a_raising_condition_on_an_ask_or_allow_rule_asks_a_human() -> None:
    paid: list[tuple[str, float]] = []
    asked: list[tuple[str, str]] = []
    policy = Policy(rules=[Rule("refund.small", "refund", Decision.ALLOW, when=lambda a: a["missing"] < 10)])
    agent(ScriptedModel([ToolCall("refund", {"order_id": "1", "amount": 5}), "done"]), [refund_tool(paid)],
          policy=policy, approver=asking(asked)).run_sync("x")
    assert asked == [("refund", "refund.small")] and paid == []


def test_guardrails_see_the_arguments_the_tool_will_receive() -> None:
    seen: list[object] = []

    class Limit:
        name = "limit"

        def check(self, call, tool, ctx):
            seen.append(call.arguments["amount"])
            amount = call.arguments["amount"]
            return GuardrailHit(Severity.BLOCK, "too much", self.name) if amount > 100 else None

    paid: list[tuple[str, float]] = []
    agent(ScriptedModel([ToolCall("refund", {"order_id": "1", "amount": "500"}), "done"]), [refund_tool(paid)],
          guardrails=[Limit()]).run_sync("x")
    assert seen == [500.0] and paid == []


# ---- item 10: with no approver, an ASK is not "the user declined" ------------------------------


def test_an_ask_with_no_approver_says_nobody_was_asked() -> None:
    calls, events = Calls(), []
    policy = Policy(rules=[Rule("wipe.ask", "wipe", Decision.ASK, "wiping needs a yes")])
    result = agent(ScriptedModel([ToolCall("wipe", {"order_id": "1"}), "ok"]), [write_tool(calls, "wipe")],
                   LoopConfig.profile("chat"), policy=policy, listeners=[events.append]).run_sync("x")
    assert calls.log == []
    assert result.messages[2].content == ("wipe needs approval (wiping needs a yes) and no one can approve it in "
                                          "this run, so it was not done. Tell the user it needs approval.")
    assert "declined" not in result.messages[2].content
    approval = next(e.payload for e in events if e.kind == "approval")
    assert approval["approved"] is False and approval["asked"] is False
    stopped = agent(ScriptedModel([ToolCall("wipe", {"order_id": "1"}), "ok"]), [write_tool(calls, "wipe")],
                    LoopConfig.profile("task"), policy=policy).run_sync("x")
    assert stopped.outcome is RunOutcome.APPROVAL_DENIED
    assert stopped.reason == "wipe needed approval and no approver is configured, so nobody was asked"


def test_reads_are_never_held_for_approval_in_the_voice_profile() -> None:
    calls, asked = Calls(), []
    agent(ScriptedModel([ToolCall("lookup_order", {"order_id": "1"}), "shipped"]), [read_tool(calls)],
          LoopConfig.profile("voice"), approver=asking(asked)).run_sync("x")
    assert asked == [] and len(calls.log) == 1
