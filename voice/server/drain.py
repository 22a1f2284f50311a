"""Draining `voiceloop serve`: the first SIGTERM (or SIGINT) stops new calls and lets live ones finish.

In order: the registry refuses every new call (browser and Twilio sockets close 1012 "call again", the Twilio
webhook answers 503), `/healthz` answers 503 so a load balancer's health check takes this server out, and the
live calls go on until they end or `drain_timeout_s` passes. Calls still live then are ended from the server's
side: the socket closes 1012 with the reason, and a run in flight is journaled as `run_cancelled` with it. A
second signal skips the wait. Progress is logged as it goes ("draining: 3 calls live").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from voice.hosting.registry import Call, CallRegistry

log = logging.getLogger("voiceloop.drain")
PROGRESS_EVERY_S = 5.0  # the live-call count is logged when it changes, and at least this often
POLL_S = 0.1
CLOSE_WAIT_S = 10.0  # calls ended at the deadline get this long to journal their runs and close their sockets


async def drain(registry: CallRegistry, timeout_s: float, now: asyncio.Event) -> int:
    """Drain the server (see the module docstring); returns how many calls had to be ended. `now` is set by a
    second signal: stop waiting for the live calls."""
    registry.drain()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    log.warning("draining: %d calls live; new calls refused and /healthz answers 503; live calls have up to "
                "%g s to end", len(registry.live()), timeout_s)
    shown, shown_at = len(registry.live()), loop.time()
    while registry.live() and not now.is_set() and loop.time() < deadline:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(now.wait(), min(POLL_S, max(deadline - loop.time(), 0)))
        live = len(registry.live())
        if live and (live != shown or loop.time() - shown_at >= PROGRESS_EVERY_S):
            log.info("draining: %d calls live, %.0f s left", live, max(deadline - loop.time(), 0))
            shown, shown_at = live, loop.time()
    left = registry.live()
    if not left:
        log.warning("drained: no call is live")
        return 0
    why = "a second signal" if now.is_set() else f"the drain deadline ({timeout_s:g} s) passed"
    await end_calls(left, f"server shutting down: {why}")
    return len(left)


async def end_calls(calls: list[Call], reason: str) -> None:
    """End each call from the server's side through its transport (or directly when it has none), then wait
    for them to close: each run in flight reaches the journal as cancelled with `reason`."""
    log.warning("draining: ending %d live calls (%s)", len(calls), reason)
    for call in calls:
        if call.hang_up is not None:
            call.hang_up(reason)
    direct = [call.close(reason) for call in calls if call.hang_up is None]
    await asyncio.gather(*direct, return_exceptions=True)
    loop = asyncio.get_running_loop()
    until = loop.time() + CLOSE_WAIT_S
    while any(call.ended_at is None for call in calls) and loop.time() < until:
        await asyncio.sleep(POLL_S)
    log.warning("drained: %d calls ended by the server", len(calls))
