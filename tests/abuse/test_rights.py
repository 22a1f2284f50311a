"""Issue 11.2: a caller is not an operator. A browser caller's credential is a call token minted for one call:
it opens that call once, reaches that call's own events and approval, and nothing else — not the list of
calls, not another caller's transcript, not another caller's refund. The operator API has its own token."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from typing import Any

import httpx
import pytest
import websockets

from tests.abuse.serving import (
    OPERATOR,
    TOKEN,
    Server,
    close_code,
    line_noise,
    start_msg,
    utterance,
)
from voice.hosting.call_tokens import CallTokens, TokenLimit


@pytest.fixture
def server(shared: Server) -> Server:
    return shared


def refunds(server: Server) -> list[tuple[str, float]]:
    with sqlite3.connect(server.data / "orders.db") as db:
        return db.execute("SELECT order_id, amount FROM refunds").fetchall()


async def pending_refund_call(server: Server, ws: Any) -> str:
    """A phone caller asks; the scripted agent looks the order up and waits on the refund's approval."""
    await ws.send(start_msg())
    for message in utterance():
        await ws.send(message)
    async with server.operator() as op, asyncio.timeout(30):
        while not (pending := [c for c in (await op.get("/api/calls")).json()["calls"] if c["pending_approval"]]):
            await asyncio.sleep(0.1)
    return str(pending[0]["id"])


async def browser_caller(server: Server) -> tuple[Any, dict[str, Any]]:
    async with httpx.AsyncClient(base_url=server.http) as client:
        minted = await client.post("/call-token", headers={"Authorization": f"Bearer {TOKEN}"})
    assert minted.status_code == 200 and minted.json()["expires_in"] > 0
    ws = await websockets.connect(server.ws(f"/ws?call_token={minted.json()['call_token']}"))
    hello = json.loads(await asyncio.wait_for(ws.recv(), 10))
    assert hello["type"] == "hello" and hello["call_token"] == minted.json()["call_token"]
    return ws, hello


async def test_a_caller_reaches_only_their_own_call_and_the_operator_everything(server: Server) -> None:
    phone = await websockets.connect(server.ws("/twilio"))
    line = asyncio.create_task(line_noise(phone))
    other = await pending_refund_call(server, phone)
    browser, hello = await browser_caller(server)
    mine, scoped = hello["call_id"], {"Authorization": f"Bearer {hello['call_token']}"}
    async with httpx.AsyncClient(base_url=server.http, headers=scoped) as caller:
        assert (await caller.get("/api/calls")).status_code == 403
        assert (await caller.get(f"/api/calls/{other}/events")).status_code == 403
        assert (await caller.post(f"/api/calls/{other}/approval", json={"approved": True})).status_code == 403
        assert (await caller.get(f"/api/calls/{mine}/events")).status_code == 200
        assert (await caller.get("/api/calls", headers={"Authorization": f"Bearer {TOKEN}"})).status_code == 401
    assert refunds(server) == []  # the caller could not approve someone else's refund
    again = await websockets.connect(server.ws(f"/ws?call_token={hello['call_token']}"))
    assert await close_code(again, 5) == (1008, "missing, wrong, used or expired token")  # one call per token
    async with server.operator() as op:
        listed = {c["id"] for c in (await op.get("/api/calls")).json()["calls"]}
        assert {mine, other} <= listed
        assert (await op.get(f"/api/calls/{other}/events")).status_code == 200
        decided = await op.post(f"/api/calls/{other}/approval", json={"approved": True})
        assert decided.status_code == 200
    async with asyncio.timeout(20):
        while refunds(server) != [("4567", 20.0)]:
            await asyncio.sleep(0.1)  # the operator's approval executed the refund: this is the normal call
    await browser.send(json.dumps({"type": "hangup"}))
    assert (await close_code(browser))[0] == 1000
    line.cancel()
    await phone.send(json.dumps({"event": "stop"}))
    assert (await close_code(phone))[0] == 1000


async def test_minting_needs_the_access_token_and_is_bounded(server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.http) as client:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Bearer {OPERATOR}"}):
            assert (await client.post("/call-token", headers=headers)).status_code == 401
        assert (await client.get("/call-token")).status_code == 405
    for token in ("ct_guess", "", TOKEN + "x"):
        ws = await websockets.connect(server.ws(f"/ws?call_token={token}"))
        assert (await close_code(ws, 5))[0] == 1008


def test_call_tokens_expire_unused_and_after_their_call() -> None:
    now = [0.0]
    tokens = CallTokens(clock=lambda: now[0])
    late = tokens.mint("10.0.0.1", ttl_s=60, max_unbound=10, max_per_source=2)
    used = tokens.mint("10.0.0.1", ttl_s=60, max_unbound=10, max_per_source=2)
    with pytest.raises(TokenLimit):
        tokens.mint("10.0.0.1", ttl_s=60, max_unbound=10, max_per_source=2)  # this address has enough waiting
    assert tokens.redeem(used) and not tokens.redeem(used)
    assert tokens.scope(used) is None  # not yet bound to a call
    tokens.bind(used, "call-1", "10.0.0.1")
    now[0] = 61.0
    assert not tokens.redeem(late)  # unused past its time to live
    assert tokens.scope(used) == "call-1"  # a live call keeps its token
    tokens.ended("call-1", ttl_s=60)
    now[0] = 122.0
    assert tokens.scope(used) is None
