"""Streaming adapter for OpenAI-compatible /v1/chat/completions endpoints (OpenAI, vLLM, Ollama, llama.cpp).

Retries happen only before the first event reaches the caller: once tokens may have been spoken, a
broken stream raises `MalformedStream` instead of silently starting over and duplicating speech.
"""

from __future__ import annotations

import asyncio
import os
import random
import socket
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import httpx

from loop.errors import MalformedStream, ModelAuthError, ModelRequestError, ModelUnavailable
from loop.models._openai_wire import (
    Assembly,
    endpoint,
    parse_chunk,
    provider_message,
    redact,
    retry_after,
    sse_payloads,
    wire_message,
)
from loop.types import (
    ModelEvent,
    ModelRequest,
    Pricing,
)

_RETRY_STATUSES = {408, 409, 429}  # plus every 5xx; same set the official OpenAI SDK retries
_MAX_BACKOFF_S = 8.0
_MAX_RETRY_AFTER_S = 30.0  # a voice turn cannot wait longer; give up instead of hanging


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
        warm_prefix: bool | None = None,
    ) -> None:
        self.name = model
        # False: its words go to the caller as they come, with no grounding phase (`loop.grounding.phase`); only for
        # measuring the model path itself (`bench load` against a stand-in that answers every line the same way)
        self.grounds_output = not grounding
        self.model = model
        self.pricing = pricing or Pricing()
        self.url = endpoint(base_url)
        self.timeout_s = timeout_s
        self.max_retries = max(0, max_retries)
        self.backoff_s = backoff_s
        self.extra_body = dict(extra_body or {})
        self._api_key = api_key
        self._transport = transport
        self._client = client  # injected: the caller owns its lifecycle
        self._own: httpx.AsyncClient | None = None
        self._own_loop: asyncio.AbstractEventLoop | None = None
        # A server of one's own (llama.cpp, vLLM, Ollama) keeps the last prompt's prefix: one 1-token request at
        # call start puts the system prompt and tools there, so the first turn does not evaluate them. OpenAI's
        # own endpoint caches on its own and bills the request: off there unless asked for.
        host = urlsplit(self.url).hostname or ""
        self.warm_prefix = not host.endswith("openai.com") if warm_prefix is None else warm_prefix
        self._warming: asyncio.Task | None = None

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
        if self._warming is not None and not self._warming.done():
            self._warming.cancel()
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

    async def warm(self, request: ModelRequest) -> None:
        """Call start: send the stable prefix (system prompt and tools, exactly as every turn sends them) once, in
        the background, asking for one token, so the server holds it before the caller's first turn. Never raises
        and never delays the call: a failure only means the first turn evaluates the prefix itself."""
        if not self.warm_prefix or (self._warming is not None and not self._warming.done()):
            return
        messages = [*request.messages[: request.stable_prefix]]
        body = self.request_body(replace(request, messages=messages, max_output_tokens=1))
        body["messages"].append({"role": "user", "content": "Hello."})  # servers want a turn to answer
        body.update(stream=False)
        body.pop("stream_options", None)
        self._warming = asyncio.create_task(self._post_warm(body), name="warm-model-prefix")

    async def warmed(self) -> None:
        """Until the warm request in flight (if any) is answered."""
        if self._warming is not None:
            await asyncio.shield(self._warming)

    async def _post_warm(self, body: dict[str, Any]) -> None:
        try:
            response = await self._http().post(self.url, json=body, headers=self._headers(),
                                               timeout=httpx.Timeout(max(self.timeout_s, 60.0)))
            await response.aread()
        except (httpx.HTTPError, OSError):
            pass  # the first turn is cold, as it would have been

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body sent for `request`; `extra_body` keys override, and a None value removes one."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [wire_message(m) for m in request.messages],
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
                state = Assembly(self.model)
                async for payload in sse_payloads(resp.aiter_lines()):
                    if payload.strip() == "[DONE]":
                        state.done = True
                        break
                    for event in state.feed(parse_chunk(payload)):
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
        detail = redact(provider_message(resp.text), self._api_key)
        if status in (401, 403):
            hint = "check OPENAI_API_KEY" if self._api_key else "no API key was set (OPENAI_API_KEY)"
            return ModelAuthError(
                f"The provider rejected the API key (HTTP {status}): {hint}; retrying unchanged will fail."
                + (f" Provider said: {detail}" if detail else "")
            )
        if status in _RETRY_STATUSES or status >= 500:
            return _Retryable(f"HTTP {status}: {detail or 'no details'}", retry_after(resp.headers))
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
