"""The loop's subcommands for the `voiceloop` entry point: `report [DB] [--db URL]` and `bench loop`.

Wiring, in the entry point:

    sub = parser.add_subparsers(dest="command", required=True)
    parsers = add_loop_commands(sub, bench_targets={"voice": BenchTarget(cmd_bench_voice, "...", add_voice_args)})
    args = parser.parse_args(argv)
    return args.func(args)

Each bench is a subcommand of `bench` with its own options and help (`voiceloop bench voice --help`); a target is a
`BenchTarget` (or a bare function `(args) -> int`), so the voice and brain benchmarks plug in without touching this
file. The parsers come back by name: `parsers["bench voice"]`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from loop.bench.turn_cost import bench_loop, format_bench
from loop.run.report import build_report, format_report
from loop.store.db import DB_ENV, DatabaseUnavailable, add_db_option, redact

Command = Callable[[argparse.Namespace], int]


def cmd_report(args: argparse.Namespace) -> int:
    """Summarise a journal. Exit 0 on success, 2 when the journal cannot be read."""
    db = args.db_path or args.db or os.environ.get(DB_ENV, "")
    if not db:
        print(f"voiceloop report: which journal? give DB (a SQLite file), --db URL or ${DB_ENV}", file=sys.stderr)
        return 2
    try:
        report = build_report(db)
    except (FileNotFoundError, OSError, DatabaseUnavailable) as exc:
        print(f"voiceloop report: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # sqlite3.DatabaseError and friends: not a voiceloop journal
        print(f"voiceloop report: cannot read {redact(db)} as a journal: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


def cmd_bench_loop(args: argparse.Namespace) -> int:
    """Measure the loop's per-turn overhead with and (unless --no-journal) without the SQLite journal."""
    try:
        result = bench_loop(turns=args.turns, repeats=args.repeats, journal=not getattr(args, "no_journal", False),
                            warmup=getattr(args, "warmup", 3))
    except ValueError as exc:
        print(f"voiceloop bench loop: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2) if args.json else format_bench(result))
    return 0


@dataclass(frozen=True)
class BenchTarget:
    """One bench: what runs it, its one-line help, a longer description, and its own options."""

    run: Command
    help: str = ""
    description: str = ""
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None


def _loop_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--turns", type=int, default=20, help="turns per run (default 20)")
    parser.add_argument("--repeats", type=int, default=30, help="measured runs per mode (default 30)")
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured runs first (default 3)")
    parser.add_argument("--no-journal", action="store_true", help="skip the with-journal measurement")


BENCH_TARGETS: dict[str, BenchTarget] = {"loop": BenchTarget(
    cmd_bench_loop, "the turn loop's own overhead per turn",
    "The turn loop's own per-turn overhead with a zero-latency model and no-op tools, with and without the "
    "SQLite journal.", _loop_arguments)}


def add_loop_commands(subparsers: Any, bench_targets: Mapping[str, Command | BenchTarget] | None = None
                      ) -> dict[str, argparse.ArgumentParser]:
    """Register `report` and `bench` on an `add_subparsers()` object; returns the new parsers by name (`report`,
    `bench`, and `bench NAME` for each bench).

    `bench_targets` adds benches next to `loop` (for example `{"voice": BenchTarget(cmd_bench_voice, ...)}`).
    """
    targets = {**BENCH_TARGETS, **(bench_targets or {})}
    report = subparsers.add_parser("report", help="summarise how the runs in a journal ended",
                                   description="Outcome histogram, turns to completion, repeated-intent depth and "
                                               "budget headroom of the runs in a voiceloop journal.")
    report.add_argument("db_path", metavar="DB", nargs="?", help="journal: a SQLite file (e.g. runs.db) or a URL")
    add_db_option(report)
    report.add_argument("--json", action="store_true", help="print the report as JSON")
    report.set_defaults(func=cmd_report)

    bench = subparsers.add_parser("bench", help="measure overhead and latency",
                                  description="Benchmarks, one per subcommand; each has its own options: "
                                              "voiceloop bench NAME --help.")
    names = bench.add_subparsers(dest="target", required=True, metavar="NAME")
    parsers = {"report": report, "bench": bench}
    for name, target in sorted(targets.items()):
        target = target if isinstance(target, BenchTarget) else BenchTarget(target)
        p = names.add_parser(name, help=target.help, description=target.description or target.help or None)
        p.add_argument("--json", action="store_true", help="print the result as JSON")
        if target.add_arguments is not None:
            target.add_arguments(p)
        p.set_defaults(func=target.run)
        parsers[f"bench {name}"] = p
    return parsers
