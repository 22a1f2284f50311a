"""`voiceloop bench load`: the model stand-in through the real OpenAI-compatible client, a short real run (N = 1, 2
phone calls against a real `voiceloop serve`) with its table, CSVs and plot, and the report's arithmetic."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from loop.bench.stats import percentile
from loop.models.openai import OpenAICompatModel
from loop.types import Message, ModelRequest, TextDelta
from tests.paths import ROOT
from voice.bench import load_fleet
from voice.bench.llm_standin import REPLIES
from voice.bench.load import LoadConfig, start_standin
from voice.bench.load_caller import CallResult, TurnResult
from voice.bench.load_report import (
    STEP_COLUMNS,
    TURN_COLUMNS,
    ServerUsage,
    format_parts,
    largest_holding,
    step_row,
    svg_plot,
)
from voice.bench.load_usage import latency_parts, model_calls_served


async def test_the_standin_streams_a_reply_after_its_time_to_first_token(tmp_path: Path) -> None:
    proc, url = start_standin(LoadConfig(ttft_ms=250, tokens_per_s=200), tmp_path)
    try:
        model = OpenAICompatModel(url, "standin")
        started, first, text = time.perf_counter(), None, ""
        async for event in model.stream(ModelRequest([Message("user", "where is my order?")], [], 64)):
            if isinstance(event, TextDelta) and event.text:
                first = first or time.perf_counter()
                text += event.text
        await model.aclose()
        served = model_calls_served(url)
    finally:
        proc.terminate()
        proc.wait(10)
    assert served == 1  # what `bench load` reads per step as model calls per answered turn
    assert text in REPLIES
    assert first is not None and first - started >= 0.25  # never sooner than the configured first token


async def test_with_a_real_model_server_the_standin_passes_each_request_on_and_counts_it(tmp_path: Path) -> None:
    """`bench load --llm-url`: the requests of both voice servers reach the real model as they came, its answer
    streams back, and the counter still says how many there were."""
    (tmp_path / "real").mkdir()
    real, real_url = start_standin(LoadConfig(ttft_ms=50, tokens_per_s=500), tmp_path / "real")
    counter, url = start_standin(LoadConfig(llm_url=real_url), tmp_path)
    try:
        model = OpenAICompatModel(url, "standin")
        texts = []
        for said in ("where is my order?", "I want a refund"):
            text = ""
            async for event in model.stream(ModelRequest([Message("user", said)], [], 64)):
                text += event.text if isinstance(event, TextDelta) else ""
            texts.append(text)
        await model.aclose()
        assert model_calls_served(url) == 2 and model_calls_served(real_url) == 2
    finally:
        for proc in (counter, real):
            proc.terminate()
            proc.wait(10)
    assert all(text in REPLIES for text in texts)


def test_bench_load_runs_real_calls_and_writes_its_table_csvs_and_plot(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "voice.cli", "bench", "load", "--steps", "1,2", "--call-turns", "2",
                          "--spread-s", "1", "--out", str(out)], cwd=ROOT, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode in (0, 1), run.stderr[-3000:]  # 1: the target was not held on this (busy) machine
    assert "N=2: server up" in run.stderr and "2/2 calls done" in run.stderr  # progress per step
    assert "v2v p95" in run.stdout and "largest N with p95 voice-to-voice <= 1.5 s" in run.stdout
    assert "llm/turn" in run.stdout  # model requests per answered turn
    assert "where the wait went" in run.stdout  # the server's own account of each answer's wait, per part
    with (out / "load.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [r["calls"] for r in rows] == ["1", "2"] and set(STEP_COLUMNS) <= set(rows[0])
    turns_csv = (out / "load_turns.csv").read_text()
    for row in rows:  # every turn answered, nothing dropped, every journaled run finished or cancelled
        assert row["unanswered"] == "0" and row["dropped"] == "0" and row["runs_open"] == "0", row
        assert int(row["turns"]) == 2 * int(row["calls"]), (row, turns_csv, run.stderr[-2000:])
        assert int(row["runs"]) >= int(row["turns"]), row
        assert float(row["v2v_p50_ms"]) > 0 and float(row["rss_peak_mb"]) > float(row["rss_idle_mb"]) > 0
        assert float(row["stt_p50_ms"]) >= 0 and float(row["llm_first_token_p50_ms"]) > 0, row
        assert 1.0 <= float(row["model_calls_per_turn"]) < 6.0, row  # each answer asked the model, speculation too
    with (out / "load_turns.csv").open() as f:
        turns = list(csv.DictReader(f))
    assert tuple(turns[0]) == TURN_COLUMNS and len(turns) == 6
    assert any(t["barge_in"] == "1" and t["barge_stop_ms"] for t in turns)  # the second turn talked over the agent
    assert (out / "load_p95.svg").read_text().startswith("<svg")


def test_the_servers_turn_latencies_are_read_part_by_part_from_its_log() -> None:
    log = "\n".join([
        'INFO voiceloop.calls: call a1 turn latencies: [{"endpointing": 480.0, "stt": 120.5}, {"stt": 300}]',
        "INFO voiceloop.calls: call a2 turn latencies: []",
        "INFO voiceloop.calls: call a3 turn latencies: [not json",  # a torn line is skipped, not fatal
        'INFO voiceloop.calls: call a4 turn latencies: [{"endpointing": 1216.0}]'])
    assert latency_parts(log) == {"endpointing": [480.0, 1216.0], "stt": [120.5, 300.0]}
    usage = ServerUsage(cpu_s=1, wall_s=1, parts=latency_parts(log))
    row = step_row(1, _calls([800.0]), usage, 1500)
    assert row.parts["stt"] == (percentile([120.5, 300.0], 50), percentile([120.5, 300.0], 95))
    table = format_parts([row])
    assert "endpointing" in table and "1216" in table and "llm_first_token" in table


def _calls(v2v: list[float | None], dropped: str = "") -> list[CallResult]:
    return [CallResult(0, [TurnResult(i, "x", False, v) for i, v in enumerate(v2v)], dropped, 10.0)]


def test_a_step_holds_only_within_target_with_nothing_dropped_unanswered_or_open() -> None:
    usage = ServerUsage(cpu_s=5.0, wall_s=10.0, rss_idle_mb=200, rss_peak_mb=300, runs=3)
    fine = step_row(1, _calls([800.0, 900.0, 1000.0]), usage, 1500)
    assert fine.holds and fine.v2v_p50_ms == 900.0 and fine.server_cpu_pct == 50.0 and fine.mb_per_call == 100.0
    assert not step_row(2, _calls([800.0, 1600.0]), usage, 1500).holds
    unanswered = step_row(3, _calls([800.0, None]), usage, 1500)
    assert not unanswered.holds and unanswered.v2v_p95_ms == float("inf")  # counted as infinitely late
    assert not step_row(4, _calls([800.0], dropped="closed"), usage, 1500).holds
    left_open = ServerUsage(cpu_s=1, wall_s=1, runs_open=["turn_admitted"])
    assert not step_row(5, _calls([800.0]), left_open, 1500).holds
    rows = [fine, step_row(5, _calls([900.0]), usage, 1500), step_row(10, _calls([2000.0]), usage, 1500),
            step_row(20, _calls([900.0]), usage, 1500)]
    assert largest_holding(rows) == 5  # a lucky step after a failing one does not count
    assert "target p95 1.5 s" in svg_plot(rows, 1500, "t")


@pytest.mark.parametrize("steps", ["0", "a,b", "", "40,40"])
def test_bad_steps_are_a_usage_error(steps: str) -> None:
    run = subprocess.run([sys.executable, "-m", "voice.cli", "bench", "load", "--steps", steps], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "--steps" in run.stderr


def bench_load_speech_remote(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`bench load` with speech off the box, one-turn calls starting at once; CSVs in tmp_path/out, each ended
    call's trace in tmp_path/traces."""
    return subprocess.run([sys.executable, "-m", "voice.cli", "bench", "load", "--call-turns", "1", "--spread-s", "0",
                           "--stt", "openai", "--tts", "openai", "--out", str(tmp_path / "out"),
                           f"--serve-arg=--trace-dir={tmp_path / 'traces'}", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_with_speech_off_the_box_a_call_runs_through_the_speech_stand_in(tmp_path: Path) -> None:
    """`bench load --stt openai --tts openai`: the server's speech is the canned audio stand-in (no models, a fixed
    latency), so what is measured is voiceloop's own work; one call, one turn, answered."""
    out = tmp_path / "out"
    run = bench_load_speech_remote(tmp_path, "--steps", "1", "--speech-latency-ms", "100")
    assert run.returncode in (0, 1), run.stderr[-3000:]
    assert "speech stand-in at http://127.0.0.1:" in run.stderr and "no models, 100 ms a request" in run.stderr
    with (out / "load.csv").open() as f:
        (row,) = list(csv.DictReader(f))
    # the server loaded no Whisper of its own: the turn was heard through the stand-in
    assert row["answered"] == "1" and row["unanswered"] == "0" and row["dropped"] == "0", row
    (trace,) = (tmp_path / "traces").glob("*.jsonl")  # serve --trace-dir: the ended call's trace, a line an event
    kinds = [json.loads(line)["kind"] for line in trace.read_text().splitlines()]
    assert "caller_turn_ended" in kinds and "agent_audio_started" in kinds and kinds[-1] == "call_ended", kinds


def test_a_callers_speech_ends_at_its_last_words_not_at_a_click_in_the_trailing_silence(tmp_path: Path) -> None:
    """The caller measures voice-to-voice from where its speech ends: a lone click after it (osr34_010 has one
    0.5 s after its last word) once put that end after the agent's prompt answer, and the turn read unanswered."""
    from voice.audio import write_wav
    from voice.bench.load_caller import Utterance

    rate = 16000
    t = np.arange(int(1.0 * rate)) / rate
    speech = (8000 * np.sin(2 * np.pi * 220 * t)).astype(np.int16)
    click = np.zeros(int(0.6 * rate), np.int16)
    click[int(0.5 * rate):int(0.52 * rate)] = 1500  # one 20 ms frame, -15 dB: loud, but not speech
    path = tmp_path / "call.wav"
    write_wav(path, np.concatenate([np.zeros(int(0.3 * rate), np.int16), speech, click]), rate)
    utterance = Utterance.load(path)
    assert utterance.speech_start_s == pytest.approx(0.3, abs=0.03)
    assert utterance.speech_end_s == pytest.approx(1.3, abs=0.03)


@pytest.mark.skipif(shutil.which("haproxy") is None, reason="needs haproxy (apt-get install haproxy; CI installs it)")
def test_with_workers_the_calls_spread_over_server_processes_behind_haproxy(tmp_path: Path) -> None:
    """`bench load --workers 2`: two `voiceloop serve` processes behind HAProxy (configs/haproxy.cfg, leastconn),
    two calls at once: each process takes one, every turn is answered, and the step's figures add both up."""
    out = tmp_path / "out"
    run = bench_load_speech_remote(tmp_path, "--steps", "2", "--workers", "2")
    assert run.returncode in (0, 1), run.stderr[-3000:]
    assert "2 workers behind HAProxy" in run.stderr and "a server exited" not in run.stderr, run.stderr[-3000:]
    with (out / "load.csv").open() as f:
        (row,) = list(csv.DictReader(f))
    assert row["workers"] == "2" and row["answered"] == "2" and row["unanswered"] == "0", row
    assert row["runs_open"] == "0", row
    assert int(row["runs"]) >= 2, row  # both workers' journals are counted
    logs = sorted(out.glob("server_n2_w*.log"))
    assert len(logs) == 2 and all("turn latencies" in log.read_text() for log in logs)  # a call on each worker
    assert len(list((tmp_path / "traces").glob("*.jsonl"))) == 2


def test_the_balancer_gets_one_server_line_per_worker() -> None:
    shipped = load_fleet.HAPROXY_CFG.read_text()
    three = load_fleet.config_for(3, shipped)
    assert [line.split()[1] for line in three.splitlines() if line.strip().startswith("server s")] == ["s1", "s2", "s3"]
    assert '"${VOICELOOP_SERVER_3}" cookie s3' in three and "balance leastconn" in three
    assert load_fleet.config_for(2, shipped) == shipped  # two: the file as shipped
