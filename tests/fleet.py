"""More than one `voiceloop serve`: helpers for the drain tests and the two-host tests (a real HAProxy in front
of two real serve processes, see `tests/project/test_fleet.py`)."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import re
import signal
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import websockets

from tests.abuse.serving import (
    OPERATOR,
    Loopback,
    Server,
    close_code,
    launch,
    line_noise,
    media_msgs,
    start_msg,
    until_event,
    utterance,
)
from voice.audio import load_audio, resample
from voice.bench import load_fleet
from voice.bench.load_fleet import free_port
from voice.transports.twilio.webhook import twilio_signature, twilio_stream_key


def said_msgs(wav: Path, frame_ms: int = 200) -> list[str]:
    """A recording as Twilio media messages, then 1.5 s of silence (the end of the caller's turn)."""
    pcm = resample(load_audio(wav), 16000, 8000)
    return media_msgs(np.concatenate([pcm, np.zeros(12000, np.int16)]), frame_ms)


async def quiet(ws: Any, for_s: float = 1.0) -> int:
    """Read what the server sends until it has sent nothing for `for_s` (the rest of a reply); returns how many
    messages were read, so what comes after is new."""
    read = 0
    with contextlib.suppress(TimeoutError):
        while True:
            async with asyncio.timeout(for_s):
                await ws.recv()
            read += 1
    return read


async def wait_exit(proc: subprocess.Popen[str], timeout_s: float = 60) -> int:
    """The process's exit code, waiting without blocking the event loop."""
    async with asyncio.timeout(timeout_s):
        while proc.poll() is None:
            await asyncio.sleep(0.05)
    return proc.returncode


# ---- a real HAProxy in front of real serve processes --------------------------------------------------------

TWILIO_SECRET = "fleet-twilio-auth-token"


@dataclass
class Fleet(Loopback):
    """Serve processes behind HAProxy (configs/haproxy.cfg, as shipped), all on 127.0.0.1."""

    servers: list[Server]
    lb: subprocess.Popen[str]
    port: int
    admin: int
    lb_log: Path

    async def states(self) -> dict[str, str]:
        """HAProxy's view of each server (UP, DOWN, ...), from its stats CSV."""
        async with httpx.AsyncClient(timeout=5) as client:
            csv_text = (await client.get(f"http://127.0.0.1:{self.admin}/;csv")).text
        rows = csv.DictReader(io.StringIO(csv_text.lstrip("# ")))
        return {r["svname"]: r["status"] for r in rows if r["pxname"] == "voiceloop_servers" and r["svname"][0] == "s"}

    async def until_state(self, name: str, state: str, timeout_s: float = 30) -> None:
        async with asyncio.timeout(timeout_s):
            while (await self.states()).get(name, "").split()[0] != state:
                await asyncio.sleep(0.1)

    async def webhook(self, call_sid: str, stick_to: str = "") -> httpx.Response:
        """Twilio's signed webhook POST, through the balancer (the servers know it as their --public-host);
        `stick_to` a server by the balancer's cookie (while that server is up)."""
        params = {"CallSid": call_sid, "From": "+15550100", "To": "+15550199"}
        signature = twilio_signature(TWILIO_SECRET, f"https://{self.host}/twilio/voice", list(params.items()))
        headers = {"X-Twilio-Signature": signature, **({"Cookie": f"voiceloop_server={stick_to}"} if stick_to else {})}
        async with httpx.AsyncClient(timeout=10) as client:
            return await client.post(f"{self.http}/twilio/voice", data=params, headers=headers)


def start_servers(tmp: Path, script: list[Any], count: int, *flags: str, lb_port: int,
                  env: dict[str, str] | None = None) -> list[Server]:
    """`count` serve processes started side by side (each loads its speech stack), tokens and Twilio's auth token
    shared, `--public-host` the balancer."""
    env = {"TWILIO_AUTH_TOKEN": TWILIO_SECRET, **(env or {})}
    dirs = [tmp / f"s{i + 1}" for i in range(count)]
    for d in dirs:
        d.mkdir(exist_ok=True)
    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(lambda d: launch(d, script, "--tts", "espeak", "--public-host",
                                              f"127.0.0.1:{lb_port}", *flags, env=env), dirs))


def start_balancer(tmp: Path, servers: list[Server], port: int) -> Fleet:
    lb = load_fleet.start_balancer([s.port for s in servers], tmp, port)  # configs/haproxy.cfg, as shipped
    return Fleet(servers, lb.proc, lb.port, lb.admin, lb.log)


@contextlib.contextmanager
def fleet_of(tmp: Path, script: list[Any], *flags: str, count: int = 2,
             env: dict[str, str] | None = None) -> Iterator[Fleet]:
    """`count` serve processes behind HAProxy; everything is stopped on the way out (the servers drained by
    SIGTERM), and no server log may hold a traceback."""
    port = free_port()
    servers = start_servers(tmp, script, count, *flags, lb_port=port, env=env)
    try:
        fleet = start_balancer(tmp, servers, port)
        try:
            yield fleet
        finally:
            fleet.lb.terminate()
            fleet.lb.wait(10)
    finally:
        for server in servers:
            stop(server.proc)
    for server in servers:
        log = server.log.read_text()  # (a server the test killed has none either: SIGKILL leaves no trace)
        assert "Traceback" not in log, log[-3000:]


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# ---- calls through the balancer ------------------------------------------------------------------------------


async def live_calls(server: Server) -> list[dict[str, Any]]:
    async with server.operator() as client:
        return (await client.get("/api/calls")).json()["calls"]


@dataclass
class PhoneCall:
    ws: Any
    sid: str
    noise: asyncio.Task[None]  # the line's silence between words, so the call is never a stalled stream

    async def say(self, messages: list[str] | None = None) -> None:
        """Speak (default: the clip and a pause), then the line's silence again."""
        self.noise.cancel()
        for message in messages or utterance():
            await self.ws.send(message)
        self.noise = asyncio.create_task(line_noise(self.ws))

    async def say_again(self) -> None:
        """Speak once more and get a new answer (what was still coming of the last one is read first)."""
        self.noise.cancel()
        await quiet(self.ws)
        await self.say()
        await until_event(self.ws, "media")

    async def hang_up(self) -> None:
        self.noise.cancel()
        await self.ws.send(json.dumps({"event": "stop", "streamSid": self.sid}))
        assert (await close_code(self.ws))[0] == 1000


async def phone_call(fleet: Fleet, sid: str, speak: bool = True) -> PhoneCall:
    """A Twilio call through the balancer: the signed webhook's TwiML, then its stream, started and (`speak`)
    spoken to until the agent answers."""
    hook = await fleet.webhook("CA" + sid)
    assert hook.status_code == 200, hook.text
    stream_url, key = re.search(r'<Stream url="([^"]+)"><Parameter name="key" value="([^"]+)"/>', hook.text).groups()
    assert stream_url == f"wss://{fleet.host}/twilio" and key == twilio_stream_key(OPERATOR)
    ws = await websockets.connect(fleet.ws("/twilio"))
    await ws.send(start_msg(sid))
    call = PhoneCall(ws, sid, asyncio.create_task(line_noise(ws)))
    if speak:
        await call.say()
        await until_event(ws, "media")
    return call
