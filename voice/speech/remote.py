"""Speech engines that run off the box, the way `--llm openai` lets the model: any server that speaks OpenAI's
audio endpoints (`--stt openai`, `--tts openai`).

- `OpenAISTT`: `POST {url}/audio/transcriptions`, multipart (`file` as 16 kHz WAV, `model`, `language`, and the
  call's vocabulary as `prompt`, which biases the server's Whisper as it does ours).
- `OpenAITTS`: `POST {url}/audio/speech`, JSON (`model`, `input`, `voice`, `response_format: wav`), the body read
  as it streams in and resampled to the pipeline's 16 kHz.

Both retry a connection error, a timeout, a 429 and a 5xx (`retries` times, backing off), and then fail with a
message naming the server and what it answered; a 4xx other than 429 or a body that is not what the protocol says
fails at once. The call goes on either way: a transcription that failed is a turn the agent asks to hear again
(`TranscriptReady.failed`), and a clause the speech server could not say is said by espeak-ng on this machine
(`fallback`), so the caller still hears it. Settings come from arguments or the environment:
VOICELOOP_STT_URL / VOICELOOP_TTS_URL (default http://127.0.0.1:8000/v1), VOICELOOP_STT_MODEL ("whisper-1"),
VOICELOOP_TTS_MODEL ("tts-1"), VOICELOOP_TTS_VOICE ("alloy"), OPENAI_API_KEY. Servers that serve these endpoints
from faster-whisper or Piper: `faster-whisper-server` (speaches) and `openedai-speech`; for tests and load
figures, `python -m voice.bench.audio_standin` serves both from the local engines.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx
import numpy as np

from voice.audio import AudioFormatError, parse_wav_bytes, to_internal, wav_bytes

log = logging.getLogger("voiceloop.remote_speech")
DEFAULT_URL = "http://127.0.0.1:8000/v1"
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class RemoteSpeechError(RuntimeError):
    """The speech server could not be reached, or did not answer as the protocol says."""


class _Server:
    """One OpenAI-compatible endpoint, with retries and clear errors."""

    def __init__(self, url: str | None, url_variable: str, api_key: str | None, timeout_s: float, retries: int,
                 what: str) -> None:
        """`url` and `api_key` as given, else from the environment (`url_variable`, OPENAI_API_KEY)."""
        url = url or os.environ.get(url_variable, DEFAULT_URL)
        api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        self.url, self.retries, self.what = url.rstrip("/"), retries, what
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.Client(timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 3.0)), headers=headers)

    def post(self, path: str, read: Callable[[httpx.Response], Any], **kwargs: Any) -> Any:
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(0.2 * 2 ** (attempt - 1), 2.0))
            try:
                with self.client.stream("POST", self.url + path, **kwargs) as response:
                    if response.status_code in RETRY_STATUS:
                        last = f"HTTP {response.status_code}: {response.read()[:200]!r}"
                        continue
                    if response.status_code >= 400:
                        raise RemoteSpeechError(f"{self.what} at {self.url}{path} refused the request: HTTP "
                                                f"{response.status_code}: {response.read()[:300]!r}")
                    return read(response)
            except (httpx.TransportError, httpx.TimeoutException) as exc:
                last = f"{type(exc).__name__}: {exc}"
        raise RemoteSpeechError(f"{self.what} at {self.url}{path} failed {self.retries + 1} time(s); last: {last}")


class OpenAISTT:
    """Speech-to-text on an OpenAI-compatible `/audio/transcriptions` server."""

    name = "openai"

    def __init__(self, url: str | None = None, model: str | None = None, api_key: str | None = None,
                 language: str = "en", timeout_s: float = 10.0, retries: int = 2) -> None:
        self.model = model or os.environ.get("VOICELOOP_STT_MODEL", "whisper-1")
        self.language = language
        self.server = _Server(url, "VOICELOOP_STT_URL", api_key, timeout_s, retries, "the speech-to-text server")

    def transcribe(self, audio: np.ndarray, vocabulary: Sequence[str] = ()) -> str:
        if len(audio) == 0:
            return ""
        data = {"model": self.model, "language": self.language, "response_format": "json"}
        if vocabulary:
            data["prompt"] = ", ".join(vocabulary)
        return self.server.post("/audio/transcriptions", _transcript, data=data,
                                files={"file": ("audio.wav", wav_bytes(audio), "audio/wav")})


class OpenAITTS:
    """Text-to-speech on an OpenAI-compatible `/audio/speech` server; `fallback` ("espeak" or None) says a clause
    the server could not."""

    name = "openai"
    sample_rate = 16000
    concurrency = 16  # clauses of different calls asked at once: the work is the server's, not this machine's

    def __init__(self, url: str | None = None, model: str | None = None, voice: str | None = None,
                 api_key: str | None = None, timeout_s: float = 10.0, retries: int = 2,
                 fallback: str | None = "espeak") -> None:
        self.model = model or os.environ.get("VOICELOOP_TTS_MODEL", "tts-1")
        self.voice = voice or os.environ.get("VOICELOOP_TTS_VOICE", "alloy")
        self.server = _Server(url, "VOICELOOP_TTS_URL", api_key, timeout_s, retries, "the text-to-speech server")
        self.fallback = _local_voice() if fallback == "espeak" else None
        self.fallbacks = 0  # clauses said by the local voice because the server could not

    def synthesize(self, text: str) -> np.ndarray:
        if not text.strip():
            return np.zeros(0, dtype=np.int16)
        body = {"model": self.model, "input": text, "voice": self.voice, "response_format": "wav"}
        try:
            return self.server.post("/audio/speech", _speech, json=body)
        except RemoteSpeechError as exc:
            if self.fallback is None:
                raise
            log.error("%s; saying %r with the local voice instead", exc, text[:60])
            self.fallbacks += 1
            return self.fallback.synthesize(text)


def _transcript(response: httpx.Response) -> str:
    body = response.read()
    try:
        data = response.json() if body.lstrip()[:1] == b"{" else {"text": body.decode("utf-8")}
    except ValueError as exc:
        raise RemoteSpeechError(f"the speech-to-text server answered with broken JSON: {body[:200]!r}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        raise RemoteSpeechError(f"the speech-to-text server's answer has no text: {body[:200]!r}")
    return data["text"].strip()


def _speech(response: httpx.Response) -> np.ndarray:
    body = b"".join(response.iter_bytes())  # read as the server streams it
    try:
        samples, rate, channels = parse_wav_bytes(body, where="the text-to-speech server's answer")
    except AudioFormatError as exc:
        raise RemoteSpeechError(f"the text-to-speech server did not answer with WAV audio: {exc}") from exc
    return to_internal(samples, rate, channels)


def _local_voice() -> Any:
    from voice.speech.tts import EspeakTTS, TTSUnavailableError

    try:
        return EspeakTTS()
    except TTSUnavailableError:
        return None
