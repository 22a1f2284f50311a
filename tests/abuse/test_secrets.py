"""Issue 11.1 and 11.8: the tokens come from files or the environment, so they are not in the process list;
an unsigned Twilio webhook hands out no stream key unless the operator opts in; token mistakes stop `serve`
at once with a clear message."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.abuse.serving import OPERATOR, TOKEN, Server, normal_call


@pytest.fixture
def server(shared: Server) -> Server:
    return shared


async def test_tokens_from_files_work_and_stay_out_of_the_process_list(server: Server) -> None:
    cmdline = Path(f"/proc/{server.proc.pid}/cmdline").read_bytes().decode()
    assert TOKEN not in cmdline and OPERATOR not in cmdline
    async with httpx.AsyncClient(base_url=server.http) as client:
        listed = await client.get("/api/calls", headers={"Authorization": f"Bearer {OPERATOR}"})
        minted = await client.post("/call-token", headers={"Authorization": f"Bearer {TOKEN}"})
        env_operator = await client.get("/api/calls", headers={"Authorization": "Bearer env-operator-token"})
        env_caller = await client.post("/call-token", headers={"Authorization": "Bearer env-caller-token"})
    assert listed.status_code == 200 and minted.status_code == 200
    assert env_operator.status_code == env_caller.status_code == 401  # the files win over the environment


async def test_an_unsigned_webhook_gets_no_stream_key_unless_opted_in(server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.http) as client:
        r = await client.post("/twilio/voice", data={"CallSid": "CA1"})
    assert r.status_code == 403
    assert "TWILIO_AUTH_TOKEN" in r.json()["error"] and "--allow-unsigned-twilio" in r.json()["error"]
    assert "key" not in r.text.lower().replace("stream key", "")  # no TwiML, no key
    await normal_call(server)  # a stream with the key (Twilio with your own TwiML) still works


@pytest.mark.parametrize(("args", "message"), [
    (["--token", "a", "--token-file", "x"], "not both"),
    (["--token-file", "/nonexistent/token"], "cannot read the token file"),
    (["--token", "same-token", "--operator-token", "same-token"], "must differ"),
])
def test_token_mistakes_stop_serve_with_a_clear_message(args: list[str], message: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from voice.cli import build_parser

    parsed = build_parser().parse_args(["serve", "--port", "0", *args])
    assert parsed.func(parsed) == 2  # before any model or socket
    assert message in capsys.readouterr().err
