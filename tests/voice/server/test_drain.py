"""Issue 13, part 6, against a real `voiceloop serve`: on SIGTERM the server drains. `/healthz` turns 503 at
once, new calls are refused with a reason (Twilio and browser sockets 1012, the webhook 503), a live call goes
on to its end, and then the process exits 0; a call still live at `--drain-timeout` is ended with a reason and
its run journaled as cancelled; a second signal ends the calls at once. Ordering is asserted, not timings."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

from tests.abuse.conftest import REFUND
from tests.abuse.serving import TOKEN, Server, close_code, launch, line_noise, start_msg, until_event, utterance
from tests.fleet import quiet, said_msgs, wait_exit
from voice.cli import build_parser
from voice.server.args import server_config
from voice.testing.scripted_call import FIXTURES

REFUND_ASK = FIXTURES / "synthetic/refund_4567.wav"  # "refund twenty dollars on order 4567": the write is asked for
ANSWER = [{"text": "That sounds like a long trip. How can I help with your order?"}]


async def healthz(server: Server) -> tuple[int, dict[str, Any]]:
    async with httpx.AsyncClient(timeout=5) as client:
        got = await client.get(f"{server.http}/healthz")
    return got.status_code, got.json()


async def until_draining(server: Server) -> None:
    async with asyncio.timeout(20):
        while (await healthz(server))[0] != 503:
            await asyncio.sleep(0.05)


async def refused_everywhere(server: Server) -> None:
    """A new phone call, browser call and webhook are each refused with a reason."""
    async with websockets.connect(server.ws("/twilio")) as phone:
        with contextlib.suppress(websockets.ConnectionClosed):  # it may be closed before this is sent
            await phone.send(start_msg("MZlate"))
        code, reason = await close_code(phone)
    assert code == 1012 and "shutting down" in reason and "another server" in reason
    async with websockets.connect(server.ws(f"/ws?token={TOKEN}")) as page:
        code, reason = await close_code(page)
    assert code == 1012 and "shutting down" in reason
    async with httpx.AsyncClient(timeout=5) as client:
        hook = await client.post(f"{server.http}/twilio/voice", data={"CallSid": "CAlate"})
        minted = await client.post(f"{server.http}/call-token", headers={"Authorization": f"Bearer {TOKEN}"})
    for refused in (hook, minted):  # HAProxy replays these on another server (configs/haproxy.cfg: retry-on 503)
        assert refused.status_code == 503 and "shutting down" in refused.json()["error"]
        assert refused.headers["retry-after"] == "1"


async def test_sigterm_refuses_new_calls_lets_the_live_one_finish_then_exits_0(tmp_path: Path) -> None:
    server = launch(tmp_path, ANSWER, "--tts", "espeak", "--drain-timeout", "120")
    try:
        assert await healthz(server) == (200, {"ok": True})
        async with websockets.connect(server.ws("/twilio")) as live:
            await live.send(start_msg("MZlive"))
            for message in utterance():
                await live.send(message)
            noise = asyncio.create_task(line_noise(live))
            await until_event(live, "media")  # the call is under way
            server.proc.send_signal(signal.SIGTERM)
            await until_draining(server)
            assert await healthz(server) == (503, {"ok": False, "status": "draining"})
            await refused_everywhere(server)
            noise.cancel()
            await quiet(live)  # the rest of the first answer
            for message in utterance():  # the live call goes on: the caller speaks again and is answered
                await live.send(message)
            noise = asyncio.create_task(line_noise(live))
            await until_event(live, "media")
            noise.cancel()
            assert server.proc.poll() is None  # still draining: it waits for this call
            await live.send(json.dumps({"event": "stop", "streamSid": "MZlive"}))
            assert (await close_code(live))[0] == 1000
        assert await wait_exit(server.proc) == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
    log = server.log.read_text()
    assert "Traceback" not in log, log[-3000:]
    order = [log.index("draining: 1 calls live"), log.index("ended: stream stopped"), log.index("drained: no call")]
    assert order == sorted(order)


async def test_a_call_live_at_the_drain_deadline_is_ended_and_its_run_journaled_cancelled(tmp_path: Path) -> None:
    server = launch(tmp_path, REFUND, "--tts", "espeak", "--drain-timeout", "1")
    try:
        async with websockets.connect(server.ws("/twilio")) as live:
            await live.send(start_msg("MZasked"))
            for message in said_msgs(REFUND_ASK):
                await live.send(message)
            noise = asyncio.create_task(line_noise(live))
            await until_pending_approval(server)  # the run waits for the caller's yes: it is in flight
            server.proc.send_signal(signal.SIGTERM)
            code, reason = await close_code(live, 60)
            noise.cancel()
        assert code == 1012 and reason == "server shutting down: the drain deadline (1 s) passed"
        assert await wait_exit(server.proc) == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
    journal = sqlite3.connect(server.data / "journal.db")
    ends = journal.execute("SELECT kind, payload FROM events WHERE kind IN "
                           "('run_cancelled', 'run_finished', 'run_interrupted')").fetchall()
    assert [(kind, json.loads(p)["reason"]) for kind, p in ends] == [("run_cancelled", reason)]
    assert sqlite3.connect(server.data / "orders.db").execute("SELECT count(*) FROM refunds").fetchone() == (0,)


async def test_a_second_signal_ends_the_live_calls_at_once(tmp_path: Path) -> None:
    server = launch(tmp_path, ANSWER, "--tts", "espeak", "--drain-timeout", "600")
    try:
        async with websockets.connect(server.ws(f"/ws?token={TOKEN}")) as page:
            hello = json.loads(await page.recv())
            assert hello["type"] == "hello"
            server.proc.send_signal(signal.SIGTERM)
            await until_draining(server)
            server.proc.send_signal(signal.SIGINT)
            code, reason = await close_code(page, 60)
        assert (code, reason) == (1012, "server shutting down: a second signal")
        assert await wait_exit(server.proc) == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
    assert "draining: ending 1 live calls (server shutting down: a second signal)" in server.log.read_text()


async def until_pending_approval(server: Server) -> None:
    async with server.operator() as client, asyncio.timeout(60):
        while not [c for c in (await client.get("/api/calls")).json()["calls"] if c["pending_approval"]]:
            await asyncio.sleep(0.05)


@pytest.mark.parametrize(("flag", "value"), [("--drain-timeout", "-1"), ("--drain-timeout", "soon"),
                                             ("--settle-interval", "nan"), ("--settle-interval", "inf")])
def test_a_bad_drain_or_settle_time_is_refused_with_a_reason(capsys: pytest.CaptureFixture[str], flag: str,
                                                             value: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["serve", flag, value])
    assert exit_.value.code == 2
    assert f"argument {flag}: {value!r}" in capsys.readouterr().err


def test_drain_and_settle_times_reach_the_server_config() -> None:
    args = build_parser().parse_args(["serve", "--token", "a", "--operator-token", "b", "--drain-timeout", "0",
                                      "--settle-interval", "2.5", "--forwarded-allow-ips", "10.0.0.5"])
    config, _ = server_config(args)
    assert (config.drain_timeout_s, config.settle_interval_s, config.forwarded_allow_ips) == (0.0, 2.5, "10.0.0.5")
