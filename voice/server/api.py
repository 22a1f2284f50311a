"""The operator API under `/api`, part of the server (`voice.server.auth.RequireGrant` checks the credential
before any of it and says what it grants):

  GET  /api/calls                                live calls (the operator token only)
  GET  /api/calls/{id}/events[?after=N]          a call's events (live or recently ended), after seq N
  GET  /api/calls/{id}/timeline                  the call's timeline so far (HTML with SVG,
  voice/observe/timeline_html.py)
  GET  /api/escalations                          calls a run escalated: transcript, reason, transfers
  POST /api/calls/{id}/approval {"approved": b}  decide the call's pending approval (409 if none is pending)

A caller's call token reaches its own call's events and approval; any other call is 403 for it. Bad input is
a 400 with a reason (`after` not a plain non-negative integer, JSON that is not `{"approved": bool}`).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from voice.hosting.escalations import escalated_calls
from voice.hosting.registry import Call, CallContext
from voice.observe.timeline import build_timeline
from voice.observe.timeline_html import render_timeline
from voice.server.auth import OPERATOR

MAX_AFTER_DIGITS = 18


def _json(data: Any, status: int = 200) -> Response:
    return Response(json.dumps(data, default=str), status, media_type="application/json")


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, or 413 once it is known to be over `limit` bytes."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit:
        raise HTTPException(413, f"request body over {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise HTTPException(413, f"request body over {limit} bytes")
    return bytes(body)


class OperatorAPI:
    def __init__(self, ctx: CallContext) -> None:
        self.ctx = ctx

    def _call(self, request: Request) -> Call:
        call_id = request.path_params["call_id"]
        if request.state.grant not in (OPERATOR, call_id):
            raise HTTPException(403, "this token is for another call")
        call = self.ctx.registry.get(call_id)
        if call is None:
            raise HTTPException(404, "no such call")
        return call

    async def calls(self, request: Request) -> Response:
        if request.state.grant != OPERATOR:
            raise HTTPException(403, "listing calls needs the operator token")
        return _json({"calls": [c.summary() for c in self.ctx.registry.live()]})

    async def events(self, request: Request) -> Response:
        call = self._call(request)
        after = request.query_params.get("after", "0")
        if not (after.isascii() and after.isdigit() and len(after) <= MAX_AFTER_DIGITS):
            raise HTTPException(400, f"'after' must be a non-negative integer of at most {MAX_AFTER_DIGITS} digits")
        since = int(after)
        return _json({"id": call.call_id, "live": call.ended_at is None,
                      "events": [e for e in list(call.events) if e["seq"] > since]})

    async def timeline(self, request: Request) -> Response:
        call = self._call(request)
        title = f"call {call.call_id} ({call.transport}{', live' if call.ended_at is None else ''})"
        return HTMLResponse(render_timeline(build_timeline(list(call.events)), title))

    async def escalations(self, request: Request) -> Response:
        if request.state.grant != OPERATOR:  # other callers' transcripts: the operator's only
            raise HTTPException(403, "listing escalated calls needs the operator token")
        return _json({"calls": escalated_calls(self.ctx.registry)})

    async def approval(self, request: Request) -> Response:
        body = await read_body(request, self.ctx.config.max_body_bytes)
        call = self._call(request)
        try:
            approved = json.loads(body or b"null").get("approved")
        except (ValueError, AttributeError, RecursionError):
            approved = None
        if not isinstance(approved, bool):
            raise HTTPException(400, 'send JSON {"approved": true} or {"approved": false}')
        if call.ended_at is not None or call.session.approval is None:
            raise HTTPException(409, "no approval is pending on this call")
        await call.session.decide(approved)
        return JSONResponse({"id": call.call_id, "approved": approved})


def operator_routes(ctx: CallContext) -> list[Route]:
    api = OperatorAPI(ctx)
    return [Route("/calls", api.calls, methods=["GET"]),
            Route("/calls/{call_id}/events", api.events, methods=["GET"]),
            Route("/calls/{call_id}/timeline", api.timeline, methods=["GET"]),
            Route("/escalations", api.escalations, methods=["GET"]),
            Route("/calls/{call_id}/approval", api.approval, methods=["POST"])]
