"""OpenTelemetry for a whole call, read back with the SDK's in-memory span exporter and metric reader: the
GenAI conventions (conversation id = the call id for every run, provider name), one span per turn with end of
turn, STT, model, tool and TTS spans under it, and the voice metrics."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import loop.otel
import voice.observe.otel
from loop import Agent, LoopConfig, ScriptedModel, ScriptedTurn, ToolCall
from tests.fakes import LoudnessVAD, ScriptedSTT, ToneTTS, WordChunker, track
from voice.demo.order_desk import OrderDesk, order_policy
from voice.runtime.session import CallSession, SessionConfig


@pytest.fixture
def otel(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[InMemorySpanExporter, InMemoryMetricReader]]:
    """Private SDK providers: the global ones are never set, so other tests stay no-op."""
    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    tp, mp = TracerProvider(), MeterProvider(metric_readers=[reader])
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    for module in (loop.otel, voice.observe.otel):
        monkeypatch.setattr(module, "_tracer", tp.get_tracer("voiceloop"))
        monkeypatch.setattr(module, "_meter", mp.get_meter("voiceloop"))
    yield exporter, reader
    tp.shutdown()
    mp.shutdown()


def _session(model: Any, tmp_path: Path, stt: dict[int, str], call_id: str, **cfg: Any) -> CallSession:
    desk = OrderDesk(tmp_path / "orders.db")
    tools = [replace(t, answers=False) for t in desk.tools()]  # the model words each answer: its usage is exact
    agent = Agent(model=model, tools=tools, policy=order_policy(), config=LoopConfig.profile("voice"),
                  journal_path=str(tmp_path / "j.db"))
    return CallSession(agent, LoudnessVAD(), ScriptedSTT(stt), ToneTTS(), WordChunker, SessionConfig(**cfg),
                       call_id=call_id)


def _metrics(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    data = reader.get_metrics_data()
    for rm in data.resource_metrics if data else []:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                out.setdefault(metric.name, []).extend(metric.data.data_points)
    return out


def _named(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def test_a_call_is_one_conversation_with_a_span_per_turn_and_its_parts(
        otel: tuple[InMemorySpanExporter, InMemoryMetricReader], tmp_path: Path) -> None:
    exporter, reader = otel
    model = ScriptedModel([ScriptedTurn(tool_calls=[ToolCall("lookup_order", {"order_id": "4567"})],
                                        input_tokens=120, output_tokens=9),
                           ScriptedTurn(text="It shipped on Monday.", input_tokens=150, output_tokens=6),
                           ScriptedTurn(text="You are welcome.", input_tokens=170, output_tokens=4)])
    session = _session(model, tmp_path, {40: "where is my order 4567?", 20: "thanks a lot."}, "call-abc",
                       speculate=False, preempt=False)  # the lookup runs in the turn's run, not ahead of it
    asyncio.run(session.run_file(track((0.2, 40), (5.0, 20), total_s=9.0)))
    assert [t.user_text for t in session.turns] == ["where is my order 4567?", "thanks a lot."]

    spans = exporter.get_finished_spans()
    runs = _named(spans, "invoke_agent voiceloop")
    assert len(runs) == 2  # two runs, one conversation: the call's id, never a run id
    assert {r.attributes["gen_ai.conversation.id"] for r in runs} == {"call-abc"}
    assert {r.attributes["gen_ai.provider.name"] for r in runs} == {"voiceloop.scripted"}
    assert len({r.attributes["voiceloop.run_id"] for r in runs}) == 2
    chats = _named(spans, "chat scripted")
    assert len(chats) == 3 and {c.attributes["gen_ai.provider.name"] for c in chats} == {"voiceloop.scripted"}
    assert {c.attributes["gen_ai.conversation.id"] for c in chats} == {"call-abc"}

    turns = sorted(_named(spans, "voice_turn"), key=lambda s: s.attributes["voiceloop.turn"])
    assert [t.attributes["voiceloop.caller.text"] for t in turns] == ["where is my order 4567?", "thanks a lot."]
    for turn, run in zip(turns, sorted(runs, key=lambda r: r.start_time), strict=True):
        children = {s.name for s in spans if s.parent is not None and s.parent.span_id == turn.context.span_id}
        assert {"end_of_turn", "speech_to_text", "text_to_speech", "invoke_agent voiceloop"} <= children
        assert run.parent.span_id == turn.context.span_id
        assert turn.attributes["gen_ai.conversation.id"] == "call-abc"
        assert turn.attributes["voiceloop.outcome"] == "COMPLETED"
        assert turn.attributes["voiceloop.latency.voice_to_voice_ms"] > 0
    (tool,) = _named(spans, "execute_tool lookup_order")
    first_run = min(runs, key=lambda r: r.start_time)
    assert tool.parent.span_id == first_run.context.span_id
    assert sum(c.parent.span_id == first_run.context.span_id for c in chats) == 2  # the lookup, then the answer
    end_of_turn = next(s for s in spans if s.name == "end_of_turn" and s.parent.span_id == turns[0].context.span_id)
    assert end_of_turn.end_time - end_of_turn.start_time == pytest.approx(
        session.turns[0].latency_ms["endpointing"] * 1e6, rel=0.01)

    points = _metrics(reader)
    v2v = points["voiceloop.voice_to_voice"]
    assert sum(p.count for p in v2v) == 2
    assert {p.attributes["voiceloop.tools"] for p in v2v} == {True, False}  # the first turn looked the order up
    tokens = {p.attributes["gen_ai.token.type"]: p.sum for p in points["gen_ai.client.token.usage"]}
    assert tokens == {"input": 120 + 150 + 170, "output": 9 + 6 + 4}
    assert sum(p.count for p in points["gen_ai.server.time_to_first_token"]) == 3
    assert sum(p.count for p in points["gen_ai.client.operation.duration"]) == 3
    parts = {p.attributes["voiceloop.latency.part"] for p in points["voiceloop.latency.part"]}
    assert parts == {"endpointing", "stt", "llm_first_token", "first_clause", "tts_first_audio"}
    assert "voiceloop.barge_ins" not in points


def test_a_barge_in_is_counted_and_marked_on_its_turn(
        otel: tuple[InMemorySpanExporter, InMemoryMetricReader], tmp_path: Path) -> None:
    exporter, reader = otel
    long_answer = " ".join(["word"] * 60) + "."
    model = ScriptedModel([long_answer, "Sure, what else?"])
    session = _session(model, tmp_path, {40: "tell me everything about my order.",
                                         30: "no stop that please right now."}, "call-barge")
    asyncio.run(session.run_file(track((0.2, 40), (4.0, 30), total_s=9.0)))
    assert "barge_in" in [e["kind"] for e in session.trace]

    points = _metrics(reader)
    (barges,) = points["voiceloop.barge_ins"]
    assert barges.value == 1 and barges.attributes["voiceloop.transport"] == "file"
    spans = exporter.get_finished_spans()
    first = next(s for s in _named(spans, "voice_turn") if s.attributes["voiceloop.turn"] == 0)
    assert "barge_in" in [e.name for e in first.events]
    assert [e.name for e in first.events].index("agent_paused") < [e.name for e in first.events].index("barge_in")
