"""Five ceilings, admission by reservation, budget before assembly, and a budget the model cannot touch."""

from __future__ import annotations

import pydantic
import pytest

from loop import Budget, Ceiling, LoopConfig, Pricing, RunOutcome, ScriptedModel, ScriptedTurn, ToolCall
from loop.budget import BudgetLedger
from loop.outcomes import BudgetExhausted
from tests.helpers import Calls, agent, read_tool, write_tool


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(("dimension", "limits", "expected"), [
    ("turns", {"turns": 1}, "turn refused on turns: consumed 1 + reserved 1 > ceiling 1"),
    ("tokens", {"tokens": 1100}, "turn refused on tokens"),
    ("cost_usd", {"cost_usd": 0.01}, "turn refused on cost_usd"),
    # issue 10: the turn is admitted (it might answer); the batch it proposes is what the ceiling refuses
    ("tool_calls", {"tool_calls": 1},
     "batch of 1 tool call(s) refused on tool_calls: consumed 1 + reserved 1 > ceiling 1"),
])
def test_each_ceiling_stops_the_run_and_is_named(dimension: str, limits: dict, expected: str) -> None:
    calls = Calls()
    script = [ScriptedTurn(tool_calls=[ToolCall("lookup_order", {"order_id": str(i)})], input_tokens=300,
                           output_tokens=20) for i in range(4)]
    model = ScriptedModel(script, pricing=Pricing(input_per_mtok=3.0, output_per_mtok=15.0))
    config = LoopConfig.profile("task", budget=Budget.of(**limits), max_output_tokens=500)
    result = agent(model, [read_tool(calls)], config).run_sync("look them all up")
    assert result.outcome is RunOutcome.BUDGET_EXHAUSTED
    assert result.reason.startswith(expected)


def test_wall_clock_ceiling_counts_reserved_model_deadline() -> None:
    clock = FakeClock()
    calls = Calls()

    def slow_lookup(order_id: str) -> str:
        clock.now += 50  # each tool call takes 50 virtual seconds
        return "ok"

    tool = read_tool(calls)
    tool.fn, tool.timeout_s = slow_lookup, 10
    config = LoopConfig.profile("task", budget=Budget.of(wall_clock_s=120), model_timeout_s=30)
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": str(i)}) for i in range(4)])
    result = agent(model, [tool], config, clock=clock).run_sync("x")
    assert result.outcome is RunOutcome.BUDGET_EXHAUSTED
    # after two 50 s tools, 100 s + the 30 s model deadline no longer fits under 120 s
    assert result.reason == "turn refused on wall_clock_s: consumed 100 + reserved 30 > ceiling 120"


def test_batch_that_fits_the_balance_but_breaches_the_projection_is_refused() -> None:
    calls = Calls()
    batch = [ToolCall("lookup_order", {"order_id": str(i)}) for i in range(6)]
    config = LoopConfig.profile("task", budget=Budget.of(tool_calls=5))
    result = agent(ScriptedModel([batch]), [read_tool(calls)], config).run_sync("x")
    assert result.outcome is RunOutcome.BUDGET_EXHAUSTED
    assert result.reason == "batch of 6 tool call(s) refused on tool_calls: consumed 0 + reserved 6 > ceiling 5"
    assert calls.log == []  # nothing from the batch was dispatched
    assert [m.content for m in result.messages if m.role == "tool"] == [
        "not run: the budget would not cover this batch"] * 6


def test_batch_cost_reserves_declared_tool_maximum() -> None:
    calls = Calls()
    paid = write_tool(calls, "send_sms", cost=0.30)
    model = ScriptedModel([ScriptedTurn(tool_calls=[ToolCall("send_sms", {"order_id": "1"})], cost_usd=0.5),
                           ScriptedTurn(tool_calls=[ToolCall("send_sms", {"order_id": "2"})], cost_usd=0.1)])
    config = LoopConfig.profile("task", budget=Budget.of(cost_usd=1.0))
    result = agent(model, [paid], config).run_sync("x")
    # turn 1: 0.5 model + 0.3 tool = 0.8; turn 2 model 0.1 -> 0.9, and the 0.3 tool no longer fits
    assert result.reason == "batch of 1 tool call(s) refused on cost_usd: consumed 0.9 + reserved 0.3 > ceiling 1"
    assert calls.log == [("send_sms", {"order_id": "1"})]


def test_budget_is_checked_before_the_prompt_is_assembled() -> None:
    calls = Calls()
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": "1"}), "done"])
    a = agent(model, [read_tool(calls)], LoopConfig.profile("task", budget=Budget.of(turns=1)))
    builds = []
    real_build = a.assembler.build
    a.assembler.build = lambda *args, **kw: builds.append(1) or real_build(*args, **kw)
    result = a.run_sync("x")
    assert result.outcome is RunOutcome.BUDGET_EXHAUSTED
    assert len(builds) == 1 and len(model.requests) == 1  # the refused second turn built and sent nothing


def test_soft_ceiling_warns_instead_of_stopping() -> None:
    calls = Calls()
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": "1"}), "done"])
    config = LoopConfig.profile("task", budget=Budget(turns=Ceiling(limit=1, hard=False)))
    events = []
    result = agent(model, [read_tool(calls)], config, listeners=[events.append]).run_sync("x")
    assert result.outcome is RunOutcome.COMPLETED
    warnings = [w for e in events if e.kind == "turn_finished" for w in e.meta["warnings"]]
    assert warnings == ["turn over soft limit on turns: consumed 1 + reserved 1 > ceiling 1"]
    assert result.usage["turns"]["consumed"] == 2


def test_the_model_cannot_change_its_own_budget() -> None:
    config = LoopConfig.profile("voice")
    with pytest.raises(pydantic.ValidationError):
        config.budget.turns = Ceiling(limit=100)  # type: ignore[misc]
    calls = Calls()
    model = ScriptedModel([ToolCall("set_budget", {"turns": 1000}), ScriptedTurn(text="please extend my budget"),
                           "unused"])
    result = agent(model, [read_tool(calls)], LoopConfig.profile("task", budget=Budget.of(turns=1))).run_sync("x")
    assert result.outcome is RunOutcome.BUDGET_EXHAUSTED
    assert "There is no tool named 'set_budget'" in result.messages[-1].content


def test_ledger_settles_actuals_and_clears_reservations() -> None:
    clock = FakeClock()
    ledger = BudgetLedger(Budget.of(tokens=1000, cost_usd=1.0), clock)
    ledger.check_turn(100, 200, Pricing(1000, 1000), model_timeout_s=5, tool_calls=1, tool_cost=0.0)
    assert ledger.reserved["tokens"] == 300
    from loop.types import Usage
    ledger.settle_model(Usage(input_tokens=100, output_tokens=20, cost_usd=0.12))
    assert ledger.reserved["tokens"] == 0 and ledger.consumed["tokens"] == 120
    with pytest.raises(BudgetExhausted) as err:
        ledger.check_turn(700, 200, Pricing(), model_timeout_s=5, tool_calls=0, tool_cost=0.0)
    assert err.value.dimension == "tokens"
    assert ledger.headroom()["tokens"] == 0.88
