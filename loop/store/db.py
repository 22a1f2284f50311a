"""Where the journal and the shared tenant ledger live, chosen by one string: a database URL.

- `postgresql://user:password@host:5432/dbname` (or `postgres://`): a PostgreSQL server that any number of
  processes on any number of machines share. Needs psycopg 3 (`pip install 'voiceloop[postgres]'`).
- `sqlite:///path/to/journal.db`, or a plain file path: the embedded default, one file on this machine.

`open_journal(url)` and `open_ledger(url)` return the right class; both backends run the same SQL (written
with `?` placeholders; `PgConnection` turns them into psycopg's `%s`), so the logic exists once.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from loop.store._pg import DatabaseUnavailable, is_postgres, redact

if TYPE_CHECKING:
    from loop.store.journal import Journal
    from loop.store.ledger import SharedLedger

DB_ENV = "VOICELOOP_DB"
__all__ = ["DB_ENV", "DatabaseUnavailable", "add_db_option", "database_url", "is_postgres", "open_journal",
           "open_ledger", "redact", "sqlite_path"]


def sqlite_path(url: str | os.PathLike[str]) -> str:
    """The file a sqlite URL or plain path names (`sqlite:///abs/path`, `sqlite:rel/path`, `path`)."""
    text = str(url)
    if text.startswith("sqlite:"):
        rest = text[len("sqlite:"):]
        return rest[2:] if rest.startswith("//") else rest  # sqlite:///abs -> /abs; sqlite:rel -> rel
    if "://" in text:
        raise DatabaseUnavailable(f"unknown database URL {redact(text)!r}: use postgresql://... or a SQLite path")
    return text


def database_url(db: str | None, data_dir: str | os.PathLike[str]) -> str:
    """The database to use: `db` if given, else `data_dir`/journal.db (the embedded default)."""
    return db or str(Path(data_dir) / "journal.db")


def add_db_option(parser: argparse.ArgumentParser) -> None:
    """`--db URL`, defaulting to $VOICELOOP_DB (None when unset: the command's own default applies)."""
    parser.add_argument("--db", default=os.environ.get(DB_ENV) or None, metavar="URL",
                        help="journal and tenant ledger: postgresql://user@host:port/dbname, or a SQLite path "
                             f"(default ${DB_ENV}, else journal.db in the data folder)")


def open_journal(url: str | os.PathLike[str], *, read_only: bool = False) -> Journal:
    """A Journal on the database `url` names (see the module docstring)."""
    if is_postgres(url):
        from loop.store.journal_pg import PgJournal

        return PgJournal(str(url), read_only=read_only)
    from loop.store.journal import Journal

    return Journal(sqlite_path(url), read_only=read_only)


def open_ledger(url: str | os.PathLike[str], *, fail_closed: bool = True) -> SharedLedger:
    """A SharedLedger on the database `url` names (see the module docstring)."""
    if is_postgres(url):
        from loop.store.ledger_pg import PgLedger

        return PgLedger(str(url), fail_closed=fail_closed)
    from loop.store.ledger import SharedLedger

    return SharedLedger(sqlite_path(url), fail_closed=fail_closed)
