"""A stand-in for a hosted model: an OpenAI-compatible chat-completions server with a fixed time to first
token and a fixed token rate, so a load figure measures voiceloop and not the model.

    python -m voice.bench.llm_standin [--port 0] [--ttft-ms 300] [--tokens-per-s 50]

It prints `listening on http://127.0.0.1:PORT/v1` once it accepts connections. Every request (streamed or
not) is answered with one of a few plain replies of about four seconds of speech, picked by the caller's last
words, so different calls say different things; the tools offered are never called. It costs next to no CPU:
the waiting is `asyncio.sleep`, not work.

With `--upstream URL` it is a counting pass-through to a real OpenAI-compatible model server instead (llama.cpp's,
say): every request goes there as it came and its answer comes back as it streams, and `/v1/stats` still counts
them, so `bench load --llm-url` measures two voice servers on one real model and the model calls each makes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
import sys
import time
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

REPLIES = (
    "Sure, I can help you with that. Let me check what we have on file for you, it only takes a moment.",
    "Thanks for telling me. I have noted it down, and I will make sure the right person looks at it today.",
    "I understand. Your order is on its way, and it should reach you within the next two working days.",
    "Of course. I have found your account, and everything looks fine from here. Is there anything else?",
)


@dataclass(frozen=True)
class StandinConfig:
    ttft_s: float = 0.3  # request received -> first content token
    tokens_per_s: float = 50.0  # then this many tokens (words and punctuation) a second
    model: str = "standin"
    upstream: str = ""  # a real model server to pass every request to (counted), instead of the fixed replies


def reply_for(body: dict[str, Any]) -> str:
    """One of REPLIES, chosen by a hash of the last user message (stable for the same words)."""
    messages = body.get("messages") or [{}]
    last = next((m for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "user"), messages[-1])
    text = str(last.get("content", "")) if isinstance(last, dict) else ""
    return REPLIES[zlib.crc32(text.encode()) % len(REPLIES)]


def tokens_of(text: str) -> list[str]:
    """Word-sized pieces that join back to `text` (a leading space stays with its word, as in BPE)."""
    return re.findall(r"\s*\S+", text)


def _chunk(cfg: StandinConfig, delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> bytes:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    body = {"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": cfg.model, "choices": choices, **extra}
    return f"data: {json.dumps(body)}\n\n".encode()


async def stream_reply(cfg: StandinConfig, text: str, prompt_tokens: int) -> AsyncIterator[bytes]:
    """SSE events: the first content token after `ttft_s`, the rest at `tokens_per_s`, then usage and [DONE]."""
    started = time.perf_counter()
    yield _chunk(cfg, {"role": "assistant", "content": ""})
    pieces = tokens_of(text)
    for i, piece in enumerate(pieces):
        due = started + cfg.ttft_s + i / cfg.tokens_per_s
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        yield _chunk(cfg, {"content": piece})
    yield _chunk(cfg, {}, "stop")
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": len(pieces),
             "total_tokens": prompt_tokens + len(pieces)}
    yield _chunk(cfg, None, usage=usage)
    yield b"data: [DONE]\n\n"


async def _passed_on(upstream: str, body: dict[str, Any]) -> Any:
    """The request sent on to the real model server, its answer streamed back as it comes."""
    import httpx
    from starlette.responses import JSONResponse, StreamingResponse

    client = httpx.AsyncClient(timeout=httpx.Timeout(120.0, connect=5.0))
    try:
        response = await client.send(client.build_request("POST", f"{upstream.rstrip('/')}/chat/completions",
                                                          json=body), stream=True)
    except httpx.HTTPError as exc:
        await client.aclose()
        return JSONResponse({"error": {"message": f"upstream: {exc}", "type": "server_error"}}, 502)

    async def relay() -> AsyncIterator[bytes]:
        try:
            async for chunk in response.aiter_raw():
                yield chunk
        finally:
            await response.aclose()
            await client.aclose()

    kind = response.headers.get("content-type", "application/json")
    return StreamingResponse(relay(), status_code=response.status_code, media_type=kind)


def build_app(cfg: StandinConfig) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, StreamingResponse
    from starlette.routing import Route

    # requests answered: `bench load` reads it per step as model calls per turn; a one-token request is a server
    # being warmed with a call's prompt (`OpenAICompatModel.warm`), counted apart
    served = {"completions": 0, "warms": 0}

    async def completions(request: Request) -> Any:
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": {"message": "the body is not JSON", "type": "invalid_request_error"}}, 400)
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return JSONResponse({"error": {"message": "'messages' must be a list", "type": "invalid_request_error"}},
                                400)
        served["warms" if body.get("max_tokens") == 1 else "completions"] += 1
        if cfg.upstream:
            return await _passed_on(cfg.upstream, body)
        text, prompt_tokens = reply_for(body), len(json.dumps(body["messages"])) // 4
        if body.get("stream"):
            return StreamingResponse(stream_reply(cfg, text, prompt_tokens), media_type="text/event-stream")
        await asyncio.sleep(cfg.ttft_s + len(tokens_of(text)) / cfg.tokens_per_s)
        message = {"role": "assistant", "content": text}
        return JSONResponse({"id": "chatcmpl-standin", "object": "chat.completion", "model": cfg.model,
                             "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                             "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(tokens_of(text)),
                                       "total_tokens": prompt_tokens + len(tokens_of(text))}})

    async def models(_: Request) -> Any:
        return JSONResponse({"object": "list", "data": [{"id": cfg.model, "object": "model"}]})

    async def stats(_: Request) -> Any:
        return JSONResponse(served)

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"]),
                             Route("/v1/models", models), Route("/v1/stats", stats)])


def main(argv: list[str] | None = None) -> int:
    import uvicorn

    p = argparse.ArgumentParser(prog="python -m voice.bench.llm_standin", description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0: a free port")
    p.add_argument("--ttft-ms", type=float, default=300.0, help="time to first token (default 300)")
    p.add_argument("--tokens-per-s", type=float, default=50.0, help="token rate after the first (default 50)")
    p.add_argument("--upstream", default="", metavar="URL",
                   help="pass every request to this OpenAI-compatible server (.../v1), counting them")
    args = p.parse_args(argv)
    if args.ttft_ms < 0 or args.tokens_per_s <= 0:
        p.error("--ttft-ms must be >= 0 and --tokens-per-s > 0")
    cfg = StandinConfig(args.ttft_ms / 1000, args.tokens_per_s, upstream=args.upstream)
    sock = socket.socket()
    sock.bind((args.host, args.port))
    sock.listen(128)  # connections that come before uvicorn runs wait in the backlog
    server = uvicorn.Server(uvicorn.Config(build_app(cfg), log_level="warning", access_log=False))
    print(f"listening on http://{args.host}:{sock.getsockname()[1]}/v1", flush=True)
    asyncio.run(server.serve(sockets=[sock]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
