"""Issue 13, parts 5 and 6: two real `voiceloop serve` processes (standing in for two machines) behind a real
HAProxy running the shipped configs/haproxy.cfg. The page, the browser's call token and socket, Twilio's signed
webhook and its Media Streams socket all go through the balancer and reach both servers; a server sent SIGTERM
is taken out by the health check while its live call finishes, and new calls go to the other one."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import httpx
import pytest
import websockets

from tests.abuse.serving import TOKEN
from tests.fleet import Fleet, PhoneCall, fleet_of, live_calls, phone_call, wait_exit
from tests.voice.server.test_drain import ANSWER

pytestmark = pytest.mark.skipif(shutil.which("haproxy") is None, reason="haproxy is not installed (./run installs it)")


async def browser_call(fleet: Fleet, stick_to: str = "") -> str:
    """The page's own steps through the balancer, as a new browser (or one whose cookie sticks to the server
    `stick_to`): load the page, mint a call token, open the socket with it, carrying the balancer's cookie as a
    browser does. Returns the call id from the server's hello."""
    jar = {"voiceloop_server": stick_to} if stick_to else {}
    async with httpx.AsyncClient(base_url=fleet.http, timeout=10) as page:
        got = await page.get("/", headers=cookie_header(jar))
        assert got.status_code == 200 and "text/html" in got.headers["content-type"]
        remember(jar, got)
        minted = await page.post("/call-token", headers={"Authorization": f"Bearer {TOKEN}", **cookie_header(jar)})
        assert minted.status_code == 200, minted.text
        remember(jar, minted)
    url = fleet.ws(f"/ws?call_token={minted.json()['call_token']}")
    async with websockets.connect(url, additional_headers=cookie_header(jar)) as ws:
        hello = json.loads(await ws.recv())
        assert hello["type"] == "hello", hello  # the token was minted by the server this socket reached
        await ws.send(json.dumps({"type": "hangup"}))
        return str(hello["call_id"])


def remember(jar: dict[str, str], response: httpx.Response) -> None:
    for header in response.headers.get_list("set-cookie"):
        name, _, value = header.split(";", 1)[0].partition("=")
        jar[name.strip()] = value.strip()


def cookie_header(jar: dict[str, str]) -> dict[str, str]:
    return {"Cookie": "; ".join(f"{k}={v}" for k, v in jar.items())} if jar else {}


async def test_haproxy_spreads_every_way_in_and_a_drained_server_finishes_its_call(tmp_path: Path) -> None:
    with fleet_of(tmp_path, ANSWER, "--drain-timeout", "120") as fleet:
        for name in ("s1", "s2"):
            await fleet.until_state(name, "UP")
        for _ in range(4):  # without the balancer's cookie, about half of these would reach the wrong server
            await browser_call(fleet)
        first = await phone_call(fleet, "MZfirst")
        second = await phone_call(fleet, "MZsecond")  # leastconn: the server without a call takes it
        where = [len(await live_calls(s)) for s in fleet.servers]
        assert where == [1, 1]
        await second.hang_up()
        await drain_one(fleet, first)


async def drain_one(fleet: Fleet, live: PhoneCall) -> None:
    """SIGTERM the server carrying `live`: the webhook still answers through the balancer, HAProxy's health check
    takes the server out, new calls reach the other one, and the live call goes on to its end."""
    counts = [len(await live_calls(s)) for s in fleet.servers]
    assert sorted(counts) == [0, 1]
    draining, other = fleet.servers[counts.index(1)], fleet.servers[counts.index(0)]
    name = f"s{fleet.servers.index(draining) + 1}"
    draining.proc.send_signal(signal.SIGTERM)
    for n in range(4):  # sent to the draining server by its cookie: until the health check notices, its 503 is
        assert (await fleet.webhook(f"CAdrain{n}", stick_to=name)).status_code == 200  # retried on the other
    await browser_call(fleet, stick_to=name)  # the page too: its token and socket move to the other server
    await fleet.until_state(name, "DOWN")
    assert draining.proc.poll() is None  # taken out of rotation, still serving its call
    later = [await phone_call(fleet, f"MZlater{n}") for n in range(2)]
    assert len(await live_calls(other)) == 2 and len(await live_calls(draining)) == 1
    for call in later:
        await call.hang_up()
    await live.say_again()  # the call on the draining server goes on: spoken to again, it answers
    await live.hang_up()
    assert await wait_exit(draining.proc) == 0
    log = draining.log.read_text()
    order = [log.index("draining: 1 calls live"), log.index("ended: stream stopped"), log.index("drained: no call")]
    assert order == sorted(order)
