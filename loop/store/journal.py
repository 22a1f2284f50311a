"""The journal: every event is appended to SQLite (WAL) or PostgreSQL before any listener sees it.

On resume the loop regenerates the same events with the same sequence numbers; an event already in
the journal is checked against the stored one and not written twice.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loop.events import RUN_ENDS, EventKind
from loop.store._sqlite import connect_shared
from loop.types import canonical_json

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    run_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL,
    payload TEXT NOT NULL, meta TEXT NOT NULL DEFAULT '{}', ts DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, seq)
);
"""
# The statements both backends run; `{order}` is the column that keeps append order (SQLite's rowid).
_INSERT = ("INSERT INTO events (run_id, seq, kind, payload, meta, ts) VALUES (?,?,?,?,?,?) "
           "ON CONFLICT (run_id, seq) DO NOTHING")
_STORED = "SELECT kind, payload, meta FROM events WHERE run_id=? AND seq=?"
_RUN_IDS = "SELECT run_id FROM events GROUP BY run_id {having} ORDER BY MIN({order})"


@dataclass
class Event:
    """One journaled fact. `payload` is deterministic for a given trajectory; `meta` holds timings."""

    run_id: str
    seq: int
    kind: str  # an EventKind when emitted; the same string when read back from the journal
    payload: dict[str, Any]
    meta: dict[str, Any] = field(default_factory=dict)
    replayed: bool = False


class JournalDivergence(RuntimeError):
    """A resumed run produced a different event than the journal holds at the same position."""


class Journal:
    """SQLite journal shared by any number of runs; safe to use from several threads.

    `read_only` opens an existing file without writing to it (reports on a journal live agents append to).
    `loop.store.journal_pg.PgJournal` is the same journal on PostgreSQL; `loop.store.db.open_journal(url)` picks one."""

    ORDER = "rowid"

    def __init__(self, path: str, *, read_only: bool = False) -> None:
        self.path = path
        self._lock = threading.Lock()
        if read_only:
            if not Path(path).is_file():
                raise FileNotFoundError(f"no journal at {path}")
            self._db = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True,
                                       check_same_thread=False, isolation_level=None)
            return
        self._db = connect_shared(path)  # several processes may create and share one journal
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL survives a killed process
        self._db.executescript(SCHEMA)

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def _insert(self, sql: str, params: Sequence[Any]) -> bool:
        """Run one INSERT ... DO NOTHING; True if it wrote the row."""
        with self._lock:
            return self._db.execute(sql, params).rowcount == 1

    def append(self, event: Event) -> Event:
        """Write `event` durably, or, if its (run_id, seq) is already there (a resumed run), check it is the
        same event. Insert-or-nothing first, so two writers of one position cannot both believe they wrote."""
        payload = canonical_json(event.payload)
        row = (event.run_id, event.seq, event.kind, payload, canonical_json(event.meta), time.time())
        if self._insert(_INSERT, row):
            return event
        kind, stored, meta = self._rows(_STORED, (event.run_id, event.seq))[0]
        if kind != event.kind or stored != payload:
            raise JournalDivergence(f"run {event.run_id} event {event.seq}: journal has {kind} "
                                    f"{stored[:120]}, resumed run produced {event.kind} {payload[:120]}")
        event.replayed, event.meta = True, json.loads(meta)  # the meta of the original moment
        return event

    def events(self, run_id: str) -> list[Event]:
        rows = self._rows("SELECT seq, kind, payload, meta FROM events WHERE run_id=? ORDER BY seq", (run_id,))
        return [Event(run_id, seq, kind, json.loads(p), json.loads(m)) for seq, kind, p, m in rows]

    def events_of_kinds(self, kinds: Sequence[str]) -> list[Event]:
        """Every run's events of these kinds, in the order they were appended (what `voiceloop report` reads)."""
        marks = ",".join("?" * len(kinds))
        rows = self._rows(f"SELECT run_id, seq, kind, payload, meta FROM events WHERE kind IN ({marks}) "
                          f"ORDER BY {self.ORDER}", [str(k) for k in kinds])
        return [Event(run_id, seq, kind, json.loads(p), json.loads(m)) for run_id, seq, kind, p, m in rows]

    def run_ids(self) -> list[str]:
        """Every run, in the order each started."""
        return [r[0] for r in self._rows(_RUN_IDS.format(having="", order=self.ORDER))]

    def unfinished_run_ids(self) -> list[str]:
        """Runs with no closing event (run_finished, run_cancelled, run_interrupted): live, or killed."""
        ends = sorted(RUN_ENDS)
        having = f"HAVING SUM(CASE WHEN kind IN ({','.join('?' * len(ends))}) THEN 1 ELSE 0 END) = 0"
        return [r[0] for r in self._rows(_RUN_IDS.format(having=having, order=self.ORDER), ends)]

    def claim_run(self, run_id: str) -> bool:
        """Become the one process settling `run_id`; False if another live process runs it. A SQLite journal
        is one machine's file, used by one server at a time, so any run open in it is ours to settle."""
        return True

    def release_run(self, run_id: str) -> None:
        """Give up a claim taken by `claim_run`."""

    def close(self) -> None:
        self._db.close()


Listener = Callable[[Event], None]


class EventLog:
    """Per-run sequencer: append to the journal (if any), then emit to listeners.

    `elapsed` stamps every event's meta with the run's wall-clock consumption (`elapsed_s`); on resume each
    event found in the journal is handed to `on_replayed` with its original meta, so the budget catches up."""

    def __init__(self, journal: Journal | None, run_id: str, listeners: Iterable[Listener] = (), *,
                 elapsed: Callable[[], float] | None = None,
                 on_replayed: Callable[[Event], None] | None = None) -> None:
        self.journal, self.run_id, self.listeners = journal, run_id, list(listeners)
        self.elapsed, self.on_replayed = elapsed, on_replayed
        self.seq = 0

    def tool_started(self, call: Any) -> None:
        """`ToolRunner.on_start` for a journaled batch: the vetted call is about to run."""
        self.emit(EventKind.TOOL_STARTED, call=call.to_dict())

    def emit(self, kind: EventKind, meta: dict[str, Any] | None = None, **payload: Any) -> Event:
        meta = dict(meta or {})
        if self.elapsed is not None:
            meta["elapsed_s"] = round(self.elapsed(), 6)
        event = Event(self.run_id, self.seq, kind, payload, meta)
        self.seq += 1
        if self.journal is not None:
            self.journal.append(event)
            if event.replayed and self.on_replayed is not None:
                self.on_replayed(event)
        for listener in self.listeners:
            try:
                listener(event)
            except Exception:  # a broken display must not break the call
                log.exception("listener %r failed on %s", listener, kind)
        return event
