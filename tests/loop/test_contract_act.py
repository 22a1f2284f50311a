"""Issue 10, items 3 and 6: writes stay serial even after a timeout, and nothing mutates after an
escalation in the same batch."""

from __future__ import annotations

import threading

from loop import Escalated, LoopConfig, RunOutcome, ScriptedModel, Tool, ToolCall
from tests.helpers import ORDER_SCHEMA, Calls, agent, read_tool, write_tool


def test_a_write_that_timed_out_but_still_runs_blocks_the_next_write() -> None:
    release, running = threading.Event(), threading.Event()
    overlapped: list[str] = []
    started: list[str] = []

    def slow_write(order_id: str) -> str:
        running.set()
        release.wait(10)  # far beyond its timeout: the thread cannot be stopped
        running.clear()
        return "written"

    def next_write(order_id: str) -> str:
        started.append(order_id)
        if running.is_set():
            overlapped.append(order_id)
        return "next written"

    tools = [Tool(slow_write, args=ORDER_SCHEMA, mutates=True, timeout_s=0.05),
             Tool(next_write, args=ORDER_SCHEMA, mutates=True)]
    model = ScriptedModel([[ToolCall("slow_write", {"order_id": "1"}), ToolCall("next_write", {"order_id": "2"})],
                           ToolCall("next_write", {"order_id": "3"}), "I could not finish the changes."])
    try:
        result = agent(model, tools, LoopConfig.profile("chat")).run_sync("x")
    finally:
        release.set()
    assert overlapped == [] and started == []  # not in the same batch, not in the next turn either
    tool_msgs = [m.content for m in result.messages if m.role == "tool"]
    assert tool_msgs[0] == ("slow_write did not answer within 0.05 s and may still finish, so its effect is "
                            "unknown. Check the current state before calling it again.")
    assert tool_msgs[1] == tool_msgs[2] == ("not run: slow_write timed out earlier and may still take effect, so "
                                            "no other change may start until it has finished. Check the current "
                                            "state, then try again.")
    assert result.outcome is RunOutcome.COMPLETED


def test_once_the_timed_out_write_has_ended_writes_run_again() -> None:
    release = threading.Event()
    log: list[str] = []

    def slow_write(order_id: str) -> str:
        release.wait(10)
        return "written"

    def next_write(order_id: str) -> str:
        log.append(order_id)
        return "next written"

    def wait_read(order_id: str) -> str:  # a read during which the stray write finishes
        release.set()
        for _, future in a.unsettled_writes:
            future.result(10)
        return "waited"

    tools = [Tool(slow_write, args=ORDER_SCHEMA, mutates=True, timeout_s=0.05),
             Tool(next_write, args=ORDER_SCHEMA, mutates=True), Tool(wait_read, args=ORDER_SCHEMA)]
    model = ScriptedModel([ToolCall("slow_write", {"order_id": "1"}), ToolCall("wait_read", {"order_id": "1"}),
                           ToolCall("next_write", {"order_id": "2"}), "done"])
    a = agent(model, tools, LoopConfig.profile("chat"))
    try:
        result = a.run_sync("x")
    finally:
        release.set()
    assert log == ["2"] and result.outcome is RunOutcome.COMPLETED


def test_after_an_escalating_read_no_write_in_the_batch_runs() -> None:
    calls = Calls()

    def transfer_to_human(order_id: str) -> str:
        raise Escalated("caller asked for a person")

    batch = [ToolCall("transfer_to_human", {"order_id": "1"}), ToolCall("cancel_order", {"order_id": "1"})]
    result = agent(ScriptedModel([batch, "unused"]), [Tool(transfer_to_human, args=ORDER_SCHEMA),
                                                      write_tool(calls)]).run_sync("x")
    assert result.outcome is RunOutcome.ESCALATED
    assert calls.log == []
    assert result.messages[-1].content == ("not run: transfer_to_human handed the conversation to a human, so "
                                           "nothing else in this batch may change anything.")


def test_after_an_escalating_write_no_later_write_runs_but_earlier_reads_stand() -> None:
    calls = Calls()

    def close_account(order_id: str) -> str:
        raise Escalated("account closure needs a person")

    batch = [ToolCall("close_account", {"order_id": "1"}), ToolCall("cancel_order", {"order_id": "1"}),
             ToolCall("lookup_order", {"order_id": "1"})]
    result = agent(ScriptedModel([batch, "unused"]),
                   [Tool(close_account, args=ORDER_SCHEMA, mutates=True), write_tool(calls),
                    read_tool(calls)]).run_sync("x")
    assert result.outcome is RunOutcome.ESCALATED
    assert calls.log == [("lookup_order", {"order_id": "1"})]
    assert [o.call.name for o in result.trajectory] == ["lookup_order", "close_account"]
