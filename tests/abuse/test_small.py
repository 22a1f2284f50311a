"""Issue 11.8: small ones. Repeated Host/Authorization/Upgrade headers, odd `after` values, JSON nested too deep
and a non-finite timestamp get a clean 400 or close (never 500/1011 and never a traceback in the log);
/healthz answers only GET and HEAD; a big unknown browser message is not echoed back."""

from __future__ import annotations

import asyncio
import json
import socket

import httpx
import pytest
import websockets

from tests.abuse.serving import (
    OPERATOR,
    TOKEN,
    Server,
    close_code,
    normal_call,
    start_msg,
    utterance,
)

NESTED = "[" * 100_000 + "]" * 100_000
HANDSHAKE = ("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
             "Sec-WebSocket-Version: 13\r\n")


@pytest.fixture
def server(shared: Server) -> Server:
    return shared


def raw_status(server: Server, request: str) -> int:
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(request.encode())
        head = sock.recv(4096).decode("latin-1")
    return int(head.split(" ", 2)[1])


@pytest.mark.parametrize(("name", "request_text", "statuses"), [
    ("Host", "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", {400}),
    ("Authorization", f"GET /api/calls HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer {OPERATOR}\r\n"
                      "Authorization: Bearer x\r\n\r\n", {400}),
    ("Upgrade", f"GET /ws?token={TOKEN} HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n{HANDSHAKE}\r\n",
     {400, 426}),  # 426: the WebSocket library refuses it before the app sees it
    ("Authorization on a socket", f"GET /twilio HTTP/1.1\r\nHost: a\r\nAuthorization: a\r\nAuthorization: b\r\n"
                                  f"{HANDSHAKE}\r\n", {400}),
])
def test_repeated_headers_get_a_clean_400(server: Server, name: str, request_text: str, statuses: set[int]) -> None:
    assert raw_status(server, request_text) in statuses, name


async def test_odd_query_values_and_bodies_are_400(server: Server) -> None:
    async with websockets.connect(server.ws("/twilio")) as ws, server.operator() as op:
        await ws.send(start_msg("MZodd"))
        async with asyncio.timeout(10):
            while not (calls := [c for c in (await op.get("/api/calls")).json()["calls"]
                                 if c["meta"]["stream_sid"] == "MZodd"]):
                await asyncio.sleep(0.05)
        events = f"/api/calls/{calls[0]['id']}/events"
        for after in ("²", "9" * 5000, "-1", "1e3", " 1"):
            r = await op.get(events, params={"after": after})
            assert r.status_code == 400 and "after" in r.json()["error"], after
        assert (await op.get(events, params={"after": "0"})).status_code == 200
        approval = f"/api/calls/{calls[0]['id']}/approval"
        assert (await op.post(approval, content=NESTED[:8000] + NESTED[-8000:])).status_code == 400
        await ws.send(json.dumps({"event": "stop"}))
        assert (await close_code(ws))[0] == 1000


async def test_deep_json_and_infinite_timestamps_close_cleanly_or_are_ignored(server: Server) -> None:
    async with websockets.connect(server.ws("/twilio")) as ws:
        await ws.send(start_msg())
        await ws.send('{"event": "media", "media": {"payload": "//8=", "timestamp": Infinity}}')
        await ws.send('{"event": "media", "media": {"payload": "//8=", "timestamp": 1e999}}')
        for message in utterance():
            await ws.send(message)
        async with asyncio.timeout(20):
            while json.loads(await ws.recv()).get("event") != "media":
                pass  # the call went on: the agent answers
        await ws.send(NESTED[:4000] + NESTED[-4000:])
        assert await close_code(ws) == (1007, "malformed JSON")
    async with websockets.connect(server.ws(f"/ws?token={TOKEN}")) as page:
        assert json.loads(await page.recv())["type"] == "hello"
        await page.send(NESTED[:30_000] + NESTED[-30_000:])
        await page.send(json.dumps({"type": "x" * 60_000}))
        errors = []
        async with asyncio.timeout(10):
            while len(errors) < 2:
                if isinstance(message := await page.recv(), str) and json.loads(message)["type"] == "error":
                    errors.append(message)
        assert json.loads(errors[0])["error"] == "malformed JSON"
        assert len(errors[1]) < 200  # the 60 KB type is not echoed back
        await page.send(json.dumps({"type": "hangup"}))
        assert (await close_code(page))[0] == 1000
    await normal_call(server)


async def test_healthz_answers_only_get_and_head(server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.http) as client:
        for method in ("PUT", "DELETE", "TRACE", "POST", "PATCH", "OPTIONS"):
            assert (await client.request(method, "/healthz")).status_code == 405, method
        assert (await client.get("/healthz")).json() == {"ok": True}
        assert (await client.head("/healthz")).status_code == 200
