"""A simulated phone caller for `voiceloop bench load`: one Twilio Media Streams call, in real time.

It sends what Twilio sends — a `start`, then one 20 ms μ-law `media` message every 20 ms for as long as the call
lasts (silence between the caller's words, as a phone line does) — and plays the agent's audio as Twilio would:
audio is buffered and played at real time, each `mark` is echoed when the audio before it has played, and a
`clear` drops the buffer and returns every pending mark at once.

The caller follows a plan of turns: wait a pause after the agent has finished speaking, say a recording, wait
for the answer. On a barge-in turn it does not wait for the agent to finish: it starts talking over the answer
a moment after it begins. What is measured, all on this side of the socket as a caller would hear it:

- voice-to-voice: from the wall time the caller's last speech frame of a turn was sent to the first agent
  audio received after it (the answer is `None` if nothing came within `answer_timeout_s`: an unanswered turn);
- barge-in stop: from the first speech frame spoken over the agent to the server's `clear`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from voice.audio import load_audio, resample, ulaw_encode

RATE = 8000
FRAME = 160  # 20 ms at 8 kHz, Twilio's media message size
FRAME_S = FRAME / RATE


MIN_SPEECH_FRAMES = 3  # 60 ms of loud frames in a row is speech


@dataclass(frozen=True)
class Utterance:
    """One recording at 8 kHz, with where its speech starts and ends (energy above -35 dB of its loudest 20 ms, for
    60 ms at least)."""

    name: str
    pcm: np.ndarray
    speech_start_s: float
    speech_end_s: float

    @classmethod
    def load(cls, path: Path) -> Utterance:
        audio = load_audio(path)
        pcm = resample(audio, 16000, RATE) if len(audio) else audio
        frames = pcm[: len(pcm) // FRAME * FRAME].astype(np.float64).reshape(-1, FRAME)
        rms = np.sqrt(np.mean(frames ** 2, axis=1))
        above = rms > rms.max() * 10 ** (-35 / 20) if rms.size and rms.max() > 0 else np.zeros(0, bool)
        # speech is a run of loud frames: a lone click in the trailing silence is not where the caller stopped
        run = np.convolve(above, np.ones(MIN_SPEECH_FRAMES, int), "valid") == MIN_SPEECH_FRAMES
        starts = np.flatnonzero(run)
        loud = [] if len(starts) == 0 else [starts[0], starts[-1] + MIN_SPEECH_FRAMES - 1]
        if len(loud) == 0:
            raise ValueError(f"{path}: no speech in this recording")
        return cls(path.stem, pcm.astype(np.int16), loud[0] * FRAME_S, (loud[-1] + 1) * FRAME_S)

    def frames(self) -> list[bytes]:
        codes = ulaw_encode(self.pcm).tobytes()
        codes += bytes([0xFF]) * (-len(codes) % FRAME)  # μ-law silence pads the last frame
        return [codes[i:i + FRAME] for i in range(0, len(codes), FRAME)]


@dataclass(frozen=True)
class TurnPlan:
    utterance: Utterance
    pause_s: float  # silence after the agent has finished speaking (or the call started) before speaking
    barge_after_s: float | None = None  # talk over the agent this long after its answer starts (a barge-in)


@dataclass
class TurnResult:
    turn: int
    utterance: str
    barge_in: bool
    voice_to_voice_ms: float | None = None  # None: no answer within the timeout
    barge_stop_ms: float | None = None  # barge-in turns: None when no `clear` came


@dataclass
class CallResult:
    call: int
    turns: list[TurnResult] = field(default_factory=list)
    dropped: str = ""  # why the call ended before the caller hung up ("" when it did not)
    seconds: float = 0.0


def plan_call(rng: random.Random, utterances: list[Utterance], turns: int, barge_turn: int | None) -> list[TurnPlan]:
    """`turns` turns of random recordings and pauses; turn `barge_turn` talks over the previous answer."""
    out = []
    for i in range(turns):
        barge = rng.uniform(0.8, 1.6) if i == barge_turn and i > 0 else None
        out.append(TurnPlan(rng.choice(utterances), rng.uniform(0.6, 2.0), barge))
    return out


class PhoneCaller:
    """One call (see the module docstring). `run()` never raises for the server's doing: a dropped call is a
    result."""

    def __init__(self, url: str, key: str, call: int, plan: list[TurnPlan], answer_timeout_s: float = 10.0) -> None:
        """`key`: the stream key our TwiML would carry ("" for a server started with --no-twilio-key)."""
        self.url, self.key, self.plan, self.answer_timeout_s = url, key, plan, answer_timeout_s
        self.sid = f"MZload{call:04d}"
        self.result = CallResult(call)
        self.speaking: list[bytes] = []  # frames still to say
        self.said = asyncio.Event()
        self.sent_at: list[float] = []  # wall time each frame of the current utterance was sent
        self.play_end = 0.0  # wall time the buffered agent audio finishes playing
        self.last_media = 0.0  # wall time agent audio last arrived
        self.media_after: list[float] = []  # wall times of agent audio arrivals since the last `expect_answer`
        self.clears: list[float] = []
        self.marks: list[tuple[float, str]] = []  # (due wall time, name) echoes waiting for their audio to play
        self.closed = asyncio.Event()

    def _start_msg(self) -> str:
        start = {"streamSid": self.sid, "callSid": "CA" + self.sid[2:], "tracks": ["inbound"],
                 "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": RATE, "channels": 1},
                 "customParameters": {"key": self.key} if self.key else {}}
        return json.dumps({"event": "start", "sequenceNumber": "1", "start": start, "streamSid": self.sid})

    async def run(self) -> CallResult:
        import websockets

        started = time.perf_counter()
        try:
            async with websockets.connect(self.url, max_size=2 ** 20) as ws:
                await ws.send(json.dumps({"event": "connected", "protocol": "Call", "version": "1.0.0"}))
                await ws.send(self._start_msg())
                tasks = [asyncio.create_task(self._line(ws)), asyncio.create_task(self._listen(ws))]
                try:
                    await self._follow_plan()
                    with contextlib.suppress(Exception):
                        await ws.send(json.dumps({"event": "stop", "streamSid": self.sid}))
                finally:
                    for task in tasks:
                        task.cancel()
                    await asyncio.gather(*tasks, return_exceptions=True)
        except ConnectionClosedByServer as exc:
            self.result.dropped = str(exc)
        except (TimeoutError, OSError, websockets.WebSocketException) as exc:
            self.result.dropped = f"{type(exc).__name__}: {exc}"[:200]
        self.result.seconds = time.perf_counter() - started
        return self.result

    async def _follow_plan(self) -> None:
        for i, turn in enumerate(self.plan):
            after = turn.barge_after_s
            barge = after is not None and bool(self.media_after)
            if barge:
                await self._until(lambda a=after: time.perf_counter() - self.media_after[0] >= a)
            else:
                await self._until_agent_quiet(turn.pause_s)
            result = TurnResult(i, turn.utterance.name, barge)
            self.result.turns.append(result)
            clears_before = len(self.clears)
            # from here on: an answer may start before the recording's trailing silence has been sent
            self.media_after = []
            onset, end = await self._say(turn.utterance)
            if barge:
                result.barge_stop_ms = next((round((c - onset) * 1000, 1) for c in self.clears[clears_before:]
                                             if c >= onset), None)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.0, end + self.answer_timeout_s - time.perf_counter())):
                    await self._until(lambda e=end: any(t >= e for t in self.media_after))
            first = next((t for t in self.media_after if t >= end), None)
            result.voice_to_voice_ms = None if first is None else round((first - end) * 1000, 1)
        if self.media_after:  # hear the last answer out before hanging up
            await self._until_agent_quiet(0.5, limit_s=30.0)

    async def _until(self, condition: Callable[[], bool], step_s: float = 0.01) -> None:
        while not condition():
            if self.closed.is_set():
                raise ConnectionClosedByServer("the server closed the call")
            await asyncio.sleep(step_s)

    async def _until_agent_quiet(self, quiet_s: float, limit_s: float = 60.0) -> None:
        """The agent's audio has played out and nothing new came for `quiet_s` (at most `limit_s`)."""
        deadline = time.perf_counter() + limit_s
        await self._until(lambda: time.perf_counter() >= deadline or (
            time.perf_counter() - max(self.play_end, self.last_media) >= quiet_s))

    async def _say(self, utterance: Utterance) -> tuple[float, float]:
        """Speak it on the line; returns the wall times its first and last speech frames were sent."""
        self.said.clear()
        self.sent_at = []
        self.speaking = utterance.frames()
        await self.said.wait()
        first = min(int(utterance.speech_start_s / FRAME_S), len(self.sent_at) - 1)
        last = min(max(0, round(utterance.speech_end_s / FRAME_S) - 1), len(self.sent_at) - 1)
        return self.sent_at[first], self.sent_at[last]

    async def _line(self, ws: Any) -> None:
        """One media message every 20 ms on the wall clock, and mark echoes as their audio finishes playing."""
        silence = bytes([0xFF]) * FRAME
        started, i = time.perf_counter(), 0
        while True:
            i += 1
            await asyncio.sleep(max(0.0, started + i * FRAME_S - time.perf_counter()))
            talking = bool(self.speaking)
            payload = self.speaking.pop(0) if talking else silence
            media = {"track": "inbound", "chunk": str(i), "timestamp": str(i * 20),
                     "payload": base64.b64encode(payload).decode()}
            await ws.send(json.dumps({"event": "media", "sequenceNumber": str(i + 1), "media": media,
                                      "streamSid": self.sid}))
            now = time.perf_counter()
            if talking:
                self.sent_at.append(now)
                if not self.speaking:
                    self.said.set()
            while self.marks and self.marks[0][0] <= now:
                await self._echo(ws, self.marks.pop(0)[1])

    async def _echo(self, ws: Any, name: str) -> None:
        await ws.send(json.dumps({"event": "mark", "streamSid": self.sid, "mark": {"name": name}}))

    async def _listen(self, ws: Any) -> None:
        import websockets

        try:
            async for raw in ws:
                msg = json.loads(raw)
                now = time.perf_counter()
                kind = msg.get("event")
                if kind == "media":
                    seconds = len(base64.b64decode(msg["media"]["payload"])) / RATE
                    self.play_end = max(self.play_end, now) + seconds
                    self.last_media = now
                    self.media_after.append(now)
                elif kind == "mark":
                    self.marks.append((max(self.play_end, now), msg["mark"]["name"]))
                elif kind == "clear":
                    self.clears.append(now)
                    self.play_end = now
                    pending, self.marks = self.marks, []
                    for _, name in pending:  # Twilio returns every pending mark when its buffer is cleared
                        await self._echo(ws, name)
        except websockets.ConnectionClosed:
            pass
        self.closed.set()


class ConnectionClosedByServer(Exception):
    """The server ended the call before the caller hung up."""


def recording_files(paths: str | Path) -> list[Path]:
    """The wav files `paths` names: folders (their *.wav) and files, comma-separated."""
    found: list[Path] = []
    for part in str(paths).split(","):
        path = Path(part.strip())
        found += sorted(path.glob("*.wav")) if path.is_dir() else [path] if path.is_file() else []
    return found
