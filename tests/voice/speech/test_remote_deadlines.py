"""A speech server that misbehaves costs the caller a bounded wait (issue 37): one that never answers fails the
transcription at its overall deadline without retrying the timed-out read, and one that answers 200 and then
trickles its body has the clause said by the local voice at the clause's deadline, with one log line saying so."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from voice.audio import SAMPLE_RATE
from voice.speech.clause_memo import ClauseMemo
from voice.speech.remote import OpenAISTT, OpenAITTS, RemoteSpeechError, deadline_from_env
from voice.speech.stack import SpeechStack
from voice.speech.tts import ClauseChunker
from voice.testing import shared_stack
from voice.testing.scripted_call import FIXTURES, Fixture, run_call

SPEECH = np.zeros(SAMPLE_RATE, np.int16)


class _Misbehaving(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, mode: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.mode, self.requests, self.stopped = mode, 0, threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        server = self.server
        assert isinstance(server, _Misbehaving)
        sock: socket.socket = self.request
        sock.settimeout(0.2)
        try:
            while b"\r\n\r\n" not in sock.recv(65536):  # the headers (the body may follow; it is not read)
                pass
        except (TimeoutError, OSError):
            pass
        server.requests += 1
        if server.mode == "trickle":  # 200 and a WAV header's promise, then 2 bytes every half second
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: audio/wav\r\nContent-Length: 100000\r\n\r\nRI")
            with contextlib.suppress(OSError):  # until the client gives up and closes
                while not server.stopped.wait(0.5):
                    sock.sendall(b"FF")
        else:  # "silent": never a byte
            server.stopped.wait(30)


@pytest.fixture
def misbehaving(request: pytest.FixtureRequest) -> Iterator[_Misbehaving]:
    server = _Misbehaving(request.param)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.stopped.set()
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("misbehaving", ["silent"], indirect=True)
def test_a_transcription_the_server_never_answers_fails_at_its_deadline(misbehaving: _Misbehaving) -> None:
    stt = OpenAISTT(url=misbehaving.url, timeout_s=10, retries=2, deadline_s=1.0)
    started = time.monotonic()
    with pytest.raises(RemoteSpeechError, match=r"no complete answer within 1 s"):
        stt.transcribe(SPEECH)
    assert 0.9 < time.monotonic() - started < 2.0  # not 3 tries x 10 s
    assert misbehaving.requests == 1


@pytest.mark.parametrize("misbehaving", ["silent"], indirect=True)
def test_a_read_that_timed_out_is_not_asked_again(misbehaving: _Misbehaving) -> None:
    stt = OpenAISTT(url=misbehaving.url, timeout_s=0.4, retries=2, deadline_s=5.0)
    started = time.monotonic()
    with pytest.raises(RemoteSpeechError, match="not retried"):
        stt.transcribe(SPEECH)
    assert time.monotonic() - started < 1.5 and misbehaving.requests == 1


@pytest.mark.parametrize("misbehaving", ["trickle"], indirect=True)
def test_a_clause_trickled_past_its_deadline_is_said_by_the_local_voice(misbehaving: _Misbehaving,
                                                                         caplog: pytest.LogCaptureFixture) -> None:
    tts = OpenAITTS(url=misbehaving.url, timeout_s=10, deadline_s=1.5)
    if tts.fallback is None:
        pytest.skip("espeak-ng is not installed")
    started = time.monotonic()
    with caplog.at_level(logging.ERROR, logger="voiceloop.remote_speech"):
        audio = tts.synthesize("Thanks for calling.")
    assert time.monotonic() - started < 3.0  # the deadline, then espeak-ng (the per-read timeout never fires)
    assert audio.size > SAMPLE_RATE // 2 and tts.fallbacks == 1
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "within 1.5 s" in lines[0] and "local voice" in lines[0] and "\n" not in lines[0]


@pytest.mark.parametrize("misbehaving", ["trickle"], indirect=True)
def test_without_a_fallback_the_trickled_clause_is_an_error(misbehaving: _Misbehaving) -> None:
    with pytest.raises(RemoteSpeechError, match=r"text-to-speech server .* within 0\.5 s"):
        OpenAITTS(url=misbehaving.url, deadline_s=0.5, fallback=None).synthesize("Hello.")


def test_the_deadlines_come_from_the_environment_and_bad_ones_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOICELOOP_STT_DEADLINE", "2.5")
    assert OpenAISTT(url="http://127.0.0.1:9/v1").server.deadline_s == 2.5
    assert OpenAISTT(url="http://127.0.0.1:9/v1", deadline_s=1).server.deadline_s == 1
    assert OpenAITTS(url="http://127.0.0.1:9/v1", fallback=None).server.deadline_s == 5.0
    monkeypatch.setenv("VOICELOOP_STT_DEADLINE", "soon")
    with pytest.raises(ValueError, match="VOICELOOP_STT_DEADLINE='soon'"):
        OpenAISTT()
    with pytest.raises(ValueError, match="positive number of seconds"):
        deadline_from_env(0.0, "X", 4.0)


@pytest.mark.parametrize("misbehaving", ["trickle"], indirect=True)
def test_a_clause_the_stand_in_voice_said_is_not_kept_for_next_time(misbehaving: _Misbehaving) -> None:
    tts = OpenAITTS(url=misbehaving.url, deadline_s=0.5)
    if tts.fallback is None:
        pytest.skip("espeak-ng is not installed")
    memo = ClauseMemo()
    assert memo.synthesize("Thanks for calling.", tts.synthesize, keep=True).size > 0 and tts.fallbacks == 1
    assert "Thanks for calling." not in memo  # the server's voice says the greeting once it answers again


@pytest.mark.parametrize("misbehaving", ["silent"], indirect=True)
def test_in_a_call_a_silent_speech_to_text_server_costs_the_deadline_then_the_caller_is_asked_again(
        misbehaving: _Misbehaving, tmp_path: Path) -> None:
    local = shared_stack()
    stack = SpeechStack(local.new_vad(), OpenAISTT(url=misbehaving.url, deadline_s=1.0), local.tts, ClauseChunker,
                        names={"vad": "silero", "stt": "openai", "tts": local.names["tts"]})
    result = asyncio.run(run_call(Fixture.load(FIXTURES / "refund_approved.yaml"), stack, tmp_path))
    failures = [e for e in result.trace if e["kind"] == "stt_failed"]
    assert failures and all("within 1 s" in e["error"] for e in failures)
    said = [e.get("text", "") for e in result.trace if e["kind"] == "agent_said"]
    assert any("say that again" in s for s in said)


@pytest.mark.parametrize("misbehaving", ["trickle"], indirect=True)
def test_in_a_call_a_trickling_voice_is_replaced_clause_by_clause(misbehaving: _Misbehaving, tmp_path: Path) -> None:
    local, tts = shared_stack(), OpenAITTS(url=misbehaving.url, deadline_s=0.5)
    if tts.fallback is None:
        pytest.skip("espeak-ng is not installed")
    stack = SpeechStack(local.new_vad(), local.stt, tts, ClauseChunker,
                        names={"vad": "silero", "stt": local.names["stt"], "tts": "openai"})
    result = asyncio.run(run_call(Fixture.load(FIXTURES / "refund_approved.yaml"), stack, tmp_path))
    assert result.summary()["outcome"] == "COMPLETED"  # the call went on, every clause heard in the local voice
    said = [e for e in result.trace if e["kind"] == "agent_said"]
    assert said and tts.fallbacks >= len(said)
