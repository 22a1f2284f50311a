"""Shared tenant budget ledger: admission control that concurrent workers cannot race past.

A per-run budget check reads "remaining" and acts on it later, so two workers can both see $28 left and
both reserve $20. Here the ceiling check and the write of the reservation happen in one `BEGIN IMMEDIATE`
transaction: SQLite lets one writer in at a time across processes, so the second worker's check sees the
first worker's reservation. Amounts are stored as integer micro-units so many small charges never drift.
On PostgreSQL (`loop.store.ledger_pg.PgLedger`, one server shared by many machines) the same statements run under
row locks on the tenant's account rows instead.

A budget is a vector: each resource ("cost_usd", "tokens", "tool_calls", ...) has its own allowance, and a
reservation is admitted only if every resource it names fits. A resource with no allowance configured is
refused (fail-closed) unless the ledger is opened with `fail_closed=False`; then it is unlimited but counted.
"""

from __future__ import annotations

import json
import logging
import math
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

from loop.store._sqlite import connect_shared

log = logging.getLogger(__name__)
MICRO = 1_000_000

# One schema for both backends (BIGINT and DOUBLE PRECISION are INTEGER and REAL to SQLite; PostgreSQL's
# INTEGER would overflow at 2,147 units and its REAL would round timestamps to minutes).
SCHEMA = """
CREATE TABLE IF NOT EXISTS account (tenant TEXT NOT NULL, resource TEXT NOT NULL, limit_u BIGINT,
    committed_u BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (tenant, resource));
CREATE TABLE IF NOT EXISTS reservation (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, run_id TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION, state TEXT NOT NULL, result TEXT);
CREATE TABLE IF NOT EXISTS reservation_amount (reservation_id TEXT NOT NULL, resource TEXT NOT NULL,
    amount_u BIGINT NOT NULL, PRIMARY KEY (reservation_id, resource));
CREATE INDEX IF NOT EXISTS reservation_state ON reservation (tenant, state)
"""
_HELD = """FROM reservation_amount a JOIN reservation r ON r.id = a.reservation_id
    WHERE r.tenant = ? AND r.state = 'held'"""
_ADD_COMMITTED = """INSERT INTO account (tenant, resource, committed_u) VALUES (?, ?, ?)
    ON CONFLICT (tenant, resource) DO UPDATE SET committed_u = account.committed_u + excluded.committed_u"""


def _to_units(value: float, what: str) -> int:
    # Decimal(str(x)) keeps 0.1 as 0.1 rather than 0.1000000000000000055..., so conversion is exact.
    units = int((Decimal(str(value)) * MICRO).to_integral_value(ROUND_HALF_EVEN))
    if units < 0:
        raise ValueError(f"{what} must not be negative, got {value}")
    return units


def _units_map(amounts: dict[str, float]) -> dict[str, int]:
    return {resource: _to_units(value, resource) for resource, value in amounts.items()}


def _floats(units: dict[str, int]) -> dict[str, float]:
    return {resource: u / MICRO for resource, u in units.items()}


class LedgerError(Exception):
    """The ledger was used wrongly, e.g. with an unknown reservation id."""


class LedgerRefused(LedgerError):
    """Admission refused: `resource` of `tenant` would exceed its allowance, or has none configured."""

    def __init__(self, tenant: str, resource: str, message: str) -> None:
        super().__init__(message)
        self.tenant = tenant
        self.resource = resource


@dataclass(frozen=True)
class Reservation:
    id: str
    tenant: str
    amounts: dict[str, float]
    run_id: str = ""
    expires_at: float | None = None


@dataclass(frozen=True)
class Settlement:
    """`committed` = actual usage, `released` = unused part of the hold, `overshoot` = actual beyond it."""

    reservation_id: str
    committed: dict[str, float] = field(default_factory=dict)
    released: dict[str, float] = field(default_factory=dict)
    overshoot: dict[str, float] = field(default_factory=dict)


class SharedLedger:
    """Tenant allowances in one SQLite file, safe to share between threads and processes.

    `loop.store.ledger_pg.PgLedger` runs these same methods on PostgreSQL; `loop.store.db.open_ledger(url)` picks one.
    A backend supplies `_tx` (one transaction), `ROW_LOCK` and `_lock_tenant` (how a transaction keeps others
    off the rows it read); SQLite's `BEGIN IMMEDIATE` already excludes every other writer, so it needs neither."""

    ROW_LOCK = ""  # appended to SELECTs of rows the transaction will update

    def __init__(self, path: str | Path, *, fail_closed: bool = True, busy_timeout_s: float = 30.0) -> None:
        self.path = str(path)
        self.fail_closed = fail_closed
        self._lock = threading.Lock()  # threads share one connection, and its transactions must not nest
        # isolation_level=None: we issue BEGIN ourselves; Python's implicit BEGIN is DEFERRED, whose read
        # snapshot another writer can invalidate between our check and our write.
        self._db = connect_shared(self.path, busy_timeout_s)  # WAL: readers (balance) never block the writer
        with self._tx() as db:
            for statement in SCHEMA.split(";"):
                db.execute(statement)

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _tx(self, mode: str = "IMMEDIATE") -> Iterator[sqlite3.Connection]:
        # IMMEDIATE takes the write lock before the first read, so check-then-write cannot interleave.
        with self._lock:
            self._db.execute(f"BEGIN {mode}")
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    def _lock_tenant(self, db: Any, tenant: str) -> None:
        """Hold the tenant's account rows until commit (a no-op where the transaction excludes all writers)."""

    def set_allowance(self, tenant: str, resource: str, limit: float) -> None:
        with self._tx() as db:
            db.execute("INSERT INTO account (tenant, resource, limit_u) VALUES (?, ?, ?) ON CONFLICT "
                       "(tenant, resource) DO UPDATE SET limit_u = excluded.limit_u",
                       (tenant, resource, _to_units(limit, "limit")))

    def reserve(self, tenant: str, amounts: dict[str, float], *, run_id: str = "",
                ttl_s: float | None = None) -> Reservation:
        """Hold `amounts` against the tenant's allowance: every resource or none. Raises LedgerRefused."""
        units = _units_map(amounts)
        rid, now = uuid.uuid4().hex, time.time()
        # Wall clock, not monotonic: other processes compare expiry and share no monotonic clock with us.
        expires_at = None if ttl_s is None else now + ttl_s
        with self._tx() as db:
            self._lock_tenant(db, tenant)
            for resource, wanted in units.items():
                self._admit(db, tenant, resource, wanted)
            db.execute("INSERT INTO reservation VALUES (?, ?, ?, ?, ?, 'held', NULL)",
                       (rid, tenant, run_id, now, expires_at))
            db.executemany("INSERT INTO reservation_amount VALUES (?, ?, ?)",
                           [(rid, resource, u) for resource, u in units.items()])
        return Reservation(rid, tenant, _floats(units), run_id, expires_at)

    def _admit(self, db: Any, tenant: str, resource: str, wanted: int) -> None:
        limit_u, committed_u, reserved_u = _usage(db, tenant, resource)
        if limit_u is None:
            if self.fail_closed:
                raise LedgerRefused(tenant, resource, f"tenant {tenant}: no allowance configured for "
                                    f"{resource} (ledger is fail-closed)")
            return
        if committed_u + reserved_u + wanted > limit_u:
            c, r, w, lim = (u / MICRO for u in (committed_u, reserved_u, wanted, limit_u))
            raise LedgerRefused(tenant, resource, f"tenant {tenant}: {resource} would reach {c + r + w:.2f} "
                                f"of {lim:.2f} (committed {c:.2f} + reserved {r:.2f} + requested {w:.2f})")

    def settle(self, reservation_id: str, actual: dict[str, float]) -> Settlement:
        """Commit actual usage, release the rest of the hold. A repeat returns the first result unchanged.

        Usage above the hold is committed in full and reported as overshoot: spend that happened must be
        counted. For the same reason settling a released or expired reservation commits it all as overshoot.
        """
        used = _units_map(actual)
        with self._tx() as db:
            tenant, state, result = self._load(db, reservation_id)
            if state == "settled":
                return Settlement(**json.loads(result))
            self._lock_tenant(db, tenant)
            rows = db.execute("SELECT resource, amount_u FROM reservation_amount WHERE reservation_id = ?",
                              (reservation_id,)).fetchall()
            held = dict(rows) if state == "held" else {}  # a dropped hold has nothing left to release
            db.executemany(_ADD_COMMITTED, [(tenant, resource, u) for resource, u in sorted(used.items())])
            released = {r: max(h - used.get(r, 0), 0) for r, h in held.items()}
            over = {r: u - held.get(r, 0) for r, u in used.items() if u > held.get(r, 0)}
            settlement = Settlement(reservation_id, _floats(used), _floats(released), _floats(over))
            db.execute("UPDATE reservation SET state = 'settled', result = ? WHERE id = ?",
                       (json.dumps(asdict(settlement)), reservation_id))
        if over:
            log.warning("ledger overshoot: tenant %s reservation %s used %s beyond its hold",
                        tenant, reservation_id, settlement.overshoot)
        return settlement

    def release(self, reservation_id: str) -> bool:
        """Drop a held reservation, committing nothing. False if it was no longer held (idempotent)."""
        with self._tx() as db:
            self._load(db, reservation_id)
            cur = db.execute("UPDATE reservation SET state = 'released' WHERE id = ? AND state = 'held'",
                             (reservation_id,))
        return cur.rowcount == 1

    def settle_run(self, run_id: str) -> list[Settlement]:
        """Commit in full every hold `run_id` still has. For a run whose process died holding them (settled by
        another, `loop.run.settle`): spend may have happened, so nothing is released (as `BudgetLedger.close`)."""
        with self._tx("DEFERRED") as db:
            held = [rid for (rid,) in db.execute("SELECT id FROM reservation WHERE run_id = ? AND state = 'held' "
                                                 "ORDER BY created_at", (run_id,)).fetchall()]
            amounts = {rid: dict(db.execute("SELECT resource, amount_u FROM reservation_amount WHERE "
                                            "reservation_id = ?", (rid,)).fetchall()) for rid in held}
        return [self.settle(rid, _floats(amounts[rid])) for rid in held]

    def expire(self, now: float | None = None) -> list[str]:
        """Release held reservations whose explicit `expires_at` has passed; return their ids.

        Reservations made without a ttl never expire: a hold outliving its worker's lease is no evidence
        that the provider abandoned the request, and dropping it early would let real spend slip past.
        """
        now = time.time() if now is None else now
        with self._tx() as db:
            rows = db.execute("UPDATE reservation SET state = 'expired' WHERE state = 'held' "
                              "AND expires_at IS NOT NULL AND expires_at <= ? RETURNING id", (now,)).fetchall()
        return sorted(i for (i,) in rows)

    def balance(self, tenant: str) -> dict[str, dict[str, float]]:
        """Per resource: limit, committed, reserved, available (inf without a limit; < 0 after overshoot)."""
        out: dict[str, dict[str, float]] = {}
        with self._tx("DEFERRED") as db:  # one read snapshot, so the numbers agree with each other
            resources = [r for (r,) in db.execute(f"SELECT resource FROM account WHERE tenant = ? "
                                                  f"UNION SELECT a.resource {_HELD}", (tenant, tenant))]
            for resource in sorted(resources):
                limit_u, committed_u, reserved_u = _usage(db, tenant, resource)
                left_u = None if limit_u is None else limit_u - committed_u - reserved_u
                out[resource] = {"limit": math.inf if limit_u is None else limit_u / MICRO,
                                 "committed": committed_u / MICRO, "reserved": reserved_u / MICRO,
                                 "available": math.inf if left_u is None else left_u / MICRO}
        return out


    def _load(self, db: Any, reservation_id: str) -> tuple[str, str, str | None]:
        row = db.execute(f"SELECT tenant, state, result FROM reservation WHERE id = ?{self.ROW_LOCK}",
                         (reservation_id,)).fetchone()
        if row is None:
            raise LedgerError(f"unknown reservation {reservation_id!r}")
        return tuple(row)  # type: ignore[return-value]


def _usage(db: Any, tenant: str, resource: str) -> tuple[int | None, int, int]:
    row = db.execute("SELECT limit_u, committed_u FROM account WHERE tenant = ? AND resource = ?",
                     (tenant, resource)).fetchone()
    limit_u, committed_u = row if row else (None, 0)
    # CAST: PostgreSQL sums BIGINTs as NUMERIC (a Decimal in Python)
    (reserved_u,) = db.execute(f"SELECT CAST(COALESCE(SUM(a.amount_u), 0) AS BIGINT) {_HELD} "
                               "AND a.resource = ?", (tenant, resource)).fetchone()
    return limit_u, committed_u, reserved_u


@dataclass(frozen=True)
class TenantBudget:
    """Hand this to `Agent(tenant=...)`: every admission of the run (a turn, then its approved batch) also
    holds the same amounts of `resources` against `tenant` in the shared ledger, in one transaction, and
    settles them with the actual spend. Agents of one tenant in any number of processes then never exceed
    its allowance together; a refusal ends the run as BUDGET_EXHAUSTED naming the resource."""

    ledger: SharedLedger
    tenant: str
    resources: tuple[str, ...] = ("cost_usd",)
