"""A run whose process died holding the tenant budget: settling it commits its holds in full (spend may have
happened), on both ledger backends; other runs' holds are left alone."""

from __future__ import annotations

from loop.store.db import open_ledger


def test_settle_run_commits_only_that_runs_open_holds(db_url: str) -> None:
    ledger = open_ledger(db_url)
    ledger.set_allowance("acme", "turns", 10)
    ledger.reserve("acme", {"turns": 1}, run_id="dead")
    ledger.reserve("acme", {"turns": 2}, run_id="dead")
    done = ledger.reserve("acme", {"turns": 4}, run_id="dead")
    ledger.settle(done.id, {"turns": 1})  # already settled: not committed twice
    ledger.reserve("acme", {"turns": 1}, run_id="alive")
    settled = ledger.settle_run("dead")
    assert [s.committed for s in settled] == [{"turns": 1.0}, {"turns": 2.0}]
    assert ledger.settle_run("dead") == []  # a second sweep finds nothing held
    turns = ledger.balance("acme")["turns"]
    assert (turns["committed"], turns["reserved"], turns["available"]) == (4.0, 1.0, 5.0)
    ledger.close()
