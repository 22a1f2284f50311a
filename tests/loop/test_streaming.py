"""Streaming: text reaches listeners word by word while the model is still talking, so speech can start early."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

from loop import Event, ModelRequest, ModelResponse, RunOutcome, ScriptedModel, ScriptedTurn, TextDelta, ToolCall
from loop.types import ModelEvent
from tests.helpers import Calls, agent, read_tool


def test_text_deltas_arrive_word_by_word_before_the_response() -> None:
    events: list[Event] = []
    model = ScriptedModel([ScriptedTurn(text="Let me check.", tool_calls=[ToolCall("lookup_order", {"order_id": "4"})]),
                           "Order 4 has shipped today."])
    result = agent(model, [read_tool(Calls())], listeners=[events.append]).run_sync("where is 4?")
    assert result.outcome is RunOutcome.COMPLETED
    stream = [(e.kind, e.payload.get("turn"), e.payload.get("text") or e.payload.get("name"))
              for e in events if e.kind in ("model_delta", "model_response", "run_finished")]
    assert stream == [
        ("model_delta", 0, "Let "), ("model_delta", 0, "me "), ("model_delta", 0, "check."),
        ("model_delta", 0, "lookup_order"), ("model_response", 0, None),
        ("model_delta", 1, "Order "), ("model_delta", 1, "4 "), ("model_delta", 1, "has "),
        ("model_delta", 1, "shipped "), ("model_delta", 1, "today."), ("model_response", 1, None),
        ("run_finished", None, None)]
    texts = [e for e in events if e.kind == "model_delta" and e.payload["type"] == "text"]
    assert all(len(e.payload["text"].split()) == 1 for e in texts)  # one word per event
    assert "".join(e.payload["text"] for e in texts if e.payload["turn"] == 1) == result.answer


class SlowModel(ScriptedModel):
    """Takes `gap_s` between words, like a model decoding at a human-audible pace."""

    def __init__(self, turns: list[str], gap_s: float) -> None:
        super().__init__(turns)
        self.gap_s = gap_s
        self.streaming = False
        self.finished_at = 0.0

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.streaming = True
        async for event in super().stream(request):
            if isinstance(event, ModelResponse):
                self.streaming, self.finished_at = False, time.perf_counter()
            yield event
            if isinstance(event, TextDelta):
                await asyncio.sleep(self.gap_s)


async def test_an_async_consumer_speaks_while_the_model_is_still_streaming() -> None:
    model = SlowModel(["Your order left the warehouse this morning."], gap_s=0.02)
    queue: asyncio.Queue[Event] = asyncio.Queue()
    spoken: list[tuple[str, bool, float]] = []  # word, model still streaming?, when

    async def speaker() -> None:  # stands in for TTS: consumes deltas as they arrive
        while (event := await queue.get()).kind != "run_finished":
            if event.kind == "model_delta" and event.payload["type"] == "text":
                spoken.append((event.payload["text"], model.streaming, time.perf_counter()))

    task = asyncio.create_task(speaker())
    result = await agent(model, [], listeners=[queue.put_nowait]).run("when did it ship?")
    await asyncio.wait_for(task, 1.0)
    assert result.outcome is RunOutcome.COMPLETED
    assert "".join(w for w, _, _ in spoken) == result.answer
    first_word, still_streaming, at = spoken[0]
    assert first_word == "Your " and still_streaming
    assert at < model.finished_at - 0.05  # at least a few words' worth of time before the model finished
    assert [streaming for _, streaming, _ in spoken] == [True] * len(spoken)
