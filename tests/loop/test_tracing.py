"""OpenTelemetry spans: GenAI names and attributes, parentage across threads and tasks, and no-op without an SDK."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import loop.otel
from loop import RunOutcome, ScriptedModel, ScriptedTurn, Tool, ToolCall
from tests.helpers import ORDER_SCHEMA, Calls, agent, read_tool


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """A private SDK provider: the global provider is never set, so other tests stay no-op."""
    exporter = InMemorySpanExporter()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(loop.otel, "_tracer", tp.get_tracer("voiceloop"))
    yield tp, exporter
    tp.shutdown()


def _by_name(spans: tuple[ReadableSpan, ...]) -> dict[str, list[ReadableSpan]]:
    out: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        out.setdefault(span.name, []).append(span)
    return out


def test_spans_follow_the_genai_conventions(provider: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    _, exporter = provider
    model = ScriptedModel([ScriptedTurn(tool_calls=[ToolCall("lookup_order", {"order_id": "42"})], input_tokens=50,
                                        output_tokens=7), ScriptedTurn(text="It shipped.", input_tokens=80,
                                                                       output_tokens=3)])
    result = agent(model, [read_tool(Calls())]).run_sync("where is 42?")
    assert result.outcome is RunOutcome.COMPLETED
    spans = _by_name(exporter.get_finished_spans())
    assert sorted(spans) == ["chat scripted", "execute_tool lookup_order", "invoke_agent voiceloop"]
    (run,) = spans["invoke_agent voiceloop"]
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["gen_ai.conversation.id"] == result.run_id
    assert run.attributes["voiceloop.outcome"] == "COMPLETED"
    assert run.attributes["voiceloop.turns"] == 2
    chats = sorted(spans["chat scripted"], key=lambda s: s.attributes["voiceloop.turn"])
    assert [(c.attributes["gen_ai.operation.name"], c.attributes["gen_ai.request.model"],
             c.attributes["gen_ai.usage.input_tokens"], c.attributes["gen_ai.usage.output_tokens"])
            for c in chats] == [("chat", "scripted", 50, 7), ("chat", "scripted", 80, 3)]
    assert all(c.parent is not None and c.parent.span_id == run.context.span_id for c in chats)
    (tool,) = spans["execute_tool lookup_order"]
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.name"] == "lookup_order"
    assert tool.attributes["gen_ai.tool.call.id"] == "call_t0_0"
    assert tool.attributes["voiceloop.tool.status"] == "ok"


def test_spans_inside_tools_are_children_of_their_execute_tool_span(
        provider: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    tp, exporter = provider
    inner = tp.get_tracer("tools")

    def lookup_order(order_id: str) -> str:  # sync: runs in a worker thread
        with inner.start_as_current_span("db query"):
            time.sleep(0.05)
        return f"order {order_id} shipped"

    async def track_parcel(order_id: str) -> str:
        with inner.start_as_current_span("carrier api"):
            await asyncio.sleep(0.05)
        return f"parcel {order_id} in transit"

    tools = [Tool(lookup_order, args=ORDER_SCHEMA), Tool(track_parcel, args=ORDER_SCHEMA)]
    batch = [ToolCall("lookup_order", {"order_id": "1"}), ToolCall("track_parcel", {"order_id": "1"})]
    result = agent(ScriptedModel([batch, "On its way."]), tools).run_sync("where is 1?")
    assert result.outcome is RunOutcome.COMPLETED
    spans = _by_name(exporter.get_finished_spans())
    (run,) = spans["invoke_agent voiceloop"]
    for tool_name, work in (("lookup_order", "db query"), ("track_parcel", "carrier api")):
        (tool,), (child,) = spans[f"execute_tool {tool_name}"], spans[work]
        assert child.parent is not None and child.parent.span_id == tool.context.span_id, work
        assert tool.parent is not None and tool.parent.span_id == run.context.span_id, tool_name
        assert child.context.trace_id == run.context.trace_id
    a, b = spans["execute_tool lookup_order"][0], spans["execute_tool track_parcel"][0]
    assert a.start_time < b.end_time and b.start_time < a.end_time  # the two reads overlapped


def test_without_an_sdk_tracing_is_a_silent_no_op() -> None:
    assert not isinstance(trace.get_tracer_provider(), TracerProvider)  # nothing configured globally
    seen: list[bool] = []

    def lookup_order(order_id: str) -> str:
        span = trace.get_current_span()
        seen.append(span.is_recording() or span.get_span_context().is_valid)
        return "shipped"

    async def track_parcel(order_id: str) -> str:
        seen.append(trace.get_current_span().is_recording())
        return "in transit"

    tools = [Tool(lookup_order, args=ORDER_SCHEMA), Tool(track_parcel, args=ORDER_SCHEMA)]
    batch = [ToolCall("lookup_order", {"order_id": "1"}), ToolCall("track_parcel", {"order_id": "1"})]
    result = agent(ScriptedModel([batch, "On its way."]), tools).run_sync("where is 1?")
    assert result.outcome is RunOutcome.COMPLETED
    assert seen == [False, False]
