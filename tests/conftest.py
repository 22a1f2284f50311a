"""Fixtures shared by the tests of both journal and ledger backends.

- `pg_cluster` (session): a real PostgreSQL server (tests/pg_server.py), started once, stopped at the end.
  Without PostgreSQL installed the tests that need it are skipped with the reason, except under CI (CI=true),
  where they fail: CI must never go green by skipping the database it was asked to test.
- `pg_url`: a fresh, empty schema on that server, as a `postgresql://` URL.
- `db_url`: parametrized over both backends, "sqlite" (a file in tmp_path) and "postgres" (`pg_url`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pg_server import PgCluster, PgUnavailable, start_cluster

BACKENDS = ("sqlite", "postgres")


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    try:
        cluster = start_cluster()
    except PgUnavailable as exc:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI needs PostgreSQL for these tests: {exc}")
        pytest.skip(str(exc))
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: PgCluster, request: pytest.FixtureRequest) -> str:
    return pg_cluster.fresh_schema_url(request.node.name[5:25])


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A journal/ledger database on each backend in turn: a SQLite path, then a PostgreSQL URL."""
    if request.param == "sqlite":
        return str(tmp_path / "voiceloop.db")
    return request.getfixturevalue("pg_url")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Close LiveKit's native runtime while Python is whole: left to its own exit hook, its worker thread calls back
    into an interpreter being torn down now and then, and the process aborts (SIGABRT, exit 134) after every test
    has passed."""
    import sys

    ffi = sys.modules.get("livekit.rtc._ffi_client")
    client = getattr(getattr(ffi, "FfiClient", None), "_instance", None)
    if client is not None:
        client._dispose()
