"""`voiceloop report`: numbers computed from a journal written by real runs, checked exactly."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from loop import Budget, Event, Journal, LoopConfig, RunOutcome, ScriptedModel, ScriptedTurn, ToolCall
from loop.run.cli import add_loop_commands
from loop.run.report import CANCELLED, INTERRUPTED, UNFINISHED, build_report, format_report, percentile
from tests.helpers import Calls, agent, read_tool


def _turn(order_id: str | None = None, text: str = "") -> ScriptedTurn:
    """Every model call reports 900 + 100 tokens, so token headroom is easy to check by hand."""
    calls = [ToolCall("lookup_order", {"order_id": order_id})] if order_id else []
    return ScriptedTurn(text=text, tool_calls=calls, input_tokens=900, output_tokens=100)


def _run(db: str, run_id: str, script: list[ScriptedTurn], config: LoopConfig | None = None) -> RunOutcome:
    result = agent(ScriptedModel(script), [read_tool(Calls())], config, journal_path=db,
                   clock=lambda: 0.0).run_sync("help", run_id=run_id)
    return result.outcome


@pytest.fixture
def journal(tmp_path: Path) -> str:
    db = str(tmp_path / "runs.db")
    assert _run(db, "done-2", [_turn("1"), _turn(text="Shipped.")]) is RunOutcome.COMPLETED
    assert _run(db, "done-1", [_turn(text="Hello.")]) is RunOutcome.COMPLETED
    tight = LoopConfig.profile("task", budget=Budget.of(turns=4))
    assert _run(db, "done-4", [_turn("a"), _turn("b"), _turn("a"), _turn(text="Both shipped.")],
                tight) is RunOutcome.COMPLETED
    assert _run(db, "looping", [_turn("7")] * 5) is RunOutcome.LOOP_DETECTED
    broke = LoopConfig.profile("task", budget=Budget.of(turns=2))
    assert _run(db, "broke", [_turn(str(i)) for i in range(5)], broke) is RunOutcome.BUDGET_EXHAUSTED
    j = Journal(db)  # a process killed right after starting: no terminal event
    j.append(Event("stuck", 0, "run_started", {"goal": "help", "profile": "task", "model": "scripted"}))
    j.close()
    return db


def test_report_numbers(journal: str) -> None:
    report = build_report(journal)
    assert report["runs"] == 6
    assert {k: v["count"] for k, v in report["outcomes"].items()} == {
        "COMPLETED": 3, "BUDGET_EXHAUSTED": 1, "GUARDRAIL_STOP": 0, "LOOP_DETECTED": 1, "APPROVAL_DENIED": 0,
        "ESCALATED": 0, "TOOL_FAILURE": 0, "ERROR": 0, CANCELLED: 0, INTERRUPTED: 0, UNFINISHED: 1}
    assert report["outcomes"]["COMPLETED"]["percent"] == 50.0
    assert report["outcomes"][UNFINISHED]["percent"] == 16.7
    assert report["unfinished_runs"] == ["stuck"]
    assert report["turns_to_completion"] == {"runs": 3, "p50": 2, "p95": 4}
    # depths: done-2 1, done-1 0, done-4 2 (order a twice), looping 3, broke 1, stuck 0
    assert report["repeated_intent_depth"] == {
        "runs": 6, "max": 3, "p50": 1, "p95": 3, "deepest_run": "looping",
        "threshold_known": 6, "reached_threshold": 1, "reached_runs": ["looping"]}
    assert report["headroom_at_completion"] == {
        "turns": {"runs": 3, "p50": 0.9, "p5": 0.0, "under_5pct": 1},  # 18/20, 19/20, 0/4 left
        "tokens": {"runs": 3, "p50": 0.99, "p5": 0.98, "under_5pct": 0},  # 2k, 1k, 4k of 200k used
        "wall_clock_s": {"runs": 3, "p50": 1.0, "p5": 1.0, "under_5pct": 0},  # the clock stands still
        "cost_usd": {"runs": 3, "p50": 1.0, "p5": 1.0, "under_5pct": 0},
        "tool_calls": {"runs": 3, "p50": 0.99, "p5": 0.97, "under_5pct": 0},  # 1, 0, 3 of 100
    }


def test_report_text(journal: str) -> None:
    assert format_report(build_report(journal)).replace(journal, "runs.db") == """\
voiceloop report: runs.db (6 runs)

Outcomes
  outcome                             runs     %
  COMPLETED                              3  50.0
  BUDGET_EXHAUSTED                       1  16.7
  GUARDRAIL_STOP                         0   0.0
  LOOP_DETECTED                          1  16.7
  APPROVAL_DENIED                        0   0.0
  ESCALATED                              0   0.0
  TOOL_FAILURE                           0   0.0
  ERROR                                  0   0.0
  cancelled by the caller (barge-in)     0   0.0
  interrupted (settled on restart)       0   0.0
  unfinished (no terminal outcome)       1  16.7
  unfinished run ids: stuck

Turns to completion (COMPLETED runs: 3)
  p50 2   p95 4

Repeated-intent depth (most uses of one call signature in a run; 6 runs)
  max 3   p50 1   p95 3   deepest: looping
  reached the profile's repeat threshold: 1 of 6 runs with a known profile

Budget headroom at completion (fraction of the ceiling left; COMPLETED runs)
  resource      runs     p50      p5  < 5% left
  turns            3   90.0%    0.0%          1
  tokens           3   99.0%   98.0%          0
  wall_clock_s     3  100.0%  100.0%          0
  cost_usd         3  100.0%  100.0%          0
  tool_calls       3   99.0%   97.0%          0"""


def test_empty_journal_lists_every_outcome_at_zero(tmp_path: Path) -> None:
    db = str(tmp_path / "empty.db")
    Journal(db).close()
    report = build_report(db)
    assert report["runs"] == 0
    assert len(report["outcomes"]) == 11 and all(v == {"count": 0, "percent": 0.0} for v in report["outcomes"].values())
    assert report["turns_to_completion"] == {"runs": 0, "p50": None, "p95": None}
    assert "p50 -   p95 -" in format_report(report)


def test_percentile_is_nearest_rank() -> None:
    assert percentile([], 50) is None
    assert percentile([4, 1, 2], 50) == 2
    assert percentile([4, 1, 2], 95) == 4
    assert percentile([0.5, 0.1, 0.9, 0.3], 5) == 0.1
    assert percentile([7], 5) == 7


def _cli(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="voiceloop")
    add_loop_commands(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


def test_report_command_json(journal: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = _cli(["report", journal, "--json"])
    assert args.func(args) == 0
    assert json.loads(capsys.readouterr().out) == build_report(journal)


def test_report_command_on_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = _cli(["report", str(tmp_path / "nope.db")])
    assert args.func(args) == 2
    assert "no journal at" in capsys.readouterr().err
    assert not (tmp_path / "nope.db").exists()  # reading never creates a journal
