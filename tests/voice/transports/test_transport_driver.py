"""The parts every transport shares, without a speech stack: the outbox (order, pacing, back-pressure,
stalled clients), the close-code mapping, the rate limit, and the ASGI app mounted in another service and
served by a real uvicorn."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from typing import cast

import httpx
import numpy as np
import pytest
import uvicorn
import websockets
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.websockets import WebSocketDisconnect

from voice.hosting.config import RateLimit, ServerConfig
from voice.hosting.registry import CallContext, CallFactory, CallLimitReached, CallRegistry
from voice.server.app import create_app
from voice.transports import CloseCode, Drop
from voice.transports.connection import ClientGone, close_reason
from voice.transports.outbox import AckPacing, Outbox
from voice.transports.twilio.endpoint import TwilioSink
from voice.transports.twilio.webhook import twilio_stream_key


class Wire:
    """A socket's send side: records what was sent; `stuck` makes every send hang (a client not reading)."""

    def __init__(self) -> None:
        self.sent: list[str | bytes] = []
        self.stuck = False

    async def send(self, data: str | bytes) -> None:
        if self.stuck:
            await asyncio.sleep(3600)
        self.sent.append(data)


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_control_messages_overtake_queued_audio_and_audio_keeps_its_order() -> None:
    wire = Wire()
    outbox = Outbox(wire.send, ServerConfig(), AckPacing(lead_samples=640, stall_s=10))
    for i in range(4):
        outbox.put_audio("audio", bytes([i]) * 640, 320)
    outbox.put("event", "e1")
    task = asyncio.create_task(outbox.run())
    await settle()
    assert wire.sent == ["e1", b"\x00" * 640, b"\x01" * 640]  # two frames are the lead; the rest wait for acks
    outbox.put("event", "e2")
    assert outbox.ack(320, 0) == 320
    await settle()
    assert wire.sent[3:] == ["e2", b"\x02" * 640]
    outbox.drop_audio()  # barge-in
    assert outbox.ack(640, 0) == 640
    await settle()
    assert len(wire.sent) == 5 and outbox.sent == {"event": 2, "audio": 3}
    task.cancel()


async def test_a_client_that_stops_reading_is_dropped() -> None:
    wire = Wire()
    outbox = Outbox(wire.send, ServerConfig(send_timeout_s=0.2))
    task = asyncio.create_task(outbox.run())
    wire.stuck = True
    outbox.put("event", "x")
    with pytest.raises(Drop, match="client is not reading") as stalled:
        await asyncio.wait_for(task, 5)
    assert stalled.value.code == CloseCode.POLICY_VIOLATION

    full = Outbox(wire.send, ServerConfig(max_outbox=3))
    for i in range(5):  # nobody drains it: the fourth message finds it full
        full.put("event", str(i))
    assert full.failure is not None and full.failure.reason == "client is not reading" and len(full.control) == 3
    with pytest.raises(Drop):
        await full.run()

    unplayed = Outbox(wire.send, ServerConfig(max_queued_audio_s=1.0))
    unplayed.put_audio("audio", b"", 16000)
    unplayed.put_audio("audio", b"", 1)
    assert unplayed.failure is not None and unplayed.failure.reason == "client is not playing audio"


async def test_twilio_audio_goes_out_unpaced_and_the_last_partial_chunk_follows_a_pause() -> None:
    wire = Wire()
    outbox = Outbox(wire.send, ServerConfig())
    sink = TwilioSink(outbox, "MZ1")
    outbox.tail = sink
    task = asyncio.create_task(outbox.run())
    sink.send(np.ones(400, np.int16))  # one whole 20 ms chunk (320 samples) and 80 samples pending
    await settle()
    assert [json.loads(m)["event"] for m in wire.sent] == ["media"]  # marks go every 200 ms, and at a pause
    await asyncio.sleep(Outbox.IDLE_FLUSH_S * 3)
    assert [json.loads(m)["event"] for m in wire.sent] == ["media", "media", "mark"]
    sink.send(np.ones(4000, np.int16))
    sink.clear()  # barge-in before the sender ran: no audio goes out, the clear does
    await settle()
    assert json.loads(wire.sent[-1]) == {"event": "clear", "streamSid": "MZ1"} and len(wire.sent) == 4
    task.cancel()


def test_ack_pacing_counts_only_acks_of_the_current_epoch() -> None:
    pacing = AckPacing(lead_samples=1000, stall_s=1.0)
    pacing.sent(1000)
    assert not pacing.may_send()
    assert pacing.ack(400, epoch=0) == 400 and pacing.may_send()
    assert pacing.ack(5000, epoch=0) == 600  # never more than is in flight
    pacing.sent(1000)
    assert pacing.clear() == 1 and pacing.in_flight == 0
    assert pacing.ack(500, epoch=0) == 0 and pacing.played == 1000
    pacing.sent(1000)
    pacing.check_stall(audio_waiting=True, now=10.0)
    pacing.check_stall(audio_waiting=True, now=10.9)
    with pytest.raises(Drop, match="stopped acknowledging"):
        pacing.check_stall(audio_waiting=True, now=11.1)
    pacing.check_stall(audio_waiting=False, now=20.0)  # nothing waiting: never a stall


def test_one_mapping_from_how_a_connection_ended_to_its_close_code() -> None:
    assert close_reason(None, "caller disconnected", lambda: "stream stopped") == (1000, "stream stopped")
    assert close_reason(Drop(CloseCode.INVALID_PAYLOAD, "malformed JSON"), "x") == (1007, "malformed JSON")
    assert close_reason(ClientGone(1000, ""), "caller disconnected") == (1000, "caller disconnected")
    assert close_reason(ClientGone(1009, "frame too big"), "gone") == (1009, "frame too big")
    assert close_reason(ClientGone(1012, ""), "gone") == (1012, "server shutting down")
    assert close_reason(WebSocketDisconnect(1006), "gone") == (1006, "gone")
    assert close_reason(CallLimitReached("full"), "gone") == (1013, "too many calls; try again later")
    assert close_reason(RuntimeError("bug"), "gone") == (1011, "server error")


def test_rate_limit_is_a_token_bucket() -> None:
    limit = RateLimit(rate=10, burst=3)
    t = limit.at
    assert [limit.allow(t) for _ in range(4)] == [True, True, True, False]
    assert limit.allow(t + 0.15) and not limit.allow(t + 0.15)


# ---- the app mounted in someone else's service, on a real uvicorn --------------------------------


@contextlib.asynccontextmanager
async def mounted(config: ServerConfig) -> AsyncIterator[str]:
    """The voiceloop app under /voice of a parent Starlette app (as in a FastAPI service)."""
    ctx = CallContext(cast(CallFactory, None), CallRegistry(config.max_calls), config)  # no call is opened here
    parent = Starlette(routes=[Mount("/voice", app=create_app(ctx))])
    sock = socket.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(parent, log_config=None, lifespan="off", ws="websockets-sansio"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield f"127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await task


async def test_the_app_works_mounted_under_a_prefix() -> None:
    config = ServerConfig(token="mount-token", operator_token="mount-operator", max_calls=0, allow_unsigned_twilio=True)
    async with mounted(config) as host, httpx.AsyncClient(base_url=f"http://{host}/voice") as client:
        assert (await client.get("/healthz")).json() == {"ok": True}
        page = await client.get("/")
        assert page.status_code == 200 and page.headers["x-content-type-options"] == "nosniff"
        assert (await client.get("/api/calls")).status_code == 401
        assert (await client.get("/api/calls", headers={"Authorization": "Bearer mount-token"})).status_code == 401
        listed = await client.get("/api/calls", headers={"Authorization": "Bearer mount-operator"})
        assert listed.json() == {"calls": []}
        minted = await client.post("/call-token", headers={"Authorization": "Bearer mount-token"})
        assert minted.status_code == 200 and minted.json()["call_token"].startswith("ct_")
        twiml = (await client.post("/twilio/voice", data={"CallSid": "CA1"})).text
        assert f'url="wss://{host}/voice/twilio"' in twiml and twilio_stream_key("mount-operator") in twiml
        assert (await client.post("/api/calls/x/approval", content=b"x" * 20_000,
                                  headers={"Authorization": "Bearer mount-operator"})).status_code == 413
        async with websockets.connect(f"ws://{host}/voice/twilio") as ws:  # max_calls=0: the server is full
            with contextlib.suppress(websockets.ConnectionClosed):
                await asyncio.wait_for(ws.recv(), 5)
            assert (ws.close_code, ws.close_reason) == (1013, "too many calls; try again later")
        async with websockets.connect(f"ws://{host}/voice/ws?token=wrong") as ws:
            with contextlib.suppress(websockets.ConnectionClosed):
                await asyncio.wait_for(ws.recv(), 5)
            assert (ws.close_code, ws.close_reason) == (1008, "missing, wrong, used or expired token")


