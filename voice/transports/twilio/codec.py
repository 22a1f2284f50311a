"""Twilio Media Streams wire format (a bidirectional `<Connect><Stream>`), with no sockets and no asyncio.

In (Twilio -> us), JSON text messages with an `event`: `connected`; `start` {streamSid, callSid,
mediaFormat, customParameters}; `media` {payload: base64 μ-law 8 kHz, 20 ms, timestamp}; `mark` {name}
(our marks, echoed once the audio before them has played); `dtmf` {digit}; `stop`. `decode()` turns one
message into a typed event or raises `Drop`: 1003 binary frames or an unsupported mediaFormat; 1007
malformed JSON (or nested too deep to parse), a message that is not an object with an `event`, media whose
payload is not base64 or not a string; 1009 a media payload over `MAX_PAYLOAD_CHARS` (refused by its length,
before decoding); 1008 a `start` without a valid streamSid, or (`check_stream_key`) without our stream key.
A `timestamp` that is not a finite number is ignored (no gap filling for that packet).

Out (us -> Twilio): `media` (agent audio, 160-byte = 20 ms μ-law chunks), a `mark` after every `MARK_EVERY`
of audio and at each pause of the reply, named `vl<epoch>.<seq>.<samples>`, whose echo advances the
session's playout cursor by `<samples>` 16 kHz samples, and `clear` on barge-in; all carry the streamSid.
`AgentAudioEncoder` and `CallerAudioDecoder` do the 8k <-> 16k resampling and μ-law, and fill lost packets
(a jump in `media.timestamp`) with silence.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from voice.audio import to_int16, ulaw_decode, ulaw_encode
from voice.transports import CloseCode, Drop

CHUNK = 160  # 20 ms of 8 kHz μ-law
ULAW_SILENCE = b"\xff"
MAX_GAP_MS = 1000
MAX_MARKS = 20000
MARK_EVERY = 3200  # 16 kHz samples (200 ms) of agent audio per mark: ~5 echoes a second, not 50
MAX_PAYLOAD_CHARS = 4000  # base64 of 3000 bytes = 375 ms of μ-law; Twilio sends 20 ms (216 chars)
KNOWN_EVENTS = frozenset({"connected", "start", "media", "mark", "dtmf", "stop"})


# ---- inbound events -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Connected:
    pass


@dataclass(frozen=True)
class Start:
    stream_sid: str
    call_sid: str
    parameters: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Media:
    payload: bytes  # μ-law, 8 kHz
    inbound: bool  # the caller's track (not ours echoed back)
    timestamp: int | None  # ms since the stream started


@dataclass(frozen=True)
class Mark:
    name: str | None


@dataclass(frozen=True)
class Dtmf:
    digit: str


@dataclass(frozen=True)
class Stop:
    pass


@dataclass(frozen=True)
class Unknown:
    event: str


TwilioEvent = Connected | Start | Media | Mark | Dtmf | Stop | Unknown


def decode(message: str | bytes) -> TwilioEvent:
    """One Media Streams message as a typed event; bad input raises Drop with a clear close code."""
    if not isinstance(message, str):
        raise Drop(CloseCode.UNSUPPORTED_DATA, "binary frames are not Media Streams messages; send JSON text")
    try:
        msg = json.loads(message)
    except (ValueError, RecursionError):
        raise Drop(CloseCode.INVALID_PAYLOAD, "malformed JSON") from None
    if not isinstance(msg, dict) or not isinstance(msg.get("event"), str):
        raise Drop(CloseCode.INVALID_PAYLOAD, "a message must be a JSON object with an 'event'")
    event = msg["event"]
    if event == "media":
        return _media(msg)
    if event == "mark":
        mark = msg.get("mark")
        name = mark.get("name") if isinstance(mark, dict) else None
        return Mark(name if isinstance(name, str) else None)
    if event == "start":
        return _start(msg)
    if event == "dtmf":
        dtmf = msg.get("dtmf")
        return Dtmf(str(dtmf.get("digit") if isinstance(dtmf, dict) else None)[:4])
    if event == "stop":
        return Stop()
    if event == "connected":
        return Connected()
    return Unknown(event[:40])


def _media(msg: dict[str, Any]) -> Media:
    media = msg.get("media")
    payload = media.get("payload") if isinstance(media, dict) else None
    if not isinstance(media, dict) or not isinstance(payload, str):
        raise Drop(CloseCode.INVALID_PAYLOAD, "media carries no string payload")
    if len(payload) > MAX_PAYLOAD_CHARS:
        raise Drop(CloseCode.MESSAGE_TOO_BIG, f"media payload of {len(payload)} chars; at most {MAX_PAYLOAD_CHARS}")
    try:
        raw = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise Drop(CloseCode.INVALID_PAYLOAD, "media payload is not base64") from None
    return Media(raw, media.get("track", "inbound") in ("inbound", "inbound_track"), _timestamp(media.get("timestamp")))


def _timestamp(value: Any) -> int | None:
    """Milliseconds since the stream started; None for anything that is not a finite number (Infinity, NaN)."""
    try:
        timestamp = int(float(value)) if isinstance(value, (int, float, str)) and not isinstance(value, bool) else None
    except (ValueError, OverflowError):
        return None
    return timestamp if timestamp is not None and 0 <= timestamp < 2**53 else None


def _start(msg: dict[str, Any]) -> Start:
    start = msg.get("start")
    if not isinstance(start, dict):
        raise Drop(CloseCode.POLICY_VIOLATION, "'start' carries no start object")
    sid = start.get("streamSid") or msg.get("streamSid")
    if not isinstance(sid, str) or not 0 < len(sid) <= 64 or not sid.isprintable():
        raise Drop(CloseCode.POLICY_VIOLATION, "'start' carries no valid streamSid")
    fmt = start.get("mediaFormat")  # absent: the only format there is
    if fmt is not None and not (isinstance(fmt, dict) and fmt.get("encoding") == "audio/x-mulaw"
                                and str(fmt.get("sampleRate")) == "8000" and str(fmt.get("channels", 1)) == "1"):
        raise Drop(CloseCode.UNSUPPORTED_DATA, "unsupported mediaFormat: only audio/x-mulaw, 8000 Hz, mono")
    params = start.get("customParameters")
    return Start(sid, str(start.get("callSid", ""))[:64], dict(params) if isinstance(params, dict) else {})


def check_stream_key(start: Start, key: str) -> None:
    """The stream must carry the `key` parameter our TwiML handed Twilio (constant-time comparison)."""
    given = start.parameters.get("key")
    if not isinstance(given, str) or not hmac.compare_digest(given.encode(), key.encode()):
        raise Drop(CloseCode.POLICY_VIOLATION, "missing or wrong stream key")


# ---- audio --------------------------------------------------------------------------------------


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


class CallerAudioDecoder:
    """`media` payloads -> 16 kHz PCM; a jump in the timestamps (packets lost before Twilio) becomes silence
    (at most `MAX_GAP_MS`), so the session's clock keeps pace with the caller's."""

    def __init__(self) -> None:
        self.up = HalfbandStream(up=True)
        self.next_ts: int | None = None
        self.gap_filled_ms = 0

    def decode(self, media: Media) -> list[np.ndarray]:
        out = []
        if media.timestamp is not None:
            if self.next_ts is not None and media.timestamp - self.next_ts >= 10:
                gap = min(media.timestamp - self.next_ts, MAX_GAP_MS)
                self.gap_filled_ms += gap
                out.append(np.zeros(gap * 16, np.int16))
            self.next_ts = max(media.timestamp, self.next_ts or 0) + len(media.payload) // 8
        if media.payload:
            out.append(self.up(ulaw_decode(media.payload)))
        return out

    def skip(self, media: Media) -> None:
        """The packet is shed unread: its time still passes, so the next one is not taken for a gap."""
        if media.timestamp is not None:
            self.next_ts = max(media.timestamp, self.next_ts or 0) + len(media.payload) // 8


class Outgoing(NamedTuple):
    kind: str  # media | mark | clear
    text: str  # the JSON message
    samples: int  # 16 kHz samples of agent audio it carries


class AgentAudioEncoder:
    """16 kHz agent audio -> 20 ms μ-law `media` chunks, with a `mark` after every `MARK_EVERY` samples and at
    each pause (`flush_tail`) that acknowledges the 16 kHz samples sent since the last one; `clear` makes the
    marks still out there stale. Every mark sent may come back once as an `echoed` one (even stale ones:
    Twilio returns the pending marks after a `clear`)."""

    def __init__(self, stream_sid: str) -> None:
        self.sid = stream_sid
        self.down = HalfbandStream(up=False)
        self.pending = bytearray()  # μ-law short of a full chunk
        self.in16 = 0  # 16 kHz samples received since the last clear
        self.assigned16 = 0  # ... of which a mark already accounts for
        self.out8 = 0
        self.epoch = self.seq = 0
        self.marks: dict[str, int] = {}  # outstanding mark -> the 16 kHz samples it acknowledges
        self.unechoed: dict[str, None] = {}  # every mark sent and not yet echoed, stale or not (ordered, bounded)

    def encode(self, pcm: np.ndarray) -> list[Outgoing]:
        self.in16 += len(pcm)
        self.pending += ulaw_encode(self.down(pcm)).tobytes()
        out: list[Outgoing] = []
        while len(self.pending) >= CHUNK:
            chunk = bytes(self.pending[:CHUNK])
            del self.pending[:CHUNK]
            self.out8 += CHUNK
            upto = min(self.in16, 2 * self.out8)
            out += self._emit(chunk, upto, mark=upto - self.assigned16 >= MARK_EVERY)
        return out

    def has_tail(self) -> bool:
        return bool(self.pending) or self.assigned16 < self.in16

    def flush_tail(self) -> list[Outgoing]:
        """The agent paused: pad the last partial chunk with silence so all of its audio gets acknowledged."""
        if not self.has_tail():
            return []
        chunk = bytes(self.pending).ljust(CHUNK, ULAW_SILENCE) if self.pending else b""
        self.pending.clear()
        return self._emit(chunk, self.in16)

    def _emit(self, chunk: bytes, upto16: int, mark: bool = True) -> list[Outgoing]:
        out = []
        if chunk:
            payload = base64.b64encode(chunk).decode("ascii")
            media = {"event": "media", "streamSid": self.sid, "media": {"payload": payload}}
            out.append(Outgoing("media", json.dumps(media), 2 * len(chunk)))
        samples = upto16 - self.assigned16
        if mark and samples > 0:
            self.assigned16 = upto16
            self.seq += 1
            name = f"vl{self.epoch}.{self.seq}.{samples}"
            for table in (self.marks, self.unechoed):
                if len(table) >= MAX_MARKS:
                    table.pop(next(iter(table)))
            self.marks[name] = samples
            self.unechoed[name] = None
            message = {"event": "mark", "streamSid": self.sid, "mark": {"name": name}}
            out.append(Outgoing("mark", json.dumps(message), 0))
        return out

    def clear(self) -> Outgoing:
        """Barge-in: forget what is pending; marks still out there go stale. Returns the `clear` message."""
        self.pending.clear()
        self.down.reset()
        self.in16 = self.assigned16 = self.out8 = 0
        self.marks.clear()
        self.epoch += 1
        return Outgoing("clear", json.dumps({"event": "clear", "streamSid": self.sid}), 0)

    def echoed(self, name: str) -> bool:
        """`name` is a mark we sent, coming back for the first time."""
        if name not in self.unechoed:
            return False
        del self.unechoed[name]
        return True

    def ack(self, name: str) -> int:
        """A mark came back: the 16 kHz samples the caller has now heard (0 for a stale or unknown mark)."""
        return self.marks.pop(name, 0)
