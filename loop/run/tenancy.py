"""A shared tenant budget from the command line: `--tenant acme --tenant-budget cost_usd=5,tool_calls=50`.

Every process started with the same `--db` and `--tenant` draws on one allowance in the ledger (see
`loop.store.ledger`). `--tenant-budget` sets the allowance (an upsert of the limit: what was already spent stays
spent); without it the tenant's allowances already in the database apply, so one process (or an operator)
can set them and the others just join.
"""

from __future__ import annotations

import argparse
import os

from loop.config import DIMENSIONS
from loop.store.db import add_db_option, database_url, open_journal, open_ledger
from loop.store.ledger import TenantBudget


class TenantConfigError(ValueError):
    """A --tenant / --tenant-budget that cannot be used."""


def parse_allowances(text: str) -> dict[str, float]:
    """`cost_usd=5,tool_calls=50` -> {"cost_usd": 5.0, "tool_calls": 50.0}; each resource a loop dimension."""
    out: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in DIMENSIONS:
            raise TenantConfigError(f"--tenant-budget: {item!r} is not RESOURCE=AMOUNT with RESOURCE one of "
                                    f"{', '.join(DIMENSIONS)}")
        try:
            amount = float(value)
        except ValueError:
            raise TenantConfigError(f"--tenant-budget: {name}={value!r} is not a number") from None
        if not amount >= 0 or amount == float("inf"):
            raise TenantConfigError(f"--tenant-budget: {name} must be a finite amount >= 0, got {value}")
        out[name] = amount
    if not out:
        raise TenantConfigError("--tenant-budget is empty: give RESOURCE=AMOUNT[,RESOURCE=AMOUNT...]")
    return out


def _allowances_arg(text: str) -> dict[str, float]:
    try:
        return parse_allowances(text)
    except TenantConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--tenant-budget: ")) from None


def open_tenant(db_url: str, tenant: str, allowances: dict[str, float] | None = None) -> TenantBudget:
    """The tenant's budget in the ledger at `db_url`, with `allowances` set first if given."""
    if not tenant.strip():
        raise TenantConfigError("--tenant must name a tenant")
    ledger = open_ledger(db_url)
    for resource, limit in (allowances or {}).items():
        ledger.set_allowance(tenant, resource, limit)
    resources = tuple(r for r in ledger.balance(tenant) if r in DIMENSIONS)
    if not resources:
        ledger.close()
        raise TenantConfigError(f"tenant {tenant} has no allowance in the ledger: give --tenant-budget "
                                "RESOURCE=AMOUNT (e.g. cost_usd=5,tool_calls=50)")
    return TenantBudget(ledger, tenant, resources)


def add_storage_options(parser: argparse.ArgumentParser) -> None:
    """`--db URL` (see `loop.store.db.add_db_option`), `--tenant NAME` and `--tenant-budget RESOURCE=N,...`."""
    add_db_option(parser)
    parser.add_argument("--tenant", default=None, metavar="NAME",
                        help="every call draws on this tenant's shared budget in the --db ledger; processes "
                             "sharing the database and tenant never exceed it together")
    parser.add_argument("--tenant-budget", default=None, type=_allowances_arg, metavar="RESOURCE=N,...",
                        help=f"set the tenant's allowance, e.g. cost_usd=5,tool_calls=50 (resources: "
                             f"{', '.join(DIMENSIONS)}; default: the allowances already in the ledger)")


def storage_from_args(args: argparse.Namespace, data_dir: str | os.PathLike[str]) -> tuple[str, TenantBudget | None]:
    """What a command's `--db` and `--tenant` options ask for: the database URL (else `data_dir`/journal.db),
    opened once here so a bad one fails before any model loads, and the TenantBudget (None without --tenant).
    Raises DatabaseUnavailable or TenantConfigError."""
    db = database_url(args.db, data_dir)
    open_journal(db).close()
    return db, tenant_from_args(args, db)


def tenant_from_args(args: argparse.Namespace, db_url: str) -> TenantBudget | None:
    """The TenantBudget `--tenant`/`--tenant-budget` ask for, or None without --tenant."""
    if getattr(args, "tenant", None) is None:
        if getattr(args, "tenant_budget", None):
            raise TenantConfigError("--tenant-budget needs --tenant NAME")
        return None
    return open_tenant(db_url, args.tenant, args.tenant_budget)
