"""The browser caller end to end: Debian's headless Chromium loads the page from `voiceloop serve`, its fake
microphone plays a real recording, and the page talks to the agent over the WebSocket (audio worklet,
jitter buffer, playout acks, barge-in flush). Also the wire protocol's validation, with a plain client."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from tests.cdp import CHROMIUM, Browser
from tests.page_checks import watch
from tests.paths import ROOT
from voice.agents.source import load_agent
from voice.audio import load_audio, resample, write_wav
from voice.hosting.registry import CallContext, CallFactory, CallRegistry, ServerConfig, model_source
from voice.server.app import bound_port, start_server
from voice.speech.stack import SpeechStack, load_stack
from voice.testing.scripted_call import FIXTURES

TOKEN = "e2e-token-123"
OPERATOR_TOKEN = "e2e-operator-456"
OUT = ROOT / "out"
SHORT_REPLY = "Going forward is easy. Stand up, then walk twelve steps toward the door."
LONG_REPLY = ("Going forward ten meters is easy. First, stand up straight and look ahead. Then walk about twelve "
              "steps, counting each one out loud as you go, and stop when you reach the door. After that, turn left "
              "and keep walking until you see the big window.")
needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium: apt-get install chromium")


@dataclass
class Served:
    ctx: CallContext
    port: int

    def call(self) -> Any:
        calls = list(self.ctx.registry.calls.values()) + list(self.ctx.registry.ended)
        assert len(calls) == 1, calls
        return calls[0]


@pytest.fixture(scope="module")
def stack() -> SpeechStack:
    return load_stack("tiny.en", tts="piper")


@pytest.fixture
def serve(stack: SpeechStack, tmp_path: Path) -> Iterator[Callable[[list[Any]], Served]]:
    """Start `voiceloop serve`'s server in a background event loop with a scripted model."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    servers = []

    def start(replies: list[str | dict[str, Any]]) -> Served:
        script = tmp_path / "script.yaml"
        script.write_text(yaml.safe_dump([{"text": r} if isinstance(r, str) else r for r in replies]))
        factory = CallFactory(stack, load_agent().maker(tmp_path, model_source(str(script))), tmp_path)
        ctx = CallContext(factory, CallRegistry(4), ServerConfig(port=0, token=TOKEN, operator_token=OPERATOR_TOKEN))
        server = asyncio.run_coroutine_threadsafe(start_server(ctx), loop).result(10)
        servers.append(server)
        return Served(ctx, bound_port(server))

    yield start
    for server in servers:
        server.close()
        asyncio.run_coroutine_threadsafe(server.wait_closed(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


def mic_wav(path: Path, parts: list[tuple[float, str]], total_s: float) -> Path:
    """The fake microphone: recordings placed on a silent track, as 48 kHz 16-bit PCM for Chromium."""
    track = np.zeros(int(total_s * 16000), np.int16)
    for at, rel in parts:
        audio = load_audio(FIXTURES / rel)
        start = int(at * 16000)
        track[start:start + len(audio)] = audio[: len(track) - start]
    write_wav(path, resample(track, 16000, 48000), 48000)
    return path


def start_page(tmp_path: Path, wav: Path, port: int) -> Browser:
    """Chromium with the fake microphone on the page, Start clicked (the call may not have started yet)."""
    browser = Browser(tmp_path / "chromium", [f"--use-file-for-fake-audio-capture={wav}%noloop"])
    browser.open_page(f"http://127.0.0.1:{port}/?token={TOKEN}")
    browser.wait_for("document.readyState === 'complete' && !!window.voiceloop", timeout=20)
    watch(browser)  # what the page shows over the call (tests.page_checks.seen)
    browser.evaluate("document.getElementById('start').click()", user_gesture=True)
    return browser


def call_page(tmp_path: Path, wav: Path, port: int) -> Browser:
    browser = start_page(tmp_path, wav, port)
    browser.wait_for("window.voiceloop.callId", timeout=20)
    return browser


def stats(browser: Browser) -> dict[str, Any]:
    return browser.evaluate("JSON.parse(JSON.stringify(window.voiceloop.stats))")


def kinds(call: Any) -> list[str]:
    return [e["kind"] for e in list(call.events)]


@needs_chromium
def test_page_transcribes_the_caller_and_plays_the_reply(serve: Callable[..., Served], tmp_path: Path) -> None:
    served = serve([SHORT_REPLY])
    wav = mic_wav(tmp_path / "mic.wav", [(1.0, "recordings/speech/goforward.wav")], total_s=12.0)
    with call_page(tmp_path, wav, served.port) as page:
        # the reply has been received and played out to the end (the page's playout cursor caught up)
        page.wait_for("window.voiceloop.kinds.includes('agent_said') && window.voiceloop.stats.received > 16000"
                      " && window.voiceloop.stats.played >= window.voiceloop.stats.received", timeout=40)
        page.wait_for("document.querySelector('#latency tr td:nth-child(6)')?.textContent !== '–'", timeout=10)
        heard, said = page.evaluate("[...document.querySelectorAll('#transcript .caller .text')]"
                                    ".map(e => e.textContent)"), page.evaluate(
            "[...document.querySelectorAll('#transcript .agent .text')].map(e => e.textContent)")
        s = stats(page)
        # the page links the call's live timeline (the operator API's, with the page's token)
        timeline = page.evaluate("(async () => { const a = document.getElementById('timeline-link');"
                                 " if (a.hidden) return ''; return (await fetch(a.href)).text(); })()")
        page.evaluate("document.getElementById('hangup').click()")
        page.wait_for("document.getElementById('status').textContent.includes('hangup')", timeout=10)
    assert 'class="caller-speech"' in timeline and 'class="agent-audio"' in timeline
    assert SHORT_REPLY.split()[0] in timeline
    call = served.call()
    session = call.session
    ended = [e for e in call.events if e["kind"] == "caller_turn_ended"]
    assert "forward" in ended[0]["text"].lower()  # the server transcribed the page's microphone
    assert len(heard) == 1 and "forward" in heard[0].lower()  # ...and the page showed it
    assert said == [SHORT_REPLY]
    assert s["played"] > 16000  # more than a second of the agent's voice came out of the page
    assert s["clears"] == 0 and s["micFrames"] > 400
    assert not session.playout.speaking  # every sample sent was acknowledged as played
    assert session.turns[0].outcome == "COMPLETED" and "voice_to_voice" in session.turns[0].latency_ms
    closed = next(e for e in call.events if e["kind"] == "transport.closed")
    assert closed["reason"] == "hangup" and closed["played_s"] > 1.0


@needs_chromium
def test_barge_in_flushes_the_page_buffer(serve: Callable[..., Served], tmp_path: Path) -> None:
    served = serve([LONG_REPLY, "Sorry, go on."])
    wav = mic_wav(tmp_path / "mic.wav", [(1.0, "recordings/speech/goforward.wav"),
                                         (8.0, "recordings/speech/librivox_0930.wav")], total_s=18.0)
    with call_page(tmp_path, wav, served.port) as page:
        page.wait_for("window.voiceloop.kinds.includes('barge_in')", timeout=40)
        page.wait_for("window.voiceloop.kinds.filter(k => k === 'caller_turn_ended').length >= 2"
                      " && window.voiceloop.kinds.filter(k => k === 'agent_said').length > 8", timeout=30)
        page.wait_for("window.voiceloop.stats.played + window.voiceloop.stats.flushed"
                      " >= window.voiceloop.stats.received - 1024", timeout=20)
        time.sleep(0.5)
        OUT.mkdir(exist_ok=True)
        page.screenshot(OUT / "browser.png")
        s = stats(page)
        struck = page.evaluate("document.querySelectorAll('#transcript .agent.interrupted').length")
    call = served.call()
    trace = kinds(call)
    assert "barge_in" in trace and trace.index("agent_paused") < trace.index("barge_in")
    barge = next(e for e in call.events if e["kind"] == "barge_in")
    assert barge["heard"].startswith("Going forward")
    assert s["clears"] >= 1 and s["flushed"] > 0  # the page got `clear` and dropped its buffered audio
    first, second = call.session.turns[0], call.session.turns[1]
    assert first.interrupted and first.heard_text == barge["heard"]
    assert "amiable" in second.user_text.lower() or "might" in second.user_text.lower()
    assert struck == 1


@needs_chromium
def test_a_draining_or_full_server_is_tried_again_until_the_call_starts(serve: Callable[..., Served],
                                                                        tmp_path: Path) -> None:
    """Behind a load balancer, the page's next try reaches another server; here one server drains, then is full,
    then has room: the page mints again and reconnects by itself, and the call starts."""
    served = serve([SHORT_REPLY])
    registry = served.ctx.registry
    registry.draining = True  # POST /call-token: 503
    wav = mic_wav(tmp_path / "mic.wav", [(6.0, "recordings/speech/goforward.wav")], total_s=14.0)
    with start_page(tmp_path, wav, served.port) as page:
        page.wait_for("window.voiceloop.retries >= 1", timeout=10)
        draining_status = page.evaluate("document.getElementById('status').textContent")
        registry.max_calls, registry.draining = 0, False  # now the socket is refused as full: 1013
        page.wait_for("window.voiceloop.retries >= 2", timeout=10)
        full_status = page.evaluate("document.getElementById('status').textContent")
        registry.max_calls = 4
        page.wait_for("window.voiceloop.callId", timeout=15)
        page.wait_for("window.voiceloop.kinds.includes('agent_said')", timeout=40)
        retries = page.evaluate("window.voiceloop.retries")
    assert "shutting down" in draining_status and "trying again" in draining_status
    assert "1013" in full_status and "trying again" in full_status
    assert 2 <= retries <= 4
    assert "forward" in served.call().session.turns[0].user_text.lower()  # the call that started is a real one


@needs_chromium
def test_a_page_that_hangs_up_while_waiting_to_try_again_stops_trying(serve: Callable[..., Served],
                                                                     tmp_path: Path) -> None:
    served = serve([SHORT_REPLY])
    served.ctx.registry.draining = True
    wav = mic_wav(tmp_path / "mic.wav", [], total_s=4.0)
    with start_page(tmp_path, wav, served.port) as page:
        page.wait_for("window.voiceloop.retries >= 1", timeout=10)
        page.evaluate("document.getElementById('hangup').click()")
        served.ctx.registry.draining = False
        time.sleep(2.0)  # past the next try's time
        status = page.evaluate("document.getElementById('status').textContent")
        start_enabled = page.evaluate("!document.getElementById('start').disabled")
        retries = page.evaluate("window.voiceloop.retries")
    assert status == "call cancelled" and start_enabled and retries == 1
    assert not served.ctx.registry.calls and not served.ctx.registry.ended  # no call was opened after the hang-up


# ---- the wire protocol with a plain WebSocket client (no browser) --------------------------------


async def _talk(port: int, steps: Callable[[Any], Any]) -> Any:
    from websockets.asyncio.client import connect

    async with connect(f"ws://127.0.0.1:{port}/ws?token={TOKEN}") as ws:
        hello = json.loads(await ws.recv())
        assert hello["type"] == "hello" and hello["audio"]["sample_rate"] == 16000
        return await steps(ws)


async def _until(ws: Any, kind: str) -> dict[str, Any]:
    while True:
        message = await asyncio.wait_for(ws.recv(), 10)
        if isinstance(message, str) and (msg := json.loads(message))["type"] == kind:
            return msg


def test_bad_messages_get_errors_and_bad_audio_closes(serve: Callable[..., Served]) -> None:
    served = serve([SHORT_REPLY])

    async def bad_json(ws: Any) -> list[str]:
        errors = []
        for text in ("{not json", json.dumps({"type": "dance"}), json.dumps({"type": "played", "samples": "x"}),
                     json.dumps({"type": "approval", "approved": "yes"}), json.dumps([1, 2])):
            await ws.send(text)
            errors.append((await _until(ws, "error"))["error"])
        await ws.send(json.dumps({"type": "played", "samples": 512, "epoch": 7}))  # stale epoch: ignored
        await ws.send(np.zeros(320, np.int16).tobytes())  # a good frame still works
        await ws.send(json.dumps({"type": "hangup"}))
        bye = await _until(ws, "bye")
        await ws.wait_closed()
        return [*errors, bye["reason"], ws.close_code]

    result = asyncio.run(_talk(served.port, bad_json))
    assert result[:5] == ["malformed JSON", "unknown message type 'dance'",
                          "played needs a non-negative integer 'samples' and integer 'epoch'",
                          "approval needs a boolean 'approved'", "unknown message type None"]
    assert result[5:] == ["hangup", 1000]

    async def odd_frame(ws: Any) -> tuple[int | None, str | None]:
        await ws.send(b"\x00\x01\x02")
        await ws.wait_closed()
        return ws.close_code, ws.close_reason

    assert asyncio.run(_talk(served.port, odd_frame)) == (1003, "audio must be 16-bit PCM (an even number of bytes)")

    async def big_frame(ws: Any) -> int | None:
        await ws.send(np.zeros(9000, np.int16).tobytes())
        await ws.wait_closed()
        return ws.close_code

    assert asyncio.run(_talk(served.port, big_frame)) == 1009
    deadline = time.monotonic() + 5  # the server closes the call just after the socket
    while served.ctx.registry.live() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert served.ctx.registry.live() == []  # every call was closed and unregistered
    assert [c.end_reason for c in served.ctx.registry.ended] == [
        "hangup", "audio must be 16-bit PCM (an even number of bytes)", "audio frame of 18000 bytes; at most 16000"]


class FakeSocket:
    def __init__(self) -> None:
        self.sent: list[str | bytes] = []

    async def send(self, data: str | bytes) -> None:
        self.sent.append(data)


def test_outbox_paces_audio_by_acks_and_clear_goes_first() -> None:
    from voice.hosting.config import ServerConfig
    from voice.transports import Drop
    from voice.transports.browser.endpoint import BrowserSink
    from voice.transports.outbox import AckPacing, Outbox

    async def scenario() -> None:
        ws = FakeSocket()
        pacing = AckPacing(lead_samples=1024, stall_s=0.3)  # two 32 ms frames in flight at most
        outbox = Outbox(ws.send, ServerConfig(), pacing)
        sink = BrowserSink(outbox, pacing)
        task = asyncio.create_task(outbox.run())
        await asyncio.sleep(0.5)  # a long quiet spell is not a stall
        for _ in range(5):
            sink.send(np.ones(512, np.int16))
        await asyncio.sleep(0.05)
        assert [type(m) for m in ws.sent] == [bytes, bytes]  # paced: only the lead went out
        assert outbox.ack(512, epoch=0) == 512
        await asyncio.sleep(0.05)
        assert len(ws.sent) == 3
        assert outbox.ack(512, epoch=5) == 0  # an ack from another epoch does not move the cursor
        sink.clear()  # barge-in: the queued frames are dropped and the page told first
        await asyncio.sleep(0.05)
        assert json.loads(ws.sent[3]) == {"type": "clear", "epoch": 1} and len(ws.sent) == 4
        assert outbox.ack(512, epoch=0) == 0  # late acks for flushed audio are ignored
        for _ in range(3):
            sink.send(np.ones(512, np.int16))
        with pytest.raises(Drop, match="stopped acknowledging"):  # a page that stops playing
            await asyncio.wait_for(task, 3)

    asyncio.run(scenario())
