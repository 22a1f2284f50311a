"""One way to open a SQLite file that several processes share (the journal and the ledger both do)."""

from __future__ import annotations

import sqlite3
import time

LOCKED_RETRY_S = 0.05


def connect_shared(path: str, timeout_s: float = 30.0) -> sqlite3.Connection:
    """Open `path` in WAL mode, waiting up to `timeout_s` for processes opening it at the same moment.

    SQLite's busy handler does not cover every lock taken while a new file is created or switched to WAL:
    `PRAGMA journal_mode=WAL` can answer "database is locked" at once while another process is doing the
    same, so that switch is retried here until the deadline."""
    db = sqlite3.connect(path, timeout=timeout_s, check_same_thread=False, isolation_level=None)
    db.execute(f"PRAGMA busy_timeout={int(timeout_s * 1000)}")
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return db
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                db.close()
                raise
            if time.monotonic() >= deadline:
                db.close()
                raise sqlite3.OperationalError(f"{path}: still locked by another process after {timeout_s:.0f} s") \
                    from exc
            time.sleep(LOCKED_RETRY_S)
