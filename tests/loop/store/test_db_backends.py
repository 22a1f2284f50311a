"""Issue 13, part 4: the journal and the tenant ledger on SQLite or PostgreSQL, chosen by a URL (`--db`).

The contract tests themselves (append before emit, resume after SIGKILL, ledger races, settle/release/expiry) run
on both backends in test_journal.py and test_ledger.py beside this file, and in tests/loop/test_contract_resume.py
and tests/loop/test_contract_tenant.py; here: several processes sharing one database, settling on start beside a
live process, and the URL's edges.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from loop import Agent, LoopConfig, RunOutcome, ScriptedModel, Tool, ToolCall
from loop.run.settle import settle_unfinished
from loop.run.tenancy import TenantConfigError, open_tenant, parse_allowances, storage_from_args
from loop.store.db import DatabaseUnavailable, database_url, open_journal, open_ledger, redact, sqlite_path
from loop.store.journal import Event, Journal
from loop.store.journal_pg import PgJournal
from loop.store.ledger import SharedLedger
from tests.helpers import ORDER_SCHEMA
from tests.paths import ROOT
from tests.pg_server import PgCluster

SPAWN = mp.get_context("spawn")
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def lookup_order(order_id: str) -> str:
    return f"order {order_id}: shipped"


def _write_runs(db: str, prefix: str, n: int) -> None:
    """A worker process: `n` completed runs journaled into `db`."""
    for i in range(n):
        model = ScriptedModel([ToolCall("lookup_order", {"order_id": str(i)}), f"Order {i} has shipped."])
        agent = Agent(model, [Tool(lookup_order, args=ORDER_SCHEMA)], config=LoopConfig.profile("task"),
                      journal_path=db)
        assert agent.run_sync(f"where is order {i}", run_id=f"{prefix}-{i}").outcome is RunOutcome.COMPLETED


def test_report_reads_the_runs_of_every_process_sharing_the_database(db_url: str) -> None:
    workers = [SPAWN.Process(target=_write_runs, args=(db_url, name, 3)) for name in ("host-a", "host-b")]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
    assert [w.exitcode for w in workers] == [0, 0]
    out = subprocess.run([sys.executable, "-m", "voice.cli", "report", "--db", db_url, "--json"], cwd=ROOT,
                         env=ENV, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["runs"] == 6 and report["outcomes"]["COMPLETED"]["count"] == 6
    assert report["turns_to_completion"] == {"runs": 6, "p50": 2, "p95": 2}
    ids = open_journal(db_url).run_ids()
    assert sorted(ids) == sorted(f"{h}-{i}" for h in ("host-a", "host-b") for i in range(3))


def test_a_run_live_in_another_process_is_not_settled_until_that_process_dies(pg_url: str,
                                                                             tmp_path: Path) -> None:
    """Many servers share one PostgreSQL journal: a starting one must close only runs whose process is gone."""
    journal = open_journal(pg_url)
    side, asked = tmp_path / "side.txt", tmp_path / "asked.txt"
    proc = subprocess.Popen([sys.executable, "-m", "tests.resume_worker", pg_url, str(side), str(asked), "--hang"],
                            cwd=ROOT, env=ENV)
    try:
        deadline = time.time() + 30
        while time.time() < deadline and not any(
                e.kind == "tool_started" and e.payload["call"]["arguments"] == {"order_id": "2"}
                for e in journal.events("run-1")):
            time.sleep(0.05)
        assert journal.unfinished_run_ids() == ["run-1"]
        assert asyncio.run(settle_unfinished(journal, {})) == []  # alive (hanging in a lookup): left alone
        assert journal.events("run-1")[-1].kind == "tool_started"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    deadline = time.time() + 10
    settled = []
    while time.time() < deadline and not settled:  # the server notices the dead connection at once, usually
        settled = asyncio.run(settle_unfinished(journal, {}))
        time.sleep(0.1)
    assert [(s.run_id, s.how) for s in settled] == [("run-1", "closed")]
    assert journal.events("run-1")[-1].kind == "run_interrupted" and journal.unfinished_run_ids() == []


def test_a_journal_survives_the_server_dropping_its_connection(pg_url: str, pg_cluster: PgCluster) -> None:
    import psycopg

    journal = open_journal(pg_url)
    journal.append(Event("r", 0, "run_started", {"goal": "x"}))  # this process now runs (claims) r
    with psycopg.connect(pg_cluster.url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (journal._pg.conn.info.backend_pid,))  # type: ignore
    journal.append(Event("r", 1, "turn_admitted", {"turn": 0}))  # on a new connection
    assert [(e.seq, e.kind) for e in journal.events("r")] == [(0, "run_started"), (1, "turn_admitted")]
    assert open_journal(pg_url).claim_run("r") is False  # the claim was taken again: r is still live here


def test_settling_one_reservation_from_many_connections_at_once_commits_it_once(db_url: str) -> None:
    ledgers = [open_ledger(db_url) for _ in range(4)]  # four connections: the database decides, not a lock of ours
    ledgers[0].set_allowance("acme", "cost_usd", 10.0)
    hold = ledgers[0].reserve("acme", {"cost_usd": 6.0})
    barrier, results = threading.Barrier(4), []

    def settle(led: SharedLedger) -> None:
        barrier.wait(timeout=10)
        results.append(led.settle(hold.id, {"cost_usd": 5.0}))

    threads = [threading.Thread(target=settle, args=(led,)) for led in ledgers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(results) == 4 and all(r == results[0] for r in results)
    assert ledgers[0].balance("acme")["cost_usd"] == {"limit": 10.0, "committed": 5.0, "reserved": 0.0,
                                                      "available": 5.0}


def test_the_ledger_and_journal_share_one_database(db_url: str) -> None:
    tenant = open_tenant(db_url, "acme", {"cost_usd": 2.5, "tool_calls": 10})
    assert tenant.resources == ("cost_usd", "tool_calls")
    assert open_tenant(db_url, "acme").resources == ("cost_usd", "tool_calls")  # a second process just joins
    journal = open_journal(db_url)  # the journal's table sits beside the ledger's
    journal.append(Event("r", 0, "run_started", {"goal": "x"}))
    assert [e.kind for e in journal.events("r")] == ["run_started"]
    assert tenant.ledger.balance("acme")["cost_usd"]["limit"] == 2.5
    with pytest.raises(TenantConfigError, match="has no allowance"):
        open_tenant(db_url, "nobody")


def test_a_call_factory_journals_into_the_url_and_hands_every_call_the_tenant(pg_url: str, tmp_path: Path) -> None:
    from tests.fakes import LoudnessVAD, ToneTTS, WordChunker
    from voice.agents.source import load_agent
    from voice.hosting.registry import CallFactory, model_source

    stack = SimpleNamespace(tts=ToneTTS(), stt=None, chunker=WordChunker, new_vad=LoudnessVAD)
    tenant = open_tenant(pg_url, "acme", {"cost_usd": 1.0})
    make_agent = load_agent().maker(tmp_path, model_source(llm="script"))
    factory = CallFactory(stack, make_agent, tmp_path, db=pg_url, tenant=tenant)  # type: ignore[arg-type]
    call = factory.new_call(lambda _pcm: None, "test")
    assert isinstance(factory.journal, PgJournal) and call.session.agent.journal is factory.journal
    assert call.session.agent.tenant is tenant
    assert not (tmp_path / "journal.db").exists()


def test_urls_name_their_backend_and_hide_their_password() -> None:
    assert sqlite_path("sqlite:///tmp/x.db") == "/tmp/x.db" and sqlite_path("sqlite:rel.db") == "rel.db"
    assert sqlite_path("runs.db") == "runs.db"
    assert database_url(None, "data") == "data/journal.db"
    assert database_url("postgresql://h/db", "data") == "postgresql://h/db"
    assert redact("postgresql://app:s3cret@db.example:5432/voice") == "postgresql://app:***@db.example:5432/voice"
    with pytest.raises(DatabaseUnavailable, match="unknown database URL 'mysql://u:\\*\\*\\*@h/db'"):
        open_journal("mysql://u:pw@h/db")


def test_a_missing_driver_or_server_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(DatabaseUnavailable, match=r"cannot connect to postgresql://u:\*\*\*@127\.0\.0\.1:1/x"):
        open_ledger("postgresql://u:pw@127.0.0.1:1/x")
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if `voiceloop[postgres]` was not installed
    with pytest.raises(DatabaseUnavailable, match=r"psycopg 3: pip install 'psycopg\[binary\]'"):
        open_journal("postgresql://u@127.0.0.1:1/x")


def test_report_on_a_database_without_a_journal_says_so(pg_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    from voice.cli import main

    assert main(["report", "--db", pg_url]) == 2
    err = capsys.readouterr().err
    assert "no journal at postgresql://" in err and "no events table" in err


def test_tenant_budgets_parse_or_say_what_is_wrong() -> None:
    assert parse_allowances("cost_usd=5, tool_calls=50") == {"cost_usd": 5.0, "tool_calls": 50.0}
    for bad, said in [("cost=5", "RESOURCE one of"), ("cost_usd=five", "not a number"),
                      ("cost_usd=-1", ">= 0"), ("cost_usd=inf", "finite"), ("", "empty")]:
        with pytest.raises(TenantConfigError, match=said):
            parse_allowances(bad)


def test_two_calls_on_one_database_draw_on_one_tenant_budget(pg_url: str, tmp_path: Path) -> None:
    """`voiceloop call ... --db URL --tenant acme --tenant-budget turns=3`, twice: the first call's two turns
    leave one for the second, whose second turn is refused by the shared budget."""
    from voice.cli import build_parser
    from voice.testing import shared_stack
    from voice.testing.scripted_call import FIXTURES, Fixture, run_call

    fixture = Fixture.load(FIXTURES / "read_tool.yaml")  # a lookup turn, then the answer: two turns
    argv = ["call", str(fixture.path), "--db", pg_url, "--tenant", "acme", "--tenant-budget", "turns=3"]
    outcomes = []
    for i in range(2):
        db, tenant = storage_from_args(build_parser().parse_args(argv), tmp_path)
        result = asyncio.run(run_call(fixture, shared_stack(), tmp_path / f"call{i}", db=db, tenant=tenant))
        outcomes.append(result.summary()["outcome"])
    assert outcomes == ["COMPLETED", "BUDGET_EXHAUSTED"]
    assert open_ledger(pg_url).balance("acme")["turns"] == {"limit": 3.0, "committed": 3.0, "reserved": 0.0,
                                                             "available": 0.0}
    assert not (tmp_path / "call0" / "journal.db").exists()  # both calls journaled into PostgreSQL
    # two runs, beside the speculation (`prefetch-` ids) while each caller spoke
    assert len([r for r in open_journal(pg_url).run_ids() if not r.startswith("prefetch-")]) == 2


def _open_at_once(path: str, barrier: Any) -> None:
    barrier.wait()  # every process creates the same new files at the same moment
    Journal(path)
    SharedLedger(path + ".ledger")


def test_processes_creating_one_journal_and_ledger_at_once_all_open_them(tmp_path: Path) -> None:
    """Switching a new file to WAL answered "database is locked" at once to one of two processes (seen in CI)."""
    for round_ in range(4):
        path, barrier = str(tmp_path / f"at-once-{round_}.db"), SPAWN.Barrier(6)
        workers = [SPAWN.Process(target=_open_at_once, args=(path, barrier)) for _ in range(6)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(timeout=60)
        assert [w.exitcode for w in workers] == [0] * 6
