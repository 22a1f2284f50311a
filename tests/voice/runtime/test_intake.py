"""Taking in caller audio never waits for speech-to-text, the model or speculation (wall clock).

Caller frames are fed on a real-time schedule while Whisper takes 0.4 s and the model 2 s per call. A session
that awaited either while taking audio in would fall seconds behind; this one must take every frame in at once,
still stop its playout within one VAD window, and measure voice-to-voice from the scheduled end of speech."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import numpy as np

from loop import Agent, LoopConfig, ModelRequest, ModelResponse, TextDelta, Usage
from loop.types import Pricing
from tests.fakes import LoudnessVAD, ScriptedSTT, ToneTTS, WordChunker, track
from voice.audio import FRAME_S
from voice.call.playout import FRAME
from voice.demo.order_desk import OrderDesk, order_policy
from voice.runtime.session import CallSession, SessionConfig
from voice.testing.pacer import PacedSink


class SlowSTT(ScriptedSTT):
    def transcribe(self, audio: np.ndarray) -> str:
        time.sleep(0.4)
        return super().transcribe(audio)


ANSWER = "Your order shipped yesterday and it should reach you in Lisbon on Tuesday morning, before noon."


class SlowModel:
    """Two seconds to think, every call (speculation included), then a short answer."""

    name, pricing = "slow", Pricing()
    grounds_output = True  # its words are the test's: what is measured is the intake, not the answer

    def __init__(self) -> None:
        self.calls = 0

    def count_tokens(self, text: str) -> int:
        return len(text) // 4 + 1

    async def stream(self, request: ModelRequest):
        self.calls += 1
        await asyncio.sleep(2.0)
        yield TextDelta(ANSWER)
        yield ModelResponse(text=ANSWER, usage=Usage(10, 20))


async def feed_on_schedule(session: CallSession, sink: PacedSink,
                           caller: np.ndarray) -> tuple[list[float], list[float]]:
    """Frame i is due at start + i * 32 ms. Returns, per frame, how long `hear` took to take it in, and how late
    it was taken in against its schedule (which also counts a busy machine not running this process)."""
    await session.start()
    took, late, start = [], [], time.perf_counter()
    for i in range(len(caller) // FRAME):
        due = start + i * FRAME_S
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        sink.play_tick(session)
        called = time.perf_counter()
        await session.hear(caller[i * FRAME:(i + 1) * FRAME])
        took.append(time.perf_counter() - called)
        late.append(time.perf_counter() - due)
    await session.close()
    return took, late


def test_caller_audio_is_taken_in_on_time_while_stt_and_the_model_are_slow(tmp_path: Path) -> None:
    model = SlowModel()
    desk = OrderDesk(tmp_path / "orders.db")
    agent = Agent(model=model, tools=desk.tools(), policy=order_policy(), config=LoopConfig.profile("voice"),
                  journal_path=str(tmp_path / "journal.db"))
    stt = SlowSTT({40: "where is my order 4567?", 30: "no stop that please right now."})
    sink = PacedSink()
    session = CallSession(agent, LoudnessVAD(), stt, ToneTTS(), WordChunker, SessionConfig(), sink, realtime=True)
    # the question (0.2 s - 1.48 s); an interruption at 4.7 s, while the answer is playing
    caller = track((0.2, 40), (4.7, 30), total_s=7.5)
    took, late = asyncio.run(feed_on_schedule(session, sink, caller))

    # no frame waited for Whisper (0.4 s) or the model (2 s): each was taken in within one frame
    assert max(took) < FRAME_S, f"hear() took {max(took) * 1000:.0f} ms for one frame"
    assert sorted(late)[len(late) // 2] < FRAME_S  # and on schedule (a loaded machine may delay a few)
    assert model.calls >= 2  # speculation ran on the partial, beside the intake

    first = session.turns[0]
    assert first.user_text == "where is my order 4567?"
    assert abs(first.speech_end_s - (0.2 + 40 * FRAME_S)) <= FRAME_S  # the scheduled end of speech
    lat = first.latency_ms
    assert lat["voice_to_voice_measured"] >= 2000  # the model's 2 s is in it, measured from that end
    assert lat["voice_to_voice_measured"] >= lat["endpointing"] + lat["llm_first_token"] - 50

    paused = next(e for e in session.trace if e["kind"] == "agent_paused")
    assert paused["stop_latency_ms"] <= 2 * FRAME_S * 1000  # one VAD window plus one frame
    assert "barge_in" in [e["kind"] for e in session.trace]
