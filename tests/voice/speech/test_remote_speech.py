"""Speech off the box (`--stt openai`, `--tts openai`, voice/speech/remote.py) against a real server started
here: the audio stand-in (`python -m voice.bench.audio_standin`, this machine's Whisper and espeak-ng behind
OpenAI's audio endpoints), one that fails every request, and one that is not there. A whole scripted call runs
through them; a failed transcription is asked again aloud, and a clause the server cannot say is still heard."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.paths import ROOT
from voice.audio import SAMPLE_RATE, load_audio, parse_wav_bytes
from voice.speech.remote import OpenAISTT, OpenAITTS, RemoteSpeechError
from voice.speech.stack import SpeechStack
from voice.speech.tts import ClauseChunker
from voice.testing import shared_stack
from voice.testing.scripted_call import FIXTURES, Fixture, run_call

CALLER = FIXTURES / "synthetic" / "refund_4567.wav"


def start_standin(*args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "voice.bench.audio_standin", "--port", "0", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    found = re.search(r"listening on (http://\S+)", line)
    if found is None:
        proc.kill()
        pytest.fail(f"the audio stand-in did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    return proc, found.group(1)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    proc, url = start_standin("--stt", "tiny.en", "--tts", "espeak")
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def failing() -> Iterator[str]:
    proc, url = start_standin("--fail", "503", "--tts", "espeak")
    yield url
    proc.terminate()
    proc.wait(timeout=10)


def test_speech_to_text_over_the_protocol_hears_the_caller(server: str) -> None:
    text = OpenAISTT(url=server).transcribe(load_audio(CALLER))
    assert "refund" in text.lower() and "4567" in text.replace(" ", "")


def test_text_to_speech_over_the_protocol_is_16_khz_audio(server: str) -> None:
    tts = OpenAITTS(url=server, fallback=None)
    audio = tts.synthesize("Your order has shipped.")
    assert audio.dtype == np.int16 and 0.5 < len(audio) / SAMPLE_RATE < 5 and np.abs(audio).max() > 1000
    assert tts.synthesize("  ").size == 0


def test_speech_as_openai_pcm_is_raw_24_khz_and_an_unknown_format_is_refused(server: str) -> None:
    import httpx

    wav = httpx.post(f"{server}/audio/speech", json={"input": "Your order has shipped."}, timeout=30)
    pcm = httpx.post(f"{server}/audio/speech", json={"input": "Your order has shipped.", "response_format": "pcm"},
                     timeout=30)
    assert wav.status_code == pcm.status_code == 200 and wav.content[:4] == b"RIFF" and pcm.content[:4] != b"RIFF"
    wav_s = len(parse_wav_bytes(wav.content)[0]) / SAMPLE_RATE
    assert abs(len(pcm.content) / 2 / 24000 - wav_s) < 0.01  # the same speech, at OpenAI's 24 kHz, no header
    bad = httpx.post(f"{server}/audio/speech", json={"input": "Hi.", "response_format": "mp3"}, timeout=30)
    assert bad.status_code == 400 and "mp3" in bad.json()["error"]["message"]


def test_a_server_that_fails_or_is_not_there_is_a_clear_error_after_the_retries(failing: str) -> None:
    with pytest.raises(RemoteSpeechError, match=r"failed 3 time\(s\); last: HTTP 503"):
        OpenAISTT(url=failing, retries=2).transcribe(load_audio(CALLER))
    with pytest.raises(RemoteSpeechError, match=re.escape("speech-to-text server at http://127.0.0.1:9/v1")):
        OpenAISTT(url="http://127.0.0.1:9/v1", retries=0, timeout_s=2).transcribe(load_audio(CALLER))
    tts = OpenAITTS(url=failing, retries=1)  # the clause is said by the local voice instead: still heard
    assert tts.synthesize("Your order has shipped.").size > SAMPLE_RATE // 2 and tts.fallbacks == 1
    with pytest.raises(RemoteSpeechError):
        OpenAITTS(url=failing, retries=0, fallback=None).synthesize("Hello.")


def remote_stack(url: str, stt_url: str | None = None) -> SpeechStack:
    local = shared_stack()
    return SpeechStack(local.new_vad(), OpenAISTT(url=stt_url or url), OpenAITTS(url=url), ClauseChunker,
                       names={"vad": "silero", "stt": "openai", "tts": "openai"})


def test_a_whole_call_runs_through_the_remote_speech_engines(server: str, tmp_path: Path) -> None:
    result = asyncio.run(run_call(Fixture.load(FIXTURES / "refund_approved.yaml"), remote_stack(server), tmp_path))
    summary = result.summary()
    assert summary["outcome"] == "COMPLETED" and "issue_refund" in str(summary)
    assert "refund" in result.turns[0].user_text.lower()


def test_when_speech_to_text_fails_the_agent_asks_to_hear_it_again(server: str, failing: str,
                                                                   tmp_path: Path) -> None:
    stack = remote_stack(server, stt_url=failing)
    stack.stt.server.retries = 0  # type: ignore[attr-defined]
    result = asyncio.run(run_call(Fixture.load(FIXTURES / "refund_approved.yaml"), stack, tmp_path))
    said = [e.get("text", "") for e in result.trace if e["kind"] == "agent_said"]
    assert any("say that again" in s for s in said)
    assert any(e["kind"] == "stt_failed" for e in result.trace)
