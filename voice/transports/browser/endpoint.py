"""Browser endpoint: what the page's messages (`browser_codec`) mean for a call.

The call opens as soon as the socket is accepted; its `hello` carries the caller's token for this call only
(`ctx.call_tokens`: the one the socket was opened with, now bound to the call, or a new one).
Agent audio is paced: at most `playout_lead_ms` of it is in flight beyond what the page acknowledged as
played, so the page's jitter buffer stays small and a barge-in has little to flush. The page sees the
session's trace live (the call's observer events) and each turn's summary whenever an event may have
changed it. The socket itself (limits, outbox, stalled clients, close) is `voice.transports.connection`'s.

Close codes: 1000 hangup, 1003 odd-length audio, 1008 policy (rate, stalled client, too many bad
messages, audio faster than real time), 1009 frame too big, 1011 server error, 1013 overloaded.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np
from starlette.websockets import WebSocket

from voice.hosting.config import ServerConfig
from voice.hosting.registry import Call, CallContext
from voice.transports import CloseCode, Drop
from voice.transports.browser import codec
from voice.transports.connection import Connection
from voice.transports.outbox import AckPacing, Outbox, Wire

TURN_SETTLE_S = 0.05  # after an event, the session finishes updating the turn before its summary is read


class BrowserSink:
    """The session's AudioSink: `send`/`clear` never block; the outbox's sender task does the I/O."""

    def __init__(self, outbox: Outbox, pacing: AckPacing) -> None:
        self.outbox, self.pacing = outbox, pacing

    def send(self, pcm: np.ndarray) -> None:
        self.outbox.put_audio("audio", codec.audio_frame(pcm), len(pcm))

    def clear(self) -> None:
        """Barge-in: drop the queued audio and tell the page to flush its buffer."""
        self.outbox.drop_audio()
        self.outbox.put("clear", codec.clear(self.pacing.clear()))


class BrowserEndpoint:
    """One browser call (see the module docstring)."""

    transport = "browser"
    gone_reason = "client disconnected"
    waiting_for = "call"

    def __init__(self, pacing: AckPacing, call_token: str | None = None) -> None:
        self.pacing = pacing
        self.call_token = call_token  # redeemed by the server before the socket got here
        self.conn: Connection | None = None
        self.call: Call | None = None
        self.turns = codec.TurnUpdates()
        self.turns_due: asyncio.TimerHandle | None = None
        self.rejected = 0
        self.guard: codec.RealTimeGuard | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    async def begin(self, conn: Connection) -> None:
        self.conn, self.loop = conn, asyncio.get_running_loop()
        self.guard = codec.RealTimeGuard(time.monotonic(), conn.cfg.realtime_slack_s)
        call = self.call = await conn.open_call(BrowserSink(conn.outbox, self.pacing), self.transport)
        self.call_token = conn.ctx.call_tokens.bind(self.call_token, call.call_id, conn.source)
        conn.outbox.put("hello", codec.hello(call.call_id, conn.cfg.playout_lead_ms, self.call_token))
        for entry in list(call.events):  # what happened while the session started (greeting, warm-up)
            conn.outbox.put("event", codec.event({k: v for k, v in entry.items() if k != "seq"}))
        call.session.observers.append(self._observe)

    def message_limit(self, cfg: ServerConfig) -> int:
        return cfg.max_message_bytes

    def exempt(self, message: Wire) -> bool:
        return False  # the page's acks are few (one per 40 ms of playout)

    def _observe(self, entry: dict[str, Any]) -> None:
        assert self.conn is not None and self.loop is not None
        self.conn.outbox.put("event", codec.event(entry))
        if self.turns_due is None:
            self.turns_due = self.loop.call_later(TURN_SETTLE_S, self._send_turns)

    def _send_turns(self) -> None:
        self.turns_due = None
        if self.call is not None and self.conn is not None:
            for text in self.turns.changed(self.call.summary()["turns"]):
                self.conn.outbox.put("turn", text)

    async def receive(self, message: Wire) -> str | None:
        assert self.conn is not None and self.call is not None and self.guard is not None
        if not isinstance(message, str):
            pcm = codec.decode_audio(message, min(codec.MAX_FRAME_BYTES, self.conn.cfg.max_message_bytes))
            self.conn.heard_media()
            self.guard.admit(len(pcm), time.monotonic())
            if not self.conn.hear(pcm):
                raise Drop(CloseCode.TRY_AGAIN_LATER, "server overloaded")
            return None
        try:
            msg = codec.decode_text(message)
        except codec.Rejected as exc:
            self._reject(str(exc))
            return None
        match msg:
            case codec.Played(samples, epoch):
                if counted := self.conn.outbox.ack(samples, epoch):
                    self.call.session.played(counted)
            case codec.Approval(approved):
                await self.call.session.decide(approved)
            case codec.Hangup():
                return "hangup"
        return None

    def _reject(self, error: str) -> None:
        assert self.conn is not None
        self.rejected += 1
        if self.rejected > self.conn.cfg.max_bad_messages:
            raise Drop(CloseCode.POLICY_VIOLATION, "too many invalid messages")
        self.conn.outbox.put("error", codec.error(error))

    def closing(self, code: int, reason: str) -> dict[str, Any]:
        if self.turns_due is not None:
            self.turns_due.cancel()
        if self.conn is None or self.call is None:  # the call never opened (the server is full)
            if self.conn is not None:
                self.conn.ctx.call_tokens.release(self.call_token)
                self.conn.outbox.put("error", codec.error(reason))
            return {}
        self.conn.ctx.call_tokens.ended(self.call.call_id, self.conn.cfg.call_token_ttl_s)
        if self._observe in self.call.session.observers:
            self.call.session.observers.remove(self._observe)
        self._send_turns()
        self.conn.outbox.put("bye", codec.bye(reason))
        return {"sent_s": self.conn.outbox.sent_samples / codec.SAMPLE_RATE,
                "played_s": self.pacing.played / codec.SAMPLE_RATE, "rejected": self.rejected}


async def browser_call(ws: WebSocket, ctx: CallContext, call_token: str | None = None) -> None:
    """Serve one accepted browser WebSocket until hangup, disconnect or a protocol violation; `call_token`:
    the redeemed caller token it was opened with (None: opened with the access token)."""
    pacing = AckPacing(ctx.config.playout_lead_ms * codec.SAMPLE_RATE // 1000, ctx.config.stall_s)
    await Connection(ws, ctx, pacing).serve(BrowserEndpoint(pacing, call_token))
