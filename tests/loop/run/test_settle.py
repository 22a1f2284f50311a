"""Issue 11, item 4: a run a killed process left open is settled on start — resumed through the normal path
when it can be, else closed with `run_interrupted`, its cut-off writes reconciled against the database."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from loop import Agent, Journal, LoopConfig, RunOutcome, ScriptedModel, ToolCall
from loop.events import RUN_ENDS, EventKind
from loop.run.report import build_report, format_report
from loop.run.settle import settle_unfinished
from voice.demo.order_desk import OrderDesk

REFUND = ToolCall("issue_refund", {"order_id": "4567", "amount": 20}, id="call_refund")


def refunded_run(tmp_path: Path) -> tuple[str, OrderDesk, Agent]:
    """A whole refund run, journaled; tests cut its journal short to stand for a kill at some point."""
    desk, journal = OrderDesk(tmp_path / "orders.db"), str(tmp_path / "runs.db")
    agent = Agent(ScriptedModel([REFUND, "Done: I refunded $20."]), desk.tools(), journal_path=journal,
                  config=LoopConfig.profile("task", mutations_need_approval=True), approver=lambda c, v: True)
    agent.run_sync("refund $20 on order 4567", run_id="r1")
    return journal, desk, agent


def kill_at(journal: str, kind: EventKind, *, keep: bool) -> None:
    """Drop every event from the first `kind` on (or just after it, with keep=True): the process died there."""
    db = sqlite3.connect(journal)
    seq = db.execute("SELECT min(seq) FROM events WHERE run_id='r1' AND kind=?", (kind.value,)).fetchone()[0]
    db.execute("DELETE FROM events WHERE run_id='r1' AND seq >= ?", (seq + 1 if keep else seq,))
    db.commit()


def rolled_back(desk: OrderDesk) -> None:
    """The kill came before COMMIT: SQLite rolls the open transaction back."""
    desk.db.execute("DELETE FROM refunds")
    desk.db.execute("DELETE FROM applied")


def settle(journal: str, desk: OrderDesk) -> list:
    tools = {t.name: t for t in desk.tools()}
    return asyncio.run(settle_unfinished(Journal(journal), tools))


def closing(journal: str) -> dict:
    events = Journal(journal).events("r1")
    assert [e.kind for e in events if e.kind in RUN_ENDS] == ["run_interrupted"]
    return events[-1].payload


def test_a_write_that_committed_before_the_kill_is_reconciled_as_made(tmp_path: Path) -> None:
    journal, desk, _ = refunded_run(tmp_path)
    kill_at(journal, EventKind.TOOL_STARTED, keep=True)  # the row landed; its result was never journaled
    [settled] = settle(journal, desk)
    assert (settled.how, settled.outcome) == ("closed", "INTERRUPTED")
    payload = closing(journal)
    assert [(w["call"]["name"], w["effect"]) for w in payload["writes"]] == [("issue_refund", "made")]
    assert payload["reason"].startswith("server restarted: issue_refund had taken effect (Done: $20 has been "
                                        "refunded on order 4567.)")
    finished = [e.payload for e in Journal(journal).events("r1") if e.kind == "tool_finished"]
    assert [(f["status"], f["executed"]) for f in finished] == [("ok", True)]
    assert desk.db.execute("SELECT count(*) FROM refunds").fetchone() == (1,)
    assert settle(journal, desk) == []  # settled once: nothing is open any more


def test_a_write_cut_off_before_its_commit_is_journaled_as_not_made(tmp_path: Path) -> None:
    journal, desk, _ = refunded_run(tmp_path)
    kill_at(journal, EventKind.TOOL_STARTED, keep=True)
    rolled_back(desk)
    settle(journal, desk)
    payload = closing(journal)
    assert [(w["call"]["name"], w["effect"], w["status"]) for w in payload["writes"]] == \
        [("issue_refund", "not made", "interrupted")]
    assert "issue_refund did not take effect (interrupted)" in payload["reason"]
    assert desk.db.execute("SELECT count(*) FROM refunds").fetchone() == (0,)


def test_a_write_waiting_for_approval_is_closed_as_never_run(tmp_path: Path) -> None:
    journal, desk, _ = refunded_run(tmp_path)
    kill_at(journal, EventKind.APPROVAL, keep=False)
    rolled_back(desk)
    settle(journal, desk)
    payload = closing(journal)
    assert payload["reason"] == "server restarted: issue_refund was waiting for approval and was not run"
    assert [w["effect"] for w in payload["writes"]] == ["not made"]


def test_a_run_that_can_be_resumed_is_resumed_through_the_normal_path(tmp_path: Path) -> None:
    journal, desk, _ = refunded_run(tmp_path)
    kill_at(journal, EventKind.TOOL_FINISHED, keep=True)  # killed after the write's result was journaled
    tools = {t.name: t for t in desk.tools()}
    again = Agent(ScriptedModel([REFUND, "Done: I refunded $20."]), desk.tools(), journal_path=journal,
                  config=LoopConfig.profile("task", mutations_need_approval=True), approver=lambda c, v: True)
    [settled] = asyncio.run(settle_unfinished(Journal(journal), tools, resume=lambda run_id: again))
    assert (settled.how, settled.outcome) == ("resumed", RunOutcome.COMPLETED.value)
    assert desk.db.execute("SELECT count(*) FROM refunds").fetchone() == (1,)  # not paid twice
    assert [e.kind for e in Journal(journal).events("r1")][-1] == "run_finished"


def test_report_lists_how_each_settled_run_ended(tmp_path: Path) -> None:
    journal, desk, _ = refunded_run(tmp_path)
    kill_at(journal, EventKind.APPROVAL, keep=False)
    settle(journal, desk)
    report = build_report(journal)
    assert report["outcomes"]["interrupted (settled on restart)"]["count"] == 1
    assert report["unfinished_runs"] == []
    assert [r["run_id"] for r in report["interrupted_runs"]] == ["r1"]
    assert "r1: server restarted: issue_refund was waiting for approval and was not run" in format_report(report)
