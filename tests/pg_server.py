"""A real, throwaway PostgreSQL server for the tests: initdb into a temporary folder, start it on a free port
(TCP on 127.0.0.1 and a unix socket in the same folder), drop it all at the end.

The binaries come from Debian's `postgresql` package (/usr/lib/postgresql/<version>/bin; `./run test` installs
it). PostgreSQL refuses to run as root, so as root the server runs as the package's `postgres` user
(`setpriv`), in a folder that user owns. The server is our child and quits when we die (`--pdeathsig`): a
killed test session leaves none behind. `VOICELOOP_TEST_PG_URL` points the tests at a server you already run
instead. Each test gets its own schema (`fresh_schema_url`), so tests never see each other's rows.

Run by hand: `python -m tests.pg_server` starts one and prints its URL until Ctrl-C.
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
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
        return ["setpriv"], None
    try:
        pwd.getpwnam("postgres")
    except KeyError as exc:
        raise PgUnavailable("running as root and there is no 'postgres' user to run the server as") from exc
    return ["setpriv", "--reuid=postgres", "--regid=postgres", "--clear-groups"], "postgres"


def _remove_stale_folders(max_age_s: float = 600.0) -> None:
    """Folders of servers whose test session was killed (the server died with it): old, no live postmaster."""
    for folder in Path(tempfile.gettempdir()).glob("voiceloop-pg-*"):
        pid_file = folder / "data" / "postmaster.pid"
        with contextlib.suppress(OSError, ValueError):
            if time.time() - folder.stat().st_mtime < max_age_s:
                continue
            if pid_file.exists() and Path(f"/proc/{int(pid_file.read_text().split()[0])}").exists():
                continue
            shutil.rmtree(folder, ignore_errors=True)


@dataclass
class PgCluster:
    url: str  # the superuser's URL to the `postgres` database
    base: Path | None = None  # None: a server someone else runs (VOICELOOP_TEST_PG_URL)
    server: subprocess.Popen[bytes] | None = None

    def fresh_schema_url(self, name: str = "") -> str:
        """A new, empty schema and a URL whose connections use it (search_path): one test's private database."""
        import psycopg

        schema = re.sub(r"\W", "_", f"t_{name}_{uuid.uuid4().hex[:10]}".lower())
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        sep = "&" if "?" in self.url else "?"
        return f"{self.url}{sep}options={quote(f'-csearch_path={schema}')}"

    def stop(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server.send_signal(signal.SIGQUIT)  # immediate shutdown: nothing here is kept
            try:
                self.server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
        if self.base is not None:
            shutil.rmtree(self.base, ignore_errors=True)


def _wait_ready(server: subprocess.Popen[bytes], url: str, log: Path, timeout_s: float = 60.0) -> None:
    import psycopg

    deadline = time.monotonic() + timeout_s
    while True:
        if server.poll() is not None:
            raise RuntimeError(f"PostgreSQL exited ({server.returncode}); its log:\n{log.read_text()[-2000:]}")
        try:
            psycopg.connect(url, connect_timeout=2).close()
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL did not accept connections in {timeout_s:g} s; its log:\n"
                                   f"{log.read_text()[-2000:]}") from None
            time.sleep(0.1)


def start_cluster() -> PgCluster:
    """`VOICELOOP_TEST_PG_URL`'s server, or a new one (see the module docstring). Raises PgUnavailable."""
    if importlib.util.find_spec("psycopg") is None:
        raise PgUnavailable("psycopg 3 is not installed: pip install 'voiceloop[postgres]'")
    if os.environ.get(PG_URL_ENV):
        return PgCluster(os.environ[PG_URL_ENV])
    bin_dir = find_bin_dir()
    prefix, owner = _as_server_user()
    _remove_stale_folders()
    base = Path(tempfile.mkdtemp(prefix="voiceloop-pg-"))
    if owner:
        shutil.chown(base, owner, owner)
    data, port, log = base / "data", _free_port(), base / "server.log"
    cluster = PgCluster(f"postgresql://{SUPERUSER}@127.0.0.1:{port}/postgres", base)
    try:
        done = subprocess.run([*prefix, "--", str(bin_dir / "initdb"), "-D", str(data), "-U", SUPERUSER,
                               "--auth=trust", "-E", "UTF8", "--no-sync"], capture_output=True, text=True,
                              timeout=120, cwd=base)
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed ({done.returncode}): {done.stderr or done.stdout}")
        # In the foreground as our child, and told to quit when we die (--pdeathsig): a test session that is
        # killed leaves no server behind. fsync off: nothing here outlives the session.
        with log.open("wb") as out:
            cluster.server = subprocess.Popen(
                [*prefix, "--pdeathsig=QUIT", "--", str(bin_dir / "postgres"), "-D", str(data),
                 "-p", str(port), "-k", str(base), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
                 "-c", "max_connections=200"], stdout=out, stderr=subprocess.STDOUT, cwd=base)
        _wait_ready(cluster.server, cluster.url, log)
    except BaseException:
        cluster.stop()
        raise
    return cluster


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # `kill PID` stops the server too
    cluster = start_cluster()
    print(cluster.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()
