"""Phone calls over Twilio Media Streams against an in-process `voiceloop serve`: streamdouble (a Twilio
caller simulator) places real-time calls with 8 kHz recordings; a bare websockets client sends bad input."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import websockets
from streamdouble import audio as sd_audio
from streamdouble.chaos import Impairments
from streamdouble.scenario import Say, Scenario, Step, Wait, WaitFor
from streamdouble.session import Session, SessionResult
from streamdouble.session import SessionConfig as CallerConfig

from loop import ScriptedTurn, ToolCall
from tests.helpers import assert_heard
from voice.agents.source import load_agent
from voice.audio import load_audio, resample, ulaw_decode, ulaw_encode
from voice.hosting.registry import Call, CallContext, CallFactory, CallRegistry, LoopingScript, ServerConfig
from voice.server.app import bound_port, start_server
from voice.speech.clause_memo import memo_for
from voice.speech.stack import SpeechStack, load_stack
from voice.testing.scripted_call import FIXTURES
from voice.transports.twilio.codec import HalfbandStream
from voice.transports.twilio.webhook import twilio_stream_key

TOKEN = "test-token-not-a-secret"
OPERATOR = "test-operator-token-not-a-secret"
CLIP = FIXTURES / "recordings/telephone/osr34_002.wav"  # "The long journey home took a year."
OTHER = FIXTURES / "recordings/telephone/osr34_004.wav"  # "A pink shell was found on the sandy beach."
REPLY = "That sounds like a long trip. How can I help with your order?"
LONG = ("Going forward is easy. First, stand up straight and look ahead. Then walk about twelve steps, counting "
        "each one out loud as you go, and stop when you reach the door. After that, turn left and keep going.")


@pytest.fixture(scope="module")
def stack() -> SpeechStack:
    return load_stack("tiny.en", tts="piper")


@dataclass
class Served:
    ctx: CallContext
    port: int
    desk: Any

    @property
    def twilio_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/twilio"

    async def idle(self, timeout: float = 15.0) -> None:
        async with asyncio.timeout(timeout):
            while self.ctx.registry.live():
                await asyncio.sleep(0.05)

    def ended(self) -> list[Call]:
        return list(self.ctx.registry.ended)

    def runs(self, call: Call) -> dict[str, str]:
        return self.ctx.factory.runs(call.run_ids)


@contextlib.asynccontextmanager
async def running(stack: SpeechStack, data_dir: Path, script: list[Any], **config: Any) -> AsyncIterator[Served]:
    cfg = ServerConfig(port=0, token=TOKEN, operator_token=OPERATOR, **config)
    turns = [t if isinstance(t, ScriptedTurn) else ScriptedTurn(text=t) for t in script]
    make_agent = load_agent().maker(data_dir, lambda call_id: LoopingScript(turns, call_id))
    ctx = CallContext(CallFactory(stack, make_agent, data_dir), CallRegistry(cfg.max_calls), cfg)
    server = await start_server(ctx)
    try:
        yield Served(ctx, bound_port(server), make_agent.desk)
    finally:
        server.close()
        await server.wait_closed()


def say(path: Path) -> Say:
    return Say(path, sd_audio.wav_to_ulaw_frames(path))


async def phone(served: Served, steps: list[Step], **config: Any) -> SessionResult:
    cfg = CallerConfig(custom_parameters={"key": twilio_stream_key(OPERATOR)}, response_timeout_s=20, **config)
    return await Session(served.twilio_url, scenario=Scenario("test", steps), config=cfg).run()


def kinds(call: Call) -> list[str]:
    return [e["kind"] for e in call.events]


def heard_by_caller_s(result: SessionResult) -> float:
    return len(ulaw_decode(result.audio_received)) / 8000


# ---- a bare Twilio-protocol client, for what streamdouble will not send -----------------------------------


def start_msg(key: str | None = None, fmt: dict[str, Any] | None = None) -> str:
    start = {"streamSid": "MZtest", "callSid": "CAtest", "tracks": ["inbound"],
             "mediaFormat": fmt or {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
             "customParameters": {"key": key if key is not None else twilio_stream_key(OPERATOR)}}
    return json.dumps({"event": "start", "sequenceNumber": "1", "start": start, "streamSid": "MZtest"})


def media_msgs(pcm8k: np.ndarray, first_ts: int = 0) -> list[str]:
    codes = ulaw_encode(pcm8k).tobytes()
    return [json.dumps({"event": "media", "streamSid": "MZtest",
                        "media": {"track": "inbound", "timestamp": str(first_ts + i // 8),
                                  "payload": base64.b64encode(codes[i:i + 160]).decode()}})
            for i in range(0, len(codes), 160)]


def utterance() -> list[str]:
    """The clip and 1.5 s of silence, as 20 ms media messages (sent as fast as the socket takes them)."""
    pcm = resample(load_audio(CLIP), 16000, 8000)
    return media_msgs(np.concatenate([pcm, np.zeros(12000, np.int16)]))


async def close_code(ws: Any, timeout: float = 20.0) -> tuple[int | None, str]:
    with contextlib.suppress(websockets.ConnectionClosed, TimeoutError):
        async with asyncio.timeout(timeout):
            while True:
                await ws.recv()
    return ws.close_code, ws.close_reason or ""


async def until_media(ws: Any, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while json.loads(await ws.recv()).get("event") != "media":
            pass


async def until_tool_ran(served: Served, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not any(c.session.turns and c.session.turns[0].tool_calls
                      for c in served.ctx.registry.live()):
            await asyncio.sleep(0.01)


# ---- streamdouble calls ------------------------------------------------------------------------------------


async def test_phone_call_end_to_end(stack: SpeechStack, tmp_path: Path) -> None:
    async with running(stack, tmp_path, [REPLY]) as served:
        result = await phone(served, [say(CLIP), WaitFor("audio", 20), WaitFor("quiet", 15)])
        await served.idle()
        call = served.ended()[-1]
    assert not result.violations and result.closed_by is None
    assert heard_by_caller_s(result) > 1.0  # the reply came back as μ-law media
    assert result.marks_echoed and len(result.marks_echoed) == len(result.marks_received)
    said = next(e for e in call.events if e["kind"] == "caller_turn_ended")
    assert_heard(said["text"], "journey", "home")
    assert call.session.turns[0].agent_text == REPLY
    assert not call.session.playout.speaking  # every mark came back: the caller heard the whole reply
    assert list(served.runs(call).values()) == ["run_finished"]
    assert kinds(call)[-2:] == ["transport.closed", "call_ended"]


async def test_barge_in_sends_clear(stack: SpeechStack, tmp_path: Path) -> None:
    async with running(stack, tmp_path, [LONG, "Sorry, go ahead."]) as served:
        steps = [say(CLIP), WaitFor("audio", 20), Wait(1.5), say(OTHER), Wait(1.0), WaitFor("quiet", 15)]
        result = await phone(served, steps)
        await served.idle()
        call = served.ended()[-1]
    assert result.clears_received >= 1
    assert "barge_in" in kinds(call)
    first = call.session.turns[0]
    assert first.interrupted and first.heard_text and len(first.heard_text) < len(LONG)
    later = " ".join(t.user_text for t in call.session.turns[1:])  # "A pink shell was found on the sandy beach."
    assert_heard(later, ("shell", "beach", "pink", "sandy"))
    assert set(served.runs(call).values()) <= {"run_finished", "run_cancelled"}


async def test_packet_loss_and_jitter_do_not_break_the_call(stack: SpeechStack, tmp_path: Path) -> None:
    async with running(stack, tmp_path, [REPLY]) as served:
        bad_network = Impairments(loss=0.05, jitter_ms=40, latency_ms=20)
        result = await phone(served, [say(CLIP), WaitFor("audio", 20), WaitFor("quiet", 15)],
                             impairments=bad_network, chaos_seed=3)
        await served.idle()
        call = served.ended()[-1]
    assert result.frames_dropped > 0 and heard_by_caller_s(result) > 1.0
    assert "journey" in call.session.turns[0].user_text.lower()
    closed = next(e for e in call.events if e["kind"] == "transport.closed")
    assert closed["counts"]["gap_filled_ms"] >= 20 * result.frames_dropped // 2  # lost packets became silence


# ---- bad input -------------------------------------------------------------------------------------------


async def test_bad_input_gets_clear_close_codes_and_the_server_stays_up(stack: SpeechStack, tmp_path: Path) -> None:
    mulaw = {"encoding": "audio/x-l16", "sampleRate": 16000, "channels": 1}
    cases: list[tuple[str, list[str | bytes], int]] = [
        ("malformed JSON", [start_msg(), "{not json"], 1007),
        ("not an event", [start_msg(), "[1, 2]"], 1007),
        ("binary frame", [start_msg(), b"\x00\x01"], 1003),
        ("media before start", media_msgs(np.zeros(160, np.int16)), 1008),
        ("payload not base64", [start_msg(), json.dumps({"event": "media", "media": {"payload": "%%%"}})], 1007),
        ("payload not a string", [start_msg(), json.dumps({"event": "media", "media": {"payload": 5}})], 1007),
        ("unsupported format", [start_msg(fmt=mulaw)], 1003),
        ("wrong stream key", [start_msg(key="guess")], 1008),
        ("second start", [start_msg(), start_msg()], 1008),
        ("oversized frame", [start_msg(), "x" * 70_000], 1009),
        ("message flood", [start_msg()] + [json.dumps({"event": "mark", "mark": {"name": "x"}})] * 1000, 1008),
    ]
    async with running(stack, tmp_path, [REPLY]) as served:
        for name, messages, expected in cases:
            async with websockets.connect(served.twilio_url) as ws:
                for message in messages:
                    with contextlib.suppress(websockets.ConnectionClosed):
                        await ws.send(message)
                code, reason = await close_code(ws)
            assert code == expected, f"{name}: closed {code} {reason!r}, expected {expected}"
        await served.idle()
        started = [c for c in served.ended()]
        assert len(started) == 8  # every case after a valid start opened a call, and it was closed and noted
        for call in started:
            assert kinds(call)[-2:] == ["transport.closed", "call_ended"]
            assert call.ended_at is not None
        # unknown events are ignored and counted; the call goes on and ends normally on stop
        async with websockets.connect(served.twilio_url) as ws:
            await ws.send(start_msg())
            await ws.send(json.dumps({"event": "telepathy", "streamSid": "MZtest"}))
            await ws.send(json.dumps({"event": "dtmf", "dtmf": {"digit": "5"}}))
            await ws.send(json.dumps({"event": "stop", "streamSid": "MZtest"}))
            assert (await close_code(ws))[0] == 1000
        await served.idle()
        assert {"transport.unknown_event", "transport.dtmf"} <= set(kinds(served.ended()[-1]))
        await good_call(served)


async def good_call(served: Served) -> None:
    """A follow-up call that speaks and gets reply audio: the server is still fine."""
    async with websockets.connect(served.twilio_url) as ws:
        await ws.send(start_msg())
        for message in utterance():
            await ws.send(message)
        await until_media(ws)
        await ws.send(json.dumps({"event": "stop", "streamSid": "MZtest"}))
        assert (await close_code(ws))[0] == 1000


async def test_protocol_error_mid_reply_still_leaves_a_complete_journal(stack: SpeechStack, tmp_path: Path) -> None:
    script = [ScriptedTurn(text="Let me check that order for you.", tool_calls=[ToolCall("lookup_order",
                                                                                          {"order_id": "4567"})]),
              ScriptedTurn(text="It shipped.", delay_s=5.0)]
    async with running(stack, tmp_path, script) as served:
        for ending in ("garbage", "abort"):
            async with websockets.connect(served.twilio_url) as ws:
                await ws.send(start_msg())
                for message in utterance():
                    await ws.send(message)
                await until_media(ws)  # the agent is talking and the run is waiting on the model
                await until_tool_ran(served)  # its first words may come from the voice's memo before the tool ran
                if ending == "garbage":
                    await ws.send("\x00garbage")
                    assert (await close_code(ws))[0] == 1007
                else:
                    ws.transport.abort()  # the caller vanishes: no stop, no close frame
            await served.idle()
            call = served.ended()[-1]
            assert list(served.runs(call).values()) == ["run_cancelled"], ending
            assert call.session.turns[0].tool_calls[0]["name"] == "lookup_order"
            assert kinds(call)[-1] == "call_ended"


async def test_a_client_that_stops_reading_is_dropped_without_blocking_the_session(
        stack: SpeechStack, tmp_path: Path) -> None:
    async with running(stack, tmp_path, [LONG * 2], max_outbox=2000, send_timeout_s=1.0) as served:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", served.port))
        ws = await websockets.connect(served.twilio_url, sock=sock, max_queue=1)
        await ws.send(start_msg())
        for message in utterance():
            await ws.send(message)
        async with asyncio.timeout(60):  # never reading: the server must give up on us, not wait forever
            while not served.ended():
                await asyncio.sleep(0.1)
        call = served.ended()[-1]
        closed = next(e for e in call.events if e["kind"] == "transport.closed")
        assert (closed["code"], closed["reason"]) == (1008, "client is not reading")
        said = [e for e in call.events if e["kind"] == "agent_said"]
        assert len(said) >= 4  # the session kept synthesising while the socket was stuck
        assert set(served.runs(call).values()) <= {"run_finished", "run_cancelled"}
        ws.transport.abort()
        await good_call(served)


def test_halfband_resampling_is_seamless_across_chunks() -> None:
    tone = (np.sin(2 * np.pi * 440 * np.arange(16000) / 16000) * 8000).astype(np.int16)
    down = HalfbandStream(up=False)
    chunked = np.concatenate([down(tone[i:i + 512]) for i in range(0, len(tone), 512)])
    whole = HalfbandStream(up=False)(tone)
    assert len(chunked) == 8000 and np.array_equal(chunked, whole)
    up = HalfbandStream(up=True)
    back = np.concatenate([up(chunked[i:i + 160]) for i in range(0, len(chunked), 160)])
    delay = 62  # 31 taps at 16 kHz, twice
    err = back[delay:].astype(float) - tone[:-delay].astype(float)
    assert np.sqrt(np.mean(err[200:] ** 2)) < 0.02 * 8000  # a 440 Hz tone survives the round trip


async def test_every_call_hears_the_greeting_but_the_server_synthesises_it_once(stack: SpeechStack,
                                                                               tmp_path: Path) -> None:
    async with running(stack, tmp_path, ["Fine."]) as served:
        served.ctx.factory.session_config = served.ctx.factory.session_config.model_copy(
            update={"greeting": "Hello, and thank you for calling."})
        for _ in range(3):  # max_queue=None: like Twilio, the client reads on while it closes (else its full
            # queue stops its reading, and the close waits out its 10 s timeout behind the greeting's audio)
            async with websockets.connect(served.twilio_url, max_queue=None) as ws:
                await ws.send(json.dumps({"event": "connected", "protocol": "Call", "version": "1.0.0"}))
                await ws.send(start_msg())
                await ws.send(media_msgs(np.zeros(160, np.int16))[0])
                async with asyncio.timeout(20):
                    while json.loads(await ws.recv()).get("event") != "media":
                        pass  # the greeting's first audio reached this caller
        await served.idle()
        work = memo_for(served.ctx.factory.tts).work
    assert work["reused"] >= 2  # the second and third calls got the first call's greeting audio
    assert all("agent_said" in kinds(call) for call in served.ended())
