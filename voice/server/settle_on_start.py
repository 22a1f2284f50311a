"""`voiceloop serve` settles the runs a killed server left open: its own before it takes a call, and, on a
PostgreSQL journal that several servers share, a dead peer's while it serves (see `loop.run.settle`).

A voice run cannot be resumed: its caller went with the killed process, and the call so far (the run's
`history=`) is not in the journal. So each open run is closed with `run_interrupted`, after its cut-off writes
are reconciled against the orders database through the call id they were keyed by. The journal then says what
each refund or address change really did, and `voiceloop report` lists how each run ended.

Which runs are dead: on PostgreSQL a server holds a session advisory lock on each run it runs
(`PgJournal.claim_run`), so the database itself knows. A server killed with SIGKILL drops its connection and
its locks with it; a machine that vanishes is noticed when the database server's TCP keepalives give up on it
(set `tcp_keepalives_idle` and friends low: README, "Running more than one server"). Every
`--settle-interval` seconds each live server looks at which database sessions are connected; when one went
away it sweeps the journal on a connection of its own (its own live runs, locked by its main connection, are
skipped) and settles what no live server holds; two sweeping servers never settle the same run twice (the lock
again). The sweep reads every run's events, so it runs only then (and every FULL_SWEEP_EVERY looks). A SQLite
journal is one machine's file and one server's: there, only the start-up settlement runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from loop.run.settle import Settlement, settle_unfinished
from loop.store.db import is_postgres, open_journal
from voice.hosting.registry import CallFactory

log = logging.getLogger(__name__)

REASON = "server restarted"
PEER_REASON = "its server stopped (killed, or cut off from the database)"
FULL_SWEEP_EVERY = 60  # looks without a session gone between two sweeps anyway (5 min at the default 5 s)


def settle_on_start(factory: CallFactory) -> list[Settlement]:
    """Close every run left open in the server's journal, reconciling writes with the server's own tools."""
    tools = factory.make_agent("settle-on-start").tools  # the same tools (and database) every call uses
    settled = asyncio.run(settle_unfinished(factory.journal, tools, reason=REASON))
    for s in settled:
        log.warning("run %s was left open by a killed server; %s as %s: %s", s.run_id, s.how, s.outcome, s.reason)
        commit_holds(factory, s)
    return settled


def commit_holds(factory: CallFactory, settled: Settlement) -> None:
    """The tenant budget's holds a dead run left open are committed (spend may have happened), so they do not
    shrink the tenant's allowance for ever."""
    if factory.tenant is None or settled.how != "closed":
        return
    for s in factory.tenant.ledger.settle_run(settled.run_id):
        log.warning("run %s: its open hold on tenant %s's budget was committed (%s)", settled.run_id,
                    factory.tenant.tenant, ", ".join(f"{k}={v:g}" for k, v in s.committed.items()))


async def settle_peers(factory: CallFactory, interval_s: float) -> None:
    """Until cancelled: settle the runs of servers that stopped (see the module docstring). Every `interval_s`
    it looks at which database sessions are connected (cheap); the journal is swept when one went away since
    the last look, and every FULL_SWEEP_EVERY looks anyway. Returns at once on a SQLite journal, or with
    `interval_s` 0 (sweeping off)."""
    if not is_postgres(factory.db_url) or interval_s <= 0:
        return
    journal = open_journal(factory.db_url)  # its own session: this server's live runs stay locked against it
    tools = factory.make_agent("settle-peers").tools
    log.info("settling the runs of stopped servers (looking every %g s)", interval_s)
    try:
        sessions, looks = journal.sessions(), 0
        while True:
            await asyncio.sleep(interval_s)
            try:
                now, looks = journal.sessions(), looks + 1
                gone, sessions = sessions - now, now
                if gone or looks >= FULL_SWEEP_EVERY:
                    looks = 0
                    await _sweep(factory, journal, tools)
            except Exception:  # the database is away for a moment: the next look tries again
                log.exception("settling the runs of stopped servers failed")
    finally:
        with contextlib.suppress(Exception):
            journal.close()


async def _sweep(factory: CallFactory, journal: Any, tools: Mapping[str, Any]) -> None:
    for s in await settle_unfinished(journal, tools, reason=PEER_REASON):
        log.warning("run %s was left open by a server that stopped; %s as %s: %s", s.run_id, s.how, s.outcome,
                    s.reason)
        commit_holds(factory, s)
