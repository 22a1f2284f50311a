"""The LiveKit worker's adapter with the real `livekit.rtc` types (frames, resamplers, AudioSource with its
real backpressure, LocalAudioTrack). No LiveKit server can run here: the room side of a job (connect,
participants, publishing) is a stand-in; everything between the room and our CallSession is real."""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from voice.agents.source import load_agent
from voice.audio import load_audio, resample
from voice.hosting.registry import CallContext, CallFactory, CallRegistry, ServerConfig, model_source
from voice.livekit.worker import (
    PUBLISH_RATE,
    Inbound,
    LiveKitSink,
    Outbound,
    cmd_livekit,
    entrypoint,
    prewarm,
    run_job,
    worker_options,
)
from voice.speech.stack import SpeechStack, load_stack
from voice.testing.scripted_call import FIXTURES

rtc = pytest.importorskip("livekit.rtc", reason="needs the livekit extra: pip install livekit-agents")

REPLY = "Going forward is easy. Stand up, then walk twelve steps toward the door."


def tone(freq: float, rate: int, seconds: float) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (8000 * np.sin(2 * np.pi * freq * t)).astype(np.int16)


def dominant_hz(pcm: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(pcm.astype(np.float64)))
    return float(np.argmax(spectrum) * rate / len(pcm))


def test_inbound_turns_48k_stereo_frames_into_16k_mono() -> None:
    left = tone(440, 48000, 1.0)
    stereo = np.stack([left, left], axis=1).reshape(-1)  # interleaved, as LiveKit frames carry it
    inbound, out = Inbound(), []
    for i in range(0, 48000, 480):  # 10 ms frames
        frame = rtc.AudioFrame(stereo[2 * i:2 * (i + 480)].tobytes(), 48000, 2, 480)
        out.append(inbound.convert(frame))
    pcm = np.concatenate(out)
    assert pcm.dtype == np.int16 and 15500 <= len(pcm) <= 16000  # a few ms stay inside the resampler
    assert abs(dominant_hz(pcm[1000:], 16000) - 440) < 5
    native = rtc.AudioFrame(tone(300, 16000, 0.02).tobytes(), 16000, 1, 320)
    assert (Inbound().convert(native) == np.frombuffer(native.data, np.int16)).all()  # 16 kHz mono: as is


def test_outbound_makes_20ms_frames_at_the_publish_rate() -> None:
    out = Outbound(PUBLISH_RATE)
    frames = [*out.frames(tone(440, 16000, 0.5)), *out.frames(np.zeros(0, np.int16), flush=True)]
    assert all(isinstance(f, rtc.AudioFrame) for f in frames)
    assert {(f.sample_rate, f.num_channels, f.samples_per_channel) for f in frames} == {(48000, 1, 960)}
    pcm = np.concatenate([np.frombuffer(f.data, np.int16) for f in frames])
    assert 24000 <= len(pcm) <= 24000 + 960 and abs(dominant_hz(pcm, 48000) - 440) < 5


class RecordingSource(rtc.AudioSource):
    """The real AudioSource (and its queue backpressure), remembering what went through it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.frames: list[Any] = []
        self.clears = 0

    async def capture_frame(self, frame: Any) -> None:
        self.frames.append(frame)
        await super().capture_frame(frame)

    def clear_queue(self) -> None:
        self.clears += 1
        super().clear_queue()


def test_sink_reports_playout_as_the_source_drains_and_clear_flushes_it() -> None:
    async def scenario() -> tuple[int, int, int, int]:
        source = RecordingSource(PUBLISH_RATE, 1, queue_size_ms=200)
        sink, played = LiveKitSink(source), []
        task = asyncio.create_task(sink.run(played.append))
        sink.send(tone(440, 16000, 2.0))
        await asyncio.sleep(1.0)
        heard_at_1s = sum(played)
        sink.clear()  # barge-in
        sent_at_clear = len(source.frames)
        await asyncio.sleep(0.3)
        task.cancel()
        await source.aclose()
        return heard_at_1s, sent_at_clear, len(source.frames), source.clears

    heard, sent_at_clear, sent_after, clears = asyncio.run(scenario())
    assert 0.6 * 16000 <= heard <= 1.0 * 16000  # played = captured minus what the 200 ms queue still holds
    assert clears == 1 and sent_after - sent_at_clear <= 1  # nothing of the old reply after the clear


@pytest.fixture(scope="module")
def stack() -> SpeechStack:
    return load_stack("tiny.en", tts="piper")


class FakeRoom:
    name = "support-room"

    def __init__(self) -> None:
        self.handlers: dict[str, Any] = {}
        self.published: list[tuple[Any, Any]] = []
        self.local_participant = self

    def on(self, event: str, handler: Any) -> Any:
        self.handlers[event] = handler
        return handler

    async def publish_track(self, track: Any, options: Any) -> None:
        self.published.append((track, options))


class FakeJob:
    """What LiveKit hands the entrypoint, minus the network: the room is local."""

    def __init__(self) -> None:
        self.room = FakeRoom()
        self.caller = argparse.Namespace(identity="sip_+15550100", kind=rtc.ParticipantKind.PARTICIPANT_KIND_SIP)
        self.connected: dict[str, Any] = {}

    async def connect(self, **kwargs: Any) -> None:
        self.connected = kwargs

    async def wait_for_participant(self) -> Any:
        return self.caller


def test_a_recording_through_the_worker_into_a_session_and_back(stack: SpeechStack, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"text": REPLY}]))
    factory = CallFactory(stack, load_agent().maker(tmp_path, model_source(str(script))), tmp_path)
    calls = CallContext(factory, CallRegistry(2), ServerConfig())
    speech = resample(load_audio(FIXTURES / "recordings/speech/goforward.wav"), 16000, 48000)
    caller = np.concatenate([np.zeros(24000, np.int16), speech, np.zeros(48000 * 9, np.int16)])
    job, sources = FakeJob(), []

    async def microphone(participant: Any) -> AsyncIterator[Any]:
        assert participant is job.caller
        started = time.perf_counter()
        for i in range(0, len(caller), 960):  # 20 ms frames at 48 kHz, in real time, as rtc.AudioStream yields
            yield rtc.AudioFrameEvent(rtc.AudioFrame(caller[i:i + 960].tobytes(), 48000, 1, 960))
            await asyncio.sleep(max(0.0, started + (i + 960) / 48000 - time.perf_counter()))
            session = next(iter(calls.registry.calls.values())).session
            if session.turns and session.turns[0].outcome and session.playout.done and not session.playout.speaking:
                job.room.handlers["participant_disconnected"](job.caller)  # the caller hangs up
                await asyncio.sleep(1)

    def source(*args: Any, **kwargs: Any) -> RecordingSource:
        sources.append(RecordingSource(*args, **kwargs))
        return sources[-1]

    monkeypatch.setattr(rtc, "AudioSource", source)
    asyncio.run(run_job(job, calls, caller_audio=microphone))
    call = calls.registry.ended[0]
    assert job.connected["auto_subscribe"].value == "audio_only"
    (track, options), = job.room.published
    assert isinstance(track, rtc.LocalAudioTrack) and options.source == rtc.TrackSource.SOURCE_MICROPHONE
    assert call.transport == "livekit" and call.meta["participant"] == "sip_+15550100"
    assert call.end_reason == "caller left" and not calls.registry.live()
    assert "forward" in call.session.turns[0].user_text.lower()
    frames = sources[0].frames
    assert all(isinstance(f, rtc.AudioFrame) and f.sample_rate == 48000 and f.samples_per_channel == 960
               for f in frames)
    reply = np.concatenate([np.frombuffer(f.data, np.int16) for f in frames])
    assert len(reply) > 48000 and np.abs(reply).max() > 1000  # over a second of the agent's voice published
    assert not call.session.playout.speaking  # all of it reported as played through the source's queue


def test_worker_options_and_the_command_wiring(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    from livekit.agents import JobExecutorType, WorkerOptions

    options = worker_options("voiceloop", executor="thread")
    assert isinstance(options, WorkerOptions)
    assert options.entrypoint_fnc is entrypoint and options.prewarm_fnc is prewarm
    assert options.agent_name == "voiceloop" and options.job_executor_type == JobExecutorType.THREAD
    monkeypatch.delenv("LIVEKIT_URL", raising=False)
    args = argparse.Namespace(livekit_args=["start"], script=None, llm=None, data_dir=None, stt=None, tts=None,
                              greeting=None, max_calls=None, agent_name="", executor="process")
    assert cmd_livekit(args) == 2
    assert "LIVEKIT_URL" in capsys.readouterr().err
