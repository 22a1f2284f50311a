"""PostgreSQL plumbing shared by the journal and the ledger: the driver (psycopg 3), URLs, one connection."""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

PG_SCHEMES = ("postgresql://", "postgres://")
log = logging.getLogger(__name__)


class DatabaseUnavailable(RuntimeError):
    """The database the URL names cannot be used: driver missing, server unreachable, bad URL."""


def is_postgres(url: str | os.PathLike[str]) -> bool:
    return str(url).startswith(PG_SCHEMES)


def redact(url: str | os.PathLike[str]) -> str:
    """The URL without its password, for logs and reports."""
    text = str(url)
    if "://" not in text:  # a file path
        return text
    parts = urlsplit(text)
    if parts.password is None:
        return text
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


_PLACEHOLDER = re.compile(r"\?")


class PgConnection:
    """One psycopg 3 connection, shared by a process's threads one transaction at a time.

    The Python lock only keeps this process's threads from interleaving statements on the one connection;
    what concurrent processes may do is decided by PostgreSQL (transactions, row locks), never by it.
    A connection the server dropped (a restart, a failover) is replaced on the next use; `on_reconnect`
    callbacks then restore what lived in the old session (the journal's run claims)."""

    def __init__(self, url: str) -> None:
        try:
            import psycopg
        except ModuleNotFoundError as exc:
            raise DatabaseUnavailable("a postgresql:// database needs psycopg 3: pip install 'psycopg[binary]' "
                                      "(or pip install 'voiceloop[postgres]')") from exc
        self.url = url
        self.errors = psycopg.errors
        self.OperationalError = psycopg.OperationalError  # the connection failed (not the statement)
        self.lock = threading.RLock()
        self.on_reconnect: list[Callable[[], None]] = []
        self._in_transaction = False
        self.conn = self._connect()

    def _connect(self) -> Any:
        import psycopg

        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise DatabaseUnavailable(f"cannot connect to {redact(self.url)}: {exc}".strip()) from exc

    def _ensure(self) -> None:
        if self.conn.closed or self.conn.broken:
            log.warning("connection to %s was lost: reconnecting", redact(self.url))
            self.conn = self._connect()
            for restore in self.on_reconnect:
                restore()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement written with `?` placeholders; returns psycopg's cursor."""
        if not self._in_transaction:  # inside one, a new connection would run the rest outside it
            self._ensure()
        return self.conn.execute(_PLACEHOLDER.sub("%s", sql), tuple(params))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(_PLACEHOLDER.sub("%s", sql), [tuple(r) for r in rows])

    @contextmanager
    def transaction(self, isolation: str = "READ COMMITTED") -> Iterator[PgConnection]:
        """One transaction (committed on success, rolled back on any exception), this thread only."""
        with self.lock:
            self._ensure()
            with self.conn.transaction():
                self._in_transaction = True
                try:
                    self.conn.execute(f"SET TRANSACTION ISOLATION LEVEL {isolation}")
                    yield self
                finally:
                    self._in_transaction = False

    def create_schema(self, schema: str, name: str) -> None:
        """Run `schema` once however many processes start at the same moment: CREATE ... IF NOT EXISTS races
        in PostgreSQL (a duplicate catalog row), so creators queue on an advisory lock named after `name`."""
        with self.transaction():
            self.conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"voiceloop:{name}",))
            for statement in filter(str.strip, schema.split(";")):
                self.conn.execute(statement)

    def close(self) -> None:
        self.conn.close()
