"""`voiceloop serve`: one asyncio server (the `websockets` library) for every way in.

Routes (plain HTTP goes through websockets' `process_request` hook):
  GET  /  /app.js  /worklet.js  /style.css      the browser page (files in voice/web/)
  WS   /ws                                       browser call (voice.transports.browser), token + Origin checked
  WS   /twilio                                   Twilio Media Streams (voice.transports.twilio)
  POST /twilio/voice                             TwiML connecting a call to /twilio; X-Twilio-Signature checked
                                                 when TWILIO_AUTH_TOKEN is set
  GET  /api/calls                                live calls                         } token required:
  GET  /api/calls/{id}/events[?after=N]          a call's events (live or recent)   } ?token= or
  POST /api/calls/{id}/approval {"approved": b}  decide a pending approval          } Authorization: Bearer
  GET  /healthz                                  liveness, no details

websockets refuses HTTP request bodies; `_Connection` reads small ones (at most `MAX_BODY` bytes) so the
webhook's form and the approval's JSON can be POSTed. Close codes: 1008 bad token / origin / message rate,
1009 frame over `max_message_bytes`, 1013 at `--max-calls`, 1011 a handler failed (logged; the server stays
up); transports add their own (see voice/transports/twilio.py). Secrets are never logged: the token is
printed once on start when it was generated, and query strings are redacted from websockets' log lines.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import email.utils
import hmac
import json
import logging
import os
import re
import secrets
import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from voice.calls import CallContext, CallLimitReached, RateLimit, RateLimited, ServerConfig
from voice.transports.twilio_webhook import signature_valid, twilio_stream_key, twiml_connect

log = logging.getLogger("voiceloop.server")
MAX_BODY = 16 * 1024
MAX_DISCARD = 1024 * 1024
STATIC = {"/": "index.html", "/index.html": "index.html", "/app.js": "app.js", "/worklet.js": "worklet.js",
          "/style.css": "style.css"}
CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                 ".css": "text/css; charset=utf-8"}
_HOST = re.compile(r"^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$")


class _Redact(logging.Filter):
    """Strip query strings and bearer credentials from websockets' own log lines."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        clean = re.sub(r"\?\S*", "?<redacted>", re.sub(r"(?i)(bearer\s+)\S+", r"\1<redacted>", text))
        if clean != text:
            record.msg, record.args = clean, ()
        return True


_ws_log = logging.getLogger("voiceloop.ws")
_ws_log.addFilter(_Redact())


def _accept_bodies(connection: _Connection) -> None:
    """Let the handshake parser read a small body: the Content-Length header is renamed (websockets rejects
    any non-zero one) and the body is read right after the blank line that ends the headers."""
    reader = connection.protocol.reader
    read_line, read_exact = reader.read_line, reader.read_exact
    pending = [0]

    def read_line_then_body(m: int, too_long: type[Exception] = RuntimeError) -> Any:
        line = yield from read_line(m, too_long)
        if bytes(line[:15]).lower() == b"content-length:":
            pending[0] = int(bytes(line[15:]).strip() or b"0")
            return b"X-Body-Length: " + str(pending[0]).encode() + b"\r\n"
        if bytes(line).strip() == b"" and pending[0]:
            size, pending[0] = pending[0], 0
            if size > MAX_BODY:  # read and dropped (a 413 follows); past MAX_DISCARD the connection is just cut
                connection.body_too_large = True
                if size > MAX_DISCARD:
                    raise ValueError("request body far too large")
                while size:
                    size -= len((yield from read_exact(min(size, 65536))))
            else:
                connection.body = bytes((yield from read_exact(size)))
        return line

    reader.read_line = read_line_then_body  # type: ignore[method-assign]
    protocol = connection.protocol  # its parser already started with the old read_line: restart it (no data yet)
    protocol.parser = protocol.parse()
    next(protocol.parser)


class _Connection(ServerConnection):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.body = b""
        self.body_too_large = False
        _accept_bodies(self)


class GuardedSocket:
    """The accepted WebSocket behind a message-rate limit: past it, close 1008 and raise RateLimited."""

    def __init__(self, ws: ServerConnection, limit: RateLimit) -> None:
        self.ws, self.limit = ws, limit

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ws, name)

    async def _check(self) -> None:
        if not self.limit.allow():
            with contextlib.suppress(Exception):
                async with asyncio.timeout(3.0):
                    await self.ws.close(1008, "message rate limit exceeded")
            raise RateLimited("message rate limit exceeded")

    async def recv(self, *args: Any, **kwargs: Any) -> Any:
        message = await self.ws.recv(*args, **kwargs)
        await self._check()
        return message

    async def __aiter__(self) -> AsyncIterator[Any]:
        async for message in self.ws:
            await self._check()
            yield message


def _response(status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> Response:
    headers = Headers([("Date", email.utils.formatdate(usegmt=True)), ("Connection", "close"),
                       ("Content-Length", str(len(body))), ("Content-Type", content_type),
                       ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"),
                       ("Referrer-Policy", "no-referrer"), *(extra or {}).items()])
    return Response(status, HTTPStatus(status).phrase, headers, body)


def _json(status: int, data: Any) -> Response:
    return _response(status, json.dumps(data, default=str).encode(), "application/json")


def _error(status: int, message: str, extra: dict[str, str] | None = None) -> Response:
    return _response(status, json.dumps({"error": message}).encode(), "application/json", extra)


class App:
    """Routing, authentication and the operator API over one CallContext."""

    def __init__(self, ctx: CallContext) -> None:
        self.ctx, self.cfg = ctx, ctx.config

    # ---- authentication ----------------------------------------------------------------------

    def authorized(self, request: Request) -> bool:
        query = parse_qs(urlsplit(request.path).query)
        auth = request.headers.get("Authorization", "")
        given = auth[7:].strip() if auth[:7].lower() == "bearer " else (query.get("token") or [""])[0]
        return bool(self.cfg.token) and hmac.compare_digest(given.encode(), self.cfg.token.encode())

    def origin_ok(self, request: Request) -> bool:
        origin = request.headers.get("Origin")
        if origin is None:
            return True  # not a browser; the token still applies
        host = request.headers.get("Host", "")
        return origin in (f"http://{host}", f"https://{host}") or origin in self.cfg.allowed_origins

    # ---- HTTP --------------------------------------------------------------------------------

    async def process_request(self, connection: _Connection, request: Request) -> Response | None:
        path = urlsplit(request.path).path
        if "websocket" in request.headers.get("Upgrade", "").lower():
            return None if path in ("/ws", "/twilio") else _error(404, "no WebSocket endpoint here")
        try:
            return await self.http(connection, request, path)
        except Exception:
            log.exception("HTTP %s %s failed", request.method, path)
            return _error(500, "server error")

    async def http(self, connection: _Connection, request: Request, path: str) -> Response:
        method = request.method
        if connection.body_too_large:
            return _error(413, f"request body over {MAX_BODY} bytes")
        if path in STATIC:
            return self.static(STATIC[path]) if method == "GET" else _error(405, "use GET")
        if path == "/healthz":
            return _json(200, {"ok": True})
        if path == "/twilio/voice":
            return self.twilio_webhook(connection, request) if method == "POST" else _error(405, "use POST")
        if path.startswith("/api/"):
            if not self.authorized(request):
                return _error(401, "missing or wrong token", {"WWW-Authenticate": "Bearer"})
            return await self.api(method, path, request, connection.body)
        return _error(404, "not found")

    def static(self, name: str) -> Response:
        file = Path(self.cfg.web_dir) / name
        if not file.is_file():
            return _error(404, "not found")
        return _response(200, file.read_bytes(), CONTENT_TYPES[file.suffix])

    async def api(self, method: str, path: str, request: Request, body: bytes) -> Response:
        parts = path.strip("/").split("/")  # api, calls, {id}, events|approval
        registry = self.ctx.registry
        if parts == ["api", "calls"]:
            return _json(200, {"calls": [c.summary() for c in registry.live()]}) if method == "GET" else \
                _error(405, "use GET")
        if len(parts) != 4 or parts[:2] != ["api", "calls"] or parts[3] not in ("events", "approval"):
            return _error(404, "not found")
        call = registry.get(parts[2])
        if call is None:
            return _error(404, "no such call")
        if parts[3] == "events":
            if method != "GET":
                return _error(405, "use GET")
            after = (parse_qs(urlsplit(request.path).query).get("after") or ["0"])[0]
            since = int(after) if after.isdigit() else 0
            return _json(200, {"id": call.call_id, "live": call.ended_at is None,
                               "events": [e for e in call.events if e["seq"] > since]})
        if method != "POST":
            return _error(405, "use POST")
        try:
            approved = json.loads(body or b"null").get("approved")
        except (ValueError, AttributeError):
            approved = None
        if not isinstance(approved, bool):
            return _error(400, 'send JSON {"approved": true} or {"approved": false}')
        if call.ended_at is not None or call.session.approval is None:
            return _error(409, "no approval is pending on this call")
        await call.session.decide(approved)
        return _json(200, {"id": call.call_id, "approved": approved})

    def twilio_webhook(self, connection: _Connection, request: Request) -> Response:
        host = self.cfg.public_host or request.headers.get("Host", "")
        if not _HOST.match(host):
            return _error(400, "bad Host header")
        params = parse_qsl(connection.body.decode("utf-8", "replace"), keep_blank_values=True)
        if self.cfg.twilio_auth_token:
            url = f"https://{host}{request.path}"
            if not signature_valid(self.cfg.twilio_auth_token, url, params, request.headers.get("X-Twilio-Signature")):
                log.warning("Twilio webhook with a missing or invalid signature refused")
                return _error(403, "invalid Twilio signature")
        key = {"key": twilio_stream_key(self.cfg.token)} if self.cfg.twilio_key_required else {}
        return _response(200, twiml_connect(f"wss://{host}/twilio", key).encode(), "text/xml; charset=utf-8")

    # ---- WebSockets --------------------------------------------------------------------------

    async def handler(self, ws: ServerConnection) -> None:
        path = urlsplit(ws.request.path).path if ws.request else ""
        try:
            if path == "/ws":
                if not self.authorized(ws.request):
                    return await _close(ws, 1008, "missing or wrong token")
                if not self.origin_ok(ws.request):
                    return await _close(ws, 1008, "origin not allowed")
                from voice.transports.browser import browser_call as run
            else:
                from voice.transports.twilio import twilio_call as run
            if self.ctx.registry.full:
                return await _close(ws, 1013, "too many calls; try again later")
            sock = ws.transport.get_extra_info("socket") if ws.transport else None
            if sock is not None and self.cfg.socket_send_buffer:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.cfg.socket_send_buffer)
            limit = RateLimit(self.cfg.max_messages_per_s, 2 * self.cfg.max_messages_per_s)
            await run(GuardedSocket(ws, limit), self.ctx)
        except CallLimitReached:
            await _close(ws, 1013, "too many calls; try again later")
        except (ConnectionClosed, RateLimited):
            pass
        except Exception:
            log.exception("%s handler failed", path)
            await _close(ws, 1011, "server error")


async def _close(ws: ServerConnection, code: int, reason: str) -> None:
    with contextlib.suppress(Exception):
        async with asyncio.timeout(5.0):
            await ws.close(code, reason)


async def start_server(ctx: CallContext) -> Server:
    """Bind and start serving (port 0 picks a free port: see `server.sockets[0].getsockname()`)."""
    app = App(ctx)
    cfg = ctx.config
    return await serve(app.handler, cfg.host, cfg.port, process_request=app.process_request,
                       create_connection=_Connection, max_size=cfg.max_message_bytes, max_queue=64,
                       close_timeout=2.0, compression=None, server_header="voiceloop", logger=_ws_log)


def bound_port(server: Server) -> int:
    return int(next(iter(server.sockets)).getsockname()[1])


async def serve_until_stopped(ctx: CallContext, announce: Callable[[int], None]) -> None:
    server = await start_server(ctx)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    announce(bound_port(server))
    await stop.wait()
    server.close()  # closes every connection with 1001; each handler closes (and journals) its call
    await server.wait_closed()
    for call in ctx.registry.live():
        await call.close("server shutting down")


# ---- the command -----------------------------------------------------------------------------


def add_serve_command(subparsers: Any) -> None:
    p = subparsers.add_parser("serve", help="browser page, Twilio Media Streams and the operator API on one port")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--token", help="API/browser token (default: $VOICELOOP_TOKEN, else generated and printed)")
    model = p.add_mutually_exclusive_group()
    model.add_argument("--script", help="scripted model: a YAML list of turns (or a fixture with model:)")
    model.add_argument("--llm", choices=["openai", "local", "local-1.5b"],
                       help="openai: VOICELOOP_LLM_URL/_MODEL (+OPENAI_API_KEY); local: the embedded llama.cpp model")
    p.add_argument("--max-calls", type=int, default=20)
    p.add_argument("--data-dir", default=os.environ.get("VOICELOOP_DATA", "voiceloop-data"),
                   help="journal.db and orders.db live here")
    p.add_argument("--stt", default="tiny.en", choices=["tiny.en", "base"])
    p.add_argument("--tts", default="auto", choices=["auto", "piper", "espeak"])
    p.add_argument("--greeting", default="")
    p.add_argument("--no-speculate", action="store_true",
                   help="no speculative reads on partial transcripts (less STT work per call under heavy load)")
    p.add_argument("--allow-origin", action="append", default=[], help="extra browser origin to accept")
    p.add_argument("--public-host", default="", help="host Twilio reaches us at (TwiML and signatures)")
    p.add_argument("--no-twilio-key", action="store_true",
                   help="accept Twilio streams without the key parameter our TwiML adds (for your own TwiML)")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    from voice.calls import CallFactory, CallRegistry, model_source, order_desk_agents
    from voice.session import SessionConfig
    from voice.stack import load_stack

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    _ws_log.setLevel(logging.WARNING)  # websockets logs every HTTP request at INFO; calls are logged instead
    given = args.token or os.environ.get("VOICELOOP_TOKEN", "")
    token = given or secrets.token_urlsafe(24)
    config = ServerConfig(host=args.host, port=args.port, token=token, max_calls=args.max_calls,
                          twilio_auth_token=os.environ.get("TWILIO_AUTH_TOKEN", ""),
                          allowed_origins=tuple(args.allow_origin), public_host=args.public_host,
                          twilio_key_required=not args.no_twilio_key)
    try:
        model_for = model_source(args.script, args.llm)
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"voiceloop serve: {exc}", file=sys.stderr)
        return 2
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        log.warning("listening on %s: beyond this machine, put TLS (wss/https) in front", args.host)
    if not config.twilio_auth_token:
        log.warning("TWILIO_AUTH_TOKEN is not set: the Twilio webhook's signatures are not checked")
    print(f"loading the speech stack ({args.stt}, {args.tts})...", file=sys.stderr)
    stack = load_stack(args.stt, tts=args.tts)
    factory = CallFactory(stack, order_desk_agents(model_for, args.data_dir), args.data_dir,
                          SessionConfig(greeting=args.greeting, speculate=not args.no_speculate))
    ctx = CallContext(factory, CallRegistry(config.max_calls), config)

    def announce(port: int) -> None:
        base = f"http://{args.host}:{port}/"
        print(f"voiceloop serve: listening on {base} (Twilio: {base}twilio/voice)", flush=True)
        if not given:  # the one place a secret is ever shown
            print(f"voiceloop serve: open {base}?token={token}", flush=True)

    asyncio.run(serve_until_stopped(ctx, announce))
    return 0
