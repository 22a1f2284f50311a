"""The browser page's wire format (voice/web/app.js talks it over `WS /ws`), with no sockets and no asyncio.

Audio, both ways, is binary WebSocket messages of raw PCM: signed 16-bit little-endian, mono,
16 kHz, an even number of bytes, at most `MAX_FRAME_BYTES` (the page sends 20 ms = 640-byte frames;
the server sends 32 ms = 1024-byte frames). Everything else is a JSON text message with a `type`.

server -> page
  {"type": "hello", "call_id": str, "audio": {"encoding": "pcm_s16le", "sample_rate": 16000,
   "channels": 1}, "lead_ms": int, "call_token": str}
                                             first message; the call is live. `call_token` reaches this
                                             call's own events and approval in the operator API, nothing else
  {"type": "event", "kind": str, "t": float, ...}
                                             a session trace entry (call_state, caller_partial,
                                             caller_turn_ended, agent_said, loop.verdict, loop.tool_result,
                                             approval_asked, barge_in, agent_paused, loop.run_finished, ...)
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
  {"type": "approval", "approved": bool}    a decision on the pending approval (voiceloop's own page sends
                                             none: its caller answers aloud, an operator on /operator)
  {"type": "hangup"}                        end the call

Bad audio closes the connection (1003 odd length, 1009 too big, 1008 faster than real time); a bad JSON
message (malformed, nested too deep, an unknown type) is `Rejected`: answered with a short `error` that never
repeats more than `ECHO_CHARS` of what was sent; the call goes on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from voice.transports import CloseCode, Drop

SAMPLE_RATE = 16000
MAX_FRAME_BYTES = 16000  # 0.5 s of audio in one message
ECHO_CHARS = 40  # at most this much of a rejected message is quoted back
AUDIO_FORMAT = {"encoding": "pcm_s16le", "sample_rate": SAMPLE_RATE, "channels": 1}


# ---- server -> page -------------------------------------------------------------------------------


def _text(message: dict[str, Any]) -> str:
    return json.dumps(message, default=str)


def hello(call_id: str, lead_ms: int, call_token: str = "") -> str:
    return _text({"type": "hello", "call_id": call_id, "lead_ms": lead_ms, "audio": AUDIO_FORMAT,
                  "call_token": call_token})


def event(entry: dict[str, Any]) -> str:
    return _text({**entry, "type": "event"})


def turn(index: int, summary: dict[str, Any]) -> str:
    return _text({"type": "turn", "index": index, **summary})


def clear(epoch: int) -> str:
    return _text({"type": "clear", "epoch": epoch})


def error(text: str) -> str:
    return _text({"type": "error", "error": text})


def bye(reason: str) -> str:
    return _text({"type": "bye", "reason": reason})


def audio_frame(pcm: np.ndarray) -> bytes:
    return np.asarray(pcm, dtype="<i2").tobytes()


class TurnUpdates:
    """The `turn` messages for turn summaries that changed since they were last sent."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def changed(self, summaries: list[dict[str, Any]]) -> list[str]:
        out = []
        for i, summary in enumerate(summaries):
            text = turn(i, summary)  # a snapshot: a summary may share the turn's live dicts
            if i >= len(self.sent):
                self.sent.append("")
            if text != self.sent[i]:
                self.sent[i] = text
                out.append(text)
        return out


# ---- page -> server -------------------------------------------------------------------------------


class Rejected(ValueError):
    """A JSON message the server cannot use; the page gets an `error` and the call goes on."""


@dataclass(frozen=True)
class Played:
    samples: int
    epoch: int


@dataclass(frozen=True)
class Approval:
    approved: bool


@dataclass(frozen=True)
class Hangup:
    pass


PageMessage = Played | Approval | Hangup


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def decode_text(data: str) -> PageMessage:
    try:
        msg = json.loads(data)
    except (ValueError, RecursionError):
        raise Rejected("malformed JSON") from None
    kind = msg.get("type") if isinstance(msg, dict) else None
    if kind == "played":
        samples, epoch = msg.get("samples"), msg.get("epoch", 0)
        if not _is_int(samples) or not _is_int(epoch) or samples < 0:
            raise Rejected("played needs a non-negative integer 'samples' and integer 'epoch'")
        return Played(samples, epoch)
    if kind == "approval":
        if not isinstance(msg.get("approved"), bool):
            raise Rejected("approval needs a boolean 'approved'")
        return Approval(msg["approved"])
    if kind == "hangup":
        return Hangup()
    shown = repr(kind)
    raise Rejected(f"unknown message type {shown[:ECHO_CHARS]}{'…' if len(shown) > ECHO_CHARS else ''}")


def decode_audio(data: bytes, max_bytes: int = MAX_FRAME_BYTES) -> np.ndarray:
    if len(data) > max_bytes:
        raise Drop(CloseCode.MESSAGE_TOO_BIG, f"audio frame of {len(data)} bytes; at most {max_bytes}")
    if len(data) % 2:
        raise Drop(CloseCode.UNSUPPORTED_DATA, "audio must be 16-bit PCM (an even number of bytes)")
    return np.frombuffer(data, dtype="<i2").astype(np.int16)


class RealTimeGuard:
    """Caller audio may not run more than `slack_s` ahead of the wall clock since the call began (a page
    sending 48 kHz as if it were 16 kHz, or a flood). Clock readings are passed in."""

    def __init__(self, started: float, slack_s: float) -> None:
        self.started, self.slack_s = started, slack_s
        self.received = 0

    def admit(self, samples: int, now: float) -> None:
        self.received += samples
        if self.received > (now - self.started + self.slack_s) * SAMPLE_RATE:
            raise Drop(CloseCode.POLICY_VIOLATION, "audio arrives faster than real time (it must be 16 kHz mono)")
