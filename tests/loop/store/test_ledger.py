"""SharedLedger: arithmetic, vector budgets, idempotency, expiry, and real processes racing for one budget —
each test on both backends (`db_url`: a SQLite file, then a real PostgreSQL server; see tests/conftest.py)."""

from __future__ import annotations

import math
import multiprocessing as mp
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.paths import ROOT

if str(ROOT) not in sys.path:  # no packaging config yet; spawned children inherit this sys.path
    sys.path.insert(0, str(ROOT))

from loop.store.db import open_ledger
from loop.store.ledger import LedgerError, LedgerRefused, SharedLedger

TENANT = "acme"
SPAWN = mp.get_context("spawn")  # fresh interpreters, as separate workers would be in production


@pytest.fixture
def ledger(db_url: str) -> Iterator[SharedLedger]:
    led = open_ledger(db_url)
    led.set_allowance(TENANT, "cost_usd", 100.0)
    led.set_allowance(TENANT, "tokens", 10_000)
    yield led
    led.close()


def _commit(led: SharedLedger, amounts: dict[str, float]) -> None:
    led.settle(led.reserve(TENANT, amounts).id, amounts)


# ---- unit ---------------------------------------------------------------------------------------------


def test_reserve_settle_release_arithmetic(ledger: SharedLedger) -> None:
    r = ledger.reserve(TENANT, {"cost_usd": 30.0, "tokens": 4000}, run_id="run-1")
    assert r.tenant == TENANT and r.amounts == {"cost_usd": 30.0, "tokens": 4000.0} and r.run_id == "run-1"
    bal = ledger.balance(TENANT)
    assert bal["cost_usd"] == {"limit": 100.0, "committed": 0.0, "reserved": 30.0, "available": 70.0}
    s = ledger.settle(r.id, {"cost_usd": 12.5, "tokens": 3000})
    assert s.committed == {"cost_usd": 12.5, "tokens": 3000.0}
    assert s.released == {"cost_usd": 17.5, "tokens": 1000.0} and s.overshoot == {}
    r2 = ledger.reserve(TENANT, {"cost_usd": 50.0})
    assert ledger.release(r2.id) is True
    bal = ledger.balance(TENANT)
    assert bal["cost_usd"] == {"limit": 100.0, "committed": 12.5, "reserved": 0.0, "available": 87.5}
    assert bal["tokens"]["committed"] == 3000.0 and bal["tokens"]["available"] == 7000.0


def test_refusal_names_resource_and_numbers(ledger: SharedLedger) -> None:
    _commit(ledger, {"cost_usd": 72.0})
    ledger.reserve(TENANT, {"cost_usd": 20.0})
    with pytest.raises(LedgerRefused) as exc:
        ledger.reserve(TENANT, {"cost_usd": 20.0})
    assert str(exc.value) == ("tenant acme: cost_usd would reach 112.00 of 100.00 "
                              "(committed 72.00 + reserved 20.00 + requested 20.00)")
    assert exc.value.resource == "cost_usd" and exc.value.tenant == TENANT
    ledger.reserve(TENANT, {"cost_usd": 8.0})  # exactly reaching the limit is allowed
    assert ledger.balance(TENANT)["cost_usd"]["available"] == 0.0


def test_vector_budget_refuses_whole_reservation(ledger: SharedLedger) -> None:
    with pytest.raises(LedgerRefused) as exc:
        ledger.reserve(TENANT, {"cost_usd": 10.0, "tokens": 20_000})
    assert exc.value.resource == "tokens"
    bal = ledger.balance(TENANT)
    assert bal["cost_usd"]["reserved"] == 0.0 and bal["tokens"]["reserved"] == 0.0


def test_no_float_drift(ledger: SharedLedger) -> None:
    for _ in range(1000):
        _commit(ledger, {"cost_usd": 0.1})
    assert ledger.balance(TENANT)["cost_usd"]["committed"] == 100.0
    with pytest.raises(LedgerRefused):
        ledger.reserve(TENANT, {"cost_usd": 0.000001})


def test_settle_and_release_are_idempotent(ledger: SharedLedger) -> None:
    r = ledger.reserve(TENANT, {"cost_usd": 20.0})
    first = ledger.settle(r.id, {"cost_usd": 15.0})
    assert ledger.settle(r.id, {"cost_usd": 99.0}) == first  # first result again; commits nothing
    assert ledger.release(r.id) is False  # already settled: nothing to drop
    assert ledger.balance(TENANT)["cost_usd"]["committed"] == 15.0
    r2 = ledger.reserve(TENANT, {"cost_usd": 20.0})
    assert ledger.release(r2.id) is True
    assert ledger.release(r2.id) is False
    assert ledger.balance(TENANT)["cost_usd"]["reserved"] == 0.0
    with pytest.raises(LedgerError):
        ledger.release("no-such-id")


def test_overshoot_is_committed_and_reported(ledger: SharedLedger, caplog: pytest.LogCaptureFixture) -> None:
    r = ledger.reserve(TENANT, {"cost_usd": 10.0})
    s = ledger.settle(r.id, {"cost_usd": 13.25, "tokens": 50})
    assert s.committed == {"cost_usd": 13.25, "tokens": 50.0}
    assert s.overshoot == {"cost_usd": 3.25, "tokens": 50.0} and s.released == {"cost_usd": 0.0}
    assert ledger.balance(TENANT)["cost_usd"]["committed"] == 13.25
    assert "overshoot" in caplog.text


def test_settling_a_released_reservation_still_counts_spend(ledger: SharedLedger) -> None:
    r = ledger.reserve(TENANT, {"cost_usd": 10.0})
    ledger.release(r.id)
    s = ledger.settle(r.id, {"cost_usd": 4.0})
    assert s.overshoot == {"cost_usd": 4.0}
    assert ledger.balance(TENANT)["cost_usd"]["committed"] == 4.0


def test_unknown_resource_fails_closed(db_url: str, ledger: SharedLedger) -> None:
    with pytest.raises(LedgerRefused, match="no allowance configured for tool_calls") as exc:
        ledger.reserve(TENANT, {"cost_usd": 1.0, "tool_calls": 1})
    assert exc.value.resource == "tool_calls"
    assert ledger.balance(TENANT)["cost_usd"]["reserved"] == 0.0
    with pytest.raises(LedgerRefused):
        ledger.reserve("other-tenant", {"cost_usd": 1.0})
    lenient = open_ledger(db_url, fail_closed=False)
    r = lenient.reserve(TENANT, {"cost_usd": 1.0, "tool_calls": 3})
    bal = lenient.balance(TENANT)
    assert bal["tool_calls"]["reserved"] == 3.0 and math.isinf(bal["tool_calls"]["limit"])
    lenient.settle(r.id, {"tool_calls": 2})
    assert lenient.balance(TENANT)["tool_calls"]["committed"] == 2.0
    with pytest.raises(LedgerRefused):  # the limit still applies to configured resources
        lenient.reserve(TENANT, {"cost_usd": 200.0})
    lenient.close()


def test_negative_amounts_rejected(ledger: SharedLedger) -> None:
    with pytest.raises(ValueError):
        ledger.reserve(TENANT, {"cost_usd": -5.0})


def test_expiry_only_with_ttl(ledger: SharedLedger) -> None:
    leased = ledger.reserve(TENANT, {"cost_usd": 10.0}, ttl_s=30)
    forever = ledger.reserve(TENANT, {"cost_usd": 20.0})
    assert leased.expires_at is not None and forever.expires_at is None
    assert ledger.expire(now=leased.expires_at - 1) == []
    assert ledger.expire(now=leased.expires_at + 10**9) == [leased.id]
    assert ledger.expire(now=leased.expires_at + 10**9) == []
    assert ledger.balance(TENANT)["cost_usd"]["reserved"] == 20.0
    assert ledger.release(leased.id) is False  # expired is no longer held


# ---- real processes -----------------------------------------------------------------------------------


def _race_worker(paths: mp.Queue, results: mp.Queue, barrier: mp.Barrier, rounds: int) -> None:
    for _ in range(rounds):
        led = open_ledger(paths.get(timeout=30))
        barrier.wait(timeout=30)  # both workers hold an open ledger; release them at the same instant
        try:
            results.put(("admitted", led.reserve(TENANT, {"cost_usd": 20.0}).id))
        except LedgerRefused as exc:
            results.put(("refused", str(exc)))
        led.close()


@pytest.fixture
def fresh_db(db_url: str, request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[int], str]:
    """`fresh_db(i)`: another empty database on the same backend as `db_url`."""
    if db_url.startswith("postgresql://"):
        cluster = request.getfixturevalue("pg_cluster")
        return lambda i: cluster.fresh_schema_url(f"race{i}")
    return lambda i: str(tmp_path / f"race-{i}.db")


def test_two_processes_race_for_the_last_20_dollars(fresh_db: Callable[[int], str]) -> None:
    """$100 allowance, $72 committed, two processes reserve $20 at once: exactly one may get in, 20 times."""
    rounds = 20
    paths, results, barrier = SPAWN.Queue(), SPAWN.Queue(), SPAWN.Barrier(2)
    workers = [SPAWN.Process(target=_race_worker, args=(paths, results, barrier, rounds)) for _ in range(2)]
    for w in workers:
        w.start()
    try:
        for i in range(rounds):
            url = fresh_db(i)  # fresh ledger every round
            led = open_ledger(url)
            led.set_allowance(TENANT, "cost_usd", 100.0)
            _commit(led, {"cost_usd": 72.0})
            paths.put(url)
            paths.put(url)
            outcome = sorted(results.get(timeout=30)[0] for _ in range(2))
            bal = led.balance(TENANT)["cost_usd"]
            led.close()
            assert outcome == ["admitted", "refused"], f"round {i}"
            assert bal["committed"] + bal["reserved"] <= 100.0, f"round {i}: {bal}"
            assert (bal["committed"], bal["reserved"]) == (72.0, 20.0), f"round {i}: {bal}"
        for w in workers:
            w.join(timeout=30)
    finally:
        for w in workers:  # on a failed round the workers wait for a path that never comes
            if w.is_alive():
                w.kill()
    assert [w.exitcode for w in workers] == [0, 0]


def _stress_worker(path: str, barrier: mp.Barrier, seed: int, results: mp.Queue) -> None:
    rng = random.Random(seed)
    led = open_ledger(path)
    settled_micro, settled_calls, violations = 0, 0, []
    barrier.wait(timeout=30)
    while True:
        want = rng.choice([0.25, 0.5, 0.75, 1.0])
        try:
            r = led.reserve(TENANT, {"cost_usd": want, "tool_calls": 1}, run_id=f"w{seed}")
        except LedgerRefused:
            break
        spent = round(want * rng.choice([0.2, 0.6, 1.0]), 2)
        led.settle(r.id, {"cost_usd": spent, "tool_calls": 1})
        settled_micro += round(spent * 1_000_000)
        settled_calls += 1
        bal = led.balance(TENANT)
        for resource, row in bal.items():
            if row["committed"] + row["reserved"] > row["limit"]:
                violations.append((resource, row))
    led.close()
    results.put((settled_micro, settled_calls, violations))


@pytest.mark.parametrize(("db_url", "n_workers"), [("sqlite", 2), ("sqlite", 4), ("postgres", 4)],
                         indirect=["db_url"])
def test_concurrent_reserve_settle_never_overspends(db_url: str, n_workers: int) -> None:
    path = db_url
    led = open_ledger(path)
    led.set_allowance(TENANT, "cost_usd", 15.0)
    led.set_allowance(TENANT, "tool_calls", 60)
    results, barrier = SPAWN.Queue(), SPAWN.Barrier(n_workers)
    workers = [SPAWN.Process(target=_stress_worker, args=(str(path), barrier, seed, results))
               for seed in range(n_workers)]
    for w in workers:
        w.start()
    try:
        reports = [results.get(timeout=60) for _ in workers]
        for w in workers:
            w.join(timeout=30)
    finally:
        for w in workers:
            if w.is_alive():
                w.kill()
    assert [w.exitcode for w in workers] == [0] * n_workers
    assert all(not violations for _, _, violations in reports), reports
    bal = led.balance(TENANT)
    led.close()
    assert bal["cost_usd"]["reserved"] == 0.0 and bal["tool_calls"]["reserved"] == 0.0
    assert bal["cost_usd"]["committed"] <= 15.0 and bal["tool_calls"]["committed"] <= 60
    assert round(bal["cost_usd"]["committed"] * 1_000_000) == sum(micro for micro, _, _ in reports)
    assert bal["tool_calls"]["committed"] == sum(calls for _, calls, _ in reports)
    assert sum(calls for _, calls, _ in reports) >= 20  # the workers really did contend for a while
