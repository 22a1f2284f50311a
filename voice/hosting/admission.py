"""Who may hold a socket or a call slot: server-wide and per-source (client address) caps, so one address
cannot take every slot. Pure bookkeeping; the transports' socket driver asks before it opens anything and
says when it is done (`voice.transports.connection`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from voice.hosting.config import ServerConfig


class Refused(RuntimeError):
    """No room for this socket or call now (close code 1013: try again later)."""


@dataclass
class Admission:
    """Sockets open but not yet in a call (`pending`) and live calls, per source address."""

    pending: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)

    def open_socket(self, source: str, cfg: ServerConfig) -> Ticket:
        if sum(self.pending.values()) >= cfg.max_pending_sockets:
            raise Refused("too many connections waiting to start; try again later")
        if self.pending[source] >= cfg.max_pending_per_source:
            raise Refused("too many connections from your address; try again later")
        self.pending[source] += 1
        return Ticket(self, source)

    def _drop(self, counter: Counter[str], source: str) -> None:
        counter[source] -= 1
        if counter[source] <= 0:
            del counter[source]


class Ticket:
    """One socket's place: pending until its call opens (`promote`), released once when it closes."""

    def __init__(self, admission: Admission, source: str) -> None:
        self.admission, self.source = admission, source
        self.state = "pending"  # pending -> call (counted or not) -> released

    def promote(self, cfg: ServerConfig, per_source: bool = True) -> None:
        """The socket opens a call; `per_source=False` for streams vouched for by a signed webhook."""
        if self.state != "pending":
            return
        if per_source and self.admission.calls[self.source] >= cfg.max_calls_per_source:
            raise Refused("too many calls from your address; try again later")
        self.admission._drop(self.admission.pending, self.source)
        if per_source:
            self.admission.calls[self.source] += 1
        self.state = "call" if per_source else "call_uncounted"

    def release(self) -> None:
        if self.state == "pending":
            self.admission._drop(self.admission.pending, self.source)
        elif self.state == "call":
            self.admission._drop(self.admission.calls, self.source)
        self.state = "released"
