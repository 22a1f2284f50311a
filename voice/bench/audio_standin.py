"""A stand-in for hosted speech: an OpenAI-compatible audio server running this machine's own engines, so
`--stt openai` / `--tts openai` can be tested and measured without a network.

    python -m voice.bench.audio_standin [--port 0] [--stt tiny.en] [--tts espeak] [--latency-ms 0] [--fail 0]
    python -m voice.bench.audio_standin --canned --latency-ms 150    # no models: for voiceloop's own cost

`POST /v1/audio/transcriptions` (multipart `file`, a WAV; `prompt` biases Whisper like a call's vocabulary) answers
`{"text": ...}`; `POST /v1/audio/speech` (JSON `input`) answers WAV audio, streamed in pieces, or with
`response_format: pcm` raw 16-bit mono at 24 kHz as OpenAI's server does (what Pipecat's OpenAI TTS asks for).
`--latency-ms` adds a fixed wait to every answer (a server elsewhere); `--fail 503` answers every request with
that status (a server that is down or overloaded). `--canned` runs no model at all: every transcription is one
fixed request and every clause is quiet noise of the length the text would take to say, so a load figure counts
voiceloop's own work and not the speech models'. It prints `listening on http://127.0.0.1:PORT/v1` once it accepts
connections.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from voice.audio import SAMPLE_RATE, parse_wav_bytes, resample, to_internal, wav_bytes

CANNED_TEXT = "Where is my order 4567?"
SPEECH_FORMATS = ("wav", "pcm")
PCM_RATE = 24000  # OpenAI's `pcm`: raw signed 16-bit little-endian mono at 24 kHz, no header


class CannedSpeech:
    """Speech engines that cost nothing: a fixed transcript, and quiet noise ~65 ms a character for a clause."""

    def transcribe(self, audio: Any) -> str:
        return CANNED_TEXT if len(audio) else ""

    def synthesize(self, text: str) -> Any:
        import numpy as np

        rng = np.random.default_rng(len(text))
        return (rng.standard_normal(int(SAMPLE_RATE * 0.065 * len(text))) * 300).astype(np.int16)


@dataclass
class AudioStandin:
    stt: Any
    tts: Any
    latency_s: float = 0.0
    fail: int = 0  # an HTTP status every request is answered with; 0: none


def build_app(cfg: AudioStandin) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, StreamingResponse
    from starlette.routing import Route

    def refuse(status: int, message: str) -> JSONResponse:
        return JSONResponse({"error": {"message": message, "type": "invalid_request_error"}}, status)

    async def transcriptions(request: Request) -> Any:
        await asyncio.sleep(cfg.latency_s)
        if cfg.fail:
            return refuse(cfg.fail, "the stand-in was told to fail")
        form = await request.form()
        upload = form.get("file")
        if upload is None or isinstance(upload, str):
            return refuse(400, "'file' must be an audio file")
        try:
            samples, rate, channels = parse_wav_bytes(await upload.read(), where="the uploaded file")
        except ValueError as exc:
            return refuse(400, str(exc))
        prompt = str(form.get("prompt") or "")
        audio = to_internal(samples, rate, channels)
        vocabulary = tuple(w.strip() for w in prompt.split(",") if w.strip())
        text = await asyncio.to_thread(_transcribe, cfg.stt, audio, vocabulary)
        return JSONResponse({"text": text})

    async def speech(request: Request) -> Any:
        await asyncio.sleep(cfg.latency_s)
        if cfg.fail:
            return refuse(cfg.fail, "the stand-in was told to fail")
        try:
            body = await request.json()
        except ValueError:
            return refuse(400, "the body is not JSON")
        if not isinstance(body, dict) or not isinstance(body.get("input"), str) or not body["input"].strip():
            return refuse(400, "'input' must be some text")
        audio_format = body.get("response_format") or "wav"
        if audio_format not in SPEECH_FORMATS:
            return refuse(400, f"response_format {audio_format!r}: the stand-in answers {' or '.join(SPEECH_FORMATS)}")
        audio = await asyncio.to_thread(cfg.tts.synthesize, body["input"])
        if audio_format == "pcm":
            pcm = resample(audio, SAMPLE_RATE, PCM_RATE).astype("<i2").tobytes()
            return StreamingResponse(_pieces(pcm), media_type="audio/pcm")
        return StreamingResponse(_pieces(wav_bytes(audio, SAMPLE_RATE)), media_type="audio/wav")

    return Starlette(routes=[Route("/v1/audio/transcriptions", transcriptions, methods=["POST"]),
                             Route("/v1/audio/speech", speech, methods=["POST"])])


def _transcribe(stt: Any, audio: Any, vocabulary: tuple[str, ...]) -> str:
    from voice.speech.engines import transcribe_with

    return transcribe_with(stt, audio, vocabulary)


async def _pieces(data: bytes, size: int = 8192) -> AsyncIterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i:i + size]
        await asyncio.sleep(0)


def main(argv: list[str] | None = None) -> int:
    import uvicorn

    from voice.speech.engines import STT_ENGINES, TTS_ENGINES

    p = argparse.ArgumentParser(prog="python -m voice.bench.audio_standin", description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0: a free port")
    p.add_argument("--stt", default="tiny.en", help="the local speech-to-text it runs (default tiny.en)")
    p.add_argument("--tts", default="espeak", help="the local text-to-speech it runs (default espeak)")
    p.add_argument("--latency-ms", type=float, default=0.0, help="a fixed wait before every answer")
    p.add_argument("--fail", type=int, default=0, help="answer every request with this HTTP status (e.g. 503)")
    p.add_argument("--canned", action="store_true", help="no models: a fixed transcript, noise for speech")
    args = p.parse_args(argv)
    if args.stt == "openai" or args.tts == "openai":
        p.error("the stand-in runs local engines: --stt and --tts name this machine's")
    engines = (CannedSpeech(), CannedSpeech()) if args.canned else (STT_ENGINES.load(args.stt),
                                                                    TTS_ENGINES.load(args.tts))
    cfg = AudioStandin(*engines, args.latency_ms / 1000, args.fail)
    sock = socket.socket()
    sock.bind((args.host, args.port))
    sock.listen(128)
    server = uvicorn.Server(uvicorn.Config(build_app(cfg), log_level="warning", access_log=False))
    print(f"listening on http://{args.host}:{sock.getsockname()[1]}/v1", flush=True)
    asyncio.run(server.serve(sockets=[sock]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
