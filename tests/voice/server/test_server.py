"""`voiceloop serve`: many simultaneous phone calls against one server process, the operator API (approving a
refund over HTTP), authentication and origins, the Twilio webhook, and the static page."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import logging
import os
import re
import signal
import sqlite3
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from streamdouble.scenario import Scenario, Wait, WaitFor
from streamdouble.session import Session
from streamdouble.session import SessionConfig as CallerConfig

from loop import Message, ScriptedTurn, ToolCall
from tests.paths import ROOT
from tests.voice.transports.twilio.test_twilio import (  # noqa: F401  (stack is a fixture)
    CLIP,
    OPERATOR,
    REPLY,
    TOKEN,
    Served,
    close_code,
    heard_by_caller_s,
    kinds,
    phone,
    running,
    say,
    stack,
    start_msg,
)
from voice.hosting.registry import LoopingScript, load_script, model_source
from voice.speech.stack import SpeechStack
from voice.testing.scripted_call import FIXTURES
from voice.transports.twilio.webhook import twilio_stream_key

REFUND = [ScriptedTurn(tool_calls=[ToolCall("lookup_order", {"order_id": "4567"})]),
          ScriptedTurn(tool_calls=[ToolCall("issue_refund", {"order_id": "4567", "amount": 20})]),
          ScriptedTurn(text="Done. I refunded twenty dollars for order 4567.")]


def http(served: Served, token: str | None = OPERATOR) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.AsyncClient(base_url=f"http://127.0.0.1:{served.port}", headers=headers, timeout=10)


# ---- many calls against one server process -------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def launch(tmp_path: Path, max_calls: int) -> tuple[asyncio.subprocess.Process, int, str, str, Path]:
    script = tmp_path / "script.yaml"
    script.write_text(f"- text: {json.dumps(REPLY)}\n")
    log = tmp_path / "server.log"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "voice.cli", "serve", "--port", "0", "--script", str(script), "--tts", "piper",
        "--data-dir", str(tmp_path / "data"), "--max-calls", str(max_calls), "--max-calls-per-source", str(max_calls),
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=log.open("w"),
        env={**os.environ, "VOICELOOP_TOKEN": "", "VOICELOOP_OPERATOR_TOKEN": ""})
    port, token, operator = 0, "", ""
    async with asyncio.timeout(120):
        while not (port and token and operator):
            line = (await proc.stdout.readline()).decode()
            assert line, f"the server exited: {log.read_text()[-2000:]}"
            if m := re.search(r"listening on http://127\.0\.0\.1:(\d+)/", line):
                port = int(m.group(1))
            if m := re.search(r"\?token=(\S+)", line):
                token = m.group(1)
            if m := re.search(r"operator API token: (\S+)", line):
                operator = m.group(1)
    return proc, port, token, operator, log


@pytest.mark.parametrize("n", [20])
async def test_simultaneous_phone_calls_all_complete(tmp_path: Path, n: int,
                                                     record_property: Any) -> None:
    proc, port, token, operator, log = await launch(tmp_path, max_calls=n)
    try:
        cpu0, t0 = cpu_seconds(proc.pid), time.perf_counter()
        cfg = CallerConfig(custom_parameters={"key": twilio_stream_key(operator)}, response_timeout_s=60)
        steps = [say(CLIP), WaitFor("audio", 90), WaitFor("quiet", 30)]
        calls = [Session(f"ws://127.0.0.1:{port}/twilio", scenario=Scenario("c", steps), config=cfg).run()
                 for _ in range(n)]
        seen: set[str] = set()
        results = await asyncio.gather(*calls, watch_calls(port, operator, seen, n))
        results = results[:-1]
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}",
                                     headers={"Authorization": f"Bearer {operator}"}) as client:
            async with asyncio.timeout(30):
                while (await client.get("/api/calls")).json()["calls"]:
                    await asyncio.sleep(0.1)
            events = [(await client.get(f"/api/calls/{cid}/events")).json()["events"] for cid in seen]
        cpu, wall = cpu_seconds(proc.pid) - cpu0, time.perf_counter() - t0
    finally:
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(proc.wait(), 30)
    per_call = cpu / n
    record_property("cpu_s_per_call", round(per_call, 2))
    ttfa = sorted(r.time_to_first_audio_s or 0.0 for r in results)
    print(f"\n{n} simultaneous calls: {wall:.1f} s wall, server CPU {cpu:.1f} s = {per_call:.2f} s per call; "
          f"first reply audio after stream start p50 {ttfa[n // 2]:.1f} s, max {ttfa[-1]:.1f} s")
    for r in results:
        assert not r.violations and r.closed_by is None and heard_by_caller_s(r) > 1.0
    assert len(seen) == n  # every call was live at once
    for ev in events:
        turn = next(e for e in ev if e["kind"] == "caller_turn_ended")
        assert "journey" in turn["text"].lower()
        assert [e["kind"] for e in ev][-1] == "call_ended"
    db = sqlite3.connect(tmp_path / "data" / "journal.db")
    last = db.execute("SELECT kind FROM events e WHERE seq = (SELECT max(seq) FROM events WHERE run_id = e.run_id)")
    ends = [k for (k,) in last]
    # no run (nor speculation) left open
    assert len(ends) >= n and set(ends) <= {"run_finished", "run_cancelled", "prefetch_finished"}
    assert code == 0
    stdout = (await proc.stdout.read()).decode()
    for secret in (token, operator):
        assert secret not in log.read_text() and secret not in stdout  # printed once at start, never again


async def watch_calls(port: int, token: str, seen: set[str], n: int) -> None:
    """Collect call ids from the operator API while the calls are live."""
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {token}"}) \
            as client, asyncio.timeout(120):
        while len(seen) < n:
            seen.update(c["id"] for c in (await client.get("/api/calls")).json()["calls"])
            await asyncio.sleep(0.2)


# ---- the operator API ---------------------------------------------------------------------------------------


async def operator_approves(served: Served) -> str:
    async with http(served) as client:
        async with asyncio.timeout(30):
            while not (pending := [c for c in (await client.get("/api/calls")).json()["calls"]
                                   if c["pending_approval"]]):
                await asyncio.sleep(0.1)
        call = pending[0]
        assert call["pending_approval"] == {"call": "issue_refund", "arguments": {"order_id": "4567", "amount": 20}}
        events = (await client.get(f"/api/calls/{call['id']}/events")).json()["events"]
        assert "approval_asked" in [e["kind"] for e in events]
        later = (await client.get(f"/api/calls/{call['id']}/events", params={"after": events[-1]["seq"]})).json()
        assert all(e["seq"] > events[-1]["seq"] for e in later["events"])
        answer = await client.post(f"/api/calls/{call['id']}/approval", json={"approved": True})
        assert answer.status_code == 200 and answer.json() == {"id": call["id"], "approved": True}
        again = await client.post(f"/api/calls/{call['id']}/approval", json={"approved": True})
        assert again.status_code == 409  # nothing is pending any more
        return call["id"]


async def test_operator_approves_a_refund_over_http(stack: SpeechStack, tmp_path: Path) -> None:  # noqa: F811
    async with running(stack, tmp_path, REFUND) as served:
        steps = [say(FIXTURES / "synthetic/refund_4567.wav"), WaitFor("audio", 20), Wait(4.0), WaitFor("quiet", 15)]
        result, call_id = await asyncio.gather(phone(served, steps), operator_approves(served))
        await served.idle()
        call = served.ctx.registry.get(call_id)
        refunds = served.desk.db.execute("SELECT order_id, amount FROM refunds").fetchall()
    assert refunds == [("4567", 20.0)]
    assert heard_by_caller_s(result) > 1.0
    ks = kinds(call)
    assert ks.index("approval_asked") < ks.index("operator_decision")
    executed = [e for e in call.events if e["kind"] == "loop.tool_result" and e["call"]["name"] == "issue_refund"]
    assert executed and executed[0]["executed"] and executed[0]["status"] == "ok"
    assert call.session.turns[0].outcome == "COMPLETED"
    assert list(served.runs(call).values()) == ["run_finished"]


async def test_operator_api_requires_the_token_and_validates_requests(
        stack: SpeechStack, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:  # noqa: F811
    async with running(stack, tmp_path, [REPLY]) as served, websockets.connect(served.twilio_url) as phone_ws:
        await phone_ws.send(start_msg())
        async with asyncio.timeout(10):
            while not served.ctx.registry.live():
                await asyncio.sleep(0.05)
        call_id = served.ctx.registry.live()[0].call_id
        async with http(served, token=None) as anon, http(served, token="wrong") as wrong, http(served) as ok:
            assert (r := await anon.get("/api/calls")).status_code == 401 and r.headers["WWW-Authenticate"] == "Bearer"
            assert (await wrong.get("/api/calls")).status_code == 401
            assert (await anon.get("/api/calls", params={"token": "wrong"})).status_code == 401
            assert (await anon.post(f"/api/calls/{call_id}/approval", json={"approved": True})).status_code == 401
            listed = (await ok.get("/api/calls")).json()["calls"]
            assert [(c["id"], c["transport"]) for c in listed] == [(call_id, "twilio")]
            assert (await anon.get("/api/calls", params={"token": OPERATOR})).status_code == 200
            assert (await anon.get("/api/calls", params={"token": TOKEN})).status_code == 401  # a caller's token
            assert (await ok.get("/api/calls/nope/events")).status_code == 404
            approval = f"/api/calls/{call_id}/approval"
            assert (await ok.post(approval, content=b"{not json")).status_code == 400
            assert (await ok.post(approval, json={"approved": "yes"})).status_code == 400
            assert (await ok.post(approval, json={"approved": True})).status_code == 409
            assert (await ok.get(approval)).status_code == 405
            assert (await ok.post(approval, content=b"x" * 20_000)).status_code == 413
            assert (await ok.get("/healthz")).json() == {"ok": True}
        await phone_ws.send(json.dumps({"event": "stop"}))
    assert TOKEN not in caplog.text and OPERATOR not in caplog.text


async def test_browser_socket_needs_the_token_and_our_origin(stack: SpeechStack, tmp_path: Path) -> None:  # noqa: F811
    async with running(stack, tmp_path, [REPLY]) as served:
        base = f"ws://127.0.0.1:{served.port}/ws"
        host = f"http://127.0.0.1:{served.port}"
        for url, headers, origin in [(base, {}, None), (f"{base}?token=wrong", {}, None),
                                     (base, {"Authorization": "Bearer wrong"}, host),
                                     (f"{base}?token={TOKEN}", {}, "http://evil.example")]:
            async with websockets.connect(url, additional_headers=headers, origin=origin) as ws:
                assert (await close_code(ws, 5))[0] == 1008, (url, headers, origin)
        async with websockets.connect(f"{base}?token={TOKEN}", origin=host) as ws:
            first = await asyncio.wait_for(ws.recv(), 10)  # accepted: the browser transport is talking
            assert first
        with pytest.raises(websockets.InvalidStatus):
            async with websockets.connect(f"ws://127.0.0.1:{served.port}/elsewhere"):
                pass
        await served.idle()


async def test_a_full_server_says_try_again_later(stack: SpeechStack, tmp_path: Path) -> None:  # noqa: F811
    async with running(stack, tmp_path, [REPLY], max_calls=1) as served, websockets.connect(served.twilio_url) as one:
        await one.send(start_msg())
        async with asyncio.timeout(10):
            while not served.ctx.registry.live():
                await asyncio.sleep(0.05)
        async with websockets.connect(served.twilio_url) as two:
            with contextlib.suppress(websockets.ConnectionClosed):
                await two.send(start_msg())
            assert await close_code(two, 5) == (1013, "too many calls; try again later")
        async with websockets.connect(f"ws://127.0.0.1:{served.port}/ws?token={TOKEN}") as browser:
            assert (await close_code(browser, 5))[0] == 1013
        await one.send(json.dumps({"event": "stop"}))
        assert (await close_code(one, 10))[0] == 1000


# ---- the Twilio webhook and the page --------------------------------------------------------------------------


def reference_signature(auth_token: str, url: str, params: dict[str, str]) -> str:
    """Twilio's documented algorithm, written out independently of the server's code."""
    data = url + "".join(name + params[name] for name in sorted(params))
    return base64.b64encode(hmac.new(auth_token.encode(), data.encode(), hashlib.sha1).digest()).decode()


async def test_twilio_webhook_answers_twiml_and_checks_the_signature(stack: SpeechStack,  # noqa: F811
                                                                    tmp_path: Path) -> None:
    params = {"AccountSid": "AC1", "CallSid": "CA42", "From": "+15551230000", "To": "+15557650000"}
    async with running(stack, tmp_path, [REPLY], twilio_auth_token="twilio-secret",
                       public_host="voice.example.com") as served, http(served, token=None) as client:
        good = reference_signature("twilio-secret", "https://voice.example.com/twilio/voice", params)
        r = await client.post("/twilio/voice", data=params, headers={"X-Twilio-Signature": good})
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/xml")
        stream = ET.fromstring(r.text).find("./Connect/Stream")
        assert stream is not None and stream.get("url") == "wss://voice.example.com/twilio"
        assert {p.get("name"): p.get("value") for p in stream} == {"key": twilio_stream_key(OPERATOR)}
        with_query = reference_signature("twilio-secret", "https://voice.example.com/twilio/voice?lang=en", params)
        r = await client.post("/twilio/voice?lang=en", data=params, headers={"X-Twilio-Signature": with_query})
        assert r.status_code == 200
        tampered = {**params, "To": "+15550000000"}
        assert (await client.post("/twilio/voice", data=tampered, headers={"X-Twilio-Signature": good})).status_code \
            == 403
        assert (await client.post("/twilio/voice", data=params)).status_code == 403
        assert (await client.get("/twilio/voice")).status_code == 405
        served.ctx.config.twilio_auth_token = ""  # not configured: no stream key for anyone ...
        refused = await client.post("/twilio/voice", data=params)
        assert refused.status_code == 403 and "--allow-unsigned-twilio" in refused.json()["error"]
        served.ctx.config.allow_unsigned_twilio = True  # ... unless the operator opts in
        assert (await client.post("/twilio/voice", data=params)).status_code == 200


async def test_the_page_is_served_with_content_types(stack: SpeechStack, tmp_path: Path) -> None:  # noqa: F811
    web = tmp_path / "web"
    web.mkdir()
    (web / "index.html").write_text("<!doctype html><title>voiceloop</title>")
    (web / "app.js").write_text("console.log('hi')")
    async with running(stack, tmp_path, [REPLY], web_dir=web) as served, http(served, token=None) as client:
        page = await client.get("/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "voiceloop" in page.text and page.headers["x-content-type-options"] == "nosniff"
        assert (await client.get("/app.js")).headers["content-type"].startswith("text/javascript")
        for missing in ("/worklet.js", "/style.css", "/etc/passwd", "/../voice/server.py"):
            assert (await client.get(missing)).status_code == 404, missing
        assert (await client.post("/")).status_code == 405


def test_scripts_loop_per_user_turn_so_long_calls_never_run_out() -> None:
    refund = LoopingScript(load_script(FIXTURES / "refund_approved.yaml"), "c1")
    assert [len(b) for b in refund.blocks] == [3]
    two = LoopingScript(load_script(FIXTURES / "barge_in.yaml"), "c2")
    messages: list[Message] = []
    for turn in range(7):  # seven user turns on a two-reply script
        messages.append(Message("user", f"turn {turn}"))
        *_, step = two._step(messages)
        assert step.text.startswith("Going forward" if turn % 2 == 0 else "Sorry")
        messages.append(Message("assistant", step.text))
    messages = [Message("user", "refund please")]
    for expected in ("lookup_order", "issue_refund", None, None):
        *_, step = refund._step(messages)
        assert (step.tool_calls[0].name if step.tool_calls else None) == expected
        messages.append(Message("assistant", step.text, tool_calls=step.tool_calls))
    with pytest.raises(ValueError, match="unknown --llm"):
        model_source(llm="bogus")


def test_websockets_log_lines_never_carry_the_token(caplog: pytest.LogCaptureFixture) -> None:
    from voice.server.app import uvicorn_log as _ws_log

    with caplog.at_level(logging.DEBUG, logger="uvicorn.error"):
        _ws_log.debug("< %s %s %s", "GET", f"/ws?token={TOKEN}", "HTTP/1.1")
        _ws_log.debug("< Authorization: %s", f"Bearer {TOKEN}")
    assert TOKEN not in caplog.text and caplog.text.count("<redacted>") == 2


def test_serve_is_a_cli_command() -> None:
    from voice.cli import build_parser

    args = build_parser().parse_args(["serve", "--script", "x.yaml", "--max-calls", "3"])
    assert (args.script, args.max_calls, args.host) == ("x.yaml", 3, "127.0.0.1")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--script", "x.yaml", "--llm", "openai"])
