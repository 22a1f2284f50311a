"""Assembly: a byte-identical stable prefix, trimming that never splits a tool pair, tool results in role tool."""

from __future__ import annotations

import json

from loop import LoopConfig, Message, Policy, ScriptedModel, ToolCall
from loop.prompt import PromptAssembler, group_history
from tests.helpers import Calls, agent, read_tool


def test_stable_prefix_is_byte_identical_across_turns() -> None:
    calls = Calls()
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": "1"}), ToolCall("lookup_order", {"order_id": "2"}),
                           "done"])
    a = agent(model, [read_tool(calls)], policy=Policy(text="Never refund more than $500."))
    a.run_sync("x")
    prefixes = [json.dumps([m.to_dict() for m in r.messages[:r.stable_prefix]]) + json.dumps(r.tools)
                for r in model.requests]
    assert len(prefixes) == 3 and len(set(prefixes)) == 1
    assert "Never refund more than $500." in model.requests[0].messages[0].content
    assert all(r.messages[0] is a.assembler.prefix[0] for r in model.requests)  # built once, reused


def test_tool_results_use_the_tool_role_paired_with_their_call() -> None:
    calls = Calls()
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": "1"}, id="c1"), "done"])
    agent(model, [read_tool(calls)]).run_sync("x")
    last = model.requests[-1].messages
    assert [m.role for m in last] == ["system", "user", "assistant", "tool"]
    assert last[3].tool_call_id == "c1" and last[2].tool_calls[0].id == "c1"


def test_trimming_drops_whole_groups_from_the_oldest_and_keeps_the_goal() -> None:
    history = [Message("user", "the goal")]
    for i in range(6):
        call = ToolCall("lookup_order", {"order_id": str(i)}, id=f"c{i}")
        history += [Message("assistant", "", tool_calls=[call]), Message("tool", "r" * 200, tool_call_id=f"c{i}")]
    asm = PromptAssembler("sys", [], lambda t: (len(t) + 3) // 4, context_tokens=400)
    request, dropped = asm.build(history, turn=6, max_output=100)
    body = request.messages[1:]
    assert body[0].content == "the goal" and dropped > 0
    for i, m in enumerate(body):
        if m.role == "tool":
            assert body[i - 1].role == "assistant" and body[i - 1].tool_calls[0].id == m.tool_call_id
    assert body[-1].tool_call_id == "c5"  # the newest result survives


def test_group_history_keeps_parallel_results_with_their_request() -> None:
    calls = [ToolCall("a", {}, id="1"), ToolCall("b", {}, id="2")]
    history = [Message("user", "g"), Message("assistant", "", tool_calls=calls), Message("tool", "x", tool_call_id="1"),
               Message("tool", "y", tool_call_id="2"), Message("assistant", "final")]
    assert [len(g) for g in group_history(history)] == [1, 3, 1]


def test_voice_profile_context_budget_is_applied() -> None:
    calls = Calls()
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": str(i)}) for i in range(3)] + ["ok"])
    config = LoopConfig.profile("voice", repeat_threshold=5)
    a = agent(model, [read_tool(calls, result="z" * 1000)], config)
    a.run_sync("x")
    for r in model.requests:
        assert sum(model.count_tokens(m.content) for m in r.messages) <= config.context_tokens
