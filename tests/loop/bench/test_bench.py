"""`voiceloop bench loop`: tiny parameters, structure only — timings are never asserted."""

from __future__ import annotations

import argparse
import json

import pytest

from loop.bench.turn_cost import bench_loop, format_bench
from loop.run.cli import add_loop_commands

MODE_KEYS = {"samples", "median_ms", "p95_ms", "max_ms", "run_median_ms", "target_ms"}


def test_bench_with_and_without_journal(capsys: pytest.CaptureFixture[str]) -> None:
    result = bench_loop(turns=3, repeats=2, journal=True, warmup=1)
    assert result["turns"] == 3 and result["repeats"] == 2 and result["warmup"] == 1
    assert list(result["modes"]) == ["no_journal", "journal"]
    for mode in result["modes"].values():
        assert set(mode) == MODE_KEYS
        assert mode["samples"] == 3 * 2  # one sample per turn per measured run
        assert 0 <= mode["median_ms"] <= mode["p95_ms"] <= mode["max_ms"]
        assert mode["run_median_ms"] > 0
    assert "bench loop [journal] 2/2" in capsys.readouterr().err  # progress goes to stderr
    text = format_bench(result)
    assert text.startswith("bench loop: 3 turns x 2 runs (after 1 warm-up runs)")
    assert [line.split()[0] for line in text.splitlines()[2:]] == ["no_journal", "journal"]


def test_bench_without_journal_and_quiet(capsys: pytest.CaptureFixture[str]) -> None:
    result = bench_loop(turns=1, repeats=1, journal=False, warmup=0, progress=False)
    assert list(result["modes"]) == ["no_journal"]
    assert result["modes"]["no_journal"]["samples"] == 1  # a single answering turn
    assert capsys.readouterr().err == ""


def test_bench_rejects_empty_parameters() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        bench_loop(turns=0, repeats=1)


def test_bench_command(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="voiceloop")
    add_loop_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["bench", "loop", "--turns", "2", "--repeats", "1", "--warmup", "0", "--json"])
    assert args.func(args) == 0
    assert set(json.loads(capsys.readouterr().out)["modes"]) == {"no_journal", "journal"}
    with pytest.raises(SystemExit):
        parser.parse_args(["bench", "voice"])  # not registered yet


def test_bench_targets_are_extensible(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="voiceloop")
    parsers = add_loop_commands(parser.add_subparsers(dest="command", required=True),
                                bench_targets={"voice": lambda args: 7})
    parsers["bench voice"].add_argument("--seconds", type=float, default=1.0)
    args = parser.parse_args(["bench", "voice", "--seconds", "2"])
    assert args.func(args) == 7 and args.seconds == 2.0
    with pytest.raises(SystemExit):
        parser.parse_args(["bench", "loop", "--seconds", "2"])  # an option of one bench is not another's
