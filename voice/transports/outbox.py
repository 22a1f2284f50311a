"""Everything the server sends on one connection, in order, from one sender task; producers never block.

Control messages (events, `clear`, errors) go before queued audio. Audio goes out in order, optionally paced
by the client's playout acks (`AckPacing`). A client that stops reading is dropped with 1008: the outbox is
full, a send stalls past `send_timeout_s`, or a paced client acknowledges nothing for `stall_s` while audio
waits. Shared by every transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from typing import Protocol

from voice.hosting.config import ServerConfig
from voice.transports import CloseCode, Drop

Wire = str | bytes
NOT_READING = "client is not reading"


class AckPacing:
    """Audio in flight (sent, not yet acknowledged as played) stays under `lead` samples; acks release more.
    Acks carry the epoch of the audio they acknowledge: a `clear` starts a new epoch, so late acks for
    flushed audio count for nothing. Pure bookkeeping with an injectable clock."""

    def __init__(self, lead_samples: int, stall_s: float) -> None:
        self.lead, self.stall_s = lead_samples, stall_s
        self.in_flight = 0
        self.epoch = 0
        self.played = 0
        self.blocked_since: float | None = None  # audio waiting on acks, with none arriving, since then

    def may_send(self) -> bool:
        return self.in_flight < self.lead

    def sent(self, samples: int) -> None:
        self.in_flight += samples

    def ack(self, samples: int, epoch: int) -> int:
        """The client played `samples` more; returns how many count for the session's playout cursor."""
        if epoch != self.epoch or samples <= 0:
            return 0
        samples = min(samples, self.in_flight)
        self.in_flight -= samples
        self.played += samples
        self.blocked_since = None
        return samples

    def clear(self) -> int:
        """Barge-in: nothing is in flight any more; returns the new epoch."""
        self.in_flight = 0
        self.epoch += 1
        self.blocked_since = None
        return self.epoch

    def check_stall(self, audio_waiting: bool, now: float) -> None:
        if not (audio_waiting and not self.may_send()):
            self.blocked_since = None
        elif self.blocked_since is None:
            self.blocked_since = now
        elif now - self.blocked_since > self.stall_s:
            raise Drop(CloseCode.POLICY_VIOLATION, "client stopped acknowledging audio")


class AudioTail(Protocol):
    """A sink that holds back a partial chunk until the reply pauses (Twilio's 20 ms μ-law chunks)."""

    def has_tail(self) -> bool: ...

    def flush_tail(self) -> None: ...


class Outbox:
    """An ordered, bounded send queue drained by `run()` (see the module docstring)."""

    IDLE_FLUSH_S = 0.06  # the reply paused this long: send its last partial chunk
    STALL_CHECK_S = 1.0

    def __init__(self, send: Callable[[Wire], Awaitable[None]], config: ServerConfig,
                 pacing: AckPacing | None = None) -> None:
        self.send, self.cfg, self.pacing = send, config, pacing
        self.tail: AudioTail | None = None
        self.control: deque[tuple[str, Wire]] = deque()
        self.audio: deque[tuple[str, Wire, int]] = deque()
        self.queued_samples = 0
        self.sent: Counter[str] = Counter()
        self.sent_samples = 0
        self.failure: Drop | None = None
        self.wake = asyncio.Event()

    # ---- producers (never block) -------------------------------------------------------------

    def put(self, kind: str, data: Wire) -> None:
        """A control message: sent before any queued audio."""
        if self._full():
            return
        self.control.append((kind, data))
        self.wake.set()

    def put_audio(self, kind: str, data: Wire, samples: int = 0) -> None:
        """Audio (and what travels with it, like Twilio's marks), in order; `samples` at 16 kHz."""
        if self._full():
            return
        if (self.queued_samples + samples) > self.cfg.max_queued_audio_s * 16000:
            self.fail(Drop(CloseCode.POLICY_VIOLATION, "client is not playing audio"))
            return
        self.audio.append((kind, data, samples))
        self.queued_samples += samples
        self.wake.set()

    def ack(self, samples: int, epoch: int) -> int:
        """A paced client played `samples` more (see AckPacing.ack); the acked room lets more audio go."""
        counted = self.pacing.ack(samples, epoch) if self.pacing is not None else 0
        if counted:
            self.wake.set()
        return counted

    def drop_audio(self) -> None:
        """Barge-in: queued audio never goes out."""
        self.audio.clear()
        self.queued_samples = 0

    def fail(self, drop: Drop) -> None:
        self.failure = self.failure or drop
        self.wake.set()

    def _full(self) -> bool:
        if self.failure is not None:
            return True
        if len(self.control) + len(self.audio) >= self.cfg.max_outbox:
            self.fail(Drop(CloseCode.POLICY_VIOLATION, NOT_READING))
            return True
        return False

    # ---- the sender task ---------------------------------------------------------------------

    async def run(self) -> None:
        """Send until a failure, which is raised (a Drop, or the socket's own error)."""
        while True:
            if self.failure is not None:
                raise self.failure
            if self.control:
                await self._send(*self.control.popleft())
            elif self.audio and (self.pacing is None or self.pacing.may_send()):
                kind, data, samples = self.audio.popleft()
                self.queued_samples -= samples
                if self.pacing is not None:
                    self.pacing.sent(samples)
                await self._send(kind, data)
                self.sent_samples += samples
            else:
                if self.pacing is not None:
                    self.pacing.check_stall(bool(self.audio), time.monotonic())
                await self._idle()

    async def _idle(self) -> None:
        self.wake.clear()
        tail = self.tail is not None and self.tail.has_tail()
        blocked = bool(self.audio)  # waiting on acks: wake up now and then to check for a stall
        timeout = self.IDLE_FLUSH_S if tail else self.STALL_CHECK_S if blocked else None
        try:  # not wait_for: on 3.11 it can swallow a cancellation
            async with asyncio.timeout(timeout):
                await self.wake.wait()
        except TimeoutError:
            if tail and self.tail is not None:
                self.tail.flush_tail()

    async def _send(self, kind: str, data: Wire) -> None:
        try:
            async with asyncio.timeout(self.cfg.send_timeout_s):
                await self.send(data)
        except TimeoutError:
            raise Drop(CloseCode.POLICY_VIOLATION, NOT_READING) from None
        self.sent[kind] += 1

    async def flush(self, timeout: float = 2.0) -> None:
        """Best effort before the socket closes: send the queued control messages (not audio)."""
        with contextlib.suppress(Exception):
            async with asyncio.timeout(timeout):
                while self.control:
                    await self.send(self.control.popleft()[1])
