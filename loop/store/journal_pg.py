"""The journal on PostgreSQL: the same statements and checks as `loop.store.journal.Journal`, on a shared server.

Every append is its own committed transaction (autocommit; synchronous_commit as the server is configured,
on by default), so an event a listener saw survives a killed process, and a server restart. The primary key
(run_id, seq) is what makes a position in a run written once: the insert is `ON CONFLICT DO NOTHING`, then a
resumed or racing writer reads back the stored event and checks it is the same one (JournalDivergence if not).
An identity column keeps append order across every process writing to the server.

Many servers share one journal, so "a run with no closing event" no longer means "a run a killed process left
open": it may be live on another machine. The process running a run holds a session advisory lock named after
it from `run_started` to its closing event; PostgreSQL drops the lock when that process's connection dies. A
starting server settles only the open runs whose lock it can take (`claim_run`), so it never closes a live one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from loop.events import RUN_ENDS, EventKind
from loop.store._pg import DatabaseUnavailable, PgConnection, redact
from loop.store.journal import Event, Journal

PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    run_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL,
    payload TEXT NOT NULL, meta TEXT NOT NULL DEFAULT '{}', ts DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE INDEX IF NOT EXISTS events_kind ON events (kind)
"""


class PgJournal(Journal):
    """A Journal in a PostgreSQL database (`postgresql://...`), shared by any number of processes."""

    ORDER = "id"

    def __init__(self, url: str, *, read_only: bool = False) -> None:  # not super().__init__: that opens SQLite
        self.path = redact(url)
        self._pg = PgConnection(url)
        if not read_only:
            self._pg.create_schema(PG_SCHEMA, "journal")
        elif self._pg.execute("SELECT to_regclass('events')").fetchone()[0] is None:
            self._pg.close()
            raise DatabaseUnavailable(f"no journal at {self.path}: it has no events table")
        self._claims: Counter[str] = Counter()
        self._pg.on_reconnect.append(self._reclaim)

    def append(self, event: Event) -> Event:
        # Claimed before the run is visible as open. Not got only when the run is being resumed while a
        # settler (in this process, on another connection) holds it: the settler's claim covers the run then.
        if event.kind in (EventKind.RUN_STARTED, EventKind.PREFETCH_STARTED):
            self.claim_run(event.run_id)
        super().append(event)
        if event.kind in RUN_ENDS:
            self.release_run(event.run_id)
        return event

    def claim_run(self, run_id: str) -> bool:
        with self._pg.lock:
            got = self._pg.execute("SELECT pg_try_advisory_lock(hashtextextended(?, 0))",
                                   (f"voiceloop-run:{run_id}",)).fetchone()[0]
            if got:
                self._claims[run_id] += 1
        return bool(got)

    def release_run(self, run_id: str) -> None:
        with self._pg.lock:
            if self._claims[run_id] > 0:
                self._claims[run_id] -= 1
                self._pg.execute("SELECT pg_advisory_unlock(hashtextextended(?, 0))", (f"voiceloop-run:{run_id}",))
            if not self._claims[run_id]:
                del self._claims[run_id]

    def _run(self, sql: str, params: Sequence[Any]) -> Any:
        """Every journal statement is a read or an insert-or-nothing, so one lost connection is retried once
        on a new one without risk of writing twice."""
        with self._pg.lock:
            try:
                return self._pg.execute(sql, params)
            except self._pg.OperationalError:
                return self._pg.execute(sql, params)  # reconnects first

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._run(sql, params).fetchall()

    def _insert(self, sql: str, params: Sequence[Any]) -> bool:
        return self._run(sql, params).rowcount == 1

    def _reclaim(self) -> None:
        """A new session holds no advisory locks: take this process's live runs back (before anyone settles
        them, unless a starting server got there first in the moment between; it then closes them)."""
        for run_id in list(self._claims):
            held, self._claims[run_id] = self._claims[run_id], 0
            for _ in range(held):
                self.claim_run(run_id)

    def sessions(self) -> set[int]:
        """The database sessions connected now (their server process ids). A process's run locks go with its
        session, so one that is gone is the sign that some runs may need settling (`voice.server.settle_on_start`)."""
        return {pid for (pid,) in self._rows("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")}

    def close(self) -> None:
        self._pg.close()
