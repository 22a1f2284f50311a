"""Playout and barge-in timing of `voiceloop serve`, measured from the caller's side of the wire.

    python scripts/measure_transport.py [--root DIR ...] [--runs N] [--transport twilio|browser|both]

Each `--root` (a voiceloop checkout; default: this one) is started as `python -m voice.cli serve --script`
in its own process, and the runs alternate between them so a shared, noisy machine weighs on each alike.
A call, by a raw Twilio Media Streams client (μ-law 8 kHz, marks echoed when their audio has "played") or a
raw browser-protocol client (PCM 16 kHz, `played` acks every 40 ms), both streaming in real time:

1. the caller says a sentence, then keeps sending silence (as phones do);
2. `reply_ms`: from the caller's last speech frame (as sent) to the first agent audio received;
3. `underrun_ms`: the agent's audio, played in real time behind a 60 ms jitter buffer, runs dry this long
   before the barge-in (late audio, pacing stalls); `ahead_ms`: the most audio buffered ahead of playout
   (the browser's pacing lead plus jitter; Twilio's whole clauses, as Twilio buffers them); browser only:
   `session_v2v_ms`, the session's own voice-to-voice figure for the turn (what the transport does not add);
4. after 1 s of the reply has played the caller talks over it; `clear_ms`: from the first speech frame of
   that (as sent) to the `clear` message received.

Prints one JSON line per run and the medians per root.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import heapq
import json
import os
import re
import statistics
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import websockets

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from voice.audio import load_audio, resample, ulaw_decode, ulaw_encode  # noqa: E402
from voice.transports.twilio.webhook import twilio_stream_key  # noqa: E402

CLIPS = ROOT / "audio_fixtures/recordings/telephone"
FIRST, BARGE = CLIPS / "osr34_002.wav", CLIPS / "osr34_004.wav"
REPLY = ("Going forward is easy. First, stand up straight and look ahead. Then walk about twelve steps, counting "
         "each one out loud as you go, and stop when you reach the door. After that, turn left and keep going.")
TOKEN = "measure-transport-token"
OPERATOR = "measure-transport-operator"  # the Twilio stream key derives from the operator token
FRAME_S = 0.02
JITTER_S = 0.06
BARGE_AFTER_S = 1.0


def frames(path: Path, rate: int) -> tuple[list[np.ndarray], int, int]:
    """20 ms frames of a recording at `rate`, and the indices of its first and last speech frames."""
    pcm = resample(load_audio(path), 16000, rate) if rate != 16000 else load_audio(path)
    n = int(rate * FRAME_S)
    chunks = [pcm[i:i + n] for i in range(0, len(pcm) - n + 1, n)]
    rms = [float(np.sqrt(np.mean(c.astype(np.float64) ** 2))) for c in chunks]
    loud = [i for i, r in enumerate(rms) if r > 0.1 * max(rms)]
    return chunks, loud[0], loud[-1]


@dataclass
class Player:
    """Agent audio played in real time behind a jitter buffer; what has played, and where it ran dry."""

    play_end: float = 0.0
    started: float | None = None
    underrun_s: float = 0.0
    counting: bool = True
    segments: deque[tuple[float, float, int]] = field(default_factory=deque)  # start, end, samples
    played_samples: int = 0
    ahead_s: float = 0.0  # the most audio ever buffered ahead of playout (the pacing lead, plus jitter)

    def add(self, now: float, seconds: float, samples: int = 0) -> float:
        """Queue audio arriving now; returns when it finishes playing."""
        if self.started is None:
            self.started = now
        if now >= self.play_end:  # ran dry (or first audio): refill the jitter buffer first
            if self.play_end and self.counting:
                self.underrun_s += now + JITTER_S - self.play_end
            self.play_end = now + JITTER_S
        start, self.play_end = self.play_end, self.play_end + seconds
        self.segments.append((start, self.play_end, samples))
        if self.counting:
            self.ahead_s = max(self.ahead_s, self.play_end - now)
        return self.play_end

    def played_until(self, now: float) -> int:
        """Samples played by `now` since the last call."""
        done = 0
        while self.segments and self.segments[0][1] <= now:
            done += self.segments.popleft()[2]
        if self.segments and self.segments[0][0] < now:
            start, end, samples = self.segments[0]
            part = int(samples * (now - start) / (end - start))
            self.segments[0] = (now, end, samples - part)
            done += part
        self.played_samples += done
        return done

    def heard_s(self, now: float) -> float:
        return max(0.0, min(now, self.play_end) - (self.started or now) - JITTER_S) if self.started else 0.0

    def clear(self, now: float) -> None:
        self.segments.clear()
        self.play_end = now
        self.counting = False


class Caller:
    """One call: sends 20 ms frames on a real-time schedule, plays what comes back, barges in once."""

    def __init__(self, ws: Any, rate: int) -> None:
        self.ws, self.rate = ws, rate
        first, _, self.first_end = frames(FIRST, rate)
        self.barge, self.barge_onset, _ = frames(BARGE, rate)
        self.outgoing: deque[tuple[np.ndarray, str]] = deque(
            (f, "speech_end" if i == self.first_end else "") for i, f in enumerate(first))
        self.sent_at: dict[str, float] = {}
        self.got_at: dict[str, float] = {}
        self.player = Player()
        self.barged = False
        self.done = asyncio.Event()
        self.session_v2v_ms: float | None = None  # browser: the session's own voice-to-voice for the first turn

    async def send_frames(self) -> None:
        t0, i = time.perf_counter(), 0
        silence = np.zeros(int(self.rate * FRAME_S), np.int16)
        while not self.done.is_set():
            await asyncio.sleep(max(0.0, t0 + i * FRAME_S - time.perf_counter()))
            pcm, tag = self.outgoing.popleft() if self.outgoing else (silence, "")
            await self.send_audio(pcm, i)
            if tag:
                self.sent_at[tag] = time.perf_counter()
            i += 1
            if not self.barged and self.player.heard_s(time.perf_counter()) >= BARGE_AFTER_S:
                self.barged = True
                self.outgoing.extend((f, "barge_onset" if k == self.barge_onset else "")
                                     for k, f in enumerate(self.barge))

    def got(self, tag: str) -> None:
        self.got_at.setdefault(tag, time.perf_counter())
        if tag == "clear":
            self.player.clear(time.perf_counter())
            asyncio.get_running_loop().call_later(3.0, self.done.set)

    def result(self) -> dict[str, float | None]:
        def span(a: str, b: str) -> float | None:
            return round((self.got_at[b] - self.sent_at[a]) * 1000, 1) if a in self.sent_at and b in self.got_at \
                else None

        return {"reply_ms": span("speech_end", "audio"), "clear_ms": span("barge_onset", "clear"),
                "underrun_ms": round(self.player.underrun_s * 1000, 1), "ahead_ms": round(self.player.ahead_s * 1000),
                "session_v2v_ms": self.session_v2v_ms}

    async def send_audio(self, pcm: np.ndarray, index: int) -> None:
        raise NotImplementedError


class TwilioCaller(Caller):
    def __init__(self, ws: Any) -> None:
        super().__init__(ws, 8000)
        self.marks: list[tuple[float, str]] = []

    async def send_audio(self, pcm: np.ndarray, index: int) -> None:
        payload = base64.b64encode(ulaw_encode(pcm).tobytes()).decode()
        await self.ws.send(json.dumps({"event": "media", "streamSid": "MZm", "media": {
            "track": "inbound", "chunk": str(index + 1), "timestamp": str(index * 20), "payload": payload}}))

    async def receive(self) -> None:
        async for text in self.ws:
            msg, now = json.loads(text), time.perf_counter()
            if msg["event"] == "media":
                self.got("audio")
                self.player.add(now, len(ulaw_decode(base64.b64decode(msg["media"]["payload"]))) / 8000)
            elif msg["event"] == "mark":  # echoed once the audio before it has played
                heapq.heappush(self.marks, (max(now, self.player.play_end), msg["mark"]["name"]))
            elif msg["event"] == "clear":
                self.got("clear")
                self.marks = [(now, name) for _, name in self.marks]  # Twilio returns pending marks at once

    async def echo_marks(self) -> None:
        while not self.done.is_set():
            while self.marks and self.marks[0][0] <= time.perf_counter():
                name = heapq.heappop(self.marks)[1]
                await self.ws.send(json.dumps({"event": "mark", "streamSid": "MZm", "mark": {"name": name}}))
            await asyncio.sleep(0.005)


class BrowserCaller(Caller):
    def __init__(self, ws: Any) -> None:
        super().__init__(ws, 16000)
        self.epoch = 0

    async def send_audio(self, pcm: np.ndarray, index: int) -> None:
        await self.ws.send(pcm.astype("<i2").tobytes())

    async def receive(self) -> None:
        async for message in self.ws:
            now = time.perf_counter()
            if isinstance(message, bytes):
                self.got("audio")
                self.player.add(now, len(message) / 2 / 16000, len(message) // 2)
            elif (msg := json.loads(message))["type"] == "clear":
                self.epoch = msg["epoch"]
                self.got("clear")
            elif msg["type"] == "turn" and msg["index"] == 0 and "voice_to_voice" in msg.get("latency_ms", {}):
                self.session_v2v_ms = msg["latency_ms"]["voice_to_voice"]

    async def echo_marks(self) -> None:  # the page's worklet acks what it played every 40 ms
        while not self.done.is_set():
            await asyncio.sleep(0.04)
            if samples := self.player.played_until(time.perf_counter()):
                await self.ws.send(json.dumps({"type": "played", "samples": samples, "epoch": self.epoch}))


async def one_call(port: int, transport: str) -> dict[str, Any]:
    if transport == "twilio":
        ws = await websockets.connect(f"ws://127.0.0.1:{port}/twilio")
        caller: Caller = TwilioCaller(ws)
        start = {"streamSid": "MZm", "callSid": "CAm", "customParameters": {"key": twilio_stream_key(OPERATOR)},
                 "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}}
        await ws.send(json.dumps({"event": "start", "streamSid": "MZm", "start": start}))
    else:
        ws = await websockets.connect(f"ws://127.0.0.1:{port}/ws?token={TOKEN}")
        caller = BrowserCaller(ws)
        assert json.loads(await ws.recv())["type"] == "hello"
    tasks = [asyncio.create_task(c) for c in (caller.send_frames(), caller.receive(), caller.echo_marks())]
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(40):
            await caller.done.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await ws.close()
    await asyncio.sleep(1.0)  # let the server close the call before the next one
    return caller.result()


async def start_server(root: Path, script: Path) -> tuple[asyncio.subprocess.Process, int]:
    env = {**os.environ, "VOICELOOP_TOKEN": TOKEN, "VOICELOOP_OPERATOR_TOKEN": OPERATOR, "PYTHONPATH": str(root)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "voice.cli", "serve", "--port", "0", "--script", str(script), "--tts", "piper",
        "--data-dir", str(script.parent / f"data-{abs(hash(root))}"), cwd=root, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    async with asyncio.timeout(180):
        while True:
            line = (await proc.stdout.readline()).decode()  # type: ignore[union-attr]
            if not line:
                raise RuntimeError(f"the server in {root} exited")
            if m := re.search(r"listening on http://127\.0\.0\.1:(\d+)/", line):
                return proc, int(m.group(1))


def summarize(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for key in ("reply_ms", "clear_ms", "underrun_ms", "ahead_ms", "session_v2v_ms"):
        values = [r[key] for r in rows if r[key] is not None]
        out[f"{key}_median"] = round(statistics.median(values), 1) if values else None
        out[f"{key}_n"] = len(values)
    return out


async def main(roots: list[Path], runs: int, transports: list[str], workdir: Path) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    script = workdir / "script.yaml"
    script.write_text(f"- text: {json.dumps(REPLY)}\n- text: Sorry, go ahead.\n")
    servers = [await start_server(root, script) for root in roots]
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    try:
        for run in range(runs):
            for transport in transports:
                for root, (_, port) in zip(roots, servers, strict=True):
                    row = await one_call(port, transport)
                    results.setdefault((root.name, transport), []).append(row)
                    print(json.dumps({"root": str(root), "transport": transport, "run": run, **row}), flush=True)
    finally:
        for proc, _ in servers:
            proc.terminate()
            await proc.wait()
    for (root, transport), rows in results.items():
        print(json.dumps({"root": root, "transport": transport, "runs": len(rows), **summarize(rows)}))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", action="append", type=Path, help="a voiceloop checkout (repeatable)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--transport", choices=["twilio", "browser", "both"], default="both")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/voiceloop-measure"))
    args = parser.parse_args()
    kinds = ["twilio", "browser"] if args.transport == "both" else [args.transport]
    asyncio.run(main([r.resolve() for r in args.root or [ROOT]], args.runs, kinds, args.workdir))
