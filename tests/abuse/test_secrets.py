"""Issue 11.1 and 11.8: the tokens come from files or the environment, so they are not in the process list;
an unsigned Twilio webhook hands out no stream key unless the operator opts in; token mistakes stop `serve`
at once with a clear message."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.abuse.serving import REPLY, ROOT, Server, normal_call, serving


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("secrets")
    (tmp / "caller").write_text("caller-from-a-file\n")
    (tmp / "operator").write_text("operator-from-a-file\n")
    return tmp / "caller", tmp / "operator"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, files: tuple[Path, Path]) -> Iterator[Server]:
    caller, operator = files
    with serving(tmp_path_factory.mktemp("secrets-serve"), [{"text": REPLY}], "--token-file", str(caller),
                 "--operator-token-file", str(operator)) as served:
        yield served


async def test_tokens_from_files_work_and_stay_out_of_the_process_list(server: Server) -> None:
    cmdline = Path(f"/proc/{server.proc.pid}/cmdline").read_bytes().decode()
    assert "from-a-file" not in cmdline
    async with httpx.AsyncClient(base_url=server.http) as client:
        listed = await client.get("/api/calls", headers={"Authorization": "Bearer operator-from-a-file"})
        minted = await client.post("/call-token", headers={"Authorization": "Bearer caller-from-a-file"})
        env_tokens = await client.get("/api/calls", headers={"Authorization": "Bearer abuse-operator-token"})
    assert listed.status_code == 200 and minted.status_code == 200
    assert env_tokens.status_code == 401  # the file wins over the environment


async def test_an_unsigned_webhook_gets_no_stream_key_unless_opted_in(server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.http) as client:
        r = await client.post("/twilio/voice", data={"CallSid": "CA1"})
    assert r.status_code == 403
    assert "TWILIO_AUTH_TOKEN" in r.json()["error"] and "--allow-unsigned-twilio" in r.json()["error"]
    assert "key" not in r.text.lower().replace("stream key", "")  # no TwiML, no key
    await normal_call(server, secret="operator-from-a-file")  # a stream with the key (your own TwiML) still works


@pytest.mark.parametrize(("args", "message"), [
    (["--token", "a", "--token-file", "x"], "not both"),
    (["--token-file", "/nonexistent/token"], "cannot read the token file"),
    (["--token", "same-token", "--operator-token", "same-token"], "must differ"),
])
def test_token_mistakes_stop_serve_with_a_clear_message(args: list[str], message: str) -> None:
    done = subprocess.run([sys.executable, "-m", "voice.cli", "serve", "--port", "0", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and message in done.stderr, done.stderr
