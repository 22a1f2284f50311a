"""Streaming adapter for OpenAI-compatible /v1/chat/completions endpoints (OpenAI, vLLM, Ollama, llama.cpp).

Retries happen only before the first event reaches the caller: once tokens may have been spoken, a
broken stream raises `MalformedStream` instead of silently starting over and duplicating speech.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import socket
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from loop.errors import MalformedStream, ModelAuthError, ModelRequestError, ModelUnavailable
from loop.types import (
    Message,
    ModelEvent,
    ModelRequest,
    ModelResponse,
    Pricing,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
    canonical_json,
)

_RETRY_STATUSES = {408, 409, 429}  # plus every 5xx; same set the official OpenAI SDK retries
_MAX_BACKOFF_S = 8.0
_MAX_RETRY_AFTER_S = 30.0  # a voice turn cannot wait longer; give up instead of hanging
_KEY_PATTERN = re.compile(r"sk-[A-Za-z0-9_*\-]{4,}")  # providers echo (partly masked) keys in errors


class _Retryable(Exception):
    """A failure before any output was yielded; the same request may succeed on another attempt."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class OpenAICompatModel:
    """`Model` over an OpenAI-compatible chat-completions endpoint, streamed with SSE via httpx."""

    provider = "openai"  # gen_ai.provider.name: the wire protocol spoken (a local server says it as well)

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        pricing: Pricing | None = None,
        timeout_s: float = 30.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        transport: httpx.AsyncBaseTransport | None = None,
        client: httpx.AsyncClient | None = None,
        extra_body: dict[str, Any] | None = None,
        grounding: bool = True,
    ) -> None:
        self.name = model
        # False: its words go to the caller as they come, with no grounding phase (`loop.grounding.phase`); only for
        # measuring the model path itself (`bench load` against a stand-in that answers every line the same way)
        self.grounds_output = not grounding
        self.model = model
        self.pricing = pricing or Pricing()
        self.url = _endpoint(base_url)
        self.timeout_s = timeout_s
        self.max_retries = max(0, max_retries)
        self.backoff_s = backoff_s
        self.extra_body = dict(extra_body or {})
        self._api_key = api_key
        self._transport = transport
        self._client = client  # injected: the caller owns its lifecycle
        self._own: httpx.AsyncClient | None = None
        self._own_loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **kwargs: Any) -> OpenAICompatModel:
        """Build from VOICELOOP_LLM_URL, VOICELOOP_LLM_MODEL, OPENAI_API_KEY (optional for local servers);
        VOICELOOP_LLM_GROUNDING=off passes the model's words through ungrounded (for measuring the model path)."""
        env = os.environ if env is None else env
        values = {}
        for var in ("VOICELOOP_LLM_URL", "VOICELOOP_LLM_MODEL"):
            if not env.get(var, "").strip():
                raise ValueError(f"{var} is not set: export VOICELOOP_LLM_URL=http://HOST:PORT/v1 and "
                                 "VOICELOOP_LLM_MODEL=MODEL_ID (the OpenAI-compatible server and its model id)")
            values[var] = env[var].strip()
        api_key = env.get("OPENAI_API_KEY", "").strip() or None
        if api_key is None and (urlsplit(values["VOICELOOP_LLM_URL"]).hostname or "").endswith("openai.com"):
            raise ValueError("OPENAI_API_KEY is not set, and the OpenAI API requires it")
        grounding = env.get("VOICELOOP_LLM_GROUNDING", "on").strip().lower() not in ("off", "0", "false", "no")
        return cls(values["VOICELOOP_LLM_URL"], values["VOICELOOP_LLM_MODEL"], api_key=api_key,
                   **{"grounding": grounding, **kwargs})

    def unreachable(self, timeout_s: float = 3.0) -> str | None:
        """Why nothing answers at the URL, in one line naming it, or None (a TCP connect, not a request): for a
        command that can tell at load that every turn of its call would fail."""
        if self._transport is not None or self._client is not None:
            return None  # an injected transport or client: there is no socket to try
        parts = urlsplit(self.url)
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
            with socket.create_connection((parts.hostname or "", port), timeout=timeout_s):
                return None
        except (OSError, ValueError) as exc:
            return (f"no server answers at {self.url} ({exc}): start it, or point VOICELOOP_LLM_URL at the one "
                    "that runs")

    def count_tokens(self, text: str) -> int:
        """Cheap estimate (~4 chars/token); good enough for budgeting, not for billing."""
        return max(1, (len(text) + 3) // 4) if text else 0

    async def aclose(self) -> None:
        if self._own is not None:
            await self._own.aclose()
            self._own = None

    async def __aenter__(self) -> OpenAICompatModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        body = self.request_body(request)
        timeout = request.timeout_s or self.timeout_s
        attempts = self.max_retries + 1
        last = _Retryable("no attempt made")
        for attempt in range(attempts):
            try:
                # aclosing: if our caller stops early, the HTTP response is released now, not at GC
                async with aclosing(self._attempt(body, timeout, request)) as events:
                    async for event in events:
                        yield event
                return
            except _Retryable as exc:
                last = exc
            if attempt + 1 < attempts:
                await asyncio.sleep(self._delay(attempt, last))
        raise ModelUnavailable(
            f"Model {self.model!r} at {self.url} unavailable after {attempts} attempt(s); last failure: "
            f"{last.reason}"
        ) from last

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body sent for `request`; `extra_body` keys override, and a None value removes one."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [_wire_message(m) for m in request.messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": request.max_output_tokens,
        }
        if request.tools:  # some servers reject an empty tools list
            body["tools"] = request.tools
        body.update(self.extra_body)
        return {k: v for k, v in body.items() if v is not None}

    # ---- one HTTP attempt ------------------------------------------------------------------

    async def _attempt(self, body: dict[str, Any], timeout: float, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        yielded = False
        try:
            async with self._http().stream(
                "POST", self.url, json=body, headers=self._headers(), timeout=httpx.Timeout(timeout)
            ) as resp:
                if not resp.is_success:
                    await resp.aread()
                    raise self._status_error(resp)
                state = _Assembly(self.model)
                async for payload in _sse_payloads(resp.aiter_lines()):
                    if payload.strip() == "[DONE]":
                        state.done = True
                        break
                    for event in state.feed(_parse_chunk(payload)):
                        yielded = True
                        yield event
                if not (state.done or state.finish_reason):
                    raise MalformedStream("The stream ended without [DONE] or a finish_reason")
                yield state.response(self.pricing, self._estimate_input(request))
        except httpx.UnsupportedProtocol as exc:
            raise ModelRequestError(f"Bad LLM URL {self.url!r}: {exc}") from exc
        except httpx.RequestError as exc:
            reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            if yielded:  # tokens already went out: retrying would repeat them
                raise MalformedStream(f"The stream broke off after partial output ({reason})") from exc
            raise _Retryable(reason) from exc

    def _status_error(self, resp: httpx.Response) -> Exception:
        status = resp.status_code
        detail = _redact(_provider_message(resp.text), self._api_key)
        if status in (401, 403):
            hint = "check OPENAI_API_KEY" if self._api_key else "no API key was set (OPENAI_API_KEY)"
            return ModelAuthError(
                f"The provider rejected the API key (HTTP {status}): {hint}; retrying unchanged will fail."
                + (f" Provider said: {detail}" if detail else "")
            )
        if status in _RETRY_STATUSES or status >= 500:
            return _Retryable(f"HTTP {status}: {detail or 'no details'}", _retry_after(resp.headers))
        return ModelRequestError(f"The provider refused the request (HTTP {status}): {detail or 'no details'}")

    def _delay(self, attempt: int, failure: _Retryable) -> float:
        if failure.retry_after is not None:
            if failure.retry_after > _MAX_RETRY_AFTER_S:
                raise ModelUnavailable(
                    f"Model {self.model!r} unavailable: the provider asked to retry after "
                    f"{failure.retry_after:.0f}s ({failure.reason})"
                ) from failure
            return failure.retry_after
        # exponential with jitter so many sessions hitting one overloaded server do not retry in lockstep
        return min(_MAX_BACKOFF_S, self.backoff_s * 2**attempt) * random.uniform(0.5, 1.0)

    def _http(self) -> httpx.AsyncClient:
        if self._client is not None:
            return self._client
        loop = asyncio.get_running_loop()
        # an httpx client is tied to the event loop it first ran on; asyncio.run() per call needs a new one
        if self._own is None or self._own.is_closed or self._own_loop is not loop:
            self._own = httpx.AsyncClient(transport=self._transport, timeout=self.timeout_s)
            self._own_loop = loop
        return self._own

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _estimate_input(self, request: ModelRequest) -> int:
        return sum(self.count_tokens(m.content) for m in request.messages)


class _Assembly:
    """Accumulates chunk deltas into the final response; parallel tool calls are keyed by index."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.text: list[str] = []
        self.calls: dict[int, dict[str, str]] = {}
        self.finish_reason = ""
        self.refusal: list[str] = []
        self.usage: dict[str, Any] | None = None
        self.done = False

    def feed(self, chunk: dict[str, Any]) -> list[ModelEvent]:
        self.model = chunk.get("model") or self.model
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        events: list[ModelEvent] = []
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:  # we never ask for n > 1
                continue
            delta = choice.get("delta") or {}
            if delta.get("content"):  # reasoning_content etc. is deliberately never spoken
                self.text.append(delta["content"])
                events.append(TextDelta(delta["content"]))
            if delta.get("refusal"):  # OpenAI's refusal field: never spoken, never an answer
                self.refusal.append(delta["refusal"])
            for pos, frag in enumerate(delta.get("tool_calls") or []):
                events.append(self._tool_fragment(frag, pos))
            self.finish_reason = choice.get("finish_reason") or self.finish_reason
        return events

    def _tool_fragment(self, frag: dict[str, Any], pos: int) -> ToolCallDelta:
        index = frag.get("index", pos)
        fn = frag.get("function") or {}
        call = self.calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        call["id"] = call["id"] or frag.get("id") or ""
        name = fn.get("name") or ""
        # most servers send the name once; some repeat it whole in every fragment, some split it
        call["name"] = name if name.startswith(call["name"]) else call["name"] + name
        call["arguments"] += fn.get("arguments") or ""
        return ToolCallDelta(index=index, id=frag.get("id"), name=fn.get("name"), arguments=fn.get("arguments") or "")

    def response(self, pricing: Pricing, input_estimate: int) -> ModelResponse:
        calls = [
            ToolCall(name=c["name"], arguments=_parse_arguments(c["arguments"]), id=c["id"])
            for _, c in sorted(self.calls.items())
        ]
        text = "".join(self.text)
        if self.usage is not None:
            details = self.usage.get("prompt_tokens_details") or {}
            usage = Usage(
                input_tokens=int(self.usage.get("prompt_tokens") or 0),
                output_tokens=int(self.usage.get("completion_tokens") or 0),
                cached_input_tokens=int(details.get("cached_tokens") or 0),
            )
        else:  # server ignored include_usage: estimate so budgets still move
            produced = text + "".join(c["arguments"] for c in self.calls.values())
            usage = Usage(input_tokens=input_estimate, output_tokens=max(1, (len(produced) + 3) // 4))
        usage.cost_usd = pricing.cost(usage.input_tokens, usage.output_tokens)
        finish = self.finish_reason or ("tool_calls" if calls else "stop")
        return ModelResponse(text=text, tool_calls=calls, usage=usage, finish_reason=finish, model=self.model,
                             refusal="".join(self.refusal))


# ---- helpers -------------------------------------------------------------------------------


def _endpoint(base_url: str) -> str:
    """Accept 'https://host/v1' (SDK convention), a bare 'http://host:port', or the full endpoint URL."""
    url = base_url.rstrip("/")
    if url.endswith("/chat/completions"):
        return url
    if urlsplit(url).path in ("", "/"):
        url += "/v1"
    return url + "/chat/completions"


def _wire_message(msg: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": msg.role, "content": msg.content}
    if msg.role == "tool":
        out["tool_call_id"] = msg.tool_call_id or ""
        return out  # the tool role has no `name` field in the OpenAI schema
    if msg.tool_calls:
        # "" rather than null: OpenAI accepts both; llama.cpp's server rejects null and its chat template
        # needs the key to exist.
        out["content"] = msg.content
        out["tool_calls"] = [
            # canonical JSON keeps the replayed history byte-identical, which keeps prompt caching hits
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": canonical_json(c.arguments)},
            }
            for c in msg.tool_calls
        ]
    if msg.name:
        out["name"] = msg.name
    return out


async def _sse_payloads(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """Yield each SSE event's data; comment (':') / event / id / retry lines carry nothing we need."""
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield "\n".join(data)
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        yield "\n".join(data)


def _parse_chunk(payload: str) -> dict[str, Any]:
    try:
        chunk = json.loads(payload)
    except ValueError:
        raise MalformedStream(f"Non-JSON data line in the stream: {_trim(payload, 120)!r}") from None
    if not isinstance(chunk, dict):
        raise MalformedStream(f"Unexpected data line in the stream: {_trim(payload, 120)!r}")
    if "error" in chunk:
        raise MalformedStream(f"The provider reported an error mid-stream: {_provider_message(payload)}")
    return chunk


def _parse_arguments(raw: str) -> dict[str, Any]:
    """Arguments as a dict; invalid JSON is kept, not raised, so the loop can show it to the model."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
        if isinstance(value, str):  # some local models double-encode the arguments
            value = json.loads(value)
    except ValueError:
        return {"__invalid_json__": raw}
    return value if isinstance(value, dict) else {"__invalid_json__": raw}


def _provider_message(text: str) -> str:
    """The human part of an error body: OpenAI/vLLM/Ollama `error.message` or `message`, FastAPI `detail`."""
    try:
        data = json.loads(text)
    except ValueError:
        return _trim(text)
    err = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(err, dict):
        err = err.get("message") or err.get("detail") or json.dumps(err)
    return _trim(str(err))


def _retry_after(headers: httpx.Headers) -> float | None:
    """Seconds the provider asked us to wait: `retry-after-ms` (OpenAI), else `retry-after` (secs or date)."""
    try:
        if ms := headers.get("retry-after-ms"):
            return max(0.0, float(ms) / 1000)
        value = headers.get("retry-after", "").strip()
        if value.replace(".", "", 1).isdigit():
            return float(value)
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time()) if value else None
    except (ValueError, TypeError):
        return None


def _redact(text: str, api_key: str | None) -> str:
    if api_key:
        text = text.replace(api_key, "[redacted]")
    return _KEY_PATTERN.sub("sk-[redacted]", text)


def _trim(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
