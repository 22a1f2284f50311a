"""Each of the eight terminal outcomes, forced with a scripted model, compared as whole transcripts."""

from __future__ import annotations

from loop import (
    Budget,
    Decision,
    Escalated,
    GuardrailHit,
    LoopConfig,
    Policy,
    Rule,
    RunOutcome,
    ScriptedModel,
    ScriptedTurn,
    Severity,
    Tool,
    ToolCall,
)
from loop.errors import ModelUnavailable
from tests.helpers import Calls, agent, read_tool, transcript, write_tool


def test_completed_after_a_read() -> None:
    calls = Calls()
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": "42"}), "Order 42 has shipped."])
    result = agent(model, [read_tool(calls)]).run_sync("Where is order 42?")
    assert transcript(result) == """\
user: Where is order 42?
assistant: -> lookup_order({"order_id":"42"})
tool[lookup_order]: {"order_id": "42", "status": "shipped"}
assistant: Order 42 has shipped.
=> COMPLETED: the model gave a final answer"""
    assert result.answer == "Order 42 has shipped."
    assert [o.call.name for o in result.trajectory] == ["lookup_order"]


def test_budget_exhausted_names_the_dimension() -> None:
    calls = Calls()
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": str(i)}) for i in range(5)])
    config = LoopConfig.profile("task", budget=Budget.of(turns=2))
    result = agent(model, [read_tool(calls)], config).run_sync("look everything up")
    assert result.outcome is RunOutcome.BUDGET_EXHAUSTED
    assert result.reason == "turn refused on turns: consumed 2 + reserved 1 > ceiling 2"
    assert len(calls.log) == 2


def test_guardrail_stop_runs_nothing_in_the_batch() -> None:
    class NoDrop:
        name = "no_drop"

        def check(self, call, tool, ctx):
            if call.arguments.get("order_id") == "DROP":
                return GuardrailHit(Severity.HALT, "looks like an injection attempt", self.name)
            return None

    calls = Calls()
    batch = [ToolCall("cancel_order", {"order_id": "1"}), ToolCall("lookup_order", {"order_id": "2"}),
             ToolCall("cancel_order", {"order_id": "DROP"})]
    result = agent(ScriptedModel([batch]), [read_tool(calls), write_tool(calls)], guardrails=[NoDrop()]).run_sync("x")
    assert result.outcome is RunOutcome.GUARDRAIL_STOP
    assert result.reason == "no_drop: looks like an injection attempt"
    assert calls.log == []  # the HALT on the third call stopped the first two too
    assert [m.role for m in result.messages].count("tool") == 3  # still one observation per call


def test_loop_detected() -> None:
    calls = Calls()
    same = [ToolCall("lookup_order", {"order_id": "7"})] * 5
    result = agent(ScriptedModel(same), [read_tool(calls)]).run_sync("find 7")
    assert result.outcome is RunOutcome.LOOP_DETECTED
    assert "proposed 3 times in a row" in result.reason
    assert len(calls.log) == 2  # the third identical proposal is not executed


def test_approval_denied_when_the_profile_stops_on_decline() -> None:
    calls = Calls()
    model = ScriptedModel([ToolCall("refund", {"order_id": "9"}), "ok"])
    tool = write_tool(calls, "refund", reversible=False)
    result = agent(model, [tool], approver=lambda call, verdict: False).run_sync("refund 9")
    assert result.outcome is RunOutcome.APPROVAL_DENIED
    assert result.reason == "the user declined refund"
    assert calls.log == []


def test_escalated_when_a_tool_hands_over() -> None:
    def transfer_to_human(reason: str) -> str:
        raise Escalated(f"caller asked for a person: {reason}")

    tool = Tool(transfer_to_human, args={"type": "object", "properties": {"reason": {"type": "string"}}})
    model = ScriptedModel([ToolCall("transfer_to_human", {"reason": "billing dispute"})])
    result = agent(model, [tool]).run_sync("let me talk to someone")
    assert result.outcome is RunOutcome.ESCALATED
    assert result.reason == "caller asked for a person: billing dispute"


def test_tool_failure_after_consecutive_failures() -> None:
    def flaky(order_id: str) -> str:
        raise ConnectionError("upstream refused the connection")

    tool = Tool(flaky, name="lookup_order", args={"type": "object", "properties": {"order_id": {"type": "string"}}})
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": str(i)}) for i in range(5)])
    result = agent(model, [tool]).run_sync("x")
    assert result.outcome is RunOutcome.TOOL_FAILURE
    assert result.reason.startswith("lookup_order failed 3 times in a row; last: lookup_order failed: upstream")


def test_tool_failure_when_the_model_provider_stays_down() -> None:
    model = ScriptedModel([ScriptedTurn(error=ModelUnavailable("HTTP 503 after 3 retries"))])
    result = agent(model, []).run_sync("hello")
    assert result.outcome is RunOutcome.TOOL_FAILURE
    assert result.reason == "model scripted: HTTP 503 after 3 retries"


def test_error_is_a_harness_defect_with_a_reason() -> None:
    result = agent(ScriptedModel([]), []).run_sync("hello")
    assert result.outcome is RunOutcome.ERROR
    assert result.reason == "ScriptExhausted: the script has 0 turns; the loop asked for turn 1"


def test_the_outcome_set_is_closed() -> None:
    assert [o.value for o in RunOutcome] == ["COMPLETED", "BUDGET_EXHAUSTED", "GUARDRAIL_STOP", "LOOP_DETECTED",
                                             "APPROVAL_DENIED", "ESCALATED", "TOOL_FAILURE", "ERROR"]


def test_decline_is_an_observation_in_conversational_profiles() -> None:
    calls = Calls()
    model = ScriptedModel([ToolCall("refund", {"order_id": "9"}), "Okay, I won't refund it."])
    policy = Policy(rules=[Rule("refunds.ask", "refund", Decision.ASK, "refunds need the caller's yes")])
    result = agent(model, [write_tool(calls, "refund")], LoopConfig.profile("chat"), policy=policy,
                   approver=lambda c, v: False).run_sync("refund 9")
    assert transcript(result) == """\
user: refund 9
assistant: -> refund({"order_id":"9"})
tool[refund]: The user declined refund: refunds need the caller's yes. It was not done.
assistant: Okay, I won't refund it.
=> COMPLETED: the model gave a final answer"""
    assert result.trajectory == []
