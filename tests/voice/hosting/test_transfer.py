"""Escalation reaches a person: an ESCALATED run on a phone call makes Twilio dial the configured number (the REST
request checked by a local HTTP server standing in for api.twilio.com), and the operator API lists escalated
calls with their transcript, reason and transfer; the timeline of a live call is served too."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
from streamdouble.scenario import Wait, WaitFor

from loop import ScriptedTurn, ToolCall
from tests.voice.server.test_server import http
from tests.voice.transports.twilio.test_twilio import CLIP, phone, running, say, stack  # noqa: F401  (stack is a fixture)
from voice.hosting.transfer import TransferConfig, TransferConfigError, TransferFailed, transfer_call
from voice.speech.stack import SpeechStack

SID, AUTH = "AC" + "0123456789abcdef" * 2, "auth-token-not-a-secret"
NUMBER = "+15551234567"


@dataclass
class FakeTwilio:
    """api.twilio.com for one test: records every request, answers `status` with `body`."""

    port: int = 0
    requests: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    body: dict[str, Any] = field(default_factory=lambda: {"status": "in-progress"})

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture
def twilio_api() -> Iterator[FakeTwilio]:
    fake = FakeTwilio()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            fake.requests.append({"path": self.path, "auth": self.headers.get("authorization", ""),
                                  "type": self.headers.get("content-type", ""),
                                  "form": parse_qs(self.rfile.read(length).decode())})
            out = json.dumps(fake.body).encode()
            self.send_response(fake.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *_args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield fake
    server.shutdown()
    server.server_close()


def config(api: FakeTwilio) -> TransferConfig:
    return TransferConfig(NUMBER, SID, AUTH, api_base=api.base)


def check_dial_request(request: dict[str, Any], call_sid: str) -> None:
    assert request["path"] == f"/2010-04-01/Accounts/{SID}/Calls/{call_sid}.json"
    assert request["auth"] == "Basic " + base64.b64encode(f"{SID}:{AUTH}".encode()).decode()
    assert request["type"].startswith("application/x-www-form-urlencoded")
    (twiml,) = request["form"]["Twiml"]
    dial = ET.fromstring(twiml).find("Dial")
    assert dial is not None and dial.findtext("Number") == NUMBER


def test_the_rest_request_dials_the_number(twilio_api: FakeTwilio) -> None:
    call_sid = "CA" + "f" * 32
    result = asyncio.run(transfer_call(config(twilio_api), call_sid))
    assert (result.call_sid, result.to, result.status, result.http_status) == (call_sid, NUMBER, "in-progress", 200)
    (request,) = twilio_api.requests
    check_dial_request(request, call_sid)


def test_nobody_answering_is_told_in_the_calls_language(twilio_api: FakeTwilio) -> None:
    """The sentence said when the person does not pick up is the agent's language's, unless one was set."""
    from loop import locale

    for language in ("en", "es"):
        asyncio.run(transfer_call(config(twilio_api), "CA" + "e" * 32, language=language))
        (twiml,) = twilio_api.requests[-1]["form"]["Twiml"]
        assert ET.fromstring(twiml).findtext("Say") == locale.get(language).NOBODY_ANSWERED
    own = TransferConfig(NUMBER, SID, AUTH, api_base=twilio_api.base, unanswered="Please try again.")
    assert ET.fromstring(own.twiml("es")).findtext("Say") == "Please try again."


def test_twilio_refusing_is_a_typed_error_with_its_message(twilio_api: FakeTwilio) -> None:
    twilio_api.status, twilio_api.body = 404, {"code": 20404, "message": "The requested resource was not found"}
    with pytest.raises(TransferFailed, match="404: The requested resource was not found"):
        asyncio.run(transfer_call(config(twilio_api), "CA" + "0" * 32))
    with pytest.raises(TransferFailed, match="not a Twilio call SID"):
        asyncio.run(transfer_call(config(twilio_api), "../../Accounts"))
    assert len(twilio_api.requests) == 1  # the bad SID never left the process


def test_bad_configuration_is_refused_with_what_to_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(TransferConfigError, match=r"E\.164"):
        TransferConfig("555-1234", SID, AUTH)
    with pytest.raises(TransferConfigError, match="TWILIO_ACCOUNT_SID"):
        TransferConfig(NUMBER, "", AUTH)
    with pytest.raises(TransferConfigError, match="TWILIO_AUTH_TOKEN"):
        TransferConfig(NUMBER, SID, "")
    monkeypatch.delenv("VOICELOOP_TRANSFER_TO", raising=False)
    assert TransferConfig.from_env() is None  # no number: no transfers, escalations only reach the operator
    monkeypatch.setenv("VOICELOOP_TRANSFER_TO", NUMBER)
    monkeypatch.setenv("TWILIO_ACCOUNT_SID", SID)
    monkeypatch.setenv("TWILIO_AUTH_TOKEN", AUTH)
    monkeypatch.setenv("VOICELOOP_TWILIO_API", "http://127.0.0.1:9/")
    cfg = TransferConfig.from_env()
    assert cfg is not None and (cfg.to, cfg.api_base) == (NUMBER, "http://127.0.0.1:9")
    assert AUTH not in repr(cfg)


ESCALATE = [ScriptedTurn(tool_calls=[ToolCall("transfer_to_human", {"reason": "the caller asked for a person"})])]


async def test_an_escalated_phone_call_is_transferred_and_listed_for_the_operator(
        stack: SpeechStack, tmp_path: Path, twilio_api: FakeTwilio) -> None:  # noqa: F811
    async with running(stack, tmp_path, ESCALATE, transfer=config(twilio_api)) as served:
        await phone(served, [say(CLIP), WaitFor("audio", 20), Wait(5.0)])  # on hold, as a caller would be
        async with asyncio.timeout(20):
            while not twilio_api.requests:
                await asyncio.sleep(0.05)
        await served.idle()
        call = served.ended()[-1]
        async with http(served) as client:
            listed = (await client.get("/api/escalations")).json()["calls"]
            page = await client.get(f"/api/calls/{call.call_id}/timeline")
    kinds = [e["kind"] for e in call.events]
    assert call.session.turns[0].outcome == "ESCALATED"
    # the hold message was said (and heard) before Twilio was asked to dial
    said = [e["text"] for e in call.events if e["kind"] == "agent_said"]
    assert said[-2:] == ["Let me get a person to help you with that.", "Please hold."]  # a clause at a time
    assert len(kinds) - kinds[::-1].index("agent_said") - 1 < kinds.index("transport.transfer")
    (request,) = twilio_api.requests
    check_dial_request(request, call.meta["call_sid"])
    transfer = next(e for e in call.events if e["kind"] == "transport.transfer")
    assert (transfer["to"], transfer["status"]) == (NUMBER, "in-progress")

    (entry,) = listed
    assert entry["id"] == call.call_id and entry["transport"] == "twilio"
    assert entry["reason"] == "the caller asked for a person"
    assert "journey home" in entry["caller_text"].lower()
    assert entry["transcript"][0]["who"] == "caller"
    assert entry["transfers"][0]["to"] == NUMBER
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert 'class="tool-mark"' in page.text and 'data-tool="transfer_to_human"' in page.text
    assert "ESCALATED" in page.text


async def test_a_failed_transfer_is_traced_and_the_call_stays_with_the_agent(
        stack: SpeechStack, tmp_path: Path, twilio_api: FakeTwilio) -> None:  # noqa: F811
    twilio_api.status, twilio_api.body = 401, {"message": "Authenticate"}
    async with running(stack, tmp_path, ESCALATE, transfer=config(twilio_api)) as served:
        await phone(served, [say(CLIP), WaitFor("audio", 20), Wait(5.0)])  # on hold, as a caller would be
        async with asyncio.timeout(20):
            while not twilio_api.requests:
                await asyncio.sleep(0.05)
        await served.idle()
        call = served.ended()[-1]
    failed = [e for e in call.events if e["kind"] == "transport.transfer_failed"]
    assert len(failed) == 1 and "401: Authenticate" in failed[0]["error"]
    assert "transport.transfer" not in [e["kind"] for e in call.events]
