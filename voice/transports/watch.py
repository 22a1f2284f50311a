"""Deadlines that keep a stalled or idle client from holding a slot, and the real-time budget that sheds a
flooding client's audio unread. Pure logic with the clock passed in; the socket driver ticks `Watch`.

- no call opened (Twilio: no `start`) `start_timeout_s` after connecting: 1008
- no audio message at all for `media_timeout_s` once the call is open: 1008 (a stalled stream)
- no caller speech and nothing going on for `idle_timeout_s`: 1000 (the caller walked away)
- the call is older than `max_call_s`: 1000
"""

from __future__ import annotations

from voice.hosting.config import ServerConfig
from voice.transports import CloseCode, Drop

SAMPLE_RATE = 16000


class Watch:
    def __init__(self, cfg: ServerConfig, now: float, waiting_for: str = "call") -> None:
        self.cfg, self.opened, self.waiting_for = cfg, now, waiting_for
        self.call_opened: float | None = None
        self.last_media = self.last_active = now

    def interval(self) -> float:
        """How often to check: often enough that a deadline is not overshot by more than a quarter."""
        limits = [t for t in (self.cfg.start_timeout_s, self.cfg.media_timeout_s, self.cfg.idle_timeout_s) if t > 0]
        return min([1.0, *(t / 4 for t in limits)])

    def opened_call(self, now: float) -> None:
        self.call_opened = self.last_media = self.last_active = now

    def media(self, now: float) -> None:
        self.last_media = now

    def check(self, now: float, busy: bool) -> None:
        """Raise Drop when a deadline passed; `busy`: the call has something going on (speech, a run...)."""
        cfg = self.cfg
        if self.call_opened is None:
            if cfg.start_timeout_s and now - self.opened > cfg.start_timeout_s:
                raise Drop(CloseCode.POLICY_VIOLATION, f"no {self.waiting_for} within {cfg.start_timeout_s:g} s")
            return
        if busy:
            self.last_active = now
        if cfg.media_timeout_s and now - self.last_media > cfg.media_timeout_s:
            raise Drop(CloseCode.POLICY_VIOLATION, f"no audio from the client for {cfg.media_timeout_s:g} s")
        if cfg.idle_timeout_s and now - self.last_active > cfg.idle_timeout_s:
            raise Drop(CloseCode.NORMAL, f"no caller speech for {cfg.idle_timeout_s:g} s")
        if cfg.max_call_s and now - self.call_opened > cfg.max_call_s:
            raise Drop(CloseCode.NORMAL, f"call longer than {cfg.max_call_s:g} s")


class RealTimeBudget:
    """Caller audio may run at most `slack_s` ahead of the wall clock since `started`; what is beyond it is
    refused (the transport sheds it before decoding it)."""

    def __init__(self, started: float, slack_s: float) -> None:
        self.started, self.slack_s = started, slack_s
        self.admitted = 0

    def room(self, now: float) -> int:
        return int((now - self.started + self.slack_s) * SAMPLE_RATE) - self.admitted

    def admit(self, samples: int, now: float) -> bool:
        if samples > self.room(now):
            return False
        self.admitted += samples
        return True
