"""The `--workers` lever measured as what it would be: two `voiceloop serve` processes behind HAProxy on the
same cores, the load bench's simulated phone callers placed through the balancer.

    PYTHONPATH=. python docs/load/idle_2026-11-30_c/two_processes.py VOICES_PER_SERVER 10,15
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from voice.bench.load import ROOT, LoadConfig, _cpu_s, _stop, latency_parts, place_calls, start_server, start_standin
from voice.bench.load_report import ServerUsage, StepRow, format_parts, format_table, step_row
from voice.bench.load_caller import Utterance


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def one_step(cfg: LoadConfig, n: int, url: str, tmp: Path, utterances: list[Utterance]) -> StepRow:
    servers = []
    for i in range(2):
        data = tmp / f"n{n}s{i}" / "data"
        data.mkdir(parents=True)
        servers.append(start_server(cfg, n, url, data, tmp / f"n{n}s{i}.log"))
    lb, admin = free_port(), free_port()
    env = {**os.environ, "VOICELOOP_LB_BIND": f"127.0.0.1:{lb}", "VOICELOOP_LB_ADMIN": f"127.0.0.1:{admin}",
           "VOICELOOP_SERVER_1": f"127.0.0.1:{servers[0][1]}", "VOICELOOP_SERVER_2": f"127.0.0.1:{servers[1][1]}"}
    haproxy = subprocess.Popen(["haproxy", "-db", "-f", str(ROOT / "configs" / "haproxy.cfg")], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(3)  # both servers pass their health check
    cpu0, t0, own0 = sum(_cpu_s(p.pid) for p, _ in servers), time.perf_counter(), time.process_time()
    calls = asyncio.run(place_calls(f"ws://127.0.0.1:{lb}/twilio", n, cfg, utterances, print))
    usage = ServerUsage(cpu_s=sum(_cpu_s(p.pid) for p, _ in servers) - cpu0, wall_s=time.perf_counter() - t0,
                        callers_cpu_s=time.process_time() - own0)
    for proc, _ in servers:
        _stop(proc)
    haproxy.terminate()
    haproxy.wait()
    usage.parts = latency_parts("".join((tmp / f"n{n}s{i}.log").read_text() for i in range(2)))
    return step_row(n, calls, usage, cfg.target_ms)


def main() -> None:
    voices, steps = sys.argv[1], [int(x) for x in sys.argv[2].split(",")]
    cfg = LoadConfig(serve_args=[f"--tts-voices={voices}"])
    utterances = [Utterance.load(p) for p in sorted(cfg.recordings.glob("*.wav"))]
    with tempfile.TemporaryDirectory() as tmp:
        standin, url = start_standin(cfg, Path(tmp))
        try:
            rows = [one_step(cfg, n, url, Path(tmp), utterances) for n in steps]
        finally:
            _stop(standin, 5)
    print(format_table(rows, cfg.target_ms, f"two serve processes behind HAProxy, --tts-voices={voices} each"))
    print(format_parts(rows))


if __name__ == "__main__":
    main()
