"""A real, scriptable OpenAI-compatible chat-completions server for tests.

It listens on 127.0.0.1 (free port) in a background thread and speaks HTTP/1.1 with chunked SSE, so the
adapter's real httpx code path (connection reuse, chunk decoding, timeouts, dropped sockets) is exercised.
Each test queues `Reply` objects (built with the helpers below); each POST consumes one, in order.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "test-model"


@dataclass
class Reply:
    """One scripted answer. Non-200 replies send `body` as JSON; 200 replies stream `events` as SSE."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    events: list[str] = field(default_factory=list)  # SSE `data:` payloads, already serialized
    send_done: bool = True  # finish with `data: [DONE]` and a proper end of the chunked body
    break_after: int | None = None  # drop the connection after this many events
    delay_s: float = 0.0  # wait before sending the status line (to trigger read timeouts)
    stall_after: int | None = None  # wait `delay_s` after this many events instead of before the headers


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]  # lower-cased names
    body: Any
    at: float  # time.monotonic() when the request arrived


# ---- reply builders ------------------------------------------------------------------------


def usage(prompt: int, completion: int, cached: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if cached is not None:
        out["prompt_tokens_details"] = {"cached_tokens": cached}
    return out


def chunk(delta: dict[str, Any] | None = None, finish_reason: str | None = None, **extra: Any) -> str:
    """One `chat.completion.chunk` as the OpenAI API streams it."""
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
    body = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0, "model": MODEL}
    return json.dumps({**body, "choices": choices, **extra})


def _close(finish_reason: str, usage_: dict[str, Any] | None) -> list[str]:
    events = [chunk({}, finish_reason)]
    if usage_ is not None:  # stream_options.include_usage: a last chunk with no choices
        events.append(chunk(None, usage=usage_))
    return events


def text_reply(*pieces: str, usage_: dict[str, Any] | None = None, finish_reason: str = "stop") -> Reply:
    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": p}) for p in pieces]
    return Reply(events=events + _close(finish_reason, usage_))


def tool_calls_reply(
    calls: list[tuple[str, str, str]], pieces: int = 3, text: str = "", usage_: dict[str, Any] | None = None
) -> Reply:
    """Parallel tool calls (id, name, raw arguments); arguments split into `pieces` fragments per call,
    and the fragments of different calls interleaved, so assembly must really go by index."""
    events = [chunk({"role": "assistant", "content": text or None})]
    for i, (call_id, name, _) in enumerate(calls):
        head = {"index": i, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        events.append(chunk({"tool_calls": [head]}))
    split = [_split(args, pieces) for _, _, args in calls]
    for step in range(pieces):
        for i, parts in enumerate(split):
            if parts[step]:
                events.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": parts[step]}}]}))
    return Reply(events=events + _close("tool_calls", usage_))


def _split(text: str, pieces: int) -> list[str]:
    size = -(-len(text) // pieces) or 1
    return [text[i * size : (i + 1) * size] for i in range(pieces)]


def error_reply(status: int, message: str, retry_after: float | None = None, **headers: str) -> Reply:
    body = {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}
    hdrs = dict(headers)
    if retry_after is not None:
        hdrs["Retry-After"] = f"{retry_after:g}"
    return Reply(status=status, headers=hdrs, body=body)


def broken_stream(*pieces: str) -> Reply:
    """Streams the role chunk and `pieces`, then drops the connection mid-body."""
    reply = text_reply(*pieces)
    reply.break_after, reply.send_done = 1 + len(pieces), False
    return reply


def garbage_stream(*pieces: str, line: str = "{this is not json") -> Reply:
    reply = text_reply(*pieces)
    reply.events.insert(1 + len(pieces), line)
    return reply


def slow_reply(delay_s: float, then: Reply | None = None) -> Reply:
    """Waits `delay_s` before answering (`then`, or a short text reply)."""
    reply = then or text_reply("late")
    reply.delay_s = delay_s
    return reply


def stalled_stream(*pieces: str, delay_s: float) -> Reply:
    """Streams `pieces`, then goes silent for `delay_s` before finishing."""
    reply = text_reply(*pieces, "never heard")
    reply.stall_after, reply.delay_s = 1 + len(pieces), delay_s
    return reply


# ---- the server ----------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive + chunked, like real providers
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.server.owner._record(RecordedRequest(self.path, headers, body, time.monotonic()))
        reply = self.server.owner._next_reply()
        if reply.delay_s and reply.stall_after is None and self.server.owner.stopping.wait(reply.delay_s):
            return
        if reply.status != 200:
            self._send_json(reply)
        else:
            self._send_stream(reply)

    def _send_json(self, reply: Reply) -> None:
        data = json.dumps(reply.body).encode() if not isinstance(reply.body, bytes) else reply.body
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, reply: Reply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        self._write_chunk(": keep-alive comment, clients must ignore it\n\n")
        for n, payload in enumerate(reply.events):
            if n == reply.break_after:
                self.close_connection = True  # no terminating chunk: the body is cut short
                return
            if n == reply.stall_after and self.server.owner.stopping.wait(reply.delay_s):
                return
            self._write_chunk(f"data: {payload}\n\n")
        if reply.send_done:
            self._write_chunk("data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")

    def _write_chunk(self, text: str) -> None:
        data = text.encode()
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: OpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that time out close their socket; the late write failing is expected


class OpenAIServer:
    """Use as a context manager; `base_url` ends in /v1 like the OpenAI SDK's."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.stopping = threading.Event()
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.daemon = True

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    @property
    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_reply(self) -> Reply:
        with self._lock:
            if self._replies:
                return self._replies.popleft()
        return error_reply(500, "openai_server: no scripted reply left for this request")

    def start(self) -> OpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()  # wakes slow/stalled handlers so nothing outlives the test
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=2)

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def free_port() -> int:
    """A port nothing listens on (for connection-refused tests)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
