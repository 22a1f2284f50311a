"""The journal: append before emit, and resume through the same code path after a real SIGKILL."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from loop import Journal, RunOutcome, ScriptedModel, ToolCall
from tests.helpers import Calls, agent, read_tool
from tests.resume_worker import build

ROOT = Path(__file__).resolve().parents[1]


def test_every_event_is_durable_before_a_listener_sees_it(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    seen = []

    def listener(event):
        rows = sqlite3.connect(db).execute("SELECT kind FROM events WHERE run_id=? AND seq=?",
                                           (event.run_id, event.seq)).fetchall()
        seen.append((event.kind, rows[0][0] if rows else None))

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


def _started_second_lookup(db: str) -> bool:
    try:  # the worker may not have created the file or its schema yet
        query = "SELECT count(*) FROM events WHERE kind='tool_started' AND payload LIKE '%\"2\"%'"
        return bool(sqlite3.connect(db).execute(query).fetchone()[0])
    except sqlite3.OperationalError:
        return False


def _trajectory(result):
    return [(o.call.id, o.call.name, o.call.arguments, o.content, o.status) for o in result.trajectory]


def test_killed_run_resumes_with_the_same_trajectory_without_repeating_mutations(tmp_path: Path) -> None:
    # reference: the same run, uninterrupted
    ref = build(str(tmp_path / "ref.db"), tmp_path / "ref-side.txt", False, tmp_path / "ref-asked.txt")
    expected = ref.run_sync("refund order 1 and check order 2", run_id="run-1")
    assert expected.outcome is RunOutcome.COMPLETED

    db, side, asked = str(tmp_path / "runs.db"), tmp_path / "side.txt", tmp_path / "asked.txt"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "tests.resume_worker", db, str(side), str(asked), "--hang"],
                            cwd=ROOT, env=env)
    deadline = time.time() + 30
    while time.time() < deadline:  # wait until the hanging lookup of order 2 has started
        if _started_second_lookup(db):
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    kinds = [e.kind for e in Journal(db).events("run-1")]
    assert "run_finished" not in kinds and side.read_text() == "refund 1\n"

    resumed = build(db, side, False, asked).run_sync(run_id="run-1")
    assert resumed.outcome is RunOutcome.COMPLETED
    assert _trajectory(resumed) == _trajectory(expected)
    assert side.read_text() == "refund 1\n"  # the refund ran once, before the kill
    assert asked.read_text() == "asked issue_refund\n"  # the human was not asked again
    reference_kinds = [e.kind for e in Journal(str(tmp_path / "ref.db")).events("run-1")]
    assert [e.kind for e in Journal(db).events("run-1")] == reference_kinds


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
