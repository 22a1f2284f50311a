"""Issue 11.6 and 11.7: Twilio marks and expensive media. The server marks its audio every ~200 ms (not every
20 ms chunk), and the provider's own mark echoes — even all the pending ones at once after a `clear` — never
count against the message-rate limit. Oversized media is refused by its size before it is decoded, and a
stream that floods audio faster than real time has the excess shed unread, so other calls and /healthz
stay served."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import websockets

from tests.abuse.serving import (
    Server,
    close_code,
    line_noise,
    normal_call,
    serving,
    start_msg,
    utterance,
)

LONG = ("Going forward is easy. First, stand up straight and look ahead. Then walk about twelve steps, counting "
        "each one out loud as you go, and stop when you reach the door. After that, turn left and keep going.")
RATE = 20  # messages per second (bursts of 40): marks echoed at once would break it if they counted


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("media"), [{"text": LONG * 2}], "--allow-unsigned-twilio",
                 "--max-messages-per-second", str(RATE)) as served:
        yield served


async def collect(ws: Any, seconds: float, got: list[dict[str, Any]]) -> None:
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            while True:
                got.append(json.loads(await ws.recv()))


async def test_few_marks_and_their_echoes_never_count_as_abuse(server: Server) -> None:
    async with websockets.connect(server.ws("/twilio")) as ws:
        await ws.send(start_msg())
        for message in utterance():
            await ws.send(message)
        line = asyncio.create_task(line_noise(ws))
        got: list[dict[str, Any]] = []
        async with asyncio.timeout(30):
            while sum(m.get("event") == "mark" for m in got) <= 2 * RATE:
                await collect(ws, 0.5, got)  # the reply, never acknowledged: all of it is "still playing"
        for message in utterance():  # barge in over it
            await ws.send(message)
        async with asyncio.timeout(30):
            while not any(m.get("event") == "clear" for m in got):
                await collect(ws, 0.2, got)
        marks = [m["mark"]["name"] for m in got if m.get("event") == "mark"]
        media = sum(m.get("event") == "media" for m in got)
        for name in marks:  # what Twilio does after a clear: every pending mark comes back at once
            await ws.send(json.dumps({"event": "mark", "streamSid": "MZabuse", "mark": {"name": name}}))
        await collect(ws, 1.0, got)
        line.cancel()
        await ws.send(json.dumps({"event": "stop"}))
        assert await close_code(ws) == (1000, "stream stopped")  # not 1008: the echoes were ours
    assert len(marks) > 2 * RATE and media >= 8 * len(marks)  # a mark per ~200 ms of audio, not per 20 ms chunk
    await normal_call(server)


async def test_oversized_media_is_refused_by_its_size(server: Server) -> None:
    for payload, expected in [("A" * 12_000, "message of 12"), ("A" * 5_000, "media payload of 5000 chars")]:
        async with websockets.connect(server.ws("/twilio")) as ws:
            await ws.send(start_msg())
            with contextlib.suppress(websockets.ConnectionClosed):
                await ws.send(json.dumps({"event": "media", "media": {"payload": payload}}))
            code, reason = await close_code(ws)
        assert code == 1009 and reason.startswith(expected), reason
    await normal_call(server)


async def test_a_flood_of_audio_is_shed_without_starving_other_calls(server: Server) -> None:
    big = json.dumps({"event": "media", "streamSid": "MZflood",
                      "media": {"track": "inbound", "payload": base64.b64encode(b"\x7f" * 3000).decode()}})
    async with websockets.connect(server.ws("/twilio")) as flood, server.operator() as op, \
            httpx.AsyncClient(base_url=server.http) as anyone:
        await flood.send(start_msg("MZflood"))

        async def pour() -> None:
            for _ in range(60):  # 375 ms of audio per message, 18 messages a second: 7 s of audio a second
                await flood.send(big)
                await asyncio.sleep(1 / 18)

        pouring = asyncio.create_task(pour())
        await normal_call(server)  # another call, during the flood
        assert (await anyone.get("/healthz")).status_code == 200
        await pouring
        calls = [c for c in (await op.get("/api/calls")).json()["calls"] if c["meta"].get("stream_sid") == "MZflood"]
        await flood.send(json.dumps({"event": "stop"}))
        assert (await close_code(flood))[0] == 1000
        events = (await op.get(f"/api/calls/{calls[0]['id']}/events")).json()["events"]
    closed = next(e for e in events if e["kind"] == "transport.closed")
    assert closed["counts"]["shed_ms"] >= 5000  # ~22 s sent in ~3.5 s: all beyond the 10 s allowance is shed
