"""Issue 11, item 3: a write that outlives its tool timeout is either cancelled for real (rolled back, journaled
as not made) or awaited (journaled as made) — the journal, the orders database and what the caller hears agree."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from pathlib import Path

from loop import Agent, Journal, LoopConfig, RunOutcome, ScriptedModel, Tool, ToolCall
from loop.act import reconciled
from loop.commit_gate import CommitGate
from tests.fakes import LoudnessVAD, ScriptedSTT, ToneTTS, WordChunker, track
from tests.helpers import ORDER_SCHEMA
from voice.demo.order_desk import OrderDesk, order_policy
from voice.runtime.session import CallSession, SessionConfig

REFUND = ToolCall("issue_refund", {"order_id": "4567", "amount": 20}, id="call_refund")


def refunds(desk: OrderDesk) -> list:
    return desk.db.execute("SELECT order_id, amount FROM refunds").fetchall()


def finished(journal: str, name: str) -> list[dict]:
    j = Journal(journal)
    return [e.payload for r in j.run_ids() for e in j.events(r)
            if e.kind == "tool_finished" and e.payload["call"]["name"] == name]


def test_a_write_slower_than_its_timeout_is_rolled_back_and_journaled_as_not_made(tmp_path: Path) -> None:
    desk = OrderDesk(tmp_path / "orders.db", write_delay_s=0.6)
    journal = str(tmp_path / "runs.db")
    agent = Agent(ScriptedModel([REFUND, "The refund did not go through."]), desk.tools(),
                  config=LoopConfig.profile("task", default_tool_timeout_s=0.2), journal_path=journal,
                  approver=lambda call, verdict: True)
    result = agent.run_sync("refund $20 on order 4567")
    time.sleep(0.8)  # long past the write's own delay: had it been left running, it would have landed by now
    assert refunds(desk) == []
    [obs] = finished(journal, "issue_refund")
    assert (obs["status"], obs["executed"]) == ("timeout", False)
    assert obs["content"] == ("issue_refund did not finish within 0.2 s, so it was cancelled before it took "
                              "effect: nothing was changed.")
    assert desk.reconcile("call_refund") is None
    assert result.outcome is RunOutcome.COMPLETED


def test_a_write_already_committing_at_the_deadline_is_awaited_and_journaled_as_made(tmp_path: Path) -> None:
    committed = threading.Event()

    def slow_commit(order_id: str, commit_gate: CommitGate) -> str:
        assert commit_gate.may_commit()  # passed its gate before the deadline...
        time.sleep(0.4)  # ...and the commit itself is slow
        committed.set()
        return f"refunded {order_id}"

    tools = [Tool(slow_commit, args=ORDER_SCHEMA, mutates=True, timeout_s=0.1)]
    journal = str(tmp_path / "runs.db")
    model = ScriptedModel([ToolCall("slow_commit", {"order_id": "1"}), "Refunded."])
    result = Agent(model, tools, config=LoopConfig.profile("task"), journal_path=journal).run_sync("refund 1")
    assert committed.is_set()
    [obs] = finished(journal, "slow_commit")
    assert (obs["status"], obs["executed"], obs["content"]) == ("ok", True, "refunded 1")
    assert [o.status for o in result.trajectory] == ["ok"]


def test_the_gate_decides_once_whoever_comes_first() -> None:
    early = CommitGate()
    assert early.abandon() and not early.may_commit() and early.abandon()
    late = CommitGate()
    assert late.may_commit() and not late.abandon() and late.may_commit()


def test_reconcile_says_what_a_write_cut_off_by_a_restart_really_did(tmp_path: Path) -> None:
    desk = OrderDesk(tmp_path / "orders.db")
    tool = next(t for t in desk.tools() if t.name == "issue_refund")
    made = ToolCall("issue_refund", {"order_id": "4567", "amount": 20}, id="made")
    desk.issue_refund("4567", 20, idempotency_key="made")
    obs = reconciled(made, tool)
    assert (obs.status, obs.executed, obs.content) == ("ok", True, "Done: $20 has been refunded on order 4567.")
    lost = reconciled(ToolCall("issue_refund", {"order_id": "4567", "amount": 20}, id="lost"), tool)
    assert (lost.status, lost.executed) == ("interrupted", False)
    assert lost.content == "issue_refund was cut off by a restart before it took effect, so nothing was changed."
    assert desk.issue_refund("4567", 20, idempotency_key="made") == \
        "That refund of $20 on order 4567 was already made."
    assert refunds(desk) == [("4567", 20.0)]


def said(session: CallSession) -> str:
    return " ".join(e["text"] for e in session.trace if e["kind"] == "agent_said" and e["part"] == "reply")


def test_the_caller_never_hears_a_refund_that_was_rolled_back(tmp_path: Path) -> None:
    desk = OrderDesk(tmp_path / "orders.db", write_delay_s=0.6)
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": "4567"}), REFUND,
                           "Done. I refunded twenty dollars on order 4567."])
    journal = str(tmp_path / "j.db")
    agent = Agent(model=model, tools=desk.tools(), policy=order_policy(), journal_path=journal,
                  config=LoopConfig.profile("voice", default_tool_timeout_s=0.2))
    stt = ScriptedSTT({60: "refund twenty dollars on order 4567.", 12: "yes please."})
    session = CallSession(agent, LoudnessVAD(), stt, ToneTTS(), WordChunker, SessionConfig())
    asyncio.run(session.run_file(track((0.2, 60), (5.5, 12), total_s=14.0)))
    time.sleep(0.8)
    assert refunds(desk) == []
    assert [(o["status"], o["executed"]) for o in finished(journal, "issue_refund")] == [("timeout", False)]
    heard = said(session)
    assert "refunded" not in heard.lower()
    assert "I couldn't refund $20 on order 4567: it didn't go through, so nothing was changed." in heard
    assert heard.strip().endswith(session.turns[-1].agent_text)  # after the lookup's own words
    assert "refunded" not in session.history[-1].content  # the model's claim is not remembered as said


def test_the_caller_hears_a_refund_that_was_made_even_when_the_run_then_fails(tmp_path: Path) -> None:
    from voice.call.write_truth import WriteOutcomes

    outcomes = WriteOutcomes()
    outcomes.ask(REFUND, next(t for t in OrderDesk(tmp_path / "o.db").tools() if t.name == "issue_refund"))
    outcomes.observe({"call": REFUND.to_dict(), "status": "ok", "executed": True, "content": "Done."})
    assert outcomes.override == ""
    assert outcomes.after_failure() == "I did refund $20 on order 4567, but I couldn't finish the rest just now."


def test_a_write_stuck_behind_another_writers_lock_past_its_timeout_never_lands(tmp_path: Path) -> None:
    """The slow part is waiting for the database (another process holds its write lock), not the write itself."""
    import sqlite3

    desk = OrderDesk(tmp_path / "orders.db")
    other = sqlite3.connect(tmp_path / "orders.db", isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # holds the write lock
    release = threading.Timer(0.6, lambda: other.execute("COMMIT"))
    release.start()
    journal = str(tmp_path / "runs.db")
    agent = Agent(ScriptedModel([REFUND, "It did not go through."]), desk.tools(), journal_path=journal,
                  config=LoopConfig.profile("task", default_tool_timeout_s=0.2), approver=lambda call, verdict: True)
    agent.run_sync("refund $20 on order 4567")
    release.join()
    time.sleep(0.3)  # the lock is free: an abandoned write that went on would land now
    assert refunds(desk) == []
    assert [(o["status"], o["executed"]) for o in finished(journal, "issue_refund")] == [("timeout", False)]


async def _cancel_when(started: threading.Event, agent: Agent) -> None:
    task = asyncio.create_task(agent.run("refund $20 on order 4567", run_id="r"))
    while not started.is_set():
        await asyncio.sleep(0.01)
    task.cancel("caller barged in")
    with contextlib.suppress(asyncio.CancelledError):
        await task


def test_a_run_withdrawn_during_a_slow_write_rolls_the_write_back(tmp_path: Path) -> None:
    desk = OrderDesk(tmp_path / "orders.db", write_delay_s=0.5)
    started = threading.Event()
    journal = str(tmp_path / "runs.db")
    agent = Agent(ScriptedModel([REFUND, "Done."]), desk.tools(), journal_path=journal,
                  config=LoopConfig.profile("task"), approver=lambda call, verdict: True,
                  listeners=[lambda ev: started.set() if ev.kind == "tool_started" else None])
    asyncio.run(_cancel_when(started, agent))
    time.sleep(0.8)
    assert refunds(desk) == []
    kinds = [e.kind for e in Journal(journal).events("r")]
    assert kinds[-1] == "run_cancelled" and "tool_finished" not in kinds
    assert desk.reconcile("call_refund") is None  # what a later settle or resume will find: not made


def test_a_run_withdrawn_while_its_write_commits_journals_the_write(tmp_path: Path) -> None:
    started, committed = threading.Event(), threading.Event()

    def slow_commit(order_id: str, commit_gate: CommitGate) -> str:
        assert commit_gate.may_commit()
        started.set()
        time.sleep(0.3)
        committed.set()
        return f"refunded {order_id}"

    journal = str(tmp_path / "runs.db")
    agent = Agent(ScriptedModel([ToolCall("slow_commit", {"order_id": "1"}), "Refunded."]),
                  [Tool(slow_commit, args=ORDER_SCHEMA, mutates=True)], journal_path=journal,
                  config=LoopConfig.profile("task"))
    asyncio.run(_cancel_when(started, agent))
    assert committed.is_set()
    events = Journal(journal).events("r")
    assert [e.kind for e in events][-2:] == ["tool_finished", "run_cancelled"]
    assert events[-2].payload["status"] == "ok" and events[-2].payload["content"] == "refunded 1"
