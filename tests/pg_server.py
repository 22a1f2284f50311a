"""A real, throwaway PostgreSQL server for the tests: initdb into a temporary folder, start it on a free port
(TCP on 127.0.0.1 and a unix socket in the same folder), drop it all at the end.

The binaries come from Debian's `postgresql` package (/usr/lib/postgresql/<version>/bin; `./run test` installs
it). PostgreSQL refuses to run as root, so as root the server runs as the package's `postgres` user
(`runuser`), in a folder that user owns. `VOICELOOP_TEST_PG_URL` points the tests at a server you already run
instead. Each test gets its own schema (`fresh_schema_url`), so tests never see each other's rows.

Run by hand: `python -m tests.pg_server` starts one and prints its URL until Ctrl-C.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

PG_URL_ENV = "VOICELOOP_TEST_PG_URL"
SUPERUSER = "voiceloop"


class PgUnavailable(RuntimeError):
    """No PostgreSQL binaries (or no user to run them as) on this machine."""


def find_bin_dir() -> Path:
    """The newest installed PostgreSQL's bin folder."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    raise PgUnavailable("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): "
                        "apt-get install postgresql, or set VOICELOOP_TEST_PG_URL")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_server_user() -> tuple[list[str], str | None]:
    """The command prefix that runs a server binary, and the user that must own its folder."""
    if os.geteuid() != 0:
        return [], None
    try:
        pwd.getpwnam("postgres")
    except KeyError as exc:
        raise PgUnavailable("running as root and there is no 'postgres' user to run the server as") from exc
    return ["runuser", "-u", "postgres", "--"], "postgres"


@dataclass
class PgCluster:
    url: str  # the superuser's URL to the `postgres` database
    base: Path | None = None  # None: a server someone else runs (VOICELOOP_TEST_PG_URL)
    bin_dir: Path | None = None
    prefix: tuple[str, ...] = ()

    def fresh_schema_url(self, name: str = "") -> str:
        """A new, empty schema and a URL whose connections use it (search_path): one test's private database."""
        import psycopg

        schema = re.sub(r"\W", "_", f"t_{name}_{uuid.uuid4().hex[:10]}".lower())
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        sep = "&" if "?" in self.url else "?"
        return f"{self.url}{sep}options={quote(f'-csearch_path={schema}')}"

    def stop(self) -> None:
        if self.base is None or self.bin_dir is None:
            return
        subprocess.run([*self.prefix, str(self.bin_dir / "pg_ctl"), "-D", str(self.base / "data"), "-m",
                        "immediate", "-w", "stop"], capture_output=True, timeout=60)
        shutil.rmtree(self.base, ignore_errors=True)


def _run(cmd: list[str], what: str) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed ({done.returncode}): {done.stderr or done.stdout}")


def start_cluster() -> PgCluster:
    """`VOICELOOP_TEST_PG_URL`'s server, or a new one (see the module docstring). Raises PgUnavailable."""
    if importlib.util.find_spec("psycopg") is None:
        raise PgUnavailable("psycopg 3 is not installed: pip install 'voiceloop[postgres]'")
    if os.environ.get(PG_URL_ENV):
        return PgCluster(os.environ[PG_URL_ENV])
    bin_dir = find_bin_dir()
    prefix, owner = _as_server_user()
    base = Path(tempfile.mkdtemp(prefix="voiceloop-pg-"))
    if owner:
        shutil.chown(base, owner, owner)
    data, port = base / "data", _free_port()
    try:
        _run([*prefix, str(bin_dir / "initdb"), "-D", str(data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8",
              "--no-sync"], "initdb")
        # fsync off: nothing here outlives the test session; a client killed mid-write is what the tests kill.
        options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        _run([*prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(base / "server.log"), "-o", options,
              "-w", "-t", "60", "start"], "pg_ctl start")
    except BaseException:
        log = base / "server.log"
        detail = log.read_text()[-2000:] if log.exists() else ""
        PgCluster("", base, bin_dir, tuple(prefix)).stop()
        if detail:
            raise RuntimeError(f"PostgreSQL did not start; its log:\n{detail}") from None
        raise
    return PgCluster(f"postgresql://{SUPERUSER}@127.0.0.1:{port}/postgres", base, bin_dir, tuple(prefix))


if __name__ == "__main__":
    cluster = start_cluster()
    print(cluster.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()
