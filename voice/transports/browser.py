"""Browser transport: the page at `/` (voice/web/) talks to `WS /ws` with this protocol.

Audio, both ways, is binary WebSocket messages of raw PCM: signed 16-bit little-endian, mono,
16 kHz, an even number of bytes, at most `MAX_FRAME_BYTES` (the page sends 20 ms = 640-byte frames;
the server sends 32 ms = 1024-byte frames). Everything else is a JSON text message with a `type`.

server -> page
  {"type": "hello", "call_id": str, "audio": {"encoding": "pcm_s16le", "sample_rate": 16000,
   "channels": 1}, "lead_ms": int}          first message; the call is live
  {"type": "event", "kind": str, "t": float, ...}
                                             a session trace entry (caller_partial, caller_turn_ended,
                                             agent_said, loop.verdict, loop.tool_result, approval_asked,
                                             barge_in, agent_paused, loop.run_finished, ...)
  {"type": "turn", "index": int, "user_text", "agent_text", "latency_ms": {...}, "outcome", ...}
                                             a turn's summary, re-sent whenever it changes
  {"type": "clear", "epoch": int}           barge-in: drop every buffered agent sample now; acks
                                             for audio sent before this carry the old epoch
  {"type": "error", "error": str}           a message was rejected; the call goes on
  {"type": "bye", "reason": str}            the call is over; the socket closes next

page -> server
  {"type": "played", "samples": int, "epoch": int}
                                             that many more agent samples reached the speaker
                                             (the playout cursor); stale epochs are ignored
  {"type": "approval", "approved": bool}    operator decision on the pending approval
  {"type": "hangup"}                        end the call

Agent audio is paced: at most `lead_ms` of it is in flight beyond what the page acknowledged as
played, so the page's jitter buffer stays small and a barge-in has little to flush. The server never
blocks the session on the socket: frames and events go through a bounded outbox drained by one sender
task; a page that stops reading (outbox full, a send stalled past `SEND_TIMEOUT_S`, or no playout ack
for `STALL_S` while audio waits) is disconnected with close code 1008.

Close codes: 1000 hangup, 1003 unsupported data (odd-length audio), 1008 policy (rate, stalled
client, too many bad messages), 1009 frame too big, 1011 server error, 1013 overloaded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import deque
from typing import Any

import numpy as np

from voice.calls import CallLimitReached, RateLimited
from voice.transports import Drop

log = logging.getLogger("voiceloop.browser")

SAMPLE_RATE = 16000
MAX_FRAME_BYTES = 16000  # 0.5 s of audio in one message
LEAD_MS = 400  # agent audio allowed in flight ahead of the page's playout acks
OUTBOX_LIMIT = 2000  # queued JSON messages before the page counts as not reading
AUDIO_LIMIT_S = 120.0  # queued agent audio (a bug guard: replies are short)
SEND_TIMEOUT_S = 10.0
STALL_S = 15.0
HEAR_BACKLOG_S = 20.0  # caller audio waiting for the session before the server is overloaded
RATE_SLACK_S = 3.0  # caller audio may run this far ahead of the wall clock (the page's backlog is 1 s)
MAX_BAD_MESSAGES = 20
TEXT_RATE = 50.0  # JSON messages per second, sustained (burst of the same size)


class BrowserSink:
    """The session's AudioSink: `send`/`clear` never block; the outbox's sender task does the I/O."""

    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox

    def send(self, pcm: np.ndarray) -> None:
        self.outbox.audio(pcm)

    def clear(self) -> None:
        self.outbox.clear_audio()


class Outbox:
    """Everything the server sends to one page, in order, with audio paced by the page's acks."""

    def __init__(self, ws: Any, config: Any = None, lead_ms: int = LEAD_MS) -> None:
        self.ws = ws
        self.send_timeout = getattr(config, "send_timeout_s", SEND_TIMEOUT_S)
        self.limit = getattr(config, "max_outbox", OUTBOX_LIMIT)
        self.lead = lead_ms * SAMPLE_RATE // 1000
        self.messages: deque[str] = deque()
        self.frames: deque[bytes] = deque()
        self.queued_samples = 0
        self.in_flight = 0  # samples sent in this epoch and not yet acknowledged
        self.epoch = 0
        self.blocked_since: float | None = None  # audio waiting on acks, with none arriving, since then
        self.wake = asyncio.Event()
        self.failure: Drop | None = None
        self.sent_samples = 0
        self.played_samples = 0

    # ---- producers (never block) -------------------------------------------------------------

    def json(self, message: dict[str, Any]) -> None:
        if len(self.messages) >= self.limit:
            self.fail(Drop(1008, "client is not reading"))
            return
        self.messages.append(json.dumps(message, default=str))
        self.wake.set()

    def audio(self, pcm: np.ndarray) -> None:
        if self.queued_samples + len(pcm) > AUDIO_LIMIT_S * SAMPLE_RATE:
            self.fail(Drop(1008, "client is not playing audio"))
            return
        self.frames.append(np.asarray(pcm, dtype="<i2").tobytes())
        self.queued_samples += len(pcm)
        self.wake.set()

    def clear_audio(self) -> None:
        """Barge-in: drop the queued audio and tell the page to flush its buffer."""
        self.frames.clear()
        self.queued_samples = 0
        self.in_flight = 0
        self.epoch += 1
        self.json({"type": "clear", "epoch": self.epoch})

    def ack(self, samples: int, epoch: int) -> int:
        """The page played `samples` more; returns how many count for the session's cursor."""
        if epoch != self.epoch or samples <= 0:
            return 0
        samples = min(samples, self.in_flight)
        self.in_flight -= samples
        self.played_samples += samples
        self.blocked_since = None
        self.wake.set()
        return samples

    def fail(self, drop: Drop) -> None:
        if self.failure is None:
            self.failure = drop
        self.wake.set()

    # ---- the sender task ---------------------------------------------------------------------

    async def run(self) -> None:
        """Send until failure; raises Drop for a page that stopped reading or playing."""
        while True:
            with contextlib.suppress(TimeoutError):  # not wait_for: on 3.11 it can swallow a cancellation
                async with asyncio.timeout(1.0):
                    await self.wake.wait()
            self.wake.clear()
            if self.failure:
                raise self.failure
            while self.messages:
                await self._send(self.messages.popleft())
            while self.frames and self.in_flight < self.lead and not self.messages:
                frame = self.frames.popleft()
                n = len(frame) // 2
                self.queued_samples -= n
                self.in_flight += n
                self.sent_samples += n
                await self._send(frame)
            self._check_stall()

    def _check_stall(self) -> None:
        if not (self.frames and self.in_flight >= self.lead):
            self.blocked_since = None
        elif self.blocked_since is None:
            self.blocked_since = time.monotonic()
        elif time.monotonic() - self.blocked_since > STALL_S:
            raise Drop(1008, "client stopped acknowledging audio")

    async def _send(self, data: str | bytes) -> None:
        try:
            async with asyncio.timeout(self.send_timeout):
                await self.ws.send(data)
        except TimeoutError:
            raise Drop(1008, "client is not reading") from None

    async def flush(self, timeout: float = 2.0) -> None:
        """Best effort: send the queued JSON messages (not audio) before the socket closes."""
        with contextlib.suppress(Exception):
            async with asyncio.timeout(timeout):
                while self.messages:
                    await self.ws.send(self.messages.popleft())


class Inbox:
    """Validates what the page sends and turns it into session calls."""

    def __init__(self, session: Any, outbox: Outbox, config: Any = None) -> None:
        self.session, self.outbox = session, outbox
        self.max_frame = min(MAX_FRAME_BYTES, getattr(config, "max_message_bytes", MAX_FRAME_BYTES))
        self.max_backlog = getattr(config, "max_backlog_s", HEAR_BACKLOG_S) * SAMPLE_RATE
        self.audio: asyncio.Queue[np.ndarray] = asyncio.Queue()
        self.backlog = 0
        self.received = 0
        self.started = time.monotonic()
        self.bad = 0
        self.tokens, self.refilled = TEXT_RATE, time.monotonic()
        self.hangup = False

    def binary(self, data: bytes) -> None:
        if len(data) > self.max_frame:
            raise Drop(1009, f"audio frame of {len(data)} bytes; at most {self.max_frame}")
        if len(data) % 2:
            raise Drop(1003, "audio must be 16-bit PCM (an even number of bytes)")
        n = len(data) // 2
        self.received += n
        if self.received > (time.monotonic() - self.started + RATE_SLACK_S) * SAMPLE_RATE:
            raise Drop(1008, "audio arrives faster than real time (it must be 16 kHz mono)")
        if self.backlog + n > self.max_backlog:
            raise Drop(1013, "server overloaded")
        self.backlog += n
        self.audio.put_nowait(np.frombuffer(data, dtype="<i2").astype(np.int16))

    async def text(self, data: str) -> None:
        self._rate_limit()
        try:
            msg = json.loads(data)
        except ValueError:
            return self._reject("malformed JSON")
        kind = msg.get("type") if isinstance(msg, dict) else None
        if kind == "played":
            samples, epoch = msg.get("samples"), msg.get("epoch", 0)
            if not _is_int(samples) or not _is_int(epoch) or samples < 0:
                return self._reject("played needs a non-negative integer 'samples' and integer 'epoch'")
            if counted := self.outbox.ack(samples, epoch):
                self.session.played(counted)
        elif kind == "approval":
            if not isinstance(msg.get("approved"), bool):
                return self._reject("approval needs a boolean 'approved'")
            await self.session.decide(msg["approved"])
        elif kind == "hangup":
            self.hangup = True
        else:
            self._reject(f"unknown message type {kind!r}")

    def _rate_limit(self) -> None:
        now = time.monotonic()
        self.tokens = min(TEXT_RATE, self.tokens + (now - self.refilled) * TEXT_RATE)
        self.refilled = now
        if self.tokens < 1:
            raise Drop(1008, "too many messages")
        self.tokens -= 1

    def _reject(self, error: str) -> None:
        self.bad += 1
        if self.bad > MAX_BAD_MESSAGES:
            raise Drop(1008, "too many invalid messages")
        self.outbox.json({"type": "error", "error": error})

    async def hear_forever(self) -> None:
        while True:
            pcm = await self.audio.get()
            self.backlog -= len(pcm)
            await self.session.hear(pcm)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


async def _watch_turns(session: Any, outbox: Outbox) -> None:
    """Send each turn's summary (latency, outcome) whenever it changes."""
    sent: list[str] = []
    while True:
        for i, turn in enumerate(session.turns):
            summary = {"type": "turn", "index": i, **turn.summary()}
            text = json.dumps(summary, default=str)  # a snapshot: the summary shares the turn's live dicts
            if i >= len(sent):
                sent.append("")
            if text != sent[i]:
                sent[i] = text
                outbox.json(summary)
        await asyncio.sleep(0.2)


async def _receive(ws: Any, inbox: Inbox) -> str:
    async for message in ws:
        if isinstance(message, bytes | bytearray | memoryview):
            inbox.binary(bytes(message))
        else:
            await inbox.text(message)
        if inbox.hangup:
            return "hangup"
    return "client disconnected"


async def browser_call(ws: Any, ctx: Any) -> None:
    """Run one browser call on an accepted WebSocket until hangup, disconnect or a protocol violation."""
    outbox = Outbox(ws, ctx.config)
    try:
        async with ctx.open_call(BrowserSink(outbox), "browser") as call:
            await _run_call(ws, call, outbox, ctx.config)
    except CallLimitReached as exc:
        outbox.json({"type": "error", "error": str(exc)})
        await outbox.flush()
        with contextlib.suppress(Exception):
            await ws.close(1013, "too many calls; try again later")


async def _run_call(ws: Any, call: Any, outbox: Outbox, config: Any) -> None:
    session = call.session
    outbox.json({"type": "hello", "call_id": call.call_id, "lead_ms": LEAD_MS,
                 "audio": {"encoding": "pcm_s16le", "sample_rate": SAMPLE_RATE, "channels": 1}})
    forward = lambda entry: outbox.json({**entry, "type": "event"})  # noqa: E731
    for entry in session.trace:  # what happened while the session started (greeting, prefix warm-up)
        forward(entry)
    session.observers.append(forward)
    inbox = Inbox(session, outbox, config)
    tasks = [asyncio.create_task(coro) for coro in
             (_receive(ws, inbox), outbox.run(), inbox.hear_forever(), _watch_turns(session, outbox))]
    code, reason = 1000, "call ended"
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            code, reason = _close_reason(task, code, reason)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        session.observers.remove(forward)
        call.note("closed", code=code, reason=reason, sent_s=outbox.sent_samples / SAMPLE_RATE,
                  played_s=outbox.played_samples / SAMPLE_RATE, rejected=inbox.bad)
        call.end_reason = reason
        outbox.json({"type": "bye", "reason": reason})
        await outbox.flush()
        with contextlib.suppress(Exception):
            await ws.close(code, reason)
    log.info("browser call %s closed: %s %s", call.call_id, code, reason)


def _close_reason(task: asyncio.Task, code: int, reason: str) -> tuple[int, str]:
    if task.cancelled():
        return code, reason
    if task.exception() is None:
        result = task.result()
        return (code, result) if isinstance(result, str) else (code, reason)
    exc = task.exception()
    if isinstance(exc, Drop):
        return exc.code, exc.reason
    if isinstance(exc, RateLimited):  # the server's socket guard has already closed with 1008
        return 1008, str(exc)
    if type(exc).__name__.startswith("ConnectionClosed"):
        return 1000, "client disconnected"
    log.error("browser call task failed", exc_info=exc)
    return 1011, "server error"
