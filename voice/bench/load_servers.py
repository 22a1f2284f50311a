"""The processes `voiceloop bench load` starts (`voice.bench.load`): the model and audio stand-ins, the server
under load (one process, or `workers` of them), each waited for until it says where it listens, stopped as an
operator would (SIGTERM), and their CPU and memory read; and the bench's settings (`LoadConfig`)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from voice.bench import load_pipecat
from voice.bench.load_usage import cpu_s, status_mb
from voice.testing.scripted_call import FIXTURES

# the spawned server and stand-in import exactly what this process imports (a checkout, a worktree, site-packages)
IMPORT_PATH = os.pathsep.join(p for p in sys.path if p)
RECORDINGS = FIXTURES / "recordings" / "telephone"  # real 8 kHz phone recordings
DEFAULT_OUT = Path("out") / "bench"
OPERATOR = "bench-load-operator-token"  # the server's, for this run only


@dataclass
class LoadConfig:
    steps: list[int] = field(default_factory=lambda: [1, 5, 10, 20, 30, 40])
    turns: int = 3
    ttft_ms: float = 300.0
    tokens_per_s: float = 50.0
    spread_s: float = 10.0  # calls start at random offsets within this many seconds
    target_ms: float = 1500.0
    seed: int = 7
    serve_args: list[str] = field(default_factory=list)  # extra `voiceloop serve` flags (the levers)
    env: dict[str, str] = field(default_factory=dict)  # extra environment for the server
    out: Path = DEFAULT_OUT
    recordings: str | Path = RECORDINGS  # folders of *.wav or wav files, comma-separated
    remote_stt: bool = False  # --stt openai: the server's speech-to-text is the audio stand-in (no models)
    remote_tts: bool = False  # --tts openai: likewise its text-to-speech; both: voiceloop's own cost per call
    speech_latency_ms: float = 150.0  # the audio stand-in's fixed latency per request
    workers: int = 1  # server processes per step; above 1 behind HAProxy (voice/bench/load_fleet.py)
    compare: str = ""  # "pipecat": each step then runs against the Pipecat bot too (voice/bench/load_pipecat.py)
    llm_url: str = ""  # a real OpenAI-compatible model server (.../v1) instead of the stand-in: passed through, counted
    pipecat_agent: tuple[Path, str] | None = None  # with a real model: the bot's copy of the agent (spec, tool URL)


def _drain(stream: TextIO, sink: list[str]) -> None:
    for line in stream:
        sink.append(line)


def _launch(cmd: list[str], env: dict[str, str], pattern: str, log: Path, timeout_s: float = 180.0,
            ) -> tuple[subprocess.Popen[str], re.Match[str]]:
    """Start a process and wait for a stdout line matching `pattern`; stdout is drained afterwards."""
    proc = subprocess.Popen(cmd, env=env, text=True, stdout=subprocess.PIPE, stderr=log.open("w"))
    assert proc.stdout is not None
    deadline, lines = time.monotonic() + timeout_s, []
    for line in proc.stdout:
        lines.append(line)
        if m := re.search(pattern, line):
            threading.Thread(target=_drain, args=(proc.stdout, lines), daemon=True).start()
            return proc, m
        if time.monotonic() > deadline:
            break
    proc.kill()
    raise RuntimeError(f"{' '.join(cmd[:4])} did not start: {log.read_text()[-2000:]}")


def _stop(proc: subprocess.Popen[str], timeout_s: float = 30.0) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def _start_standin(module: str, args: list[str], log: Path) -> tuple[subprocess.Popen[str], str]:
    """A stand-in server (`voice.bench.llm_standin`, `voice.bench.audio_standin`) on a free port, and its URL."""
    cmd = [sys.executable, "-m", module, "--port", "0", *args]
    proc, m = _launch(cmd, {**os.environ, "PYTHONPATH": IMPORT_PATH}, r"listening on (http://\S+)", log, 60)
    return proc, m.group(1)


def start_standin(cfg: LoadConfig, workdir: Path) -> tuple[subprocess.Popen[str], str]:
    upstream = ["--upstream", cfg.llm_url] if cfg.llm_url else []
    return _start_standin("voice.bench.llm_standin", [*upstream, "--ttft-ms", f"{cfg.ttft_ms:g}",
                                                      "--tokens-per-s", f"{cfg.tokens_per_s:g}"],
                          workdir / "standin.log")


def start_audio_standin(cfg: LoadConfig, workdir: Path) -> tuple[subprocess.Popen[str], str]:
    return _start_standin("voice.bench.audio_standin", ["--canned", "--latency-ms", f"{cfg.speech_latency_ms:g}"],
                          workdir / "audio_standin.log")


def start_server(cfg: LoadConfig, n: int, llm_url: str, data: Path, log: Path) -> tuple[subprocess.Popen[str], int]:
    env = {**os.environ, "PYTHONPATH": IMPORT_PATH, "VOICELOOP_TOKEN": "bench-load-caller-token",
           "VOICELOOP_OPERATOR_TOKEN": OPERATOR, "VOICELOOP_LLM_URL": llm_url, "VOICELOOP_LLM_MODEL": "standin",
           # the stand-in's fixed replies to recordings of any words: the model path is what is measured, as Pipecat's;
           # a real model (--llm-url) is grounded as any agent's is
           "VOICELOOP_LLM_GROUNDING": "on" if cfg.llm_url else "off",
           **cfg.env}
    env.pop("TWILIO_AUTH_TOKEN", None)
    speech = ["--stt", "openai" if cfg.remote_stt else "tiny.en", "--tts", "openai" if cfg.remote_tts else "piper"]
    cmd = [sys.executable, "-m", "voice.cli", "serve", "--port", "0", "--llm", "openai", *speech,
           "--data-dir", str(data), "--max-calls", str(n), "--max-calls-per-source", str(n),
           "--max-pending-per-source", str(n),
           "--no-twilio-key", *cfg.serve_args]  # the callers come straight to the stream, not through our TwiML
    proc, m = _launch(cmd, env, r"listening on http://127\.0\.0\.1:(\d+)/", log)
    return proc, int(m.group(1))


@dataclass
class Worker:
    proc: subprocess.Popen[str]
    port: int
    log: Path
    journal: Path


def start_workers(cfg: LoadConfig, n: int, llm_url: str, data: Path, log: Path, server: str) -> list[Worker]:
    """`cfg.workers` server processes (voiceloop or the Pipecat bot), each with its own data folder and log."""
    started: list[Worker] = []
    try:
        for w in range(cfg.workers):
            w_data = data if cfg.workers == 1 else data.with_name(f"data_w{w + 1}")
            w_log = log if cfg.workers == 1 else log.with_name(f"{log.stem}_w{w + 1}.log")
            w_data.mkdir(parents=True)
            if server == "voiceloop":
                proc, port = start_server(cfg, n, llm_url, w_data, w_log)
            else:
                remote = {"stt_url": cfg.env.get("VOICELOOP_STT_URL") if cfg.remote_stt else None,
                          "tts_url": cfg.env.get("VOICELOOP_TTS_URL") if cfg.remote_tts else None}
                proc, port = load_pipecat.start_pipecat(_launch, llm_url, w_log, **remote, agent=cfg.pipecat_agent)
            started.append(Worker(proc, port, w_log, w_data / "journal.db"))
    except BaseException:
        for worker in started:
            _stop(worker.proc)
        raise
    return started


def _cpu_of(procs: Sequence[subprocess.Popen[str]]) -> float:
    return sum(cpu_s(p.pid) for p in procs)


def _memory_of(procs: Sequence[subprocess.Popen[str]], key: str) -> float:
    return sum(status_mb(p.pid, key) for p in procs)
