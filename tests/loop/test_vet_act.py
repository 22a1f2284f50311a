"""Vet the whole batch, then act: reads concurrently, writes serially, observations in proposal order."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from loop import Decision, GuardrailHit, LoopConfig, Policy, Rule, RunOutcome, ScriptedModel, Severity, Tool, ToolCall
from tests.helpers import ORDER_SCHEMA, Calls, agent, read_tool, transcript, write_tool


def test_reads_run_concurrently_then_writes_serially_and_observations_keep_proposal_order() -> None:
    calls = Calls()
    slow = read_tool(calls, "slow_read", delay=0.05, result="slow")
    fast = read_tool(calls, "fast_read", delay=0.0, result="fast")
    batch = [ToolCall("cancel_order", {"order_id": "w1"}), ToolCall("slow_read", {"order_id": "a"}),
             ToolCall("fast_read", {"order_id": "b"}), ToolCall("cancel_order", {"order_id": "w2"})]
    result = agent(ScriptedModel([batch, "done"]), [slow, fast, write_tool(calls)]).run_sync("x")
    assert result.outcome is RunOutcome.COMPLETED
    # reads were dispatched together (slow started before fast finished), writes after them, in order
    assert [n for n, _ in calls.log] == ["slow_read", "fast_read", "cancel_order", "cancel_order"]
    assert calls.peak == 2
    assert [a["order_id"] for n, a in calls.log if n == "cancel_order"] == ["w1", "w2"]
    assert [m.content for m in result.messages if m.role == "tool"] == [
        "cancel_order done for w1", "slow", "fast", "cancel_order done for w2"]


def test_parallel_reads_are_bounded() -> None:
    calls = Calls()
    batch = [ToolCall("lookup_order", {"order_id": str(i)}) for i in range(6)]
    config = LoopConfig.profile("task", max_parallel_reads=2)
    agent(ScriptedModel([batch, "done"]), [read_tool(calls, delay=0.01)], config).run_sync("x")
    assert calls.peak == 2 and len(calls.log) == 6


def test_parallel_reads_off_runs_one_at_a_time() -> None:
    calls = Calls()
    batch = [ToolCall("lookup_order", {"order_id": str(i)}) for i in range(3)]
    config = LoopConfig.profile("task", parallel_reads=False)
    agent(ScriptedModel([batch, "done"]), [read_tool(calls, delay=0.01)], config).run_sync("x")
    assert calls.peak == 1


def test_policy_allow_deny_ask_with_named_rules_and_sync_or_async_approver() -> None:
    calls = Calls()
    policy = Policy(rules=[
        Rule("refund.too_large", "refund", Decision.DENY, "refunds above $500 need a supervisor",
             when=lambda a: a["order_id"] == "big"),
        Rule("refund.ask", "refund", Decision.ASK, "refunds need the caller's confirmation"),
    ])
    asked = []

    async def approver(call, verdict):
        await asyncio.sleep(0)
        asked.append((call.arguments["order_id"], verdict.rule))
        return call.arguments["order_id"] == "yes"

    batch = [ToolCall("refund", {"order_id": "big"}), ToolCall("refund", {"order_id": "yes"}),
             ToolCall("refund", {"order_id": "no"}), ToolCall("lookup_order", {"order_id": "1"})]
    events = []
    result = agent(ScriptedModel([batch, "done"]), [write_tool(calls, "refund"), read_tool(calls)],
                   LoopConfig.profile("chat"), policy=policy, approver=approver,
                   listeners=[events.append]).run_sync("x")
    assert asked == [("yes", "refund.ask"), ("no", "refund.ask")]
    assert transcript(result).splitlines()[2:6] == [
        "tool[refund]: Denied by policy (refund.too_large): refunds above $500 need a supervisor. "
        "Do not retry; tell the user or try another way.",
        "tool[refund]: refund done for yes",
        "tool[refund]: The user declined refund: refunds need the caller's confirmation. It was not done.",
        'tool[lookup_order]: {"order_id": "1", "status": "shipped"}',
    ]
    verdicts = [(e.payload["decision"], e.payload["rule"]) for e in events if e.kind == "verdict"]
    assert verdicts == [("DENY", "refund.too_large"), ("ASK", "refund.ask"), ("ASK", "refund.ask"),
                        ("ALLOW", "default")]
    assert [(o.call.name, o.executed) for o in result.trajectory] == [("lookup_order", True), ("refund", True)]


def test_irreversible_mutation_is_tightened_to_ask_unless_granted() -> None:
    calls = Calls()
    tool = write_tool(calls, "wipe", reversible=False)
    seen = []
    approver = lambda call, verdict: seen.append(verdict.rule) or True  # noqa: E731
    agent(ScriptedModel([ToolCall("wipe", {"order_id": "1"}), "ok"]), [tool], approver=approver).run_sync("x")
    assert seen == ["tool.irreversible"]
    policy = Policy()
    policy.grant("wipe")
    seen.clear()
    agent(ScriptedModel([ToolCall("wipe", {"order_id": "2"}), "ok"]), [tool], policy=policy,
          approver=approver).run_sync("x")
    assert seen == [] and calls.log[-1] == ("wipe", {"order_id": "2"})


def test_no_approver_means_ask_declines() -> None:
    calls = Calls()
    tool = write_tool(calls, "wipe", reversible=False)
    result = agent(ScriptedModel([ToolCall("wipe", {"order_id": "1"}), "ok"]), [tool],
                   LoopConfig.profile("chat")).run_sync("x")
    # issue 10: not run, and not recorded as "the user declined" since nobody was asked
    assert calls.log == [] and result.messages[2].content.startswith("wipe needs approval")


def test_guardrail_block_refuses_one_call_and_keeps_the_rest() -> None:
    class BlockSeven:
        name = "no_seven"

        def check(self, call, tool, ctx):
            return GuardrailHit(Severity.BLOCK, "order 7 is locked", self.name) if call.arguments.get(
                "order_id") == "7" else None

    calls = Calls()
    batch = [ToolCall("lookup_order", {"order_id": "7"}), ToolCall("lookup_order", {"order_id": "8"})]
    result = agent(ScriptedModel([batch, "ok"]), [read_tool(calls)], guardrails=[BlockSeven()]).run_sync("x")
    assert calls.log == [("lookup_order", {"order_id": "8"})]
    assert result.messages[2].content == "Blocked by no_seven: order 7 is locked"


def test_failures_become_actionable_sentences_one_per_action() -> None:
    class Refund(BaseModel):
        order_id: str
        amount: float

    def refund(order_id: str, amount: float) -> str:
        return "ok"

    def broken(order_id: str) -> str:
        raise KeyError("order table missing")

    async def hangs(order_id: str) -> str:
        await asyncio.sleep(10)
        return "never"

    def huge(order_id: str) -> str:
        return "x" * 5000

    tools = [Tool(refund, args=Refund, mutates=True), Tool(broken, args=ORDER_SCHEMA),
             Tool(hangs, args=ORDER_SCHEMA, timeout_s=0.05), Tool(huge, args=ORDER_SCHEMA)]
    batch = [ToolCall("refund", {"order_id": "1", "amount": "twenty"}), ToolCall("broken", {"order_id": "1"}),
             ToolCall("hangs", {"order_id": "1"}), ToolCall("huge", {"order_id": "1"}),
             ToolCall("lookup_order", {"order_id": 5}), ToolCall("nope", {})]
    result = agent(ScriptedModel([batch, "ok"]), tools).run_sync("x")
    observations = [m.content for m in result.messages if m.role == "tool"]
    assert len(observations) == len(batch)
    assert observations[0] == ("Invalid arguments for refund: amount: Input should be a valid number, unable to "
                               "parse string as a number (got 'twenty'). Fix these and call again; retrying "
                               "unchanged will fail.")
    assert observations[1] == ("broken failed: 'order table missing'. Retrying with the same arguments will fail "
                               "the same way; change the arguments or tell the user.")
    assert observations[2] == ("hangs did not answer within 0.05 s. The service may be slow or down; retrying "
                               "unchanged will likely time out again.")
    assert observations[3].startswith("x" * 4000 + "\n[Trimmed: showing 4000 of 5000 characters.")
    assert observations[4].startswith("There is no tool named 'lookup_order'. Available tools: refund, broken")
    assert observations[5].startswith("There is no tool named 'nope'.")


def test_invalid_json_arguments_from_the_model_become_an_observation() -> None:
    calls = Calls()
    bad = ToolCall("lookup_order", {"__invalid_json__": '{"order_id": "4'})
    result = agent(ScriptedModel([bad, "sorry"]), [read_tool(calls)]).run_sync("x")
    assert result.outcome is RunOutcome.COMPLETED
    assert result.messages[2].content.startswith("Your arguments for lookup_order were not valid JSON")


def test_empty_results_say_so() -> None:
    calls = Calls()
    tool = read_tool(calls, result=[])
    result = agent(ScriptedModel([ToolCall("lookup_order", {"order_id": "1"}), "none"]), [tool]).run_sync("x")
    assert result.messages[2].content == "No results matched."


def test_idempotency_key_is_the_call_id() -> None:
    keys = []

    def pay(order_id: str, idempotency_key: str) -> str:
        keys.append(idempotency_key)
        return "paid"

    call = ToolCall("pay", {"order_id": "1"}, id="abc")
    agent(ScriptedModel([call, "ok"]), [Tool(pay, args=ORDER_SCHEMA, mutates=True)]).run_sync("x")
    assert keys == ["abc"]


def test_bad_model_output_repeated_ends_as_loop_detected_not_a_crash() -> None:
    calls = Calls()
    broken = [ToolCall("lookup_order", {"__invalid_json__": '{"order_id": "4'}) for _ in range(4)]
    result = agent(ScriptedModel(broken), [read_tool(calls)]).run_sync("x")
    assert result.outcome is RunOutcome.LOOP_DETECTED
    assert calls.log == []
    assert all(m.content.startswith("Your arguments for lookup_order were not valid JSON")
               for m in result.messages if m.role == "tool" and not m.content.startswith("not run"))


def test_wrong_argument_types_are_an_observation_the_model_can_correct() -> None:
    calls = Calls()
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": 4567}), ToolCall("lookup_order", {"order_id": "4567"}),
                           "Found it."])
    result = agent(model, [read_tool(calls)]).run_sync("x")
    assert result.outcome is RunOutcome.COMPLETED
    assert result.messages[2].content.startswith("Invalid arguments for lookup_order: order_id: 4567 is not of type")
    assert calls.log == [("lookup_order", {"order_id": "4567"})]
