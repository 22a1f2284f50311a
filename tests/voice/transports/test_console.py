"""`voiceloop console`: with a stand-in `sounddevice` module (PortAudio-like threads call the input callback
with a real recording and the output callback for the agent's voice: the wiring, playout acknowledgement and
barge-in clear), and as a user runs it on real PortAudio devices (ALSA `file` devices over FIFOs)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from tests.paths import ROOT
from voice.agents.source import load_agent
from voice.audio import load_audio
from voice.hosting.registry import CallFactory, model_source
from voice.speech.stack import SpeechStack, load_stack
from voice.testing.scripted_call import FIXTURES
from voice.transports.console import BLOCK, Console, SpeakerSink, import_sounddevice

REPLY = "Going forward is easy. Stand up, then walk twelve steps toward the door."


class FakeStream:
    """Calls its callback every block on its own thread, in real time, like PortAudio."""

    def __init__(self, sd: FakeSoundDevice, kind: str, callback: Any, **kwargs: Any) -> None:
        self.sd, self.kind, self.callback, self.kwargs = sd, kind, callback, kwargs
        self.running = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        sd.opened.append((kind, kwargs))

    def __enter__(self) -> FakeStream:
        self.running.set()
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.running.clear()
        self.thread.join(2)

    def _loop(self) -> None:
        started, i = time.perf_counter(), 0
        while self.running.is_set():
            if self.kind == "input":
                block = self.sd.caller[i * BLOCK:(i + 1) * BLOCK]
                block = np.pad(block, (0, BLOCK - len(block))).reshape(-1, 1)
                self.callback(block, BLOCK, None, None)
            else:
                out = np.full((BLOCK, 2), 12345, np.int16)  # garbage: the callback must overwrite all of it
                self.callback(out, BLOCK, None, None)
                self.sd.played.append(out.copy())
            i += 1
            time.sleep(max(0.0, started + i * BLOCK / 16000 - time.perf_counter()))


class FakeSoundDevice:
    def __init__(self, caller: np.ndarray) -> None:
        self.caller = caller
        self.opened: list[tuple[str, dict[str, Any]]] = []
        self.played: list[np.ndarray] = []

    def InputStream(self, callback: Any, **kwargs: Any) -> FakeStream:  # sounddevice's names
        return FakeStream(self, "input", callback, **kwargs)

    def OutputStream(self, callback: Any, **kwargs: Any) -> FakeStream:
        return FakeStream(self, "output", callback, **kwargs)


@pytest.fixture(scope="module")
def stack() -> SpeechStack:
    return load_stack("tiny.en", tts="piper")


def test_console_hears_the_mic_and_plays_the_reply(stack: SpeechStack, tmp_path: Path) -> None:
    speech = load_audio(FIXTURES / "recordings/speech/goforward.wav")
    caller = np.concatenate([np.zeros(8000, np.int16), speech, np.zeros(16000 * 8, np.int16)])
    sd = FakeSoundDevice(caller)
    console = Console(sd)
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"text": REPLY}]))
    factory = CallFactory(stack, load_agent().maker(tmp_path, model_source(str(script))), tmp_path)
    session = factory.new_call(console.sink, "console").session

    async def talk() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(console.run(session, stop))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            if session.turns and session.turns[0].outcome and session.playout.done and not session.playout.speaking:
                break
        stop.set()
        await task

    asyncio.run(talk())
    assert [k for k, _ in sd.opened] == ["input", "output"]
    assert all(kw["samplerate"] == 16000 and kw["dtype"] == "int16" and kw["blocksize"] == BLOCK
               for _, kw in sd.opened)
    assert "forward" in session.turns[0].user_text.lower()
    out = np.concatenate(sd.played)
    assert not out[:16000].any()  # the garbage was overwritten with silence before the agent spoke
    assert (out[:, 0] == out[:, 1]).all()
    voiced = int((np.abs(out[:, 0]) > 500).sum())
    assert console.sink.played_total > 16000 and voiced > 4000  # over a second of the agent's voice came out
    assert not session.playout.speaking  # and every sample of it was acknowledged as played
    assert session.trace[-1]["kind"] == "call_ended"


def test_speaker_sink_plays_in_order_and_clear_drops_the_rest() -> None:
    sink = SpeakerSink()
    sink.send(np.arange(1, 301, dtype=np.int16))
    sink.send(np.arange(301, 601, dtype=np.int16))
    out = np.zeros(400, np.int16)
    assert sink.fill(out) == 400 and (out == np.arange(1, 401)).all()
    assert sink.take_played() == 400 and sink.take_played() == 0
    sink.clear()  # barge-in: the unplayed 200 samples are gone
    assert sink.fill(out) == 0 and not out.any()
    assert sink.clears == 1 and sink.played_total == 400


def test_missing_sounddevice_is_explained(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setitem(sys.modules, "sounddevice", None)
    assert import_sounddevice() is None
    err = capsys.readouterr().err
    assert "voiceloop[console]" in err and "libportaudio2" in err


# ---- a real PortAudio device -------------------------------------------------------------------------------

ASOUNDRC = """
pcm.voiceloop_mic {{
    type file
    slave.pcm "null"
    file "/dev/null"
    infile "{mic}"
    format "raw"
    hint {{ show on; description "voiceloop test microphone: reads {mic}" }}
}}
pcm.voiceloop_speaker {{
    type file
    slave.pcm "null"
    file "{speaker}"
    format "raw"
    hint {{ show on; description "voiceloop test speaker: writes {speaker}" }}
}}
"""


class PacedPipe:
    """One end of a FIFO an ALSA `file` device reads (the mic) or writes (the speaker), moved at 16 kHz so the
    device runs in real time. Held open read-write, so PortAudio's device probe never blocks on it."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.fd = os.open(path, os.O_RDWR)
        self.stop = threading.Event()
        self.data = bytearray()

    def feed(self, pcm: np.ndarray) -> None:
        """Write `pcm`, then silence, 20 ms at a time, until stopped (a mic never runs dry)."""
        started, i = time.monotonic(), 0
        while not self.stop.is_set():
            block = pcm[i * BLOCK:(i + 1) * BLOCK]
            os.write(self.fd, np.pad(block, (0, BLOCK - len(block))).astype("<i2").tobytes())
            i += 1
            time.sleep(max(0.0, started + i * BLOCK / 16000 - time.monotonic()))

    def drain(self) -> None:
        """Read what the speaker plays, at the pace a sound card would."""
        started, n = time.monotonic(), 0
        while not self.stop.is_set():
            chunk = os.read(self.fd, 2 * BLOCK)
            self.data.extend(chunk)
            n += len(chunk) // 2
            time.sleep(max(0.0, started + n / 16000 - time.monotonic()))


def test_console_on_a_real_portaudio_device(tmp_path: Path) -> None:
    """`voiceloop console` as a user runs it, on ALSA devices PortAudio opens for real (an ALSA `file` plugin
    over FIFOs, configured in the ~/.asoundrc of a temporary HOME): the caller's recording goes in through the
    microphone, the agent's voice comes out of the speaker."""
    try:
        import sounddevice  # noqa: F401
    except OSError as exc:
        pytest.skip(f"PortAudio is not installed ({exc}); ./run installs libportaudio2")
    mic, speaker = PacedPipe(tmp_path / "mic.fifo"), PacedPipe(tmp_path / "speaker.fifo")
    (tmp_path / ".asoundrc").write_text(ASOUNDRC.format(mic=tmp_path / "mic.fifo", speaker=tmp_path / "speaker.fifo"))
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"text": REPLY}]))
    speech = load_audio(FIXTURES / "recordings/speech/goforward.wav")
    threads = [threading.Thread(target=mic.feed, args=(np.concatenate([np.zeros(8000, np.int16), speech]),)),
               threading.Thread(target=speaker.drain)]
    for t in threads:
        t.start()
    root = ROOT
    proc = subprocess.Popen(
        [sys.executable, "-m", "voice.cli", "console", "--input-device", "voiceloop_mic", "--output-device",
         "voiceloop_speaker", "--script", str(script), "--tts", "espeak", "--greeting", "",
         "--data-dir", str(tmp_path / "data")],
        cwd=root, env={**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(root)},
        stdout=subprocess.PIPE, stderr=(tmp_path / "console.err").open("w"), text=True)  # a file never fills up
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not any(line.startswith("agent:") for line in lines):
            time.sleep(0.2)
        time.sleep(6)  # the reply is a few seconds of speech, played at the device's pace
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C hangs up
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()  # never leave a console running after the test
            proc.wait(10)
        finally:
            mic.stop.set()
            speaker.stop.set()
            for t in threads:
                t.join(5)
    err = (tmp_path / "console.err").read_text()
    assert proc.returncode == 0, err[-2000:]
    you = [line for line in lines if line.startswith("you:")]
    assert you and "forward" in you[0].lower(), (lines, err[-2000:])
    said = " ".join(line.removeprefix("agent:").strip() for line in lines if line.startswith("agent:"))
    assert said == REPLY, lines
    played = np.frombuffer(bytes(speaker.data[: len(speaker.data) // 2 * 2]), "<i2")
    assert int((np.abs(played) > 500).sum()) > 8000  # over half a second of the agent's voice left the speaker
