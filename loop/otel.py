"""OpenTelemetry spans and metrics named by the GenAI semantic conventions. A no-op unless an SDK is configured.

Spans: `invoke_agent {agent}` per run, `chat {model}` per model call, `execute_tool {name}` per tool call, each
with `gen_ai.operation.name`, `gen_ai.provider.name` and `gen_ai.conversation.id` (the voice call's id, so every
run of one call shares it; a bare run uses its own run id). Metrics (OTel metrics API): `gen_ai.client.token.usage`
(histogram, `{token}`, per `gen_ai.token.type`), `gen_ai.client.operation.duration` (s) and
`gen_ai.server.time_to_first_token` (s) per model call.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from opentelemetry import metrics, trace

from loop.types import ToolCall

_tracer = trace.get_tracer("voiceloop")
_meter = metrics.get_meter("voiceloop")
UNKNOWN_PROVIDER = "unknown"  # a model that does not say which provider it is
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576)  # the convention's advice
SECONDS_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)


def _clean(attrs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in attrs.items() if v is not None}


def provider_name(model: Any) -> str:
    """`gen_ai.provider.name` of a model: its `provider` attribute (`openai`, `llama.cpp`, ...)."""
    return str(getattr(model, "provider", "") or UNKNOWN_PROVIDER)


@contextmanager
def agent_span(agent_name: str, run_id: str, profile: str, conversation_id: str = "",
               provider: str = UNKNOWN_PROVIDER) -> Iterator[trace.Span]:
    with _tracer.start_as_current_span(f"invoke_agent {agent_name}", kind=trace.SpanKind.INTERNAL,
                                       attributes={"gen_ai.operation.name": "invoke_agent",
                                                   "gen_ai.agent.name": agent_name,
                                                   "gen_ai.provider.name": provider,
                                                   "gen_ai.conversation.id": conversation_id or run_id,
                                                   "voiceloop.run_id": run_id,
                                                   "voiceloop.profile": profile}) as span:
        yield span


@contextmanager
def chat_span(model: str, turn: int, max_tokens: int, provider: str = UNKNOWN_PROVIDER,
              conversation_id: str = "") -> Iterator[trace.Span]:
    attrs = _clean({"gen_ai.operation.name": "chat", "gen_ai.request.model": model,
                    "gen_ai.provider.name": provider, "gen_ai.request.max_tokens": max_tokens,
                    "gen_ai.conversation.id": conversation_id or None, "voiceloop.turn": turn})
    with _tracer.start_as_current_span(f"chat {model}", kind=trace.SpanKind.CLIENT, attributes=attrs) as span:
        yield span


@contextmanager
def tool_span(call: ToolCall) -> Iterator[trace.Span]:
    with _tracer.start_as_current_span(f"execute_tool {call.name}", kind=trace.SpanKind.INTERNAL,
                                       attributes={"gen_ai.operation.name": "execute_tool",
                                                   "gen_ai.tool.name": call.name,
                                                   "gen_ai.tool.call.id": call.id}) as span:
        yield span


def annotate(span: trace.Span, **attrs: Any) -> None:
    """Set attributes given as keyword names with `__` standing for `.`."""
    for key, value in _clean(attrs).items():
        span.set_attribute(key.replace("__", "."), value)


@dataclass(frozen=True)
class ModelCallMetrics:
    """One model call, measured: what the GenAI client metrics record."""

    model: str
    provider: str
    input_tokens: int
    output_tokens: int
    duration_s: float
    first_token_s: float | None  # None: the reply streamed no text or tool call before it ended
    error: str = ""


@dataclass(frozen=True)
class _Instruments:
    tokens: metrics.Histogram
    duration: metrics.Histogram
    first_token: metrics.Histogram


@lru_cache(maxsize=8)
def _instruments(meter: metrics.Meter) -> _Instruments:
    return _Instruments(
        meter.create_histogram("gen_ai.client.token.usage", unit="{token}",
                               description="Number of input and output tokens used",
                               explicit_bucket_boundaries_advisory=list(TOKEN_BUCKETS)),
        meter.create_histogram("gen_ai.client.operation.duration", unit="s", description="GenAI operation duration",
                               explicit_bucket_boundaries_advisory=list(SECONDS_BUCKETS)),
        meter.create_histogram("gen_ai.server.time_to_first_token", unit="s",
                               description="Time to generate the first token of the reply",
                               explicit_bucket_boundaries_advisory=list(SECONDS_BUCKETS)))


def record_model_call(m: ModelCallMetrics) -> None:
    """Token usage, duration and time to first token of one model call, through the OTel metrics API."""
    inst = _instruments(_meter)
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": m.provider, "gen_ai.request.model": m.model}
    if m.error:
        inst.duration.record(m.duration_s, {**attrs, "error.type": m.error})
        return
    inst.duration.record(m.duration_s, attrs)
    inst.tokens.record(m.input_tokens, {**attrs, "gen_ai.token.type": "input"})
    inst.tokens.record(m.output_tokens, {**attrs, "gen_ai.token.type": "output"})
    if m.first_token_s is not None:
        inst.first_token.record(m.first_token_s, attrs)
