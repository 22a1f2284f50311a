"""Twilio Media Streams endpoint: what the stream's messages (`twilio_codec`) mean for a call.

The call opens on `start` (through `CallContext.open_call`), caller audio goes to the session, echoed marks
advance its playout cursor, `stop` ends the call. Unknown events, stale marks and malformed marks are
ignored and counted (more than `max_unknown_events` unknown events: 1008); `media` before `start` or a
second `start` is 1008. Caller audio the session cannot keep up with (`max_backlog_s`), or that runs more than
`twilio_realtime_slack_s` ahead of the wall clock (a flood), is shed and counted — the latter before it is
decoded. Echoes of our own marks are not counted against the message-rate limit (Twilio returns every
pending mark at once after a `clear`). A stream opened by a signed webhook's TwiML does not count against
its address's call cap: Twilio's media servers carry many calls each.
The socket itself (limits, outbox, close) is `voice.transports.connection`'s.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any

import numpy as np
from starlette.websockets import WebSocket

from voice.hosting.config import ServerConfig
from voice.hosting.escalations import transfer_escalations
from voice.hosting.registry import Call, CallContext
from voice.transports import CloseCode, Drop
from voice.transports.connection import Connection
from voice.transports.outbox import Outbox, Wire
from voice.transports.twilio.codec import (
    AgentAudioEncoder,
    CallerAudioDecoder,
    Dtmf,
    Mark,
    Media,
    Start,
    Stop,
    Unknown,
    check_stream_key,
    decode,
)
from voice.transports.twilio.webhook import twilio_stream_key
from voice.transports.watch import RealTimeBudget

MARK_ECHO_MAX_BYTES = 400  # a mark echo is ~120 bytes; anything longer is not one


class TwilioSink:
    """The session's AudioSink: encodes agent audio onto the outbox; `send`/`clear` never block."""

    def __init__(self, outbox: Outbox, stream_sid: str) -> None:
        self.outbox, self.encoder = outbox, AgentAudioEncoder(stream_sid)

    def send(self, pcm: np.ndarray) -> None:
        for out in self.encoder.encode(pcm):
            self.outbox.put_audio(out.kind, out.text, out.samples)

    def has_tail(self) -> bool:
        return self.encoder.has_tail()

    def flush_tail(self) -> None:
        for out in self.encoder.flush_tail():
            self.outbox.put_audio(out.kind, out.text, out.samples)

    def clear(self) -> None:
        """Barge-in: nothing queued goes out, and Twilio drops what it has buffered."""
        self.outbox.drop_audio()
        self.outbox.put("clear", self.encoder.clear().text)


class TwilioEndpoint:
    """One Media Streams connection (see the module docstring)."""

    transport = "twilio"
    gone_reason = "caller disconnected"
    waiting_for = "'start'"

    def __init__(self) -> None:
        self.conn: Connection | None = None
        self.sink: TwilioSink | None = None
        self.decoder = CallerAudioDecoder()
        self.counts: Counter[str] = Counter()
        self.key = ""
        self.budget: RealTimeBudget | None = None

    def message_limit(self, cfg: ServerConfig) -> int:
        return cfg.max_twilio_message_bytes

    def exempt(self, message: Wire) -> bool:
        """An echo of a mark we sent (each once): Twilio's to send, however many come back at once."""
        if self.sink is None or not isinstance(message, str) or len(message) > MARK_ECHO_MAX_BYTES \
                or '"mark"' not in message:
            return False
        try:
            msg = json.loads(message)
        except (ValueError, RecursionError):
            return False
        mark = msg.get("mark") if isinstance(msg, dict) and msg.get("event") == "mark" else None
        name = mark.get("name") if isinstance(mark, dict) else None
        return isinstance(name, str) and self.sink.encoder.echoed(name)

    @property
    def call(self) -> Call | None:
        return self.conn.call if self.conn is not None else None

    async def begin(self, conn: Connection) -> None:
        self.conn = conn
        self.key = twilio_stream_key(conn.cfg.stream_key_secret) if conn.cfg.twilio_key_required else ""

    async def receive(self, message: Wire) -> str | None:
        event = decode(message)
        self.counts["unknown" if isinstance(event, Unknown) else type(event).__name__.lower()] += 1
        match event:
            case Media():
                self._on_media(event)
            case Mark():
                self._on_mark(event)
            case Start():
                await self._on_start(event)
            case Stop():
                return "stream stopped"
            case Dtmf() if self.call is not None:
                self.call.note("dtmf", digit=event.digit)
                self.call.key_pressed(event.digit)
            case Unknown():
                self._on_unknown(event)
        return None

    async def _on_start(self, start: Start) -> None:
        assert self.conn is not None
        if self.call is not None:
            raise Drop(CloseCode.POLICY_VIOLATION, "a second 'start' on the same stream")
        if self.key:
            check_stream_key(start, self.key)
        self.sink = TwilioSink(self.conn.outbox, start.stream_sid)
        self.conn.outbox.tail = self.sink
        signed = bool(self.conn.cfg.twilio_auth_token) and bool(self.key)  # the key came from signed TwiML
        self.budget = RealTimeBudget(time.monotonic(), self.conn.cfg.twilio_realtime_slack_s)
        call = await self.conn.open_call(self.sink, self.transport, per_source=not signed,
                                         stream_sid=start.stream_sid, call_sid=start.call_sid, keypad=True)
        call.note("start", stream_sid=start.stream_sid, call_sid=start.call_sid)
        transfer_escalations(call, self.conn.cfg.transfer, start.call_sid)  # an ESCALATED run dials a person

    def _on_media(self, media: Media) -> None:
        if self.call is None or self.conn is None:
            raise Drop(CloseCode.POLICY_VIOLATION, "media before start")
        if not media.inbound:
            self.counts["other_track"] += 1
            return
        self.conn.heard_media()
        now = time.monotonic()
        assert self.budget is not None
        if self.budget.room(now) <= 0:  # a flood: shed it unread, so it costs the other calls nothing
            self.decoder.skip(media)
            self.counts["shed_ms"] += len(media.payload) // 8
            return
        for pcm in self.decoder.decode(media):
            if not self.budget.admit(len(pcm), now):
                self.counts["shed_ms"] += len(pcm) // 16
            elif not self.conn.hear(pcm):
                self.counts["dropped_ms"] += len(pcm) // 16  # the session is this far behind: shed, never grow

    def _on_mark(self, mark: Mark) -> None:
        samples = self.sink.encoder.ack(mark.name) if self.sink is not None and mark.name else 0
        if samples and self.call is not None:
            self.call.session.played(samples)
        else:
            self.counts["stale_marks"] += 1

    def _on_unknown(self, event: Unknown) -> None:
        assert self.conn is not None
        if self.counts["unknown"] > self.conn.cfg.max_unknown_events:
            raise Drop(CloseCode.POLICY_VIOLATION, "too many unknown events")
        if self.call is not None and self.counts["unknown"] <= 5:
            self.call.note("unknown_event", event=event.event)

    def closing(self, code: int, reason: str) -> dict[str, Any]:
        self.counts["gap_filled_ms"] = self.decoder.gap_filled_ms
        counts = {k: v for k, v in self.counts.items() if v or k == "gap_filled_ms"}
        sent = dict(self.conn.outbox.sent) if self.conn is not None else {}
        return {"counts": counts, "sent": sent}


async def twilio_call(ws: WebSocket, ctx: CallContext) -> None:
    """Serve one accepted Twilio Media Streams WebSocket until `stop`, a disconnect or a protocol violation."""
    await Connection(ws, ctx).serve(TwilioEndpoint())
