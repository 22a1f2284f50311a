"""What keeps slow or numerous connections from starving the server (issue 37): uvicorn's HTTP/1.1 protocol with

- a header deadline: a connection must deliver a whole request (headers, and the small body this server takes)
  within `header_timeout_s` of connecting or of its previous response, however slowly it trickles it;
  uvicorn's own timeouts start only after a response, so a client sending a byte a second held its socket forever;
- a connection cap: past `max_connections` open sockets, a new one closes the oldest socket still waiting on its
  client's request, of the address holding the most such (`oldest_of_busiest`), so a health check or a webhook
  sent at once gets in whatever a flood holds; with none to close it is answered 503 and closed. The cap is kept
  under the process's open-file limit, so accept() does not run out of descriptors;
- and if accept() runs out anyway (other processes, a low limit), its error is logged once per `every_s`
  with a count (`AcceptErrorLog`) instead of hundreds of times a second.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from collections.abc import Callable
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from voice.hosting.admission import oldest_of_busiest

log = logging.getLogger("voiceloop.server")
ACCEPT_BACKLOG = 128  # the listen queue, and how many sockets asyncio accepts in one go
# Descriptors kept beyond the cap: ~64 for the journal, models, threads and pipes, and the sockets asyncio has
# accepted but not yet handed to a protocol, or closed but not yet released (up to 4 loop turns of a flood)
FILES_RESERVED = 64 + 4 * ACCEPT_BACKLOG
BUSY = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n"
        b"connection: close\r\ncontent-length: 45\r\n\r\n"
        b'{"error": "too many connections; try again"}\n')


class GuardedH11(H11Protocol):
    """H11Protocol with the header deadline and the connection cap; `guarded_protocol` sets the limits."""

    header_timeout_s = 10.0
    max_connections = 1000

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self.opened = self.loop.time()
        self.deadline: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        if len(self.connections) > self.max_connections and not self._make_room():
            self.connections.discard(self)
            transport.write(BUSY)
            transport.close()
            return
        self._arm()

    def waiting_on_client(self) -> bool:
        """Still the socket's protocol (not upgraded to a WebSocket), open, and owed a request by its client."""
        return (self.transport.get_protocol() is self and not self.transport.is_closing()
                and self.conn.their_state in (h11.IDLE, h11.SEND_BODY))

    def _make_room(self) -> bool:
        waiting = [c for c in self.connections if isinstance(c, GuardedH11) and c is not self and c.waiting_on_client()]
        victim = oldest_of_busiest((c.client[0] if c.client else "", c.opened, c) for c in waiting)
        if victim is None:
            return False
        victim.transport.close()  # connection_lost takes it off the count
        victim.connections.discard(victim)
        return True

    def _arm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        self.opened = self.loop.time()
        self.deadline = self.loop.call_later(self.header_timeout_s, self._expired)

    def _expired(self) -> None:
        if self.waiting_on_client():
            self.transport.close()  # nothing to tell a client that has not finished asking

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request on this keep-alive connection has the same deadline

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        if self.deadline is not None:
            self.deadline.cancel()  # the WebSocket's own deadlines take over (voice.transports.watch)
        super().handle_websocket_upgrade(event)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        super().connection_lost(exc)


def guarded_protocol(header_timeout_s: float, max_connections: int) -> type[GuardedH11]:
    """The protocol class for `uvicorn.Config(http=...)` with these limits."""
    return type("GuardedH11", (GuardedH11,), {"header_timeout_s": header_timeout_s,
                                              "max_connections": max_connections})


def connection_cap(wanted: int) -> int:
    """`wanted`, raising this process's soft open-file limit to make room for it where the hard limit allows;
    less (with a warning) where it does not, so accept() never runs out of descriptors first."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = wanted + FILES_RESERVED
    if soft != resource.RLIM_INFINITY and soft < needed:
        raised = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
        except (ValueError, OSError):
            pass
    if soft != resource.RLIM_INFINITY and soft < needed:
        cap = max(16, soft - FILES_RESERVED)
        log.warning("the open-file limit is %d: serving at most %d connections, not %d (raise `ulimit -n`)",
                    soft, cap, wanted)
        return cap
    return wanted


class AcceptErrorLog:
    """An event loop exception handler that logs "socket.accept() out of system resource" at most once per
    `every_s`, with how many there were; anything else goes to the handler it replaces."""

    MESSAGE = "socket.accept() out of system resource"

    def __init__(self, every_s: float = 10.0, clock: Callable[[], float] = time.monotonic,
                 previous: Callable[[asyncio.AbstractEventLoop, dict[str, Any]], object] | None = None) -> None:
        self.every_s, self.clock, self.previous = every_s, clock, previous
        self.count, self.logged_at = 0, float("-inf")

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") != self.MESSAGE:
            if self.previous is not None:
                self.previous(loop, context)
            else:
                loop.default_exception_handler(context)
            return
        self.count += 1
        now = self.clock()
        if now - self.logged_at >= self.every_s:
            exc = context.get("exception")
            log.error("accept() out of system resource (%s): %d time(s) since the last such line; new connections "
                      "wait. Raise `ulimit -n` or lower --max-connections", exc, self.count)
            self.count, self.logged_at = 0, now
