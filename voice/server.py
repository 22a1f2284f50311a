"""`voiceloop serve`: one ASGI app (Starlette) for every way in, served by uvicorn.

Routes (credentials: voice.server_auth):
  GET  /  /app.js  /worklet.js  /style.css      the browser page (files in voice/web/)
  POST /call-token                               caller access token -> a call token for one call
  WS   /ws?call_token=T (or ?token=ACCESS)       browser call (voice.transports.browser), Origin checked
  WS   /twilio                                   Twilio Media Streams (voice.transports.twilio)
  POST /twilio/voice                             TwiML connecting a call to /twilio; X-Twilio-Signature checked
                                                 when TWILIO_AUTH_TOKEN is set, else refused (403) unless
                                                 `allow_unsigned_twilio`
  GET  /api/calls                                live calls                         } operator token
  GET  /api/calls/{id}/events[?after=N]          a call's events (live or recent)   } (or, for its own call
  POST /api/calls/{id}/approval {"approved": b}  decide a pending approval          } only, a call token)
  GET  /healthz                                  liveness, no details (GET/HEAD only)

`create_app(ctx)` builds the app; it can be mounted in your own Starlette or FastAPI service
(`app.mount("/voice", create_app(ctx))`: the TwiML then points Twilio at `/voice/twilio`). `start_server`
serves it with uvicorn on a socket bound here. HTTP errors are JSON `{"error": ...}`; request bodies over
`max_body_bytes` get 413; a repeated Host/Authorization/Upgrade header gets 400. WebSockets: 1008 bad token
or origin, 1013 at `--max-calls` or a per-source cap; the transports add their own close codes
(voice/transports/). Secrets are never logged: a generated token is printed once on start, and query
strings and bearer credentials are redacted from uvicorn's log lines.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import re
import secrets
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.websockets import WebSocket

from voice.call_tokens import TokenLimit
from voice.calls import CallContext
from voice.server_api import operator_routes, read_body
from voice.server_auth import (
    CleanRequests,
    RedactSecrets,
    RequireGrant,
    SecretError,
    caller_may_connect,
    error,
    origin_ok,
    presented,
    read_secret,
    same,
)
from voice.server_config import ServerConfig, add_capacity_options, worker_threads
from voice.shared_models import work_summary
from voice.transports import CloseCode
from voice.transports.browser import browser_call
from voice.transports.twilio import twilio_call
from voice.transports.twilio_webhook import signature_valid, twilio_stream_key, twiml_connect

log = logging.getLogger("voiceloop.server")
PAGE_FILES = {"/": "index.html", "/index.html": "index.html", "/app.js": "app.js", "/worklet.js": "worklet.js",
              "/style.css": "style.css"}
CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                 ".css": "text/css; charset=utf-8"}
_HOST = re.compile(r"^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$")
__all__ = ["add_serve_command", "bound_port", "create_app", "serve_until_stopped", "start_server"]


uvicorn_log = logging.getLogger("uvicorn.error")  # uvicorn logs WebSocket paths (with their query) here
for _name in ("uvicorn.error", "uvicorn.access"):
    logging.getLogger(_name).addFilter(RedactSecrets())


# ---- HTTP -----------------------------------------------------------------------------------------


async def _http_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = exc.detail
    if message == HTTPStatus(exc.status_code).phrase:  # Starlette's own (routing): say it the way we do
        message = f"use {exc.headers['Allow']}" if exc.headers and "Allow" in exc.headers else message.lower()
    return error(exc.status_code, message, exc.headers)


class VoiceRoutes:
    """The page, the Twilio webhook and both WebSockets over one CallContext (the operator API is in
    voice.server_api)."""

    def __init__(self, ctx: CallContext) -> None:
        self.ctx, self.cfg = ctx, ctx.config

    def page(self, name: str) -> Callable[[Request], Awaitable[Response]]:
        """The endpoint for one of the page's files, read from `web_dir` on each request."""

        async def serve_file(_request: Request) -> Response:
            file = Path(self.cfg.web_dir) / name
            if not file.is_file():
                return error(404, "not found")
            return Response(file.read_bytes(), media_type=CONTENT_TYPES[file.suffix])

        return serve_file

    async def healthz(self, _request: Request) -> Response:
        return JSONResponse({"ok": True})

    async def call_token(self, request: Request) -> Response:
        """The caller access token buys a call token: it opens one call, then reaches only that call."""
        if not same(presented(request), self.cfg.token):
            return error(401, "missing or wrong access token", {"WWW-Authenticate": "Bearer"})
        source = request.client.host if request.client else "unknown"
        try:
            token = self.ctx.call_tokens.mint(source, self.cfg.call_token_ttl_s, self.cfg.max_unbound_call_tokens,
                                              self.cfg.max_pending_per_source)
        except TokenLimit as exc:
            return error(429, str(exc), {"Retry-After": str(int(self.cfg.call_token_ttl_s))})
        return JSONResponse({"call_token": token, "expires_in": self.cfg.call_token_ttl_s})

    async def twilio_webhook(self, request: Request) -> Response:
        host = self.cfg.public_host or request.headers.get("host", "")
        if not _HOST.match(host):
            return error(400, "bad Host header")
        form = (await read_body(request, self.cfg.max_body_bytes)).decode("utf-8", "replace")
        params = parse_qsl(form, keep_blank_values=True)
        if not self.cfg.twilio_auth_token and self.cfg.twilio_key_required and not self.cfg.allow_unsigned_twilio:
            log.warning("unsigned Twilio webhook refused: set TWILIO_AUTH_TOKEN (or --allow-unsigned-twilio)")
            return error(403, "TWILIO_AUTH_TOKEN is not set, so this webhook cannot tell Twilio from anyone else "
                              "and hands out no stream key: set it, or start serve with --allow-unsigned-twilio")
        if self.cfg.twilio_auth_token:
            query = request.scope.get("query_string", b"").decode("latin-1")
            raw_path = (request.scope.get("raw_path") or request.url.path.encode()).decode("latin-1")
            url = f"https://{host}{raw_path}" + (f"?{query}" if query else "")
            if not signature_valid(self.cfg.twilio_auth_token, url, params, request.headers.get("x-twilio-signature")):
                log.warning("Twilio webhook with a missing or invalid signature refused")
                return error(403, "invalid Twilio signature")
        key = {"key": twilio_stream_key(self.cfg.stream_key_secret)} if self.cfg.twilio_key_required else {}
        stream_url = f"wss://{host}{request.scope.get('root_path', '')}/twilio"
        return Response(twiml_connect(stream_url, key), media_type="text/xml; charset=utf-8")

    async def browser_socket(self, ws: WebSocket) -> None:
        await ws.accept()
        if not origin_ok(ws, self.cfg):
            return await _close(ws, CloseCode.POLICY_VIOLATION, "origin not allowed")
        allowed, call_token = caller_may_connect(ws, self.cfg, self.ctx.call_tokens)
        if not allowed:
            return await _close(ws, CloseCode.POLICY_VIOLATION, "missing, wrong, used or expired token")
        await _guarded(ws, browser_call(ws, self.ctx, call_token))

    async def twilio_socket(self, ws: WebSocket) -> None:
        await ws.accept()
        await _guarded(ws, twilio_call(ws, self.ctx))


async def _close(ws: WebSocket, code: CloseCode, reason: str) -> None:
    with contextlib.suppress(Exception):
        await ws.close(code, reason)


async def _guarded(ws: WebSocket, call: Awaitable[None]) -> None:
    """A transport that fails outside its own close handling: log it, close 1011, keep serving."""
    try:
        await call
    except Exception:
        log.exception("%s handler failed", ws.url.path)
        await _close(ws, CloseCode.INTERNAL_ERROR, "server error")


async def _server_error(request: Request, _exc: Exception) -> Response:
    log.error("HTTP %s %s failed", request.method, request.url.path, exc_info=_exc)
    return error(500, "server error")


def create_app(ctx: CallContext) -> Starlette:
    """The whole server as one ASGI app (see the module docstring); serve it yourself or `start_server(ctx)`."""
    routes = VoiceRoutes(ctx)
    return Starlette(
        routes=[*(Route(path, routes.page(name), methods=["GET"]) for path, name in PAGE_FILES.items()),
                Route("/healthz", routes.healthz, methods=["GET"]),
                Route("/call-token", routes.call_token, methods=["POST"]),
                Route("/twilio/voice", routes.twilio_webhook, methods=["POST"]),
                WebSocketRoute("/ws", routes.browser_socket),
                WebSocketRoute("/twilio", routes.twilio_socket),
                Mount("/api", routes=operator_routes(ctx),
                      middleware=[Middleware(RequireGrant, config=ctx.config, tokens=ctx.call_tokens)])],
        middleware=[Middleware(CleanRequests)],
        exception_handlers={HTTPException: _http_error, Exception: _server_error})


# ---- serving ----------------------------------------------------------------------------------------


class _Uvicorn(uvicorn.Server):
    """uvicorn without its own signal handling: `serve_until_stopped` owns SIGINT/SIGTERM, and tests run
    servers on event loops of their own."""

    @contextlib.contextmanager
    def capture_signals(self) -> Any:
        yield


class VoiceServer:
    """uvicorn serving `create_app(ctx)` on a socket bound here (port 0 picks a free one). Accepted sockets
    inherit the listener's SO_SNDBUF, so kernel buffering per connection stays `socket_send_buffer`."""

    def __init__(self, ctx: CallContext) -> None:
        cfg = ctx.config
        self.socket = _listen(cfg.host, cfg.port, cfg.socket_send_buffer)
        # The driver closes messages over max_message_bytes with 1009 in order; uvicorn's own (larger) cap only
        # bounds buffering, since a frame it refuses also loses the good messages that came with it.
        config = uvicorn.Config(create_app(ctx), log_config=None, access_log=False, lifespan="off",
                                ws="websockets-sansio", ws_max_size=4 * cfg.max_message_bytes,
                                ws_per_message_deflate=False, server_header=False, headers=[("server", "voiceloop")],
                                timeout_graceful_shutdown=15)
        self.server = _Uvicorn(config)
        self.task: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        return int(self.socket.getsockname()[1])

    async def start(self) -> None:
        self.task = asyncio.create_task(self.server.serve(sockets=[self.socket]))
        while not self.server.started:
            if self.task.done():
                await self.task  # raises what stopped it
                raise RuntimeError("the server stopped while starting")
            await asyncio.sleep(0.01)

    def close(self) -> None:
        """Stop accepting; open connections are closed with 1012 and their calls closed (safe from any thread)."""
        self.server.should_exit = True

    async def wait_closed(self) -> None:
        if self.task is not None:
            await self.task


def _listen(host: str, port: int, send_buffer: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=128)
    if send_buffer:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
    sock.setblocking(False)
    return sock


async def start_server(ctx: CallContext) -> VoiceServer:
    """Bind and start serving; `bound_port(server)` says where."""
    server = VoiceServer(ctx)
    await server.start()
    return server


def bound_port(server: VoiceServer) -> int:
    return server.port


async def serve_until_stopped(ctx: CallContext, announce: Callable[[int], None]) -> None:
    loop = asyncio.get_running_loop()
    # every call may wait on a transcription and a synthesis at once: never queue them behind a small pool
    loop.set_default_executor(ThreadPoolExecutor(worker_threads(ctx.config.max_calls), "voiceloop-work"))
    server = await start_server(ctx)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    announce(server.port)
    assert server.task is not None
    await asyncio.wait([asyncio.ensure_future(stop.wait()), server.task], return_when=asyncio.FIRST_COMPLETED)
    server.close()  # every connection is closed (1012) and each closes (and journals) its call
    await server.wait_closed()
    for call in ctx.registry.live():
        await call.close("server shutting down")
    log.info(work_summary(ctx.factory.stt, ctx.factory.tts))


# ---- the command -----------------------------------------------------------------------------


def add_serve_command(subparsers: Any) -> None:
    from voice.agent_source import add_agent_option
    from voice.engines import add_engine_options
    from voice.turns import max_turn_seconds

    p = subparsers.add_parser("serve", help="browser page, Twilio Media Streams and the operator API on one port")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--token", help="caller access token: opens browser calls, no operator rights (visible in `ps`: "
                                   "prefer --token-file or $VOICELOOP_TOKEN; default: generated and printed)")
    p.add_argument("--token-file", help="read the caller access token from this file")
    p.add_argument("--operator-token", help="operator API token (prefer --operator-token-file or "
                                            "$VOICELOOP_OPERATOR_TOKEN; default: generated and printed)")
    p.add_argument("--operator-token-file", help="read the operator API token from this file")
    add_engine_options(p, script=True)  # --stt, --tts, --script | --llm: the same choices as every command
    add_agent_option(p)
    p.add_argument("--max-calls", type=int, default=20)
    p.add_argument("--max-calls-per-source", type=int, default=4,
                   help="live calls from one client address (browser; Twilio when the webhook is unsigned)")
    p.add_argument("--data-dir", default=os.environ.get("VOICELOOP_DATA", "voiceloop-data"),
                   help="journal.db and the agent's own files (the demo's orders.db) live here")
    p.add_argument("--greeting", default=None, help="said when a call starts (default: the agent's greeting)")
    p.add_argument("--no-speculate", action="store_true",
                   help="no speculative reads on partial transcripts (less STT work per call under heavy load)")
    add_capacity_options(p)
    p.add_argument("--max-turn-s", type=max_turn_seconds, default=30.0,
                   help="a caller turn is closed and answered after this many seconds of speech (default 30)")
    p.add_argument("--allow-origin", action="append", default=[], help="extra browser origin to accept")
    p.add_argument("--public-host", default="", help="host Twilio reaches us at (TwiML and signatures)")
    p.add_argument("--no-twilio-key", action="store_true",
                   help="accept Twilio streams without the key parameter our TwiML adds (for your own TwiML)")
    p.add_argument("--transfer-to", default=None, metavar="+1...",
                   help="phone calls a run escalates are transferred to this number through Twilio's REST API "
                        "(default: $VOICELOOP_TRANSFER_TO; needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN)")
    p.add_argument("--allow-unsigned-twilio", action="store_true",
                   help="without TWILIO_AUTH_TOKEN, still answer the webhook (anyone can then get the stream key)")
    add_timeout_options(p)
    p.set_defaults(func=cmd_serve, stt=None, tts=None)  # unset: the agent file's engines, else the defaults


def add_timeout_options(p: argparse.ArgumentParser) -> None:
    defaults = ServerConfig()
    for flag, attr, what in [
            ("--start-timeout", "start_timeout_s", "close a socket that has not started its call"),
            ("--media-timeout", "media_timeout_s", "close a call whose client sends no audio"),
            ("--idle-timeout", "idle_timeout_s", "close a call with no caller speech and nothing going on"),
            ("--max-call-seconds", "max_call_s", "close any call this old (0: no limit)")]:
        p.add_argument(flag, dest=attr, type=float, default=getattr(defaults, attr), metavar="S",
                       help=f"{what} after S seconds (default {getattr(defaults, attr):g})")
    p.add_argument("--max-pending-per-source", type=int, default=defaults.max_pending_per_source,
                   help="sockets from one address that have not started a call yet")
    p.add_argument("--max-messages-per-second", type=float, default=defaults.max_messages_per_s,
                   help="messages a client may send per second (bursts of twice that); echoes of ours not counted")


def server_config(args: argparse.Namespace) -> tuple[ServerConfig, list[str]]:
    """The config from the command line, and the tokens generated here (to print once)."""
    token = read_secret(args.token, args.token_file, "VOICELOOP_TOKEN")
    operator = read_secret(args.operator_token, args.operator_token_file, "VOICELOOP_OPERATOR_TOKEN")
    if token and token == operator:
        raise SecretError("the operator token must differ from the caller access token (--token)")
    if args.token or args.operator_token:
        log.warning("a token given on the command line is visible in the process list: use --token-file / "
                    "--operator-token-file or $VOICELOOP_TOKEN / $VOICELOOP_OPERATOR_TOKEN")
    generated = [name for name, given in (("token", token), ("operator", operator)) if not given]
    config = ServerConfig(host=args.host, port=args.port, token=token or secrets.token_urlsafe(24),
                          operator_token=operator or secrets.token_urlsafe(24), max_calls=args.max_calls,
                          max_calls_per_source=args.max_calls_per_source,
                          twilio_auth_token=os.environ.get("TWILIO_AUTH_TOKEN", ""),
                          allowed_origins=tuple(args.allow_origin), public_host=args.public_host,
                          twilio_key_required=not args.no_twilio_key, allow_unsigned_twilio=args.allow_unsigned_twilio,
                          start_timeout_s=args.start_timeout_s, media_timeout_s=args.media_timeout_s,
                          idle_timeout_s=args.idle_timeout_s, max_call_s=args.max_call_s,
                          max_pending_per_source=args.max_pending_per_source,
                          max_messages_per_s=args.max_messages_per_second)
    return config, generated


def cmd_serve(args: argparse.Namespace) -> int:
    from voice.agent_source import load_agent
    from voice.calls import CallContext, CallFactory, CallRegistry, model_source
    from voice.engines import STT_ENGINES, TTS_ENGINES
    from voice.session import SessionConfig
    from voice.settle_on_start import settle_on_start
    from voice.stack import load_stack
    from voice.transfer import TransferConfig, TransferConfigError
    from voice.turns import TurnConfig

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("uvicorn").setLevel(logging.WARNING)  # uvicorn logs every socket at INFO; calls are logged
    try:
        config, generated = server_config(args)
        config.transfer = TransferConfig.from_env(args.transfer_to)
        agent = load_agent(args.agent)
        make_agent = agent.maker(args.data_dir, model_source(args.script, args.llm))
    except (OSError, ValueError, RuntimeError, TransferConfigError) as exc:
        print(f"voiceloop serve: {exc}", file=sys.stderr)
        return 2
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        log.warning("listening on %s: beyond this machine, put TLS (wss/https) in front", args.host)
    if not config.twilio_auth_token:
        log.warning("TWILIO_AUTH_TOKEN is not set: %s", "the Twilio webhook's signatures are not checked"
                    if config.allow_unsigned_twilio else "the Twilio webhook is refused (--allow-unsigned-twilio)")
    stt, tts = agent.engine("stt", args.stt, STT_ENGINES.default), agent.engine("tts", args.tts, TTS_ENGINES.default)
    print(f"loading the speech stack ({stt}, {tts}) for the agent {agent.name}...", file=sys.stderr)
    stack = load_stack(stt, tts=tts)
    greeting = agent.greeting if args.greeting is None else args.greeting
    factory = CallFactory(stack, make_agent, args.data_dir,
                          SessionConfig(greeting=greeting, speculate=not args.no_speculate,
                                        turns=TurnConfig(max_turn_s=args.max_turn_s)),
                          stt_batch=args.stt_batch)
    settle_on_start(factory)  # runs a killed server left open: reconciled and closed before any new call
    ctx = CallContext(factory, CallRegistry(config.max_calls), config)

    def announce(port: int) -> None:
        base = f"http://{args.host}:{port}/"
        print(f"voiceloop serve: listening on {base} (Twilio: {base}twilio/voice)", flush=True)
        if "token" in generated:  # the one place a secret is ever shown
            print(f"voiceloop serve: callers open {base}?token={config.token}", flush=True)
        if "operator" in generated:
            print(f"voiceloop serve: operator API token: {config.operator_token}", flush=True)

    asyncio.run(serve_until_stopped(ctx, announce))
    return 0
