"""What a step's servers used and did, read after the fact: CPU and memory from /proc, the speech work and each
answer's latency parts from their logs, and the runs from their journals (several with `--workers`)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import urllib.request
from pathlib import Path


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def status_mb(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


SPEECH_WORK = re.compile(r"speech work: (\d+) transcriptions \(mean ([\d.]+) s asked -> text\), "
                         r"Whisper busy ([\d.]+) s for (\d+) windows in (\d+) batches .*?; "
                         r"(\d+) syntheses, TTS busy ([\d.]+) s")
TURN_WORK = re.compile(r"speech work: .*; end of turn scored (\d+) pauses, skipped (\d+)")


def speech_work(server_log: str) -> dict[str, float]:
    """The server's own count of its speech work (logged when it stops), or {} if it did not say."""
    found = SPEECH_WORK.findall(server_log)
    if not found:
        return {}
    keys = ("transcriptions", "stt_wait_s", "stt_busy_s", "windows", "batches", "syntheses", "tts_busy_s")
    work = dict(zip(keys, map(float, found[-1]), strict=True))
    turn = TURN_WORK.findall(server_log)  # absent when the server ran without an end-of-turn model
    work["turn_scored"], work["turn_skipped"] = map(float, turn[-1]) if turn else (0.0, 0.0)
    return work


TURN_LATENCIES = re.compile(r"call \S+ turn latencies: (\[.*\])$", re.M)


def latency_parts(server_log: str) -> dict[str, list[float]]:
    """Every answered turn's wait, part by part (endpointing, stt, llm_first_token, ...), from the server's log."""
    parts: dict[str, list[float]] = {}
    for found in TURN_LATENCIES.findall(server_log):
        with contextlib.suppress(ValueError):
            for turn in json.loads(found):
                for part, ms in turn.items():
                    parts.setdefault(part, []).append(float(ms))
    return parts


def journal_runs(db_path: Path) -> tuple[int, list[str]]:
    """(runs, last event kind of every run that neither finished nor was cancelled). Speculation (`prefetch-` ids,
    `loop.prefetch`) is not a run: a prefetch still open is counted open all the same."""
    if not db_path.is_file():
        return 0, []
    db = sqlite3.connect(f"{db_path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        last = db.execute("SELECT run_id, kind FROM events e WHERE seq = "
                          "(SELECT max(seq) FROM events WHERE run_id = e.run_id)").fetchall()
    finally:
        db.close()
    runs = sum(not run_id.startswith("prefetch-") for run_id, _ in last)
    return runs, [k for _, k in last if k not in ("run_finished", "run_cancelled", "prefetch_finished")]


def speech_work_of(logs: list[str]) -> dict[str, float]:
    """Several servers' speech work as one: counts and busy seconds add up, the mean wait is weighted by count."""
    each = [w for w in map(speech_work, logs) if w]
    if not each:
        return {}
    total = {key: sum(w[key] for w in each) for key in each[0]}
    count = total["transcriptions"]
    total["stt_wait_s"] = sum(w["stt_wait_s"] * w["transcriptions"] for w in each) / count if count else 0.0
    return total


def latency_parts_of(logs: list[str]) -> dict[str, list[float]]:
    parts: dict[str, list[float]] = {}
    for log in logs:
        for part, values in latency_parts(log).items():
            parts.setdefault(part, []).extend(values)
    return parts


def journal_runs_of(db_paths: list[Path]) -> tuple[int, list[str]]:
    runs, still_open = 0, []
    for path in db_paths:
        n, kinds = journal_runs(path)
        runs, still_open = runs + n, still_open + kinds
    return runs, still_open


def model_calls_served(llm_url: str) -> int | None:
    """Requests the model stand-in (`voice.bench.llm_standin`) has answered so far; None if it cannot say."""
    try:
        with urllib.request.urlopen(f"{llm_url.rstrip('/')}/stats", timeout=5) as response:
            return int(json.load(response)["completions"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
