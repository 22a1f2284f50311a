"""Speech engines that run off the box, the way `--llm openai` lets the model: any server that speaks OpenAI's
audio endpoints (`--stt openai`, `--tts openai`).

- `OpenAISTT`: `POST {url}/audio/transcriptions`, multipart (`file` as 16 kHz WAV, `model`, `language`, and the
  call's vocabulary as `prompt`, which biases the server's Whisper as it does ours).
- `OpenAITTS`: `POST {url}/audio/speech`, JSON (`model`, `input`, `voice`, `response_format: wav`), the body read
  as it streams in and resampled to the pipeline's 16 kHz.

Each request has an overall deadline (`deadline_s`: connecting, sending, waiting and reading the whole body,
retries included; default 4 s for a transcription, 5 s for a clause), because a caller waits in silence for it: a
server that trickles its answer or never sends one costs the caller that long, not a per-read timeout per retry.
Within it, a refused connection, a 429 and a 5xx are retried (`retries` times, backing off); a read that timed out
(`timeout_s` between bytes) is not, since a server that slow will not be quicker asked again. Then the request fails
with a message naming the server and what it answered; a 4xx other than 429 or a body that is not what the protocol
says fails at once. The call goes on either way: a transcription that failed is a turn the agent asks to hear again
(`TranscriptReady.failed`), and a clause the speech server could not say is said by espeak-ng on this machine
(`fallback`, with one log line), so the caller still hears it. Settings come from arguments or the environment:
VOICELOOP_STT_URL / VOICELOOP_TTS_URL (default http://127.0.0.1:8000/v1), VOICELOOP_STT_MODEL ("whisper-1"),
VOICELOOP_TTS_MODEL ("tts-1"), VOICELOOP_TTS_VOICE ("alloy"), VOICELOOP_STT_DEADLINE / VOICELOOP_TTS_DEADLINE
(seconds; `voiceloop serve --remote-stt-deadline/--remote-tts-deadline`), OPENAI_API_KEY. Servers that serve
these endpoints from faster-whisper or Piper: `faster-whisper-server` (speaches) and `openedai-speech`; for tests
and load figures, `python -m voice.bench.audio_standin` serves both from the local engines.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from voice.audio import AudioFormatError, parse_wav_bytes, to_internal, wav_bytes

log = logging.getLogger("voiceloop.remote_speech")
DEFAULT_URL = "http://127.0.0.1:8000/v1"
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
STT_DEADLINE_S = 4.0  # a caller waits in silence for it: then the agent asks them to say it again
TTS_DEADLINE_S = 5.0  # per clause: then the local voice says it


class RemoteSpeechError(RuntimeError):
    """The speech server could not be reached, or did not answer as the protocol says (or in time)."""


def deadline_from_env(given: float | None, variable: str, default: float) -> float:
    """`given`, else the environment's `variable`, else `default`; a bad value is a one-line error naming it."""
    if given is None:
        text = os.environ.get(variable, "")
        try:
            given = float(text) if text else default
        except ValueError:
            raise ValueError(f"{variable}={text!r}: give the deadline in seconds, e.g. {default:g}") from None
    if not 0 < given < float("inf"):
        raise ValueError(f"a remote speech deadline must be a positive number of seconds (got {given!r})")
    return given


_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def _background_loop() -> asyncio.AbstractEventLoop:
    """One event loop thread for every remote speech request: engines are called from worker threads, and
    asyncio can bound a whole request (every read included) where httpx's sync timeouts bound only each read."""
    global _loop
    with _loop_lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="voiceloop-remote-speech", daemon=True).start()
            _loop = loop
        return _loop


class _Server:
    """One OpenAI-compatible endpoint, with an overall deadline per request, retries and clear errors."""

    def __init__(self, url: str | None, url_variable: str, api_key: str | None, timeout_s: float, retries: int,
                 what: str, deadline_s: float) -> None:
        """`url` and `api_key` as given, else from the environment (`url_variable`, OPENAI_API_KEY)."""
        url = url or os.environ.get(url_variable, DEFAULT_URL)
        api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        self.url, self.retries, self.what, self.deadline_s = url.rstrip("/"), retries, what, deadline_s
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, 3.0))
        self.client: httpx.AsyncClient | None = None  # made on the background loop, used only there

    def post(self, path: str, **kwargs: Any) -> bytes:
        """The body of a successful answer, read whole within `deadline_s`; else RemoteSpeechError."""
        future = asyncio.run_coroutine_threadsafe(self._post(path, kwargs), _background_loop())
        return future.result()

    async def _post(self, path: str, kwargs: dict[str, Any]) -> bytes:
        where, last = f"{self.what} at {self.url}{path}", ""
        try:
            async with asyncio.timeout(self.deadline_s):
                for attempt in range(self.retries + 1):
                    if attempt:
                        await asyncio.sleep(min(0.2 * 2 ** (attempt - 1), 2.0))
                    try:
                        status, body = await self._attempt(path, kwargs)
                    except httpx.ConnectTimeout as exc:
                        last = f"{type(exc).__name__}: {exc}"
                        continue
                    except httpx.TimeoutException as exc:  # slow to answer: asking again only doubles the wait
                        raise RemoteSpeechError(f"{where} stopped answering ({type(exc).__name__} after "
                                                f"{self.timeout.read:g} s); not retried") from exc
                    except httpx.TransportError as exc:
                        last = f"{type(exc).__name__}: {exc}"
                        continue
                    if status in RETRY_STATUS:
                        last = f"HTTP {status}: {body[:200]!r}"
                        continue
                    if status >= 400:
                        raise RemoteSpeechError(f"{where} refused the request: HTTP {status}: {body[:300]!r}")
                    return body
        except TimeoutError:
            raise RemoteSpeechError(f"{where} gave no complete answer within {self.deadline_s:g} s (its deadline)"
                                    + (f"; before that: {last}" if last else "")) from None
        raise RemoteSpeechError(f"{where} failed {self.retries + 1} time(s); last: {last}")

    async def _attempt(self, path: str, kwargs: dict[str, Any]) -> tuple[int, bytes]:
        if self.client is None:
            self.client = httpx.AsyncClient(timeout=self.timeout, headers=self.headers)
        async with self.client.stream("POST", self.url + path, **kwargs) as response:
            return response.status_code, await response.aread()  # read as the server streams it


class OpenAISTT:
    """Speech-to-text on an OpenAI-compatible `/audio/transcriptions` server."""

    name = "openai"

    def __init__(self, url: str | None = None, model: str | None = None, api_key: str | None = None,
                 language: str = "en", timeout_s: float = 10.0, retries: int = 2,
                 deadline_s: float | None = None) -> None:
        self.model = model or os.environ.get("VOICELOOP_STT_MODEL", "whisper-1")
        self.language = language
        deadline = deadline_from_env(deadline_s, "VOICELOOP_STT_DEADLINE", STT_DEADLINE_S)
        self.server = _Server(url, "VOICELOOP_STT_URL", api_key, timeout_s, retries, "the speech-to-text server",
                              deadline)

    def transcribe(self, audio: np.ndarray, vocabulary: Sequence[str] = ()) -> str:
        if len(audio) == 0:
            return ""
        data = {"model": self.model, "language": self.language, "response_format": "json"}
        if vocabulary:
            data["prompt"] = ", ".join(vocabulary)
        return _transcript(self.server.post("/audio/transcriptions", data=data,
                                            files={"file": ("audio.wav", wav_bytes(audio), "audio/wav")}))


class OpenAITTS:
    """Text-to-speech on an OpenAI-compatible `/audio/speech` server; `fallback` ("espeak" or None) says a clause
    the server could not."""

    name = "openai"
    sample_rate = 16000
    concurrency = 16  # clauses of different calls asked at once: the work is the server's, not this machine's

    def __init__(self, url: str | None = None, model: str | None = None, voice: str | None = None,
                 api_key: str | None = None, timeout_s: float = 10.0, retries: int = 2,
                 fallback: str | None = "espeak", deadline_s: float | None = None) -> None:
        self.model = model or os.environ.get("VOICELOOP_TTS_MODEL", "tts-1")
        self.voice = voice or os.environ.get("VOICELOOP_TTS_VOICE", "alloy")
        deadline = deadline_from_env(deadline_s, "VOICELOOP_TTS_DEADLINE", TTS_DEADLINE_S)
        self.server = _Server(url, "VOICELOOP_TTS_URL", api_key, timeout_s, retries, "the text-to-speech server",
                              deadline)
        self.fallback = _local_voice() if fallback == "espeak" else None
        self.fallbacks = 0  # clauses said by the local voice because the server could not

    def synthesize(self, text: str) -> np.ndarray:
        if not text.strip():
            return np.zeros(0, dtype=np.int16)
        body = {"model": self.model, "input": text, "voice": self.voice, "response_format": "wav"}
        try:
            return _speech(self.server.post("/audio/speech", json=body))
        except RemoteSpeechError as exc:
            if self.fallback is None:
                raise
            log.error("%s; saying %r with the local voice instead", exc, text[:60])
            self.fallbacks += 1
            return self.fallback.synthesize(text)


def _transcript(body: bytes) -> str:
    try:
        data = json.loads(body) if body.lstrip()[:1] == b"{" else {"text": body.decode("utf-8")}
    except ValueError as exc:
        raise RemoteSpeechError(f"the speech-to-text server answered with broken JSON: {body[:200]!r}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        raise RemoteSpeechError(f"the speech-to-text server's answer has no text: {body[:200]!r}")
    return data["text"].strip()


def _speech(body: bytes) -> np.ndarray:
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
