"""Twilio Media Streams (a bidirectional `<Connect><Stream>`): 8 kHz μ-law over one WebSocket of JSON messages.

In (Twilio -> us): `connected`; `start` {streamSid, callSid, mediaFormat, customParameters}; `media`
{payload: base64 μ-law, 20 ms, timestamp}; `mark` {name} (our marks, echoed once the audio before them has
played); `dtmf` {digit}; `stop`.
Out (us -> Twilio): `media` (agent audio, 160-byte = 20 ms μ-law chunks), a `mark` after each chunk named
`vl<epoch>.<seq>.<samples>` whose echo advances the session's playout cursor by `<samples>` 16 kHz samples,
and `clear` on barge-in (the AudioSink's `clear()`); all carry the streamSid. 8k<->16k resampling happens here.

Bad input never raises out of the handler; the connection ends with a clear close code, the reason is noted
in the call's trace (`transport.closed`) and the call is closed so a run in flight is journaled as cancelled:
1003 binary frames or an unsupported mediaFormat; 1007 malformed JSON, a message that is not an object with
an `event`, media whose payload is not base64; 1008 media before `start`, a second `start`, a missing or
wrong stream key, too many unknown events, a client that stops reading (outbox full or a send stalled);
1009 frames over `max_message_bytes` (websockets enforces it); 1013 the server is at `--max-calls`.
Unknown events, stale marks and malformed marks are ignored and counted. Lost packets (a jump in
`media.timestamp`) are filled with silence so the session's clock keeps pace with the caller's.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hmac
import json
import logging
from collections import Counter, deque
from collections.abc import Callable
from typing import Any

import numpy as np
from websockets.exceptions import ConnectionClosed

from voice.audio import to_int16, ulaw_decode, ulaw_encode
from voice.calls import Call, CallContext, CallLimitReached, RateLimited
from voice.transports import Drop
from voice.transports.twilio_webhook import twilio_stream_key

log = logging.getLogger("voiceloop.twilio")

CHUNK = 160  # 20 ms of 8 kHz μ-law
ULAW_SILENCE = b"\xff"
IDLE_FLUSH_S = 0.06  # the reply paused this long: pad and send its last partial chunk
MAX_UNKNOWN = 100
MAX_GAP_MS = 1000
MAX_MARKS = 20000


def _lowpass(taps: int = 63, cutoff: float = 0.45) -> np.ndarray:
    n = np.arange(taps) - (taps - 1) / 2
    h = cutoff * np.sinc(cutoff * n) * np.kaiser(taps, 8.0)
    return h / h.sum()


_LOWPASS = _lowpass()  # 3.6 kHz at 16 kHz: below the new Nyquist of 8 kHz audio


class HalfbandStream:
    """Stateful 2x resampling (16k -> 8k or 8k -> 16k) with one FIR low-pass: chunk edges stay seamless and
    the delay is 2 ms, unlike resampling each 20 ms chunk on its own."""

    def __init__(self, up: bool) -> None:
        self.up = up
        self.h = _LOWPASS * (2.0 if up else 1.0)
        self.reset()

    def reset(self) -> None:
        self.history = np.zeros(len(self.h) - 1)
        self.phase = 0

    def __call__(self, pcm: np.ndarray) -> np.ndarray:
        x = np.asarray(pcm, dtype=np.float64)
        if self.up:
            stuffed = np.zeros(2 * len(x))
            stuffed[::2] = x
            x = stuffed
        buf = np.concatenate([self.history, x])
        y = np.convolve(buf, self.h, mode="valid")
        self.history = buf[len(x):]
        if not self.up:
            y = y[self.phase::2]
            self.phase = (self.phase + len(x)) % 2
        return to_int16(y)


class Outbox:
    """Everything we send on one stream, in order, from one sender task; producers never block."""

    def __init__(self, ws: Any, limit: int, send_timeout_s: float, on_idle: Callable[[bool], bool]) -> None:
        self.ws, self.limit, self.send_timeout_s, self.on_idle = ws, limit, send_timeout_s, on_idle
        self.items: deque[tuple[str, str]] = deque()
        self.wake = asyncio.Event()
        self.failure: Drop | None = None
        self.sent = Counter()

    def put(self, kind: str, message: dict[str, Any]) -> None:
        if self.failure is not None:
            return
        if len(self.items) >= self.limit:
            self.fail(Drop(1008, "client is not reading"))
            return
        self.items.append((kind, json.dumps(message)))
        self.wake.set()

    def drop_audio(self) -> None:
        self.items = deque(item for item in self.items if item[0] not in ("media", "mark"))

    def fail(self, drop: Drop) -> None:
        self.failure = self.failure or drop
        self.wake.set()

    async def run(self) -> None:
        while True:
            if self.failure is not None:
                raise self.failure
            if not self.items:
                self.wake.clear()
                try:  # wake up to flush a reply's last partial chunk, if there is one; else sleep until work
                    async with asyncio.timeout(IDLE_FLUSH_S if self.on_idle(False) else None):
                        await self.wake.wait()
                except TimeoutError:
                    self.on_idle(True)
                continue
            kind, text = self.items.popleft()
            try:
                async with asyncio.timeout(self.send_timeout_s):
                    await self.ws.send(text)
            except TimeoutError:
                raise Drop(1008, "client is not reading") from None
            self.sent[kind] += 1


class TwilioSink:
    """The session's AudioSink: 16 kHz agent audio -> 20 ms μ-law chunks, each followed by a mark."""

    def __init__(self, outbox: Outbox, stream_sid: str) -> None:
        self.outbox, self.sid = outbox, stream_sid
        self.down = HalfbandStream(up=False)
        self.pending = bytearray()  # μ-law short of a full chunk
        self.in16 = 0  # 16 kHz samples received since the last clear
        self.assigned16 = 0  # ... of which a mark already accounts for
        self.out8 = 0
        self.epoch = self.seq = 0
        self.marks: dict[str, int] = {}  # outstanding mark -> the 16 kHz samples it acknowledges
        self.clears = 0

    def send(self, pcm: np.ndarray) -> None:
        self.in16 += len(pcm)
        self.pending += ulaw_encode(self.down(pcm)).tobytes()
        while len(self.pending) >= CHUNK:
            chunk = bytes(self.pending[:CHUNK])
            del self.pending[:CHUNK]
            self.out8 += CHUNK
            self._emit(chunk, min(self.in16, 2 * self.out8))

    def flush_tail(self) -> None:
        """The agent paused: pad the last partial chunk with silence so all of its audio gets acknowledged."""
        if not self.pending and self.assigned16 >= self.in16:
            return
        chunk = bytes(self.pending).ljust(CHUNK, ULAW_SILENCE) if self.pending else b""
        self.pending.clear()
        self._emit(chunk, self.in16)

    def _emit(self, chunk: bytes, upto16: int) -> None:
        samples, self.assigned16 = upto16 - self.assigned16, upto16
        if chunk:
            payload = base64.b64encode(chunk).decode("ascii")
            self.outbox.put("media", {"event": "media", "streamSid": self.sid, "media": {"payload": payload}})
        if samples <= 0:
            return
        self.seq += 1
        name = f"vl{self.epoch}.{self.seq}.{samples}"
        if len(self.marks) >= MAX_MARKS:
            self.marks.pop(next(iter(self.marks)))
        self.marks[name] = samples
        self.outbox.put("mark", {"event": "mark", "streamSid": self.sid, "mark": {"name": name}})

    def clear(self) -> None:
        """Barge-in: nothing queued goes out, Twilio drops its buffer, and marks still out there go stale."""
        self.outbox.drop_audio()
        self.pending.clear()
        self.down.reset()
        self.in16 = self.assigned16 = self.out8 = 0
        self.marks.clear()
        self.epoch += 1
        self.clears += 1
        self.outbox.put("clear", {"event": "clear", "streamSid": self.sid})

    def ack(self, name: str) -> int:
        return self.marks.pop(name, 0)


class TwilioStream:
    """One Media Streams connection: receive, feed the session, send; ends with one close code."""

    def __init__(self, ws: Any, ctx: CallContext) -> None:
        self.ws, self.ctx, self.cfg = ws, ctx, ctx.config
        self.outbox = Outbox(ws, self.cfg.max_outbox, self.cfg.send_timeout_s, self._idle)
        self.call: Call | None = None
        self.sink: TwilioSink | None = None
        self.up = HalfbandStream(up=True)
        self.audio: asyncio.Queue[np.ndarray] = asyncio.Queue()
        self.backlog = 0
        self.next_ts: int | None = None
        self.counts: Counter[str] = Counter()
        self.stopped = False

    async def run(self) -> None:
        tasks = [asyncio.create_task(c) for c in (self._receive(), self.outbox.run(), self._feed())]
        code, reason = 1011, "server error"
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            code, reason = self._outcome(done.pop())
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self._finish(code, reason)

    def _outcome(self, task: asyncio.Task) -> tuple[int, str]:
        exc = task.exception()
        if exc is None:
            return (1000, "stream stopped") if self.stopped else (1000, "caller disconnected")
        if isinstance(exc, Drop):
            return exc.code, exc.reason
        if isinstance(exc, ConnectionClosed):  # a close we sent (1009 too big, ...) or the caller going away
            frame = exc.sent if exc.sent is not None and exc.sent.code != 1000 else exc.rcvd
            return (frame.code, frame.reason or "caller disconnected") if frame else (1006, "caller disconnected")
        if isinstance(exc, RateLimited):
            return 1008, str(exc)
        if isinstance(exc, CallLimitReached):
            return 1013, "too many calls; try again later"
        log.error("twilio stream failed", exc_info=exc)
        return 1011, "server error"

    async def _finish(self, code: int, reason: str) -> None:
        counts = {k: v for k, v in self.counts.items() if v}
        if code != 1000:
            log.warning("twilio stream closed %d (%s) %s", code, reason, counts)
        if self.call is not None:
            self.call.note("closed", code=code, reason=reason, counts=counts, sent=dict(self.outbox.sent))
            await self.call.close(reason)
        with contextlib.suppress(Exception):
            async with asyncio.timeout(5.0):
                await self.ws.close(code, reason)

    async def _receive(self) -> None:
        async for message in self.ws:
            if not isinstance(message, str):
                raise Drop(1003, "binary frames are not Media Streams messages; send JSON text")
            await self._handle(message)
            if self.stopped:
                return

    async def _handle(self, text: str) -> None:
        try:
            msg = json.loads(text)
        except ValueError:
            raise Drop(1007, "malformed JSON") from None
        if not isinstance(msg, dict) or not isinstance(msg.get("event"), str):
            raise Drop(1007, "a message must be a JSON object with an 'event'")
        event = msg["event"]
        self.counts[event if event in _EVENTS else "unknown"] += 1
        if event == "media":
            self._on_media(msg)
        elif event == "mark":
            self._on_mark(msg)
        elif event == "start":
            await self._on_start(msg)
        elif event == "stop":
            self.stopped = True
        elif event == "dtmf" and self.call is not None:
            digit = msg.get("dtmf", {}).get("digit") if isinstance(msg.get("dtmf"), dict) else None
            self.call.note("dtmf", digit=str(digit)[:4])
        elif event not in _EVENTS:
            self._on_unknown(event)

    def _on_unknown(self, event: str) -> None:
        if self.counts["unknown"] > MAX_UNKNOWN:
            raise Drop(1008, "too many unknown events")
        if self.call is not None and self.counts["unknown"] <= 5:
            self.call.note("unknown_event", event=event[:40])

    async def _on_start(self, msg: dict[str, Any]) -> None:
        if self.call is not None:
            raise Drop(1008, "a second 'start' on the same stream")
        sid, call_sid = _check_start(msg, twilio_stream_key(self.cfg.token) if self.cfg.twilio_key_required else None)
        self.sink = TwilioSink(self.outbox, sid)
        call = self.ctx.factory.new_call(self.sink, "twilio", stream_sid=sid, call_sid=call_sid)
        try:
            self.ctx.registry.add(call)
        except CallLimitReached:
            call._released()
            raise Drop(1013, "too many calls; try again later") from None
        self.call = call
        call.note("start", stream_sid=sid, call_sid=call_sid)
        await call.session.start()

    def _on_media(self, msg: dict[str, Any]) -> None:
        if self.call is None:
            raise Drop(1008, "media before start")
        media = msg.get("media")
        payload = media.get("payload") if isinstance(media, dict) else None
        if not isinstance(payload, str):
            raise Drop(1007, "media carries no string payload")
        try:
            raw = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raise Drop(1007, "media payload is not base64") from None
        if media.get("track", "inbound") not in ("inbound", "inbound_track"):
            self.counts["other_track"] += 1
            return
        self._fill_gap(media.get("timestamp"), len(raw))
        if raw:
            self._queue(self.up(ulaw_decode(raw)))

    def _fill_gap(self, timestamp: Any, n8: int) -> None:
        try:
            ts = int(timestamp)
        except (TypeError, ValueError):
            return
        if self.next_ts is not None and ts - self.next_ts >= 10:  # packets were lost upstream of Twilio
            gap = min(ts - self.next_ts, MAX_GAP_MS)
            self.counts["gap_filled_ms"] += gap
            self._queue(np.zeros(gap * 16, np.int16))
        self.next_ts = max(ts, self.next_ts or 0) + n8 // 8

    def _queue(self, pcm: np.ndarray) -> None:
        if self.backlog + len(pcm) > self.cfg.max_backlog_s * 16000:
            self.counts["dropped_ms"] += len(pcm) // 16  # the session is this far behind: shed, never grow
            return
        self.backlog += len(pcm)
        self.audio.put_nowait(pcm)

    def _on_mark(self, msg: dict[str, Any]) -> None:
        mark = msg.get("mark")
        name = mark.get("name") if isinstance(mark, dict) else None
        samples = self.sink.ack(name) if self.sink is not None and isinstance(name, str) else 0
        if samples and self.call is not None:
            self.call.session.played(samples)
        else:
            self.counts["stale_marks"] += 1

    async def _feed(self) -> None:
        while True:
            pcm = await self.audio.get()
            self.backlog -= len(pcm)
            assert self.call is not None  # audio is only queued once the call exists
            await self.call.session.hear(pcm)

    def _idle(self, flush: bool) -> bool:
        """Is a partial chunk waiting (and, with `flush`, send it now)?"""
        if self.sink is None or not (self.sink.pending or self.sink.assigned16 < self.sink.in16):
            return False
        if flush:
            self.sink.flush_tail()
        return True


_EVENTS = frozenset({"connected", "start", "media", "mark", "dtmf", "stop"})


def _check_start(msg: dict[str, Any], key: str | None) -> tuple[str, str]:
    """(streamSid, callSid) of a valid `start`; `key`: the stream parameter it must carry, if any."""
    start = msg.get("start")
    if not isinstance(start, dict):
        raise Drop(1008, "'start' carries no start object")
    sid = start.get("streamSid") or msg.get("streamSid")
    if not isinstance(sid, str) or not 0 < len(sid) <= 64 or not sid.isprintable():
        raise Drop(1008, "'start' carries no valid streamSid")
    fmt = start.get("mediaFormat")  # absent: the only format there is
    if fmt is not None and not (isinstance(fmt, dict) and fmt.get("encoding") == "audio/x-mulaw"
                                and str(fmt.get("sampleRate")) == "8000" and str(fmt.get("channels", 1)) == "1"):
        raise Drop(1003, "unsupported mediaFormat: only audio/x-mulaw, 8000 Hz, mono")
    if key is not None:
        params = start.get("customParameters")
        given = params.get("key") if isinstance(params, dict) else None
        if not isinstance(given, str) or not hmac.compare_digest(given.encode(), key.encode()):
            raise Drop(1008, "missing or wrong stream key")
    return sid, str(start.get("callSid", ""))[:64]


async def twilio_call(ws: Any, ctx: CallContext) -> None:
    """Serve one Twilio Media Streams WebSocket until `stop`, a disconnect or a protocol violation."""
    await TwilioStream(ws, ctx).run()
