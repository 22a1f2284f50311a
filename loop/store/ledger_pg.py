"""The shared tenant ledger on PostgreSQL: `SharedLedger`'s own statements, made safe by the server's row locks.

SQLite admits one writer at a time, so its check-then-write is safe by construction. PostgreSQL runs writers
concurrently; here every transaction that changes what a tenant may spend first locks that tenant's account
rows (`SELECT ... FOR UPDATE`, in resource order, so two lockers never deadlock), and a settle or release
first locks its reservation row. Under READ COMMITTED each later statement sees everything committed before
the lock was granted, so:

- two reservations for one tenant queue on its account rows, and the second sees the first's hold;
- a reservation settled twice at once is committed once (the second waits, then reads state 'settled').

No Python lock is part of the guarantee: the ledger holds across processes and machines sharing the server.
Should PostgreSQL still abort a transaction as a deadlock or serialization failure (two expiries locking the
same holds in another order), the whole method runs again: its transaction was rolled back, nothing was half done.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from loop.store._pg import PgConnection, redact
from loop.store.ledger import SCHEMA, SharedLedger

RETRIES = 5
T = TypeVar("T", bound=Callable[..., Any])


def _retried(method: T) -> T:
    """`method` (one transaction) again, after a short random pause, when PostgreSQL aborted it as a deadlock
    or a serialization failure."""
    @functools.wraps(method)
    def run(self: PgLedger, *args: Any, **kwargs: Any) -> Any:
        errors = self._pg.errors
        for attempt in range(RETRIES):
            try:
                return method(self, *args, **kwargs)
            except (errors.DeadlockDetected, errors.SerializationFailure):
                if attempt == RETRIES - 1:
                    raise
                time.sleep(random.uniform(0, 0.01 * 2 ** attempt))
        raise AssertionError("unreachable")

    return run  # type: ignore[return-value]


class PgLedger(SharedLedger):
    """A SharedLedger in a PostgreSQL database (`postgresql://...`)."""

    ROW_LOCK = " FOR UPDATE"

    def __init__(self, url: str, *, fail_closed: bool = True) -> None:  # not super().__init__: that opens SQLite
        self.path = redact(url)
        self.fail_closed = fail_closed
        self._pg = PgConnection(url)
        self._pg.create_schema(SCHEMA, "ledger")

    def close(self) -> None:
        self._pg.close()

    @contextmanager
    def _tx(self, mode: str = "IMMEDIATE") -> Iterator[Any]:
        # DEFERRED (read only, `balance`): one snapshot for every statement, so the figures agree.
        isolation = "REPEATABLE READ" if mode == "DEFERRED" else "READ COMMITTED"
        with self._pg.transaction(isolation) as db:
            yield db

    def _lock_tenant(self, db: Any, tenant: str) -> None:
        db.execute("SELECT resource FROM account WHERE tenant = ? ORDER BY resource FOR UPDATE", (tenant,))

    set_allowance = _retried(SharedLedger.set_allowance)
    reserve = _retried(SharedLedger.reserve)
    settle = _retried(SharedLedger.settle)
    release = _retried(SharedLedger.release)
    expire = _retried(SharedLedger.expire)
    balance = _retried(SharedLedger.balance)
