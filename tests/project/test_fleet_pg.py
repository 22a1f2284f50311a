"""Issue 13, part 5: two real `voiceloop serve` processes behind a real HAProxy share one real PostgreSQL (`--db`).
Calls on both draw on one tenant budget that a race never exceeds, `voiceloop report --db` reads every server's
runs, and a server killed with SIGKILL in the middle of a refund has its run settled by the other: the journal
is complete and the refund is never made twice."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

from loop.store.db import open_ledger
from tests.abuse.serving import ROOT, Server
from tests.fleet import Fleet, fleet_of, live_calls, phone_call, said_msgs, wait_exit
from tests.voice.server.test_drain import ANSWER
from voice.testing.scripted_call import FIXTURES

pytestmark = pytest.mark.skipif(shutil.which("haproxy") is None, reason="haproxy is not installed (./run installs it)")
TENANT_TURNS = 5
CALLERS = 4
RUNS = 2 * CALLERS  # each caller speaks twice: one run each time
REFUND_ASK = FIXTURES / "synthetic/refund_4567.wav"
REFUND = [{"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "4567"}}]},
          {"tool_calls": [{"name": "issue_refund", "arguments": {"order_id": "4567", "amount": 20}}]},
          {"text": "Done. I refunded twenty dollars for order 4567.", "delay_s": 3.0}]  # said 3 s after the write


def rows(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(sql, params).fetchall()


def report(url: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "voice.cli", "report", "--db", url, "--json"], cwd=ROOT,
                         capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return json.loads(out.stdout)


async def until(check: Any, timeout_s: float = 90) -> None:
    """Wait for `check()` (a plain or async function) to hold."""
    async with asyncio.timeout(timeout_s):
        while True:
            held = check()
            if await held if inspect.isawaitable(held) else held:
                return
            await asyncio.sleep(0.1)


async def turns_done(fleet: Fleet, want: int) -> bool:
    """Every live call on every server has `want` caller turns, each with its run's outcome."""
    calls = [c for s in fleet.servers for c in await live_calls(s)]
    return all(len(c["turns"]) >= want and all(t["outcome"] for t in c["turns"]) for c in calls)


async def test_calls_on_two_servers_draw_on_one_tenant_budget_and_one_report(tmp_path: Path, pg_url: str) -> None:
    flags = ("--db", pg_url, "--tenant", "acme", "--tenant-budget", f"turns={TENANT_TURNS}", "--no-speculate",
             "--data-dir", str(tmp_path / "shared"))
    with fleet_of(tmp_path, ANSWER, *flags) as fleet:
        calls = [await phone_call(fleet, f"MZt{n}", speak=False) for n in range(CALLERS)]
        assert [len(await live_calls(s)) for s in fleet.servers] == [CALLERS // 2] * 2  # leastconn: half on each
        for turn in (1, 2):  # every caller speaks at once, twice: eight runs race for five model turns
            await asyncio.gather(*(call.say() for call in calls))
            await until(lambda turn=turn: turns_done(fleet, turn))
        runs_by_server = [[r for c in await live_calls(s) for r in c["runs"]] for s in fleet.servers]
        outcomes = [t["outcome"] for s in fleet.servers for c in await live_calls(s) for t in c["turns"]]
        for call in calls:
            await call.hang_up()
    balance = open_ledger(pg_url).balance("acme")["turns"]
    assert balance["limit"] == TENANT_TURNS and balance["reserved"] == 0
    assert balance["committed"] == TENANT_TURNS  # eight asked: every turn of the allowance spent, none more
    answered = rows(pg_url, "SELECT count(*) FROM events WHERE kind = 'model_response'")[0][0]
    assert answered == TENANT_TURNS
    assert outcomes.count("COMPLETED") == TENANT_TURNS and outcomes.count("BUDGET_EXHAUSTED") == RUNS - TENANT_TURNS
    assert all(runs_by_server)  # both servers ran calls...
    got = report(pg_url)
    assert got["runs"] == sum(map(len, runs_by_server)) == RUNS  # ...and the report reads every one of them
    assert got["outcomes"]["COMPLETED"]["count"] == TENANT_TURNS
    assert got["outcomes"]["BUDGET_EXHAUSTED"]["count"] == RUNS - TENANT_TURNS
    assert got["unfinished_runs"] == []


KILL_POINTS = {  # when the server is killed: the refunds after, and what the journal says the write did
    "after_the_commit": ([("4567", 20.0)], "made"),
    "approval_pending": ([], "not made"),
}


@pytest.mark.parametrize("step", [pytest.param("after_the_commit"),
                                  pytest.param("approval_pending", marks=pytest.mark.slow)])
async def test_a_server_killed_mid_refund_is_settled_by_the_other(tmp_path: Path, pg_url: str, step: str) -> None:
    shared = tmp_path / "shared"
    expected, effect = KILL_POINTS[step]
    flags = ("--db", pg_url, "--settle-interval", "0.5", "--no-speculate", "--data-dir", str(shared),
             "--tenant", "acme", "--tenant-budget", "turns=50")
    with fleet_of(tmp_path, REFUND, *flags, env={"VOICELOOP_ORDERS_WRITE_DELAY_S": "1.0"}) as fleet:
        call = await phone_call(fleet, "MZkill", speak=False)
        await call.say(said_msgs(REFUND_ASK))
        victim = await until_asked(fleet)
        survivor = next(s for s in fleet.servers if s is not victim)
        if step == "after_the_commit":
            async with victim.operator() as client:
                call_id = (await live_calls(victim))[0]["id"]
                await client.post(f"/api/calls/{call_id}/approval", json={"approved": True})
            await until(lambda: refunds(shared))
        run_id = (await live_calls(victim))[0]["runs"][-1]
        closed = "SELECT 1 FROM events WHERE run_id = %s AND kind IN ('run_interrupted', 'run_finished')"
        assert not rows(pg_url, closed, run_id)  # the survivor's sweeps left a live server's run alone
        victim.proc.send_signal(signal.SIGKILL)
        assert await wait_exit(victim.proc) == -signal.SIGKILL
        call.noise.cancel()
        await until(lambda: rows(pg_url, "SELECT 1 FROM events WHERE run_id = %s AND kind = 'run_interrupted'",
                                 run_id))
        name = f"s{fleet.servers.index(victim) + 1}"
        await fleet.until_state(name, "DOWN")
        after = await phone_call(fleet, "MZafter")  # the survivor takes the next call
        assert len(await live_calls(survivor)) == 1
        await after.hang_up()
    assert refunds(shared) == expected  # made once, or not at all: never twice
    made = [p for (p,) in rows(pg_url, "SELECT payload FROM events WHERE kind = 'tool_finished'")
            if json.loads(p)["call"]["name"] == "issue_refund" and json.loads(p)["status"] == "ok"]
    assert len(made) == len(expected)
    got = report(pg_url)
    assert got["unfinished_runs"] == []
    (settled,) = [r for r in got["interrupted_runs"] if r["run_id"] == run_id]
    assert settled["reason"].startswith("its server stopped (killed, or cut off from the database): issue_refund")
    assert [w["effect"] for w in settled["writes"]] == [effect]
    assert f"run {run_id} was left open by a server that stopped" in survivor.log.read_text()
    turns = open_ledger(pg_url).balance("acme")["turns"]  # the dead run's hold was committed, not left held
    assert turns["reserved"] == 0 and turns["committed"] >= 2


def refunds(data: Path) -> list[tuple[Any, ...]]:
    if not (data / "orders.db").exists():
        return []
    return sqlite3.connect(data / "orders.db").execute("SELECT order_id, amount FROM refunds").fetchall()


async def until_asked(fleet: Fleet) -> Server:
    """The server whose call waits for the caller's yes to the refund."""
    async with asyncio.timeout(90):
        while True:
            for server in fleet.servers:
                if [c for c in await live_calls(server) if c["pending_approval"]]:
                    return server
            await asyncio.sleep(0.05)
