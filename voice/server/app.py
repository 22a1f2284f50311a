"""`voiceloop serve`: one ASGI app (Starlette) for every way in, served by uvicorn.

Routes (credentials: voice.server.auth):
  GET  /  /app.js  /worklet.js  /style.css      the browser page (files in voice/web/)
  GET  /operator  /operator.js                   the operator's page: live calls, their approvals, escalations
                                                 (it reads /api with the operator token)
  POST /call-token                               caller access token -> a call token for one call
  WS   /ws?call_token=T (or ?token=ACCESS)       browser call (voice.transports.browser.endpoint), Origin checked
  WS   /twilio                                   Twilio Media Streams (voice.transports.twilio.endpoint)
  POST /twilio/voice                             TwiML connecting a call to /twilio; X-Twilio-Signature checked
                                                 when TWILIO_AUTH_TOKEN is set, else refused (403) unless
                                                 `allow_unsigned_twilio`
  GET  /api/calls                                live calls                         } operator token
  GET  /api/calls/{id}/events[?after=N]          a call's events (live or recent)   } (or, for its own call
  POST /api/calls/{id}/approval {"approved": b}  decide a pending approval          } only, a call token)
  GET  /healthz                                  200 {"ok": true}; 503 {"status": "draining"} once SIGTERM came
                                                 (for a load balancer's health check; GET/HEAD only)

`create_app(ctx)` builds the app; it can be mounted in your own Starlette or FastAPI service
(`app.mount("/voice", create_app(ctx))`: the TwiML then points Twilio at `/voice/twilio`). `start_server`
serves it with uvicorn on a socket bound here. HTTP errors are JSON `{"error": ...}`; request bodies over
`max_body_bytes` get 413; a repeated Host/Authorization/Upgrade header gets 400; a request not sent in full within
`header_timeout_s` is closed, and past `max_connections` the oldest still being sent makes room (voice/server/
_guard.py). WebSockets: 1008 bad token
or origin, 1013 at `--max-calls` or a per-source cap, 1012 while draining (voice/server/drain.py); the
transports add their own close codes (voice/transports/). Secrets are never logged: a generated token is
printed once on start, and query strings and bearer credentials are redacted from uvicorn's log lines.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import re
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

from voice.hosting.call_tokens import TokenLimit
from voice.hosting.config import worker_threads
from voice.hosting.registry import DRAINING, CallContext
from voice.server._guard import ACCEPT_BACKLOG, AcceptErrorLog, connection_cap, guarded_protocol
from voice.server.api import operator_routes, read_body
from voice.server.args import add_serve_arguments, server_config, speculation_of
from voice.server.auth import (
    CleanRequests,
    RedactSecrets,
    RequireGrant,
    caller_may_connect,
    error,
    origin_ok,
    presented,
    same,
)
from voice.server.drain import drain
from voice.server.settle_on_start import settle_peers
from voice.speech.shared_models import work_summary
from voice.transports import CloseCode
from voice.transports.browser.endpoint import browser_call
from voice.transports.twilio.endpoint import twilio_call
from voice.transports.twilio.webhook import signature_valid, twilio_stream_key, twiml_connect

log = logging.getLogger("voiceloop.server")
PAGE_FILES = {"/": "index.html", "/index.html": "index.html", "/app.js": "app.js", "/worklet.js": "worklet.js",
              "/style.css": "style.css", "/operator": "operator.html", "/operator.js": "operator.js"}
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
    voice.server.api)."""

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
        """200 while calls are taken; 503 once draining, so a load balancer's health check takes us out."""
        if self.ctx.registry.draining:
            return JSONResponse({"ok": False, "status": "draining"}, 503)
        return JSONResponse({"ok": True})

    async def call_token(self, request: Request) -> Response:
        """The caller access token buys a call token: it opens one call, then reaches only that call."""
        if not same(presented(request), self.cfg.token):
            return error(401, "missing or wrong access token", {"WWW-Authenticate": "Bearer"})
        if self.ctx.registry.draining:  # the token could open a call here only: let the balancer ask another
            return error(503, DRAINING, {"Retry-After": "1"})
        source = request.client.host if request.client else "unknown"
        try:
            token = self.ctx.call_tokens.mint(source, self.cfg.call_token_ttl_s, self.cfg.max_unbound_call_tokens,
                                              self.cfg.max_pending_per_source)
        except TokenLimit as exc:
            return error(429, str(exc), {"Retry-After": str(int(self.cfg.call_token_ttl_s))})
        return JSONResponse({"call_token": token, "expires_in": self.cfg.call_token_ttl_s})

    async def twilio_webhook(self, request: Request) -> Response:
        if self.ctx.registry.draining:  # a load balancer retries it on another server (configs/haproxy.cfg)
            return error(503, DRAINING, {"Retry-After": "1"})
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
                                timeout_graceful_shutdown=15, forwarded_allow_ips=cfg.forwarded_allow_ips,
                                http=guarded_protocol(cfg.header_timeout_s, connection_cap(cfg.max_connections)),
                                backlog=ACCEPT_BACKLOG)  # uvicorn's 2048 would accept 2048 sockets in one turn
        self.server = _Uvicorn(config)
        self.task: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        return int(self.socket.getsockname()[1])

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        if not isinstance(loop.get_exception_handler(), AcceptErrorLog):
            loop.set_exception_handler(AcceptErrorLog(previous=loop.get_exception_handler()))
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
    sock = socket.create_server((host, port), family=family, backlog=ACCEPT_BACKLOG)
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
    """Serve until SIGTERM or SIGINT, then drain (voice/server/drain.py: no new calls, live ones end or are ended by
    `drain_timeout_s`; a second signal ends them at once) and stop."""
    loop = asyncio.get_running_loop()
    # every call may wait on a transcription and a synthesis at once: never queue them behind a small pool
    loop.set_default_executor(ThreadPoolExecutor(worker_threads(ctx.config.max_calls), "voiceloop-work"))
    server = await start_server(ctx)
    took = await ctx.factory.warm_model()  # before the first call is taken: its first turn finds the prompt held
    log.info("the model holds the agent's prompt (%s)", "not yet: calls warm it" if took is None else f"{took:.1f} s")
    first, second = asyncio.Event(), asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, lambda: (second if first.is_set() else first).set())
    announce(server.port)
    assert server.task is not None
    peers = asyncio.create_task(settle_peers(ctx.factory, ctx.config.settle_interval_s))  # a shared journal only
    await asyncio.wait([asyncio.ensure_future(first.wait()), server.task], return_when=asyncio.FIRST_COMPLETED)
    if first.is_set():
        await drain(ctx.registry, ctx.config.drain_timeout_s, second)
    peers.cancel()
    await asyncio.gather(peers, return_exceptions=True)
    server.close()  # any connection left is closed (1012) and closes (and journals) its call
    await server.wait_closed()
    for call in ctx.registry.live():
        await call.close("server shutting down")
    log.info(work_summary(ctx.factory.stt, ctx.factory.tts, ctx.factory.turn))


# ---- the command -----------------------------------------------------------------------------


def add_serve_command(subparsers: Any) -> None:
    parser = add_serve_arguments(subparsers)  # the options: voice/server/args.py
    parser.set_defaults(func=cmd_serve, stt=None, tts=None)  # unset: the agent file's engines, else the defaults


def cmd_serve(args: argparse.Namespace) -> int:
    from loop.run.tenancy import storage_from_args
    from loop.store.db import redact
    from voice.agents.source import load_agent
    from voice.call.turns import TurnConfig
    from voice.hosting.registry import CallContext, CallFactory, CallRegistry, model_source
    from voice.hosting.transfer import TransferConfig, TransferConfigError
    from voice.runtime.session import SessionConfig
    from voice.server.settle_on_start import settle_on_start
    from voice.speech.engines import STT_ENGINES, TTS_ENGINES
    from voice.speech.stack import load_stack

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("uvicorn").setLevel(logging.WARNING)  # uvicorn logs every socket at INFO; calls are logged
    try:
        config, generated = server_config(args)
        config.transfer = TransferConfig.from_env(args.transfer_to)
        agent = load_agent(args.agent)
        make_agent = agent.maker(args.data_dir, model_source(args.script, args.llm))
        make_agent("check")  # a tool that cannot work as declared fails now, in one line, not on the first call
        db, tenant = storage_from_args(args, args.data_dir)  # a bad --db fails now, before the models load
    except (OSError, ValueError, RuntimeError, TransferConfigError) as exc:  # RuntimeError: DatabaseUnavailable too
        print(f"voiceloop serve: {exc}", file=sys.stderr)
        return 2
    log.info("journal%s: %s", f" and tenant {tenant.tenant}'s ledger" if tenant else "", redact(db))
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        log.warning("listening on %s: beyond this machine, put TLS (wss/https) in front", args.host)
    if not config.twilio_auth_token:
        log.warning("TWILIO_AUTH_TOKEN is not set: %s", "the Twilio webhook's signatures are not checked"
                    if config.allow_unsigned_twilio else "the Twilio webhook is refused (--allow-unsigned-twilio)")
    stt, tts = agent.engine("stt", args.stt, STT_ENGINES.default), agent.engine("tts", args.tts, TTS_ENGINES.default)
    print(f"loading the speech stack ({stt}, {tts}) for the agent {agent.name}...", file=sys.stderr)
    stack = load_stack(stt, tts=tts, turn=getattr(args, "turn", None), stt_deadline_s=args.remote_stt_deadline,
                       tts_deadline_s=args.remote_tts_deadline, language=agent.language)
    greeting = agent.greeting if args.greeting is None else args.greeting
    factory = CallFactory(stack, make_agent, args.data_dir,
                          SessionConfig(greeting=greeting, **speculation_of(args),
                                        turns=TurnConfig(max_turn_s=args.max_turn_s)), db=db, tenant=tenant,
                          stt_batch=args.stt_batch, tts_voices=args.tts_voices)
    settle_on_start(factory)  # runs a killed server left open: reconciled and closed before any new call
    ctx = CallContext(factory, CallRegistry(config.max_calls, trace_dir=args.trace_dir), config)

    def announce(port: int) -> None:
        base = f"http://{args.host}:{port}/"
        print(f"voiceloop serve: listening on {base} (Twilio: {base}twilio/voice)", flush=True)
        if "token" in generated:  # the one place a secret is ever shown
            print(f"voiceloop serve: callers open {base}?token={config.token}", flush=True)
        if "operator" in generated:
            print(f"voiceloop serve: operator API token: {config.operator_token} "
                  f"(for the API and the operator's page, {base}operator)", flush=True)

    asyncio.run(serve_until_stopped(ctx, announce))
    return 0
