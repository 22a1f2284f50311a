"""A real `voiceloop serve` subprocess with short limits, and the clients the abuse tests use: a normal
phone call (Twilio Media Streams, the scripted model answering), raw sockets, and a second client address
(127.0.0.2) for the attacker so per-source caps can be told apart from a full server."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import websockets
import yaml

from voice.audio import load_audio, resample, ulaw_encode
from voice.testing.scripted_call import FIXTURES
from voice.transports.twilio.webhook import twilio_stream_key

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "abuse-caller-token"
OPERATOR = "abuse-operator-token"
ATTACKER = ("127.0.0.2", 0)  # a second client address on the loopback network
CLIP = FIXTURES / "recordings/telephone/osr34_002.wav"  # "The long journey home took a year."
REPLY = "That sounds like a long trip. How can I help with your order?"


class Loopback:
    """Addresses of something listening on 127.0.0.1:`port` (a serve process, or HAProxy in front of several)."""

    port: int

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def ws(self, path: str) -> str:
        return f"ws://127.0.0.1:{self.port}{path}"


@dataclass
class Server(Loopback):
    proc: subprocess.Popen[str]
    port: int
    log: Path
    data: Path

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def operator(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.http, headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=10)


def launch(tmp: Path, script: list[Any], *flags: str, env: dict[str, str] | None = None) -> Server:
    """Start `voiceloop serve` on a free port; the tokens come from the environment (never the command line)."""
    script_file = tmp / "script.yaml"
    script_file.write_text(yaml.safe_dump(script))
    log = tmp / "server.log"
    base_env = {**os.environ, "PYTHONPATH": str(ROOT), "VOICELOOP_TOKEN": TOKEN, "VOICELOOP_OPERATOR_TOKEN": OPERATOR}
    base_env.pop("TWILIO_AUTH_TOKEN", None)
    proc = subprocess.Popen([sys.executable, "-m", "voice.cli", "serve", "--port", "0", "--script", str(script_file),
                             "--data-dir", str(tmp / "data"), *flags], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=log.open("w"), env={**base_env, **(env or {})})
    assert proc.stdout is not None
    for line in proc.stdout:
        if m := re.search(r"listening on http://127\.0\.0\.1:(\d+)/", line):
            return Server(proc, int(m.group(1)), log, tmp / "data")
    raise AssertionError(f"the server did not start: {log.read_text()[-3000:]}")


@contextlib.contextmanager
def serving(tmp: Path, script: list[Any], *flags: str, env: dict[str, str] | None = None) -> Iterator[Server]:
    server = launch(tmp, script, *flags, env=env)
    try:
        yield server
    finally:
        server.proc.send_signal(signal.SIGTERM)
        try:
            server.proc.wait(30)
        except subprocess.TimeoutExpired:
            server.proc.kill()
        log = server.log.read_text()
        assert "Traceback" not in log, log[-3000:]  # no abuse case may make the server fail inside


# ---- Twilio Media Streams ---------------------------------------------------------------------------------


def start_msg(sid: str = "MZabuse", secret: str = OPERATOR) -> str:
    """Twilio's `start`, with the stream key our TwiML would carry (derived from the operator token)."""
    start = {"streamSid": sid, "callSid": "CA" + sid, "tracks": ["inbound"],
             "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
             "customParameters": {"key": twilio_stream_key(secret)}}
    return json.dumps({"event": "start", "start": start, "streamSid": sid})


def media_msgs(pcm8k: np.ndarray, frame_ms: int = 200, first_ts: int = 0) -> list[str]:
    """Caller audio as media messages of `frame_ms` each (Twilio's are 20 ms; bigger ones keep the count low
    under the tests' tight message-rate limits)."""
    codes, step = ulaw_encode(pcm8k).tobytes(), 8 * frame_ms
    return [json.dumps({"event": "media", "streamSid": "MZabuse",
                        "media": {"track": "inbound", "timestamp": str(first_ts + i // 8),
                                  "payload": base64.b64encode(codes[i:i + step]).decode()}})
            for i in range(0, len(codes), step)]


def utterance(frame_ms: int = 200) -> list[str]:
    """The clip and 1.5 s of silence."""
    pcm = resample(load_audio(CLIP), 16000, 8000)
    return media_msgs(np.concatenate([pcm, np.zeros(12000, np.int16)]), frame_ms)


async def close_code(ws: Any, timeout: float = 20.0) -> tuple[int | None, str]:
    with contextlib.suppress(websockets.ConnectionClosed, TimeoutError):
        async with asyncio.timeout(timeout):
            while True:
                await ws.recv()
    return ws.close_code, ws.close_reason or ""


async def until_event(ws: Any, event: str, timeout: float = 30.0) -> list[dict[str, Any]]:
    """Every message received up to and including the first `event`."""
    got = []
    async with asyncio.timeout(timeout):
        while True:
            got.append(json.loads(await ws.recv()))
            if got[-1].get("event") == event:
                return got


async def line_noise(ws: Any, frame_ms: int = 200) -> None:
    """What a phone line sends between words: silence, in real time, until cancelled."""
    silence = media_msgs(np.zeros(8 * frame_ms, np.int16), frame_ms)[0]
    with contextlib.suppress(websockets.ConnectionClosed):
        while True:
            await asyncio.sleep(frame_ms / 1000)
            await ws.send(silence)


async def normal_call(server: Server, secret: str = OPERATOR) -> None:
    """A phone call that speaks and gets the agent's reply audio, then hangs up: the server still serves."""
    async with websockets.connect(server.ws("/twilio")) as ws:
        await ws.send(start_msg(secret=secret))
        for message in utterance():
            await ws.send(message)
        line = asyncio.create_task(line_noise(ws))
        try:
            await until_event(ws, "media")
        finally:
            line.cancel()
        await ws.send(json.dumps({"event": "stop", "streamSid": "MZabuse"}))
        assert (await close_code(ws))[0] == 1000
