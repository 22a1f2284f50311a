"""The OpenAI chat-completions wire format, without I/O: a `Message` as the API takes it, a streamed chunk parsed,
the chunks assembled into events and a `ModelResponse`, and a provider's error made fit to log (`loop.models.openai`
is the driver that sends and receives)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from loop.errors import MalformedStream
from loop.types import (
    Message,
    ModelEvent,
    ModelResponse,
    Pricing,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
    canonical_json,
)

_KEY_PATTERN = re.compile(r"sk-[A-Za-z0-9_*\-]{4,}")  # providers echo (partly masked) keys in errors


class Assembly:
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
            ToolCall(name=c["name"], arguments=parse_arguments(c["arguments"]), id=c["id"])
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


def endpoint(base_url: str) -> str:
    """Accept 'https://host/v1' (SDK convention), a bare 'http://host:port', or the full endpoint URL."""
    url = base_url.rstrip("/")
    if url.endswith("/chat/completions"):
        return url
    if urlsplit(url).path in ("", "/"):
        url += "/v1"
    return url + "/chat/completions"


def wire_message(msg: Message) -> dict[str, Any]:
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


async def sse_payloads(lines: AsyncIterator[str]) -> AsyncIterator[str]:
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


def parse_chunk(payload: str) -> dict[str, Any]:
    try:
        chunk = json.loads(payload)
    except ValueError:
        raise MalformedStream(f"Non-JSON data line in the stream: {trim(payload, 120)!r}") from None
    if not isinstance(chunk, dict):
        raise MalformedStream(f"Unexpected data line in the stream: {trim(payload, 120)!r}")
    if "error" in chunk:
        raise MalformedStream(f"The provider reported an error mid-stream: {provider_message(payload)}")
    return chunk


def parse_arguments(raw: str) -> dict[str, Any]:
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


def provider_message(text: str) -> str:
    """The human part of an error body: OpenAI/vLLM/Ollama `error.message` or `message`, FastAPI `detail`."""
    try:
        data = json.loads(text)
    except ValueError:
        return trim(text)
    err = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(err, dict):
        err = err.get("message") or err.get("detail") or json.dumps(err)
    return trim(str(err))


def retry_after(headers: httpx.Headers) -> float | None:
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


def redact(text: str, api_key: str | None) -> str:
    if api_key:
        text = text.replace(api_key, "[redacted]")
    return _KEY_PATTERN.sub("sk-[redacted]", text)


def trim(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
