"""The journal: append before emit, and resume through the same code path after a real SIGKILL — on both
backends (`db_url`: a SQLite file, then a real PostgreSQL server; see tests/conftest.py)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from loop import Journal, RunOutcome, ScriptedModel, ToolCall
from loop.store.db import open_journal
from tests.helpers import Calls, agent, read_tool
from tests.paths import ROOT
from tests.resume_worker import build


def test_every_event_is_durable_before_a_listener_sees_it(db_url: str) -> None:
    db = db_url
    seen = []
    reader = None

    def listener(event):
        nonlocal reader  # another connection: it sees only what was committed
        reader = reader or open_journal(db, read_only=True)
        stored = {e.seq: e.kind for e in reader.events(event.run_id)}
        seen.append((event.kind, stored.get(event.seq)))

    calls = Calls()
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": "1"}), "It shipped."])
    agent(model, [read_tool(calls)], journal_path=db, listeners=[listener]).run_sync("where is 1")
    assert seen and all(kind == stored for kind, stored in seen)
    assert [k for k, _ in seen] == [
        "run_started", "turn_admitted", "model_call", "model_delta", "model_response", "proposals", "verdict",
        "tool_started", "tool_result", "turn_finished", "turn_admitted", "model_call", "model_delta", "model_delta",
        "model_response", "turn_finished", "run_finished"]


def test_journal_is_wal(tmp_path: Path) -> None:
    Journal(str(tmp_path / "j.db"))
    assert sqlite3.connect(tmp_path / "j.db").execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def _started_second_lookup(journal: Journal) -> bool:
    return any(e.kind == "tool_started" and e.payload["call"]["arguments"] == {"order_id": "2"}
               for e in journal.events("run-1"))


def _trajectory(result):
    return [(o.call.id, o.call.name, o.call.arguments, o.content, o.status) for o in result.trajectory]


def test_killed_run_resumes_with_the_same_trajectory_without_repeating_mutations(tmp_path: Path, db_url: str) -> None:
    # reference: the same run, uninterrupted
    ref = build(str(tmp_path / "ref.db"), tmp_path / "ref-side.txt", False, tmp_path / "ref-asked.txt")
    expected = ref.run_sync("refund order 1 and check order 2", run_id="run-1")
    assert expected.outcome is RunOutcome.COMPLETED

    db, side, asked = db_url, tmp_path / "side.txt", tmp_path / "asked.txt"
    journal = open_journal(db)  # created first, so the poll below never races the worker's schema
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "tests.resume_worker", db, str(side), str(asked), "--hang"],
                            cwd=ROOT, env=env)
    deadline = time.time() + 30
    while time.time() < deadline:  # wait until the hanging lookup of order 2 has started
        if _started_second_lookup(journal):
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    kinds = [e.kind for e in journal.events("run-1")]
    assert "tool_started" in kinds and "run_finished" not in kinds and side.read_text() == "refund 1\n"
    assert journal.unfinished_run_ids() == ["run-1"]

    resumed = build(db, side, False, asked).run_sync(run_id="run-1")
    assert resumed.outcome is RunOutcome.COMPLETED
    assert _trajectory(resumed) == _trajectory(expected)
    assert side.read_text() == "refund 1\n"  # the refund ran once, before the kill
    assert asked.read_text() == "asked issue_refund\n"  # the human was not asked again
    reference = [(e.seq, e.kind, e.payload) for e in Journal(str(tmp_path / "ref.db")).events("run-1")]
    assert [(e.seq, e.kind, e.payload) for e in journal.events("run-1")] == reference  # nothing twice
    assert journal.unfinished_run_ids() == []


def test_an_interrupted_mutation_is_reported_not_repeated(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    a = build(db, tmp_path / "side.txt", False, tmp_path / "asked.txt")
    a.run_sync("go", run_id="r")
    # Cut the journal right after the refund started: as if the process died inside the tool.
    con = sqlite3.connect(db)
    query = "SELECT seq FROM events WHERE kind='tool_started' AND payload LIKE '%issue_refund%'"
    seq = con.execute(query).fetchone()[0]
    con.execute("DELETE FROM events WHERE seq > ?", (seq,))
    con.commit()
    (tmp_path / "side.txt").write_text("")
    result = build(db, tmp_path / "side.txt", False, tmp_path / "asked.txt").run_sync(run_id="r")
    assert (tmp_path / "side.txt").read_text() == ""
    refund_obs = [m.content for m in result.messages if m.role == "tool" and m.name == "issue_refund"]
    assert refund_obs == ["issue_refund was cut off by a restart and its effect is unknown. Check the current state "
                          "before calling it again."]
