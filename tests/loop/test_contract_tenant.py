"""Issue 10, item 9: agents in two processes share one tenant budget through the SharedLedger and never
exceed it together."""

from __future__ import annotations

import multiprocessing as mp

from loop import Agent, Budget, LoopConfig, Pricing, RunOutcome, ScriptedModel, ScriptedTurn, Tool, ToolCall
from loop.store.db import open_ledger
from loop.store.ledger import SharedLedger, TenantBudget
from tests.helpers import ORDER_SCHEMA

SPAWN = mp.get_context("spawn")
TENANT = "acme"


def lookup_order(order_id: str) -> str:
    return f"order {order_id}: shipped"


def tenant_agent(ledger: SharedLedger) -> Agent:
    """Each turn reserves $0.25 (100 output tokens at $2,500/Mtok) and spends $0.20; 10 turns would be $2."""
    script = [ScriptedTurn(tool_calls=[ToolCall("lookup_order", {"order_id": str(i)})], cost_usd=0.20)
              for i in range(10)] + [ScriptedTurn(text="All looked up.", cost_usd=0.20)]
    model = ScriptedModel(script, pricing=Pricing(input_per_mtok=0.0, output_per_mtok=2500.0))
    config = LoopConfig.profile("task", budget=Budget.of(cost_usd=50.0, turns=50), max_output_tokens=100)
    return Agent(model, [Tool(lookup_order, args=ORDER_SCHEMA)], config=config,
                 tenant=TenantBudget(ledger, TENANT))


def _worker(path: str, barrier: mp.Barrier, results: mp.Queue) -> None:
    ledger = open_ledger(path)
    a = tenant_agent(ledger)
    barrier.wait(timeout=60)  # both processes start their runs at the same moment
    result = a.run_sync("look up orders 0 to 9")
    results.put((result.outcome.value, result.budget_dimension, result.reason, result.usage["cost_usd"]["consumed"]))
    ledger.close()


def test_two_processes_running_agents_for_one_tenant_never_exceed_its_budget(db_url: str) -> None:
    """On both backends (`db_url`: SQLite, then a real PostgreSQL server)."""
    path = db_url
    ledger = open_ledger(path)
    ledger.set_allowance(TENANT, "cost_usd", 1.0)
    barrier, results = SPAWN.Barrier(2), SPAWN.Queue()
    workers = [SPAWN.Process(target=_worker, args=(path, barrier, results)) for _ in range(2)]
    for w in workers:
        w.start()
    try:
        runs = [results.get(timeout=120) for _ in workers]
        for w in workers:
            w.join(timeout=30)
    finally:
        for w in workers:
            if w.is_alive():
                w.kill()
    spent = sum(r[3] for r in runs)
    balance = ledger.balance(TENANT)["cost_usd"]
    assert spent <= 1.0 + 1e-9 and balance["committed"] <= 1.0
    assert abs(balance["committed"] - spent) < 1e-6  # the ledger saw exactly what the runs spent
    assert balance["reserved"] == 0.0  # every hold was settled
    for outcome, dimension, reason, _ in runs:
        assert (outcome, dimension) == (RunOutcome.BUDGET_EXHAUSTED.value, "cost_usd")
        assert "refused by the shared budget: tenant acme: cost_usd would reach" in reason


def test_a_lone_agent_is_refused_once_the_tenant_allowance_is_committed(db_url: str) -> None:
    ledger = open_ledger(db_url)
    ledger.set_allowance(TENANT, "cost_usd", 0.5)
    result = tenant_agent(ledger).run_sync("x")
    assert (result.outcome, result.budget_dimension) == (RunOutcome.BUDGET_EXHAUSTED, "cost_usd")
    assert result.usage["cost_usd"]["consumed"] == 0.4  # two turns of $0.20; a third $0.25 hold did not fit
    assert ledger.balance(TENANT)["cost_usd"]["committed"] == 0.4
