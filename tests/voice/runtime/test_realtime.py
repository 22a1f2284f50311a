"""The session on the wall clock, as a transport drives it: runs, STT and TTS in tasks and threads,
playout acknowledged by the transport, and a barge-in that cancels generation mid-stream."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from loop import Agent, LoopConfig, ScriptedModel, ScriptedTurn, ToolCall
from tests.helpers import assert_heard
from voice.audio import load_audio
from voice.demo.order_desk import OrderDesk, demo_config, order_policy
from voice.runtime.session import CallSession, SessionConfig
from voice.speech.stack import SpeechStack, load_stack
from voice.testing.pacer import PacedSink, drive_realtime
from voice.testing.scripted_call import FIXTURES

SYSTEM = demo_config()["system_prompt"]


@pytest.fixture(scope="module")
def stack() -> SpeechStack:
    return load_stack("tiny.en", tts="piper")


def make(stack: SpeechStack, tmp_path: Path, script: list, sink: PacedSink) -> CallSession:
    desk = OrderDesk(tmp_path / "orders.db")
    agent = Agent(model=ScriptedModel(script), tools=desk.tools(), policy=order_policy(),
                  config=LoopConfig.profile("voice"), journal_path=str(tmp_path / "journal.db"), system_prompt=SYSTEM)
    stack.vad.reset()
    return CallSession(agent, stack.vad, stack.stt, stack.tts, stack.chunker, SessionConfig(), sink, realtime=True)


def timeline(*parts: tuple[float, str], total_s: float) -> np.ndarray:
    track = np.zeros(int(total_s * 16000), np.int16)
    for at, rel in parts:
        audio = load_audio(FIXTURES / rel)
        start = int(at * 16000)
        track[start:start + len(audio)] = audio[: len(track) - start]
    return track


def test_barge_in_while_the_model_is_still_generating_cancels_the_run(stack: SpeechStack, tmp_path: Path) -> None:
    sink = PacedSink()
    script = [ToolCall("lookup_order", {"order_id": "4567"}),
              ScriptedTurn(text="Order 4567 shipped to Lisbon and should arrive soon.", delay_s=6.0),
              "Sorry, go ahead."]
    session = make(stack, tmp_path, script, sink)
    caller = timeline((0.3, "synthetic/where_is_4567.wav"), (5.0, "recordings/speech/librivox_0930.wav"),
                      total_s=11.0)
    asyncio.run(drive_realtime(session, sink, caller, speed=1.0))
    kinds = [e["kind"] for e in session.trace]
    assert kinds.index("barge_in") < kinds.index("loop.run_cancelled")  # generation was cut off, not left running
    first, second = session.turns[0], session.turns[1]
    assert first.reason == "cut short by the caller"
    assert [c["name"] for c in first.tool_calls] == ["lookup_order"]
    # the finished tool result stayed in history; the unfinished reply did not
    roles = [(m.role, m.name) for m in session.history]
    assert ("tool", "lookup_order") in roles
    assert_heard(second.user_text, ("amiable", "might", "himself"))  # "He might even have been made amiable himself."


def test_realtime_reply_is_streamed_to_the_transport_and_acknowledged(stack: SpeechStack, tmp_path: Path) -> None:
    sink = PacedSink()
    session = make(stack, tmp_path, ["Going forward is easy. Stand up and walk twelve steps."], sink)
    caller = timeline((0.3, "recordings/speech/goforward.wav"), total_s=4.0)
    asyncio.run(drive_realtime(session, sink, caller, speed=2.0))
    assert len(session.turns) == 1 and session.turns[0].outcome == "COMPLETED"
    assert sum(len(c) for c in sink.sent) > 16000  # more than a second of agent speech went out
    assert not session.playout.speaking  # every frame sent was acknowledged as played
    lat = session.turns[0].latency_ms
    assert {"endpointing", "stt", "llm_first_token", "tts_first_audio", "voice_to_voice"} <= lat.keys()


def test_barge_in_clears_the_transport_buffer_and_keeps_only_what_was_acknowledged(stack: SpeechStack,
                                                                                   tmp_path: Path) -> None:
    from voice.testing.scripted_call import Fixture, run_call

    result = asyncio.run(run_call(Fixture.load(FIXTURES / "barge_in.yaml"), stack, tmp_path, realtime=True))
    first = result.turns[0]
    assert first.interrupted and first.heard_text
    assert len(first.heard_text) < len(first.agent_text) and first.agent_text.startswith(first.heard_text[:10])
    paused = next(e for e in result.trace if e["kind"] == "agent_paused")
    assert paused["stop_latency_ms"] <= 96 and "stop_latency_wall_ms" in paused
    assert [e["kind"] for e in result.trace].count("barge_in") == 1
