"""Issue 10, items 1, 4 and the budget parts of 10: admission reserves the whole request (history too),
resume carries the wall clock over, the refusing dimension is a field, and the tool-call ceiling leaves
room for the final answer."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from loop import Agent, Budget, LoopConfig, Message, Pricing, RunOutcome, ScriptedModel, Tool, ToolCall
from tests.helpers import ORDER_SCHEMA, Calls, agent, read_tool


class FakeClock:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def long_history(tokens: int) -> list[Message]:
    """`tokens` tokens (4 characters each) of earlier conversation, in 500-token messages."""
    turns = []
    for i in range(tokens // 1000):
        turns += [Message("user", f"question {i} " + "q" * 1990), Message("assistant", "a" * 2000)]
    return turns


# ---- item 1: prior history is part of what admission reserves ----------------------------------


def test_history_handed_to_run_counts_against_the_token_ceiling() -> None:
    model = ScriptedModel(["It shipped."])
    config = LoopConfig.profile("task", budget=Budget.of(tokens=10_000))
    result = agent(model, [], config).run_sync("Where is order 42?", history=long_history(30_000))
    assert result.outcome is RunOutcome.BUDGET_EXHAUSTED
    assert result.budget_dimension == "tokens"
    assert result.reason.startswith("turn refused on tokens")
    assert model.requests == [] and result.usage["tokens"]["consumed"] == 0


def test_history_handed_to_run_counts_against_the_cost_ceiling() -> None:
    model = ScriptedModel(["It shipped."], pricing=Pricing(input_per_mtok=10.0, output_per_mtok=10.0))
    config = LoopConfig.profile("task", budget=Budget.of(cost_usd=0.10))  # 30,000 input tokens cost $0.30
    result = agent(model, [], config).run_sync("Where is order 42?", history=long_history(30_000))
    assert result.outcome is RunOutcome.BUDGET_EXHAUSTED and result.budget_dimension == "cost_usd"
    assert model.requests == []


def test_admission_reserves_what_is_sent_after_trimming_not_more() -> None:
    model = ScriptedModel(["It shipped."])
    config = LoopConfig.profile("task", budget=Budget.of(tokens=10_000), context_tokens=4000)
    result = agent(model, [], config).run_sync("Where is order 42?", history=long_history(30_000))
    assert result.outcome is RunOutcome.COMPLETED
    assert result.usage["tokens"]["consumed"] <= 4000


# ---- item 10: the refusing dimension is a field; the tool-call ceiling leaves room to answer -------


def test_budget_exhausted_names_its_dimension_in_a_field() -> None:
    calls = Calls()
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": str(i)}) for i in range(5)])
    result = agent(model, [read_tool(calls)], LoopConfig.profile("task", budget=Budget.of(turns=2))).run_sync("x")
    assert (result.outcome, result.budget_dimension) == (RunOutcome.BUDGET_EXHAUSTED, "turns")
    done = agent(ScriptedModel(["hi"]), []).run_sync("x")
    assert done.budget_dimension == ""


def test_a_run_that_used_exactly_its_tool_calls_can_still_answer() -> None:
    calls = Calls()
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": "1"}), "Order 1 has shipped."])
    config = LoopConfig.profile("task", budget=Budget.of(tool_calls=1))
    result = agent(model, [read_tool(calls)], config).run_sync("x")
    assert result.outcome is RunOutcome.COMPLETED and result.answer == "Order 1 has shipped."
    assert result.usage["tool_calls"]["consumed"] == 1


def test_a_batch_beyond_the_tool_call_ceiling_is_still_refused() -> None:
    calls = Calls()
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": "1"}), ToolCall("lookup_order", {"order_id": "2"})])
    result = agent(model, [read_tool(calls)], LoopConfig.profile("task", budget=Budget.of(tool_calls=1))).run_sync("x")
    assert (result.outcome, result.budget_dimension) == (RunOutcome.BUDGET_EXHAUSTED, "tool_calls")
    assert len(calls.log) == 1


# ---- item 4: resume carries what was consumed before the interruption ---------------------------


def _slow_run(db: str, clock: FakeClock) -> Agent:
    def lookup_order(order_id: str) -> str:
        clock.now += 97  # the lookup takes 97 of the run's 100 seconds
        return f"order {order_id}: shipped"

    config = LoopConfig.profile("task", budget=Budget.of(wall_clock_s=100), model_timeout_s=5)
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": "1"}), "Order 1 has shipped."])
    return Agent(model, [Tool(lookup_order, args=ORDER_SCHEMA, timeout_s=1)], config=config, journal_path=db,
                 clock=clock)


def test_resume_carries_over_the_wall_clock_consumed_before_the_kill(tmp_path: Path) -> None:
    reference = _slow_run(str(tmp_path / "ref.db"), FakeClock()).run_sync("where is 1", run_id="r")
    assert (reference.outcome, reference.budget_dimension) == (RunOutcome.BUDGET_EXHAUSTED, "wall_clock_s")

    db = str(tmp_path / "runs.db")
    _slow_run(db, FakeClock()).run_sync("where is 1", run_id="r")
    con = sqlite3.connect(db)  # killed at 97 s: right after the first turn, before the second was admitted
    cut = con.execute("SELECT seq FROM events WHERE run_id='r' AND kind='turn_finished'").fetchone()[0]
    con.execute("DELETE FROM events WHERE seq > ?", (cut,))
    con.commit()
    resumed = _slow_run(db, FakeClock(now=5000.0)).run_sync(run_id="r")  # a new process, a new clock
    assert (resumed.outcome, resumed.budget_dimension) == (RunOutcome.BUDGET_EXHAUSTED, "wall_clock_s")
    assert resumed.reason == reference.reason == ("turn refused on wall_clock_s: consumed 97 + reserved 5 > "
                                                  "ceiling 100")
    for dim in ("turns", "tokens", "cost_usd", "tool_calls"):  # the rest carries over through replay
        assert resumed.usage[dim]["consumed"] == reference.usage[dim]["consumed"], dim
