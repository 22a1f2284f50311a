"""Issue 11, items 3 and 4, against a real `voiceloop serve`: SIGKILL at each step of a refund (approval pending,
during the database write, after the commit), restart on the same files, and check that the orders database,
the journal and what the caller was told agree — no refund made twice, no run left open. And a write slower than
the tool timeout: rolled back, journaled as not made, and the caller told so."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from streamdouble.scenario import Hangup, Scenario, Wait, WaitFor
from streamdouble.session import Session
from streamdouble.session import SessionConfig as CallerConfig

from loop import Journal
from tests.voice.transports.twilio.test_twilio import CLIP, say
from voice.testing.scripted_call import FIXTURES
from voice.transports.twilio.webhook import twilio_stream_key

ROOT = Path(__file__).resolve().parents[2]
OPERATOR = "kill-operator-token"
SCRIPT = """\
- tool_calls: [{name: lookup_order, arguments: {order_id: "4567"}}]
- tool_calls: [{name: issue_refund, arguments: {order_id: "4567", amount: 20}}]
- {text: "Done. I refunded twenty dollars for order 4567.", delay_s: 3.0}
"""  # the answer comes 3 s after the write, so a kill right after the commit lands before it
REFUND_ASK = FIXTURES / "synthetic/refund_4567.wav"


@dataclass
class Server:
    proc: asyncio.subprocess.Process
    port: int
    token: str
    said: list[str] = field(default_factory=list)  # every agent line the caller was played, across calls

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=f"http://127.0.0.1:{self.port}",
                                 headers={"Authorization": f"Bearer {self.token}"}, timeout=10)

    def caller(self, steps: list) -> asyncio.Task:
        cfg = CallerConfig(custom_parameters={"key": twilio_stream_key(self.token)}, response_timeout_s=30)
        session = Session(f"ws://127.0.0.1:{self.port}/twilio", scenario=Scenario("c", steps), config=cfg)
        return asyncio.create_task(session.run())


@contextlib.asynccontextmanager
async def serving(data: Path, write_delay_s: float) -> AsyncIterator[Server]:
    script = data.parent / "script.yaml"
    script.write_text(SCRIPT)
    env = {**os.environ, "VOICELOOP_TOKEN": "kill-caller-token", "VOICELOOP_OPERATOR_TOKEN": OPERATOR,
           "VOICELOOP_ORDERS_WRITE_DELAY_S": str(write_delay_s)}
    log = (data.parent / "server.log").open("a")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "voice.cli", "serve", "--port", "0", "--script", str(script), "--tts", "espeak",
        "--data-dir", str(data), cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=log, env=env)
    port = 0
    async with asyncio.timeout(120):
        while not port:
            line = (await proc.stdout.readline()).decode()
            assert line, f"the server exited: {(data.parent / 'server.log').read_text()[-2000:]}"
            port = int(m.group(1)) if (m := re.search(r"listening on http://127\.0\.0\.1:(\d+)/", line)) else port
    server = Server(proc, port, OPERATOR)  # the operator API reads what was said; the stream key derives from it
    watcher = asyncio.create_task(watch_said(server))
    try:
        yield server
    finally:
        watcher.cancel()
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            await asyncio.wait_for(proc.wait(), 30)


async def watch_said(server: Server) -> None:
    """Record what the agent said on every live call, as it is said (the kill takes the calls with it)."""
    seen: dict[str, int] = {}
    with contextlib.suppress(httpx.HTTPError):
        async with server.client() as client:
            while True:
                for call in (await client.get("/api/calls")).json()["calls"]:
                    got = (await client.get(f"/api/calls/{call['id']}/events",
                                            params={"after": seen.get(call["id"], 0)})).json()["events"]
                    server.said += [e["text"] for e in got if e["kind"] == "agent_said"]
                    seen[call["id"]] = max([seen.get(call["id"], 0)] + [e["seq"] for e in got])
                await asyncio.sleep(0.05)


def journal_has(data: Path, kind: str, name: str) -> bool:
    with contextlib.suppress(sqlite3.OperationalError):
        db = sqlite3.connect(data / "journal.db")
        query = "SELECT count(*) FROM events WHERE kind=? AND payload LIKE ?"
        return bool(db.execute(query, (kind, f'%"name":"{name}"%')).fetchone()[0])
    return False


def refunds(data: Path) -> list[tuple]:
    return sqlite3.connect(data / "orders.db").execute("SELECT order_id, amount FROM refunds").fetchall()


async def until(check: Callable[[], bool], timeout_s: float = 60) -> None:
    async with asyncio.timeout(timeout_s):
        while not check():
            await asyncio.sleep(0.02)


async def pending_approval(server: Server) -> None:
    async with server.client() as client, asyncio.timeout(60):
        while not [c for c in (await client.get("/api/calls")).json()["calls"] if c["pending_approval"]]:
            await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)  # the question is being played


def refund_outcomes(data: Path) -> list[tuple[str, bool]]:
    """Every journaled result of issue_refund: (status, executed)."""
    db = sqlite3.connect(data / "journal.db")
    rows = db.execute("SELECT payload FROM events WHERE kind='tool_finished'").fetchall()
    found = [json.loads(p) for (p,) in rows]
    return [(f["status"], f["executed"]) for f in found if f["call"]["name"] == "issue_refund"]


async def normal_call(server: Server) -> None:
    # The caller hangs up once the agent has answered: the script's next step asks for a refund (a question and,
    # on the phone, "Press 1 to confirm"), and a caller that stopped streaming while that plays would be cut off
    # by the server's 15 s media timeout, which is no failure of the restart.
    result = await server.caller([say(CLIP), WaitFor("audio", 60), WaitFor("quiet", 30), Hangup()])
    assert not result.violations and result.closed_by == "caller" and result.audio_received


def report(data: Path) -> dict:
    out = subprocess.run([sys.executable, "-m", "voice.cli", "report", str(data / "journal.db"), "--json"],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


KILL_POINTS = {
    # step: (write delay, what to wait for before the SIGKILL, refunds after, effect in the journal)
    "approval_pending": (0.0, "pending", [], "not made"),
    "during_the_write": (4.0, "tool_started", [], "not made"),
    "after_the_commit": (1.0, "committed", [("4567", 20.0)], "made"),
}


@pytest.mark.parametrize("step", list(KILL_POINTS))
async def test_kill_at_each_step_of_a_refund_then_restart(tmp_path: Path, step: str) -> None:
    delay, wait_for, expected, effect = KILL_POINTS[step]
    data = tmp_path / "data"
    async with serving(data, delay) as server:
        caller = server.caller([say(REFUND_ASK), WaitFor("audio", 60), Wait(60)])
        await pending_approval(server)
        if wait_for != "pending":
            async with server.client() as client:
                call_id = (await client.get("/api/calls")).json()["calls"][0]["id"]
                await client.post(f"/api/calls/{call_id}/approval", json={"approved": True})
            await until(lambda: journal_has(data, "tool_started", "issue_refund") if wait_for == "tool_started"
                        else bool(refunds(data)))
        server.proc.send_signal(signal.SIGKILL)
        await server.proc.wait()
        told = list(server.said)
        caller.cancel()
    assert refunds(data) == expected
    assert Journal(str(data / "journal.db")).unfinished_run_ids()  # the kill left the refund's run open

    async with serving(data, 0.0) as server:  # the restart settles it before taking calls
        assert Journal(str(data / "journal.db")).unfinished_run_ids() == []
        await normal_call(server)
    assert refunds(data) == expected  # nothing was paid twice, nothing was lost
    made = [o for o in refund_outcomes(data) if o == ("ok", True)]
    assert len(made) == len(expected)  # the journal says what the database holds
    settled = report(data)["interrupted_runs"]
    assert [[w["effect"] for w in r["writes"]] for r in settled] == [[effect]]
    assert settled[0]["reason"].startswith("server restarted: issue_refund")
    assert any("just to confirm" in line.lower() for line in told)
    if not expected:  # no refund was made, and the caller never heard one happen
        assert not any("refunded" in line.lower() for line in told)


async def test_a_refund_slower_than_the_tool_timeout_is_rolled_back_and_the_caller_told(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with serving(data, 3.5) as server:  # 3.5 s write against the voice profile's 2 s tool timeout
        caller = server.caller([say(REFUND_ASK), WaitFor("audio", 60), Wait(40)])
        await pending_approval(server)  # approved over the API: when the caller's yes lands is not what this tests
        async with server.client() as client:
            call_id = (await client.get("/api/calls")).json()["calls"][0]["id"]
            await client.post(f"/api/calls/{call_id}/approval", json={"approved": True})
        await until(lambda: bool(refund_outcomes(data)), 60)
        await until(lambda: any("nothing was changed" in s for s in server.said), 30)
        await asyncio.sleep(2.0)  # long past the write's own 3.5 s: had it been left running, it would have landed
        caller.cancel()
        told = " ".join(server.said)
    assert refunds(data) == []
    assert refund_outcomes(data) == [("timeout", False)]
    assert "refunded" not in told.lower()
    assert "I'm sorry, I couldn't refund $20 on order 4567: it didn't go through, so nothing was changed." in told
