"""Repetition on canonical signatures, and its precedence over the turn ceiling (both orderings)."""

from __future__ import annotations

from loop import Budget, LoopConfig, RunOutcome, ScriptedModel, ToolCall
from loop.repetition import detect_repetition, repeated_intent_depth, turn_signature
from tests.helpers import Calls, agent, read_tool


def run_same_call(times: int, max_turns: int, threshold: int):
    calls = Calls()
    same = [ToolCall("lookup_order", {"order_id": "7"}) for _ in range(times)]
    config = LoopConfig.profile("task", budget=Budget.of(turns=max_turns), repeat_threshold=threshold)
    return agent(ScriptedModel(same), [read_tool(calls)], config).run_sync("find 7"), calls


def test_same_call_10_times_max_turns_9_threshold_3_is_loop_detected() -> None:
    result, calls = run_same_call(10, max_turns=9, threshold=3)
    assert result.outcome is RunOutcome.LOOP_DETECTED
    # issue 10 item 8: the reason goes on to show the repeated observations
    assert result.reason.startswith('the same call was proposed 3 times in a row: lookup_order:{"order_id":"7"}')
    assert len(calls.log) == 2


def test_repetition_reached_on_the_last_admitted_turn_still_names_the_loop() -> None:
    # threshold == turn ceiling: the third proposal happens inside the third (last) admitted turn
    result, _ = run_same_call(10, max_turns=3, threshold=3)
    assert result.outcome is RunOutcome.LOOP_DETECTED


def test_turn_ceiling_first_when_it_fires_before_the_threshold() -> None:
    result, calls = run_same_call(10, max_turns=2, threshold=3)
    assert result.outcome is RunOutcome.BUDGET_EXHAUSTED
    assert result.reason == "turn refused on turns: consumed 2 + reserved 1 > ceiling 2"
    assert len(calls.log) == 2


def test_period_two_oscillation_is_detected() -> None:
    calls = Calls()
    a, b = ToolCall("lookup_order", {"order_id": "1"}), ToolCall("fetch_dashboard", {"order_id": "1"})
    script = [a, b] * 5
    config = LoopConfig.profile("task", repeat_threshold=3)
    result = agent(ScriptedModel(script), [read_tool(calls), read_tool(calls, "fetch_dashboard")], config).run_sync("x")
    assert result.outcome is RunOutcome.LOOP_DETECTED
    assert result.reason.startswith("two calls alternated 3 times without progress")
    assert len(calls.log) == 5


def test_signatures_ignore_call_ids_and_key_order() -> None:
    one = ToolCall("f", {"a": 1, "b": [1, 2]}, id="x1")
    two = ToolCall("f", {"b": [1, 2], "a": 1}, id="y2")
    assert one.signature == two.signature
    assert turn_signature([one]) == turn_signature([two])
    assert detect_repetition([turn_signature([one]), turn_signature([two])], 2) is not None


def test_progress_resets_detection_and_depth_counts_intent() -> None:
    sigs = ["a", "a", "b", "a", "a"]
    assert detect_repetition(sigs, 3) is None
    assert detect_repetition([*sigs, "a"], 3) is not None
    assert detect_repetition(["a", "b", "a", "b", "a", "c"], 3) is None
    calls = [ToolCall("f", {"x": 1}), ToolCall("g", {}), ToolCall("f", {"x": 1})]
    assert repeated_intent_depth(calls) == 2
