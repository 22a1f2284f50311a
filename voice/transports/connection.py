"""The one socket driver every WebSocket transport runs on.

A transport supplies an `Endpoint` (its wire codec plus what its messages mean for the call); the driver
owns the accepted WebSocket: receiving with the message-rate and size limits, the ordered `Outbox`, the
queue that feeds caller audio to the session, opening the call through `CallContext.open_call`, and ending
with exactly one close code — noted in the call's trace (`transport.closed`) before the call is closed, so
a run in flight is journaled as cancelled. It also keeps the slot honest: per-source caps (`ctx.admission`)
and the deadlines of `voice.transports.watch` (no start, no audio, an idle caller) close sockets that a
stalled or idle client would otherwise hold.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import numpy as np
from starlette.websockets import WebSocket, WebSocketDisconnect

from voice.hosting.admission import Refused, Ticket
from voice.hosting.config import RateLimit, ServerConfig
from voice.hosting.registry import (  # AudioSink: as calls.py
    AudioSink,
    Call,
    CallContext,
    CallLimitReached,
    ServerDraining,
)
from voice.transports import TOO_MANY_CALLS, CloseCode, Drop
from voice.transports.outbox import AckPacing, Outbox, Wire
from voice.transports.watch import Watch

log = logging.getLogger("voiceloop.transport")
SAMPLE_RATE = 16000
MAX_QUEUED_MESSAGES = 64  # received but not yet handled (as websockets' max_queue): then reading pauses


class Endpoint(Protocol):
    """What one transport's messages mean. It never touches the socket: it reads messages handed to it and
    queues replies on `conn.outbox`."""

    transport: str
    gone_reason: str  # the call's end reason when the client just goes away
    waiting_for: str  # what opens the call, for the start timeout's reason ("'start'")

    def message_limit(self, cfg: ServerConfig) -> int:
        """The largest message this protocol has any use for: bigger ones close 1009 before they are parsed."""

    def exempt(self, message: Wire) -> bool:
        """A message the client owes us (an echo of one we sent) that the message-rate limit does not count."""

    async def begin(self, conn: Connection) -> None:
        """The socket is accepted: open the call now (browser) or wait for a message that says so (Twilio)."""

    async def receive(self, message: Wire) -> str | None:
        """Handle one message (raise Drop to close); return a reason when the caller ended the call."""

    def closing(self, code: int, reason: str) -> dict[str, Any]:
        """The connection is about to close: queue any last message; return details for the close note."""


class CallerAudio:
    """Caller audio waiting for the session, with when it arrived (perf_counter), bounded by `max_backlog_s`;
    one task feeds it to the session in order."""

    def __init__(self, max_backlog_s: float) -> None:
        self.queue: asyncio.Queue[tuple[np.ndarray, float]] = asyncio.Queue()
        self.limit = int(max_backlog_s * SAMPLE_RATE)
        self.backlog = 0

    def put(self, pcm: np.ndarray, arrived: float) -> bool:
        """False when the session is this far behind: the transport sheds the audio or ends the call."""
        if self.backlog + len(pcm) > self.limit:
            return False
        self.backlog += len(pcm)
        self.queue.put_nowait((pcm, arrived))
        return True

    async def feed(self, hear: Callable[[np.ndarray, float], Awaitable[None]]) -> None:
        while True:
            pcm, arrived = await self.queue.get()
            self.backlog -= len(pcm)
            await hear(pcm, arrived)


class ClientGone(Exception):
    """The client closed the socket (or it broke); `code` is what the close frame said, if anything."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code, self.reason = code, reason


class Connection:
    """One accepted WebSocket running one endpoint (see the module docstring)."""

    def __init__(self, ws: WebSocket, ctx: CallContext, pacing: AckPacing | None = None) -> None:
        self.ws, self.ctx, self.cfg = ws, ctx, ctx.config
        self.outbox = Outbox(self._send, self.cfg, pacing)
        self.caller_audio = CallerAudio(self.cfg.max_backlog_s)
        self.rate = RateLimit(self.cfg.max_messages_per_s)
        self.inbox: asyncio.Queue[tuple[Wire | ClientGone, float]] = asyncio.Queue(MAX_QUEUED_MESSAGES)
        self.arrived = 0.0  # when the message being handled came off the socket (perf_counter)
        self.call: Call | None = None
        self._calls = contextlib.AsyncExitStack()
        self.source = ws.client.host if ws.client else "unknown"
        self.ticket: Ticket | None = None
        self.watch = Watch(self.cfg, time.monotonic())

    async def open_call(self, sink: AudioSink, transport: str, per_source: bool = True, **meta: Any) -> Call:
        """Build, register and start the call (`CallContext.open_call`); it is closed when the socket is.
        `per_source=False`: the call does not count against its address's cap (a signed Twilio stream)."""
        assert self.ticket is not None
        self.ticket.promote(self.cfg, per_source)
        self.watch.opened_call(time.monotonic())  # the client did its part; a slow session start is ours
        self.call = await self._calls.enter_async_context(self.ctx.open_call(sink, transport, **meta))
        self.call.hang_up = self.hang_up
        return self.call

    def hang_up(self, reason: str) -> None:
        """End the call from our side (a drained server's deadline): the socket closes 1012 with `reason`."""
        self.outbox.fail(Drop(CloseCode.SERVICE_RESTART, reason))

    def _made_room(self, reason: str) -> None:
        """A newer socket needed this one's place in the full table of sockets yet to start: close 1013."""
        self.outbox.fail(Drop(CloseCode.TRY_AGAIN_LATER, reason))

    def heard_media(self) -> None:
        """The endpoint got an audio message: the stream is alive (see `Watch`)."""
        self.watch.media(time.monotonic())

    async def serve(self, endpoint: Endpoint) -> tuple[int, str]:
        try:
            return await self._serve(endpoint)
        finally:
            if self.ticket is not None:
                self.ticket.release()

    async def _serve(self, endpoint: Endpoint) -> tuple[int, str]:
        async with self._calls:  # closes the call last, after the socket
            code, reason = await self._run(endpoint)
            details = endpoint.closing(code, reason)
            if self.call is not None:
                self.call.note("closed", code=int(code), reason=reason, **details)
                self.call.end_reason = reason
            await self.outbox.flush()
            await self._close_socket(code, reason)
        level = logging.INFO if code in (CloseCode.NORMAL, CloseCode.GOING_AWAY) else logging.WARNING
        log.log(level, "%s connection closed %d (%s)", endpoint.transport, code, reason)
        return code, reason

    async def _run(self, endpoint: Endpoint) -> tuple[int, str]:
        tasks: list[asyncio.Task[Any]] = []
        try:
            self.ctx.registry.check_room()  # draining or full: refused before anything is opened
            self.ticket = self.ctx.admission.open_socket(self.source, self.cfg, self._made_room)
            self.watch.waiting_for = endpoint.waiting_for
            tasks.append(asyncio.create_task(self._read(endpoint)))  # not waited on: it ends the call via the outbox
            tasks.append(asyncio.create_task(self._watch()))  # likewise
            await endpoint.begin(self)
            waited = [asyncio.create_task(self._dispatch(endpoint)), asyncio.create_task(self.outbox.run()),
                      asyncio.create_task(self.caller_audio.feed(self._hear))]
            tasks += waited
            done, _ = await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
            task = done.pop()
            return close_reason(task.exception(), endpoint.gone_reason, task.result)
        except Exception as exc:  # from begin(): a refused call
            return close_reason(exc, endpoint.gone_reason)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def hear(self, pcm: np.ndarray) -> bool:
        """Queue caller audio from the message being handled; False when the session is too far behind."""
        return self.caller_audio.put(pcm, self.arrived)

    async def _hear(self, pcm: np.ndarray, arrived: float) -> None:
        assert self.call is not None  # caller audio is only queued once the call exists
        await self.call.session.hear(pcm, wall=arrived)  # taken in at once, stamped with its arrival off the socket

    async def _watch(self) -> None:
        """Close the connection once a deadline of `Watch` has passed (no start, no audio, an idle caller)."""
        try:
            while True:
                await asyncio.sleep(self.watch.interval())
                now = time.monotonic()
                if not self.inbox.empty():  # messages wait on us (a slow call start): the client is not silent
                    self.watch.media(now)
                busy = self.call is not None and self.call.session.busy
                self.watch.check(now, busy or self.outbox.queued_samples > 0 or self.caller_audio.backlog > 0)
        except Drop as drop:
            self.outbox.fail(drop)

    async def _read(self, endpoint: Endpoint) -> None:
        """Read the socket all the time (so uvicorn answers pings and sees the close) into a bounded queue;
        a limit broken ends the connection at once through the outbox. A message over the endpoint's size
        limit is refused by its length, before anything parses it."""
        limit = min(self.cfg.max_message_bytes, endpoint.message_limit(self.cfg))
        try:
            while True:
                message = await self.ws.receive()
                if message["type"] == "websocket.disconnect":
                    code = int(message.get("code") or CloseCode.NO_STATUS)
                    await self.inbox.put((ClientGone(code, message.get("reason") or ""), time.perf_counter()))
                    return
                data: Wire = message["text"] if message.get("text") is not None else message.get("bytes") or b""
                if len(data) > limit:  # uvicorn's cap is larger, and a mounted app may have none
                    raise Drop(CloseCode.MESSAGE_TOO_BIG, f"message of {len(data)} bytes; at most {limit}")
                if not endpoint.exempt(data) and not self.rate.allow():
                    raise Drop(CloseCode.POLICY_VIOLATION, "message rate limit exceeded")
                await self.inbox.put((data, time.perf_counter()))
        except Drop as drop:
            self.outbox.fail(drop)

    async def _dispatch(self, endpoint: Endpoint) -> str:
        """Hand received messages to the endpoint in order; a disconnect counts once those before it are handled."""
        while True:
            item, self.arrived = await self.inbox.get()
            if isinstance(item, ClientGone):
                raise item
            ended = await endpoint.receive(item)
            if ended is not None:
                return ended

    async def _send(self, data: Wire) -> None:
        try:
            if isinstance(data, str):
                await self.ws.send_text(data)
            else:
                await self.ws.send_bytes(data)
        except RuntimeError as exc:  # uvicorn already closed the socket (keepalive timeout, a frame over its cap)
            raise ClientGone(CloseCode.ABNORMAL, "") from exc

    async def _close_socket(self, code: int, reason: str) -> None:
        with contextlib.suppress(Exception):
            async with asyncio.timeout(5.0):
                await self.ws.close(int(code), reason.encode()[:120].decode(errors="ignore"))


def close_reason(exc: BaseException | None, gone_reason: str,
                 result: Callable[[], Any] | None = None) -> tuple[int, str]:
    """The one mapping from how a connection ended to its close code and reason."""
    if exc is None:
        ended = result() if result is not None else None
        return CloseCode.NORMAL, ended if isinstance(ended, str) else gone_reason
    if isinstance(exc, Drop):
        return exc.code, exc.reason
    if isinstance(exc, ClientGone) and exc.code == CloseCode.SERVICE_RESTART:  # uvicorn is shutting down
        return exc.code, "server shutting down"
    if isinstance(exc, ClientGone):  # our own close sent by uvicorn (1009 too big, ...) or the client leaving
        ours = exc.code not in (CloseCode.NORMAL, CloseCode.GOING_AWAY, CloseCode.NO_STATUS, CloseCode.ABNORMAL)
        return exc.code, exc.reason if ours and exc.reason else gone_reason
    if isinstance(exc, WebSocketDisconnect):  # a send found the socket gone
        return exc.code, gone_reason
    if isinstance(exc, ServerDraining):  # 1012: reconnect now (the load balancer picks another server)
        return CloseCode.SERVICE_RESTART, str(exc)
    if isinstance(exc, CallLimitReached):
        return CloseCode.TRY_AGAIN_LATER, TOO_MANY_CALLS
    if isinstance(exc, Refused):
        return CloseCode.TRY_AGAIN_LATER, str(exc)
    log.error("connection failed", exc_info=exc)
    return CloseCode.INTERNAL_ERROR, "server error"
