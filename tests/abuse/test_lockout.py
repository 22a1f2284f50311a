"""Issue 11.1: nobody can lock every caller out. Sockets that never send `start`, streams that start and then
send nothing, callers who only send silence and idle browser calls are capped per source address and
reaped by deadlines; a real caller from another address gets through all along."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator

import numpy as np
import pytest
import websockets

from tests.abuse.serving import (
    ATTACKER,
    REPLY,
    TOKEN,
    Server,
    close_code,
    media_msgs,
    normal_call,
    serving,
    start_msg,
)

FLAGS = ("--allow-unsigned-twilio", "--max-calls", "8", "--max-calls-per-source", "2", "--max-pending-per-source", "4",
         "--start-timeout", "1", "--media-timeout", "1.5", "--idle-timeout", "3")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("lockout"), [{"text": REPLY}], *FLAGS) as served:
        yield served


async def attackers(server: Server, path: str, n: int) -> list[websockets.ClientConnection]:
    return [await websockets.connect(server.ws(path), local_addr=ATTACKER) for _ in range(n)]


async def test_sockets_that_never_start_are_capped_per_source_and_reaped(server: Server) -> None:
    await normal_call(server)  # warm: the file descriptors of a served call are counted in the baseline
    baseline = server.fds()
    held = await attackers(server, "/twilio", 6)  # never send anything
    codes = await asyncio.gather(*(close_code(ws, 0.5) for ws in held[4:]))
    assert codes == [(1013, "too many connections from your address; try again later")] * 2
    await normal_call(server)  # meanwhile a caller from another address gets through
    reaped = await asyncio.gather(*(close_code(ws, 10) for ws in held[:4]))
    assert reaped == [(1008, "no 'start' within 1 s")] * 4
    async with asyncio.timeout(5):
        while server.fds() > baseline:
            await asyncio.sleep(0.1)  # every socket is closed on the server's side too


async def test_streams_that_start_and_then_send_nothing_lose_their_slot(server: Server) -> None:
    held = await attackers(server, "/twilio", 3)
    for ws in held:
        with contextlib.suppress(websockets.ConnectionClosed):
            await ws.send(start_msg())
    third = await close_code(held[2], 5)
    assert third == (1013, "too many calls from your address; try again later")
    await normal_call(server)
    reaped = await asyncio.gather(*(close_code(ws, 10) for ws in held[:2]))
    assert reaped == [(1008, "no audio from the client for 1.5 s")] * 2
    await normal_call(server)


async def test_a_stream_that_only_sends_silence_is_let_go(server: Server) -> None:
    async with websockets.connect(server.ws("/twilio"), local_addr=ATTACKER) as ws:
        await ws.send(start_msg())
        silence = media_msgs(np.zeros(8000 * 12, np.int16), frame_ms=100)

        async def keep_sending() -> None:
            for message in silence:  # in real time, as a phone line would
                await ws.send(message)
                await asyncio.sleep(0.1)

        sender = asyncio.create_task(keep_sending())
        code = await close_code(ws, 15)
        sender.cancel()
        await asyncio.gather(sender, return_exceptions=True)
    assert code == (1000, "no caller speech for 3 s")
    await normal_call(server)


async def test_idle_browser_calls_are_capped_and_reaped(server: Server) -> None:
    held = await attackers(server, f"/ws?token={TOKEN}", 3)
    hellos = []
    for ws in held[:2]:
        hellos.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
    assert [h["type"] for h in hellos] == ["hello", "hello"]
    assert (await close_code(held[2], 5))[0] == 1013
    await normal_call(server)
    reaped = await asyncio.gather(*(close_code(ws, 10) for ws in held[:2]))
    assert reaped == [(1008, "no audio from the client for 1.5 s")] * 2
    await normal_call(server)
