"""Who may hold a socket or a call slot: server-wide and per-source (client address) caps, so one address
cannot take every slot. Pure bookkeeping; the transports' socket driver asks before it opens anything and
says when it is done (`voice.transports.connection`).

Sockets that have not started their call yet cannot lock a caller out by filling the server-wide table: a new
socket that finds it full closes the oldest waiting socket of the address holding the most (`oldest_of_busiest`),
so a caller who starts at once (a signed Twilio stream sends `start` within milliseconds) always gets in, and a
flood from a few addresses only churns its own sockets."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from voice.hosting.config import ServerConfig

T = TypeVar("T")
MADE_ROOM = "closed to make room: too many connections waiting to start; start the call sooner"


def oldest_of_busiest(items: Iterable[tuple[str, float, T]]) -> T | None:
    """Of (source, opened, item) triples, the earliest-opened item of the source with the most items (ties: the
    source whose earliest is earliest); None for none. The one to close when a table of waiting things is full."""
    by_source: dict[str, list[tuple[float, T]]] = {}
    for source, opened, item in items:
        by_source.setdefault(source, []).append((opened, item))
    if not by_source:
        return None
    busiest = max(by_source.values(), key=lambda held: (len(held), -min(opened for opened, _ in held)))
    return min(busiest, key=lambda held: held[0])[1]


class Refused(RuntimeError):
    """No room for this socket or call now (close code 1013: try again later)."""


@dataclass
class Admission:
    """Sockets open but not yet in a call (`pending`) and live calls, per source address."""

    pending: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    waiting: dict[Ticket, None] = field(default_factory=dict)  # pending tickets, oldest first
    _order: itertools.count[int] = field(default_factory=itertools.count)

    def open_socket(self, source: str, cfg: ServerConfig, evict: Callable[[str], None] | None = None) -> Ticket:
        """A place for a socket that has not started its call; `evict(reason)` closes it if a newer one needs
        the room (without it, the socket is never made to leave and a full table refuses the newcomer)."""
        if self.pending[source] >= cfg.max_pending_per_source:
            raise Refused("too many connections from your address; try again later")
        if sum(self.pending.values()) >= cfg.max_pending_sockets:
            victim = oldest_of_busiest((t.source, t.order, t) for t in self.waiting if t.evict is not None)
            if victim is None:
                raise Refused("too many connections waiting to start; try again later")
            victim.evicted()
        self.pending[source] += 1
        ticket = Ticket(self, source, next(self._order), evict)
        self.waiting[ticket] = None
        return ticket

    def _drop(self, counter: Counter[str], source: str) -> None:
        counter[source] -= 1
        if counter[source] <= 0:
            del counter[source]


class Ticket:
    """One socket's place: pending until its call opens (`promote`), released once when it closes."""

    def __init__(self, admission: Admission, source: str, order: int = 0,
                 evict: Callable[[str], None] | None = None) -> None:
        self.admission, self.source, self.order, self.evict = admission, source, order, evict
        self.state = "pending"  # pending -> call (counted or not) -> released

    def evicted(self) -> None:
        """Closed to make room for a newer socket: its place is free at once, its socket closes 1013."""
        assert self.evict is not None
        self.release()
        self.evict(MADE_ROOM)

    def promote(self, cfg: ServerConfig, per_source: bool = True) -> None:
        """The socket opens a call; `per_source=False` for streams vouched for by a signed webhook."""
        if self.state != "pending":
            return
        if per_source and self.admission.calls[self.source] >= cfg.max_calls_per_source:
            raise Refused("too many calls from your address; try again later")
        self.admission._drop(self.admission.pending, self.source)
        self.admission.waiting.pop(self, None)
        if per_source:
            self.admission.calls[self.source] += 1
        self.state = "call" if per_source else "call_uncounted"

    def release(self) -> None:
        if self.state == "pending":
            self.admission._drop(self.admission.pending, self.source)
            self.admission.waiting.pop(self, None)
        elif self.state == "call":
            self.admission._drop(self.admission.calls, self.source)
        self.state = "released"
