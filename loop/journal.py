"""The journal: every event is appended to SQLite (WAL) before any listener sees it.

On resume the loop regenerates the same events with the same sequence numbers; an event already in
the journal is checked against the stored one and not written twice.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from loop.events import RUN_ENDS, EventKind
from loop.types import canonical_json

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    run_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL,
    payload TEXT NOT NULL, meta TEXT NOT NULL DEFAULT '{}', ts REAL NOT NULL,
    PRIMARY KEY (run_id, seq)
);
"""


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
    """SQLite journal shared by any number of runs; safe to use from several threads."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL survives a killed process
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.executescript(SCHEMA)
        self._lock = threading.Lock()

    def append(self, event: Event) -> Event:
        payload = canonical_json(event.payload)
        with self._lock:
            row = self._db.execute("SELECT kind, payload, meta FROM events WHERE run_id=? AND seq=?",
                                   (event.run_id, event.seq)).fetchone()
            if row is not None:
                if row[0] != event.kind or row[1] != payload:
                    raise JournalDivergence(f"run {event.run_id} event {event.seq}: journal has {row[0]} "
                                            f"{row[1][:120]}, resumed run produced {event.kind} {payload[:120]}")
                event.replayed, event.meta = True, json.loads(row[2])  # the meta of the original moment
                return event
            self._db.execute("INSERT INTO events (run_id, seq, kind, payload, meta, ts) VALUES (?,?,?,?,?,?)",
                             (event.run_id, event.seq, event.kind, payload, canonical_json(event.meta), time.time()))
        return event

    def events(self, run_id: str) -> list[Event]:
        with self._lock:
            rows = self._db.execute("SELECT seq, kind, payload, meta FROM events WHERE run_id=? ORDER BY seq",
                                    (run_id,)).fetchall()
        return [Event(run_id, seq, kind, json.loads(p), json.loads(m)) for seq, kind, p, m in rows]

    def run_ids(self) -> list[str]:
        with self._lock:
            rows = self._db.execute("SELECT run_id FROM events GROUP BY run_id ORDER BY MIN(rowid)").fetchall()
        return [r[0] for r in rows]

    def unfinished_run_ids(self) -> list[str]:
        """Runs with no closing event (run_finished, run_cancelled, run_interrupted): live, or killed."""
        ends = sorted(RUN_ENDS)
        with self._lock:
            rows = self._db.execute(
                f"SELECT run_id FROM events GROUP BY run_id HAVING sum(kind IN ({','.join('?' * len(ends))})) = 0 "
                "ORDER BY MIN(rowid)", ends).fetchall()
        return [r[0] for r in rows]

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
