"""Issue 10, item 5: a write that finished before a SIGKILL keeps its result on resume. Run as a module,
this file is the worker process that gets killed: `python -m tests.loop.test_contract_resume DB SIDE --hang`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from loop import Agent, Journal, LoopConfig, RunOutcome, ScriptedModel, Tool, ToolCall
from loop.store.db import open_journal
from tests.helpers import ORDER_SCHEMA
from tests.paths import ROOT


def build(journal: str, side_effects: Path, hang: bool) -> Agent:
    def create_ticket(order_id: str) -> str:
        with side_effects.open("a") as f:
            f.write(f"ticket {order_id}\n")
        return "ticket T-1 created"

    def notify_customer(order_id: str) -> str:
        if hang:
            time.sleep(60)
        with side_effects.open("a") as f:
            f.write(f"notified {order_id}\n")
        return "customer notified"

    batch = [ToolCall("create_ticket", {"order_id": "1"}), ToolCall("notify_customer", {"order_id": "1"})]
    model = ScriptedModel([batch, "Ticket T-1 is open."])
    tools = [Tool(create_ticket, args=ORDER_SCHEMA, mutates=True),
             Tool(notify_customer, args=ORDER_SCHEMA, mutates=True, timeout_s=120)]
    return Agent(model=model, tools=tools, config=LoopConfig.profile("chat"), journal_path=journal)


def _second_write_started(journal: Journal) -> bool:
    return any(e.kind == "tool_started" and e.payload["call"]["name"] == "notify_customer"
               for e in journal.events("run-1"))


def test_a_write_finished_before_the_kill_keeps_its_result_on_resume(tmp_path: Path, db_url: str) -> None:
    """On both backends (`db_url`: SQLite, then a real PostgreSQL server)."""
    db, side = db_url, tmp_path / "side.txt"
    journal = open_journal(db)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "tests.loop.test_contract_resume", db, str(side), "--hang"],
                            cwd=ROOT, env=env)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not _second_write_started(journal):
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert side.read_text() == "ticket 1\n"
    assert "run_finished" not in [e.kind for e in journal.events("run-1")]

    resumed = build(db, side, hang=False).run_sync(run_id="run-1")
    assert resumed.outcome is RunOutcome.COMPLETED
    observations = {m.name: m.content for m in resumed.messages if m.role == "tool"}
    assert observations == {
        "create_ticket": "ticket T-1 created",  # completed before the kill: its result is known
        "notify_customer": "notify_customer was cut off by a restart and its effect is unknown. Check the "
                           "current state before calling it again.",
    }
    assert side.read_text() == "ticket 1\n"  # nothing ran twice
    kinds = [e.kind for e in journal.events("run-1")]
    assert kinds.count("run_started") == 1 and kinds[-1] == "run_finished"


if __name__ == "__main__":
    journal, side_path, mode = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    build(journal, side_path, mode == "--hang").run_sync("open a ticket for order 1 and tell the customer",
                                                         run_id="run-1")
