"""OpenTelemetry spans named by the GenAI semantic conventions. A no-op unless an SDK is configured."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace

from loop.types import ToolCall

_tracer = trace.get_tracer("voiceloop")


def _clean(attrs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in attrs.items() if v is not None}


@contextmanager
def agent_span(agent_name: str, run_id: str, profile: str) -> Iterator[trace.Span]:
    with _tracer.start_as_current_span(f"invoke_agent {agent_name}", kind=trace.SpanKind.INTERNAL,
                                       attributes={"gen_ai.operation.name": "invoke_agent",
                                                   "gen_ai.agent.name": agent_name,
                                                   "gen_ai.conversation.id": run_id,
                                                   "voiceloop.profile": profile}) as span:
        yield span


@contextmanager
def chat_span(model: str, turn: int, max_tokens: int) -> Iterator[trace.Span]:
    with _tracer.start_as_current_span(f"chat {model}", kind=trace.SpanKind.CLIENT,
                                       attributes={"gen_ai.operation.name": "chat",
                                                   "gen_ai.request.model": model,
                                                   "gen_ai.request.max_tokens": max_tokens,
                                                   "voiceloop.turn": turn}) as span:
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
