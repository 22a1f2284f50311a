"""`voiceloop bench load --workers K`: K server processes behind HAProxy, as docs/fleet.md deploys
them, so a machine's every core answers calls (one Python process uses one core).

The balancer runs `configs/haproxy.cfg` as shipped (leastconn, health checks on /healthz), with one `server` line
per worker where K is not 2. The same goes for `--compare pipecat`: K Pipecat bots behind the same balancer. Its
CPU and memory count as the server's: the figure an operator sizes a machine by includes it.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from voice.bench.load_pipecat import REPO

HAPROXY_CFG = REPO / "configs" / "haproxy.cfg"
SERVER_LINE = re.compile(r'^\s*server s\d+ "\$\{VOICELOOP_SERVER_\d+\}".*\n', re.M)


class BalancerMissing(RuntimeError):
    """--workers above 1 needs HAProxy and the shipped configuration."""


def check_balancer() -> None:
    if shutil.which("haproxy") is None:
        raise BalancerMissing("--workers above 1 runs the workers behind HAProxy: install it (apt-get install haproxy)")
    if not HAPROXY_CFG.is_file():
        raise BalancerMissing(f"--workers above 1 needs {HAPROXY_CFG} (run bench load from a checkout)")


def config_for(workers: int, shipped: str) -> str:
    """The shipped configuration with one `server` line per worker (it ships with two)."""
    found = list(SERVER_LINE.finditer(shipped))
    if not found:
        raise BalancerMissing(f"{HAPROXY_CFG} has no `server sN \"${{VOICELOOP_SERVER_N}}\"` lines")
    template = found[0].group(0)
    wanted = "".join(template.replace("s1", f"s{i}").replace("SERVER_1", f"SERVER_{i}") for i in range(1, workers + 1))
    return shipped[:found[0].start()] + wanted + shipped[found[-1].end():]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Balancer:
    proc: subprocess.Popen[str]
    port: int  # where callers dial
    admin: int  # HAProxy's stats page
    log: Path


def _servers_up(admin: int) -> int:
    """How many backend servers HAProxy's stats page (`;csv`) shows UP."""
    import httpx

    rows = httpx.get(f"http://127.0.0.1:{admin}/;csv", timeout=2).text.splitlines()
    header = rows[0].lstrip("# ").split(",") if rows else []
    if "status" not in header or "svname" not in header:
        return 0
    status, name = header.index("status"), header.index("svname")
    fields = [r.split(",") for r in rows[1:]]
    return sum(1 for f in fields if len(f) > status and f[name] not in ("FRONTEND", "BACKEND") and f[status] == "UP")


def start_balancer(ports: list[int], workdir: Path, port: int | None = None, timeout_s: float = 20.0) -> Balancer:
    """HAProxy on `port` (a free one if None) in front of the servers on `ports` (127.0.0.1), once it answers
    /healthz through a worker and its health checks hold every worker UP: calls placed before a worker's checks
    have passed all went to the other (leastconn over the servers it knows up)."""
    import httpx

    check_balancer()
    cfg = workdir / "haproxy.cfg"
    cfg.write_text(config_for(len(ports), HAPROXY_CFG.read_text()))
    port, admin = port or free_port(), free_port()
    env = {**os.environ, "VOICELOOP_LB_BIND": f"127.0.0.1:{port}", "VOICELOOP_LB_ADMIN": f"127.0.0.1:{admin}",
           **{f"VOICELOOP_SERVER_{i + 1}": f"127.0.0.1:{p}" for i, p in enumerate(ports)}}
    log = workdir / "haproxy.log"
    proc = subprocess.Popen(["haproxy", "-db", "-f", str(cfg)], env=env, text=True, stdout=log.open("w"),
                            stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout_s
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200 \
                    and _servers_up(admin) >= len(ports):
                return Balancer(proc, port, admin, log)
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"haproxy did not start: {log.read_text()[-2000:]}")
