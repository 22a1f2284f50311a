"""Issue 37: the server holds when a neighbour misbehaves. 200 sockets that never start, from eight addresses, fill
the table of sockets yet to start (128) and a signed phone call still gets in; connections that trickle their
headers are closed at the header deadline, and past the connection cap a health check is answered at once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterator

import httpx
import pytest
import websockets

from tests.abuse.serving import REPLY, Server, close_code, normal_call, serving
from voice.hosting.admission import MADE_ROOM
from voice.server import _guard
from voice.server._guard import AcceptErrorLog, connection_cap

FLAGS = ("--header-timeout", "1.5", "--max-connections", "250", "--start-timeout", "30")
ADDRESSES = [f"127.0.0.{i}" for i in range(2, 10)]  # eight other client addresses on the loopback network


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("neighbours"), [{"text": REPLY}], *FLAGS) as served:
        yield served


async def test_sockets_that_never_start_cannot_lock_out_a_signed_call(server: Server) -> None:
    held = []
    for _ in range(25):  # 200 sockets that never send `start`, 25 per address (the per-address cap is 32)
        for address in ADDRESSES:
            held.append(await websockets.connect(server.ws("/twilio"), local_addr=(address, 0)))
    await normal_call(server)  # a signed stream (the key our TwiML gives) starts its call and is answered
    ends = await asyncio.gather(*(close_code(ws, 0.5) for ws in held))
    made_room = [i for i, end in enumerate(ends) if end == (1013, MADE_ROOM)]
    assert len(made_room) == 200 - 128 + 1  # the oldest made room: for the newer ones, then for the call
    assert made_room == list(range(len(made_room)))
    assert all(end == (None, "") for end in ends[len(made_room):])  # the rest still wait (start timeout 30 s)
    for ws in held:
        await ws.close()


async def _trickle(port: int) -> tuple[asyncio.StreamReader, asyncio.Task[None]]:
    """A client that sends its request headers one byte a quarter second (they would take 110 s)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 400

    async def drip() -> None:
        with contextlib.suppress(OSError):
            for byte in request:
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(0.25)

    return reader, asyncio.create_task(drip())


async def closed_by_server(reader: asyncio.StreamReader, timeout: float) -> bool:
    """Whether the server closed the connection (after a 503, or with nothing) within `timeout`."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(timeout):
            with contextlib.suppress(OSError):
                while await reader.read(1000):
                    pass
            return True
    return False


async def test_trickled_headers_are_cut_off_and_a_health_check_gets_through(server: Server) -> None:
    logged_before, started = len(server.log.read_text()), time.monotonic()
    slow = [await _trickle(server.port) for _ in range(300)]  # more than --max-connections 250
    async with httpx.AsyncClient(timeout=3) as client:
        asked = time.monotonic()
        health = await client.get(f"{server.http}/healthz")
        assert health.status_code == 200 and time.monotonic() - asked < 1.0
    closed = await asyncio.gather(*(closed_by_server(reader, 5.0) for reader, _ in slow))
    assert all(closed) and time.monotonic() - started < 1.5 + 3.0  # the header deadline, not the 110 s
    for _, drip in slow:
        drip.cancel()
    log = server.log.read_text()[logged_before:]
    assert "out of system resource" not in log and len(log.splitlines()) < 5, log[-2000:]


def test_accept_errors_are_logged_once_per_interval_with_a_count(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    others: list[dict[str, object]] = []
    handler = AcceptErrorLog(every_s=10, clock=lambda: now[0], previous=lambda _loop, ctx: others.append(ctx))
    loop = asyncio.new_event_loop()
    error = {"message": AcceptErrorLog.MESSAGE, "exception": OSError(24, "Too many open files")}
    with caplog.at_level(logging.ERROR, logger="voiceloop.server"):
        for tick in range(2500):  # 250 a second for 10 s, then once more
            now[0] = tick / 250
            handler(loop, error)
        now[0] = 10.0
        handler(loop, error)
        handler(loop, {"message": "something else"})
    loop.close()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and "Too many open files" in lines[0] and "ulimit -n" in lines[0]
    assert "1 time(s)" in lines[0] and "2500 time(s)" in lines[1]
    assert others == [{"message": "something else"}]  # anything else goes to the handler it replaced


def test_the_connection_cap_fits_under_the_open_file_limit(monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    limits = [(1024, 4096)]
    monkeypatch.setattr(_guard.resource, "getrlimit", lambda _kind: limits[-1])
    monkeypatch.setattr(_guard.resource, "setrlimit", lambda _kind, pair: limits.append(pair))
    assert connection_cap(1000) == 1000 and limits[-1] == (1000 + _guard.FILES_RESERVED, 4096)  # raised to fit
    limits[:] = [(1024, 1024)]
    with caplog.at_level(logging.WARNING, logger="voiceloop.server"):
        assert connection_cap(1000) == 1024 - _guard.FILES_RESERVED  # the hard limit allows no more
    assert "raise `ulimit -n`" in caplog.text
