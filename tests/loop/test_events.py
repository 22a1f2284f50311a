"""Event kinds and observation statuses are enums whose values are the journal's strings; a run its caller
cut off is reported as cancelled."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import pytest

from loop import EventKind, Journal, ObservationStatus, RunOutcome, ScriptedModel, ScriptedTurn, ToolCall
from loop.act import Observation
from loop.run.cli import add_loop_commands
from loop.run.report import CANCELLED, UNFINISHED, build_report, format_report
from tests.helpers import Calls, agent, read_tool


def test_members_are_the_strings_journals_already_hold() -> None:
    assert EventKind.RUN_CANCELLED == "run_cancelled" and f"loop.{EventKind.TOOL_RESULT}" == "loop.tool_result"
    assert ObservationStatus.DECLINED == "declined" and ObservationStatus("timeout") is ObservationStatus.TIMEOUT


def test_every_emitted_kind_and_status_is_a_member(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": "1"}), ToolCall("nope", {}), "Done."])
    result = agent(model, [read_tool(Calls())], journal_path=db).run_sync("help", run_id="r1")
    assert result.outcome is RunOutcome.COMPLETED
    events = Journal(db).events("r1")
    assert {e.kind for e in events} <= set(EventKind)
    statuses = [e.payload["status"] for e in events if e.kind == EventKind.TOOL_RESULT]
    assert statuses == [ObservationStatus.OK, ObservationStatus.UNKNOWN_TOOL]
    restored = Observation.from_dict(next(e.payload for e in events if e.kind == EventKind.TOOL_RESULT))
    assert restored.status is ObservationStatus.OK


async def _cancelled_run(db: str) -> None:
    slow = ScriptedModel([ScriptedTurn(text="A long answer.", delay_s=5.0)])
    task = asyncio.create_task(agent(slow, [], journal_path=db).run("help", run_id="cut"))
    await asyncio.sleep(0.05)
    task.cancel("caller barged in")
    with pytest.raises(asyncio.CancelledError):
        await task


def test_a_run_the_caller_cut_off_is_reported_as_cancelled(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "runs.db")
    asyncio.run(_cancelled_run(db))
    assert [e.kind for e in Journal(db).events("cut")][-1] == EventKind.RUN_CANCELLED
    report = build_report(db)
    counts = {k: v["count"] for k, v in report["outcomes"].items()}
    assert counts[CANCELLED] == 1 and counts[RunOutcome.COMPLETED] == 0 and counts[UNFINISHED] == 0
    assert report["unfinished_runs"] == []
    parser = argparse.ArgumentParser(prog="voiceloop")
    add_loop_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["report", db])
    assert args.func(args) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("cancelled"))
    assert row.split()[-2:] == ["1", "100.0"]
    assert "COMPLETED" in format_report(report)  # every outcome still has its (empty) row
