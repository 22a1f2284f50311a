"""`voiceloop bench load`: how many phone calls one machine holds at a latency callers accept.

    voiceloop bench load [--steps 1,5,10,20,30,40] [--call-turns 3] [--ttft-ms 300] [--quick] [--serve-arg=--flag ...]

For each N it starts a real `voiceloop serve` (a fresh process and journal, `--llm openai` pointed at a local
OpenAI-compatible stand-in with a fixed time to first token: `voice/bench/llm_standin.py`), places N simulated phone
calls over its Twilio Media Streams endpoint (`voice/bench/load_caller.py`: real 8 kHz recordings, 20 ms μ-law frames
in real time, marks echoed as the audio plays), each starting at a random offset within `--spread-s` and `--call-turns`
turns long, one of them talking over the agent's answer (a barge-in), and the callers speaking about a third of
the time. It then stops the server (SIGTERM, as an operator would), checks that every journaled run finished or
was cancelled, and reports per N: voice-to-voice p50/p95, barge-in stop p95, calls dropped, turns unanswered,
server CPU (per call: % of one core), memory, and the largest N whose p95 stays within `--target-ms`. A table on
stdout, `load.csv` (per N) and `load_turns.csv` (per turn), and `load_p95.svg` in `--out`. With `--compare pipecat`
each N then runs against a Pipecat bot too, same callers and seed (`voice/bench/load_pipecat.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from voice.bench import load_fleet, load_pipecat
from voice.bench.load_caller import CallResult, PhoneCaller, Utterance, plan_call, recording_files
from voice.bench.load_report import (
    ServerUsage,
    StepRow,
    format_parts,
    format_table,
    largest_holding,
    step_row,
    svg_plot,
    write_step_csv,
    write_turn_csv,
)
from voice.bench.load_servers import (
    DEFAULT_OUT,
    RECORDINGS,
    LoadConfig,
    _cpu_of,
    _memory_of,
    _stop,
    start_audio_standin,
    start_standin,
    start_workers,
)
from voice.bench.load_usage import (
    journal_runs_of,
    latency_parts_of,
    model_calls_served,
    speech_work_of,
)


async def place_calls(url: str, n: int, cfg: LoadConfig, utterances: list[Utterance],
                      progress: Callable[[str], None]) -> list[CallResult]:
    """N calls, each starting at its random offset; a line of progress as calls finish."""
    rng = random.Random(cfg.seed * 1000 + n)
    done = 0

    async def one(i: int) -> CallResult:
        nonlocal done
        await asyncio.sleep(rng.uniform(0, cfg.spread_s) if n > 1 else 0.0)
        plan = plan_call(rng, utterances, cfg.turns, barge_turn=1 if cfg.turns > 1 else None)
        result = await PhoneCaller(url, "", i, plan).run()
        done += 1
        if done == n or done % max(1, n // 4) == 0:
            progress(f"  {done}/{n} calls done")
        return result

    return list(await asyncio.gather(*(one(i) for i in range(n))))


Step = tuple[StepRow, list[CallResult]]


def run_step(cfg: LoadConfig, n: int, llm_url: str, workdir: Path, utterances: list[Utterance],
             progress: Callable[[str], None], server: str = "voiceloop") -> Step:
    """One N against one server: `voiceloop serve`, or the Pipecat bot (`--compare pipecat`); with `--workers K`,
    K of them behind HAProxy (`voice/bench/load_fleet.py`)."""
    ours = server == "voiceloop"
    data = workdir / ("" if ours else server) / f"n{n}" / "data"
    log = cfg.out / (f"server_n{n}.log" if ours else f"{server}_n{n}.log")  # the log is kept, next to the CSVs
    log.parent.mkdir(parents=True, exist_ok=True)
    workers = start_workers(cfg, n, llm_url, data, log, server)
    procs, port, balancer = [w.proc for w in workers], workers[0].port, None
    try:
        if cfg.workers > 1:
            balancer = load_fleet.start_balancer([w.port for w in workers], data.parent)
            procs, port = [*procs, balancer.proc], balancer.port  # its CPU and memory count as the server's
        usage = ServerUsage(rss_idle_mb=_memory_of(procs, "VmRSS"))
        cpu0, t0, own0 = _cpu_of(procs), time.perf_counter(), time.process_time()
        asked0 = model_calls_served(llm_url)
        where = f"pid {procs[0].pid}" if balancer is None else f"{cfg.workers} workers behind HAProxy"
        progress(f"N={n}: {'' if ours else server + ' '}server up ({where}, {usage.rss_idle_mb:.0f} MB); "
                 f"placing {n} calls...")
        calls = asyncio.run(place_calls(f"ws://127.0.0.1:{port}/twilio", n, cfg, utterances, progress))
        usage.cpu_s, usage.wall_s = _cpu_of(procs) - cpu0, time.perf_counter() - t0
        usage.callers_cpu_s = time.process_time() - own0  # the simulated callers run on the same cores
        usage.rss_peak_mb = _memory_of(procs, "VmHWM")
        asked = model_calls_served(llm_url)
        usage.model_calls = None if asked is None or asked0 is None else asked - asked0
    finally:
        if balancer is not None:
            _stop(balancer.proc)  # first, so no new call reaches a stopping worker (its SIGTERM exit is no failure)
        codes = [_stop(w.proc) for w in workers]
    if any(codes):
        progress(f"N={n}: a server exited with {[c for c in codes if c]}; see {log.parent}")
    usage.runs, usage.runs_open = journal_runs_of([w.journal for w in workers])
    texts = [w.log.read_text() for w in workers]
    usage.speech, usage.parts = speech_work_of(texts), latency_parts_of(texts)
    return step_row(n, calls, usage, cfg.target_ms), calls


def run_load(cfg: LoadConfig, progress: Callable[[str], None]) -> dict[str, list[Step]]:
    """Every step against voiceloop (and, with `--compare`, then against the other server), by server."""
    utterances = [Utterance.load(p) for p in recording_files(cfg.recordings)]
    if not utterances:
        raise ValueError(f"no recordings (*.wav) in {cfg.recordings}")
    servers = ["voiceloop", *([cfg.compare] if cfg.compare else [])]
    results: dict[str, list[Step]] = {server: [] for server in servers}
    with tempfile.TemporaryDirectory(prefix="voiceloop-load-") as tmp:
        agent = None
        if cfg.compare == "pipecat" and cfg.llm_url:  # a real model: the bot gets voiceloop's prompt and tools
            from voice.bench._pipecat_agent import AgentForPipecat

            agent = AgentForPipecat(Path(tmp))
            cfg.pipecat_agent = (agent.spec, agent.url)
            progress(f"the Pipecat bot gets the same agent: {agent.spec.name}, tools at {agent.url}; the model "
                     f"server held its prompt after {agent.warm(cfg.llm_url):.1f} s")
        standin, url = start_standin(cfg, Path(tmp))
        audio = None
        if cfg.remote_stt or cfg.remote_tts:
            audio, audio_url = start_audio_standin(cfg, Path(tmp))
            cfg.env.update(VOICELOOP_STT_URL=audio_url, VOICELOOP_TTS_URL=audio_url)
            progress(f"speech stand-in at {audio_url}: no models, {cfg.speech_latency_ms:g} ms a request")
        try:
            progress(f"model at {cfg.llm_url}, counted through {url}" if cfg.llm_url else
                     f"model stand-in at {url}: first token after {cfg.ttft_ms:g} ms, {cfg.tokens_per_s:g} tokens/s")
            for n in cfg.steps:
                for server in servers:  # the same N back to back, same callers and seed: a like-for-like pair
                    if agent is not None and server == "pipecat":  # the server's one slot held voiceloop's prompt
                        progress(f"the model server holds the bot's prompt again ({agent.warm(cfg.llm_url):.1f} s)")
                    row, calls = run_step(cfg, n, url, Path(tmp), utterances, progress, server)
                    progress(f"N={n} {server}: p50 {row.v2v_p50_ms} ms, p95 {row.v2v_p95_ms} ms, dropped "
                             f"{row.dropped}, unanswered {row.unanswered}, open runs {row.runs_open}, "
                             f"cpu {row.server_cpu_pct}%")
                    for c in calls:
                        if c.dropped:
                            progress(f"  call {c.call} dropped: {c.dropped}")
                    results[server].append((row, calls))
        finally:
            _stop(standin, 5)
            if agent is not None:
                agent.close()
            if audio is not None:
                _stop(audio, 5)
    return results


def write_outputs(cfg: LoadConfig, results: Sequence[Step], title: str, server: str = "voiceloop") -> list[Path]:
    """load.csv, load_turns.csv, load_p95.svg (another server's: load_pipecat.csv, ...), labelled by server."""
    rows = [r for r, _ in results]
    meta = {"ttft_ms": cfg.ttft_ms, "tokens_per_s": cfg.tokens_per_s, "call_turns": cfg.turns,
            "serve_args": " ".join(cfg.serve_args), "workers": cfg.workers, "cores": os.cpu_count() or 0}
    meta = load_pipecat.meta_for(server, meta)
    paths = load_pipecat.suffixed([cfg.out / "load.csv", cfg.out / "load_turns.csv", cfg.out / "load_p95.svg"], server)
    write_step_csv(paths[0], rows, meta)
    write_turn_csv(paths[1], [(r.calls, calls) for r, calls in results])
    paths[2].write_text(svg_plot(rows, cfg.target_ms, title))
    return paths


def _steps(text: str) -> list[int]:
    try:
        steps = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--steps takes numbers of calls, e.g. 1,5,10 (got {text!r})") from None
    if not steps or min(steps) < 1:
        raise argparse.ArgumentTypeError("--steps needs at least one number of calls, each 1 or more")
    if len(set(steps)) != len(steps):
        raise argparse.ArgumentTypeError("--steps names each number of calls once (run the bench again to repeat one)")
    return steps


def add_bench_load_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `bench load`, on its own parser."""
    parser.add_argument("--steps", type=_steps, default=None, help="numbers of concurrent calls (1,5,10,...)")
    parser.add_argument("--call-turns", type=int, default=None, help="caller turns per call (default 3)")
    parser.add_argument("--ttft-ms", type=float, default=300.0, help="the stand-in model's time to first token")
    parser.add_argument("--spread-s", type=float, default=10.0, help="calls start within this many seconds")
    parser.add_argument("--target-ms", type=float, default=1500.0, help="p95 voice-to-voice a call may take")
    parser.add_argument("--quick", action="store_true", help="N = 1, 2 with two turns each (a smoke run)")
    parser.add_argument("--serve-arg", action="append", default=[], metavar="FLAG",
                        help="pass this flag to `voiceloop serve` (repeat; e.g. --serve-arg=--no-speculate)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help=f"folder for the CSVs and plot ({DEFAULT_OUT})")
    parser.add_argument("--speech-latency-ms", type=float, default=150.0,
                        help="with --stt/--tts openai, the speech stand-in's latency per request (it runs no "
                             "model: voiceloop's own cost per call)")
    parser.add_argument("--workers", type=int, default=1,
                        help="server processes per step, behind HAProxy above 1 (configs/haproxy.cfg): one "
                             "per core is how a machine is deployed")
    parser.add_argument("--compare", choices=["pipecat"], default="",
                        help="run each step against a Pipecat bot too, same callers and seed "
                             "(scripts/pipecat_bot/install.sh first)")
    parser.add_argument("--recordings", default=str(RECORDINGS), metavar="PATH[,PATH]",
                        help="the callers' recordings: folders of *.wav or wav files, comma-separated (default: "
                             "real 8 kHz phone recordings of everyday speech)")
    parser.add_argument("--llm-url", default="", metavar="URL",
                        help="a real OpenAI-compatible model server (.../v1; it must answer the model name "
                             "'standin', e.g. llama.cpp's --model_alias standin) instead of the stand-in; "
                             "requests pass through a counter")


def load_config(args: argparse.Namespace) -> LoadConfig:
    quick = bool(getattr(args, "quick", False))
    steps = getattr(args, "steps", None) or ([1, 2] if quick else LoadConfig().steps)
    turns = getattr(args, "call_turns", None) or (2 if quick else 3)
    if turns < 1 or args.ttft_ms < 0 or args.spread_s < 0 or getattr(args, "workers", 1) < 1:
        raise ValueError("--turns and --workers must be >= 1, --ttft-ms and --spread-s >= 0")
    return LoadConfig(steps=steps, turns=turns, ttft_ms=args.ttft_ms, spread_s=args.spread_s * (0.2 if quick else 1),
                      target_ms=args.target_ms, serve_args=list(args.serve_arg), out=Path(args.out),
                      remote_stt=getattr(args, "stt", None) == "openai",
                      remote_tts=getattr(args, "tts", None) == "openai",
                      speech_latency_ms=float(getattr(args, "speech_latency_ms", 150.0)),
                      workers=int(getattr(args, "workers", 1) or 1),
                      compare=str(getattr(args, "compare", "") or ""),
                      llm_url=str(getattr(args, "llm_url", "") or ""),
                      recordings=str(getattr(args, "recordings", "") or RECORDINGS))


def _interrupted(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def cmd_bench_load(args: argparse.Namespace) -> int:
    """Exit 0 when the largest N measured holds the target, 1 when it does not, 2 on bad arguments."""
    try:
        cfg = load_config(args)
        if cfg.compare:
            load_pipecat.pipecat_python()  # missing: say so now, not after the voiceloop half of the first step
        if cfg.workers > 1:
            load_fleet.check_balancer()
    except (ValueError, load_pipecat.PipecatMissing, load_fleet.BalancerMissing) as exc:
        print(f"voiceloop bench load: {exc}", file=sys.stderr)
        return 2
    say: Callable[[str], Any] = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    load = os.getloadavg()
    signal.signal(signal.SIGTERM, _interrupted)  # stopped from outside: still stop the servers it started
    say(f"bench load: steps {cfg.steps}, {cfg.turns} turns per call, {cfg.workers} server process"
        f"{'es behind HAProxy' if cfg.workers > 1 else ''}, {os.cpu_count()} cores, "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} before the run")
    by_server = run_load(cfg, say)
    paths: list[Path] = []
    for server, results in by_server.items():
        title = (f"{server if cfg.compare else 'voiceloop bench load'}: {cfg.turns}-turn phone calls, model TTFT "
                 f"{cfg.ttft_ms:g} ms, {os.cpu_count()} cores")
        paths += write_outputs(cfg, results, title, server)
        rows = [r for r, _ in results]
        print(format_table(rows, cfg.target_ms, title))
        print(format_parts(rows))
    if cfg.compare:
        rows_by_server = {s: [r for r, _ in res] for s, res in by_server.items()}
        print(load_pipecat.format_comparison(rows_by_server, cfg.target_ms))
    print("written: " + ", ".join(str(p) for p in paths))
    best = largest_holding([r for r, _ in by_server["voiceloop"]])
    return 0 if best is not None and best == max(cfg.steps) else 1
