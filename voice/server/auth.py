"""Who may do what on `voiceloop serve`, and the HTTP hygiene in front of every route.

Three credentials, never interchangeable:
- the operator token (`--operator-token`): the operator API, every call;
- the caller access token (`--token`): open a browser call, or mint a per-call token (`POST /call-token`);
- a call token (`ct_...`, `voice.hosting.call_tokens`): opens one call, then reaches only that call's own events and
  approval.
Tokens come from a file or the environment as well as the command line (`read_secret`), so they need not be
visible in the process list. Requests that repeat a header whose meaning must be unambiguous (Host,
Authorization, Upgrade, ...) are refused with 400 before any route sees them.
"""

from __future__ import annotations

import hmac
import logging
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from voice.hosting.call_tokens import CallTokens
from voice.hosting.config import ServerConfig

SECURITY_HEADERS = [(b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer")]
SINGLE_HEADERS = frozenset({b"host", b"authorization", b"upgrade", b"origin", b"content-length", b"content-type",
                            b"x-twilio-signature", b"sec-websocket-key", b"sec-websocket-version",
                            b"transfer-encoding"})
OPERATOR = "operator"  # the grant of the operator token; a call token's grant is its call id


class RedactSecrets(logging.Filter):
    """Strip query strings and bearer credentials from the web server's own log lines."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        clean = re.sub(r"\?\S*", "?<redacted>", re.sub(r"(?i)(bearer\s+)\S+", r"\1<redacted>", text))
        if clean != text:
            record.msg, record.args = clean, ()
        return True


class SecretError(ValueError):
    """A token given two ways, or a token file that cannot be read."""


def read_secret(value: str | None, file: str | None, env: str) -> str:
    """A token from `--x`, `--x-file` or the environment variable `env`, in that order; '' when none."""
    if value and file:
        raise SecretError(f"give the token or its file, not both (the file also keeps it out of `ps`; or ${env})")
    if file:
        try:
            return Path(file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise SecretError(f"cannot read the token file {file}: {exc.strerror}") from None
    return value or os.environ.get(env, "")


def error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status, headers)


def presented(conn: HTTPConnection, param: str = "token") -> str:
    """The bearer credential: `Authorization: Bearer ...`, else the `?token=` query parameter."""
    auth = conn.headers.get("authorization", "")
    return auth[7:].strip() if auth[:7].lower() == "bearer " else conn.query_params.get(param, "")


def same(given: str, secret: str) -> bool:
    return bool(secret) and hmac.compare_digest(given.encode(), secret.encode())


def grant(conn: HTTPConnection, cfg: ServerConfig, tokens: CallTokens) -> str | None:
    """OPERATOR, a call id (a bound call token), or None."""
    given = presented(conn)
    if same(given, cfg.operator_token):
        return OPERATOR
    return tokens.scope(given)


def caller_may_connect(conn: HTTPConnection, cfg: ServerConfig, tokens: CallTokens) -> tuple[bool, str | None]:
    """May this socket open a browser call, and with which call token (None: with the access token)?
    A call token (`?call_token=` or `?token=`) is used up here: one call per token."""
    given = conn.query_params.get("call_token") or presented(conn)
    if same(given, cfg.token):
        return True, None
    if tokens.redeem(given):
        return True, given
    return False, None


def origin_ok(conn: HTTPConnection, cfg: ServerConfig) -> bool:
    origin = conn.headers.get("origin")
    if origin is None:
        return True  # not a browser; the token still applies
    host = conn.headers.get("host", "")
    return origin in (f"http://{host}", f"https://{host}") or origin in cfg.allowed_origins


class RequireGrant:
    """ASGI middleware for the operator API: no operator or call token -> 401; the grant goes in
    `request.state.grant` for the routes to scope (a call token reaches its own call only)."""

    def __init__(self, app: ASGIApp, config: ServerConfig, tokens: CallTokens) -> None:
        self.app, self.cfg, self.tokens = app, config, tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            granted = grant(HTTPConnection(scope), self.cfg, self.tokens)
            if granted is None:
                await error(401, "missing or wrong token (the operator token, or this call's token)",
                            {"WWW-Authenticate": "Bearer"})(scope, receive, send)
                return
            scope.setdefault("state", {})["grant"] = granted
        await self.app(scope, receive, send)


class CleanRequests:
    """ASGI middleware in front of everything: a repeated Host/Authorization/Upgrade/... header is a 400
    (HTTP and WebSocket handshakes alike), and every HTTP response gets no-cache/no-sniff/no-referrer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        seen = Counter(name.lower() for name, _ in scope.get("headers", []))
        repeated = sorted(n.decode("latin-1") for n in SINGLE_HEADERS if seen[n] > 1)
        if repeated:
            return await _refuse(scope, receive, send, f"repeated header: {', '.join(repeated)}")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in SECURITY_HEADERS if k not in present]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers if scope["type"] == "http" else send)


async def _refuse(scope: Scope, receive: Receive, send: Send, reason: str) -> None:
    response = error(400, reason)
    if scope["type"] == "http":
        await response(scope, receive, send)
        return
    if "websocket.http.response" not in scope.get("extensions", {}):
        await send({"type": "websocket.close", "code": 1008, "reason": reason})  # the server answers 403
        return
    headers: list[Any] = [*response.raw_headers, *SECURITY_HEADERS]
    await send({"type": "websocket.http.response.start", "status": 400, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": response.body})
