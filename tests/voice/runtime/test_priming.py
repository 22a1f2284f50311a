"""Preemptive decisions: a model call started in the caller's pause serves the run's identical request."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from loop import Agent, LoopConfig, Message, ModelRequest, ModelResponse, TextDelta, ToolCall, Usage
from loop.types import Pricing
from tests.fakes import LoudnessVAD, ScriptedSTT, ToneTTS, WordChunker, track
from voice.demo.order_desk import OrderDesk, order_policy
from voice.runtime.priming import PrimedModel
from voice.runtime.session import CallSession, SessionConfig


class CountingModel:
    """Looks the order up, then answers from the tool result; counts real calls."""

    name, pricing = "counting", Pricing()

    def __init__(self, delay_s: float = 0.0) -> None:
        self.calls: list[str] = []
        self.delay_s = delay_s

    def count_tokens(self, text: str) -> int:
        return len(text) // 4 + 1

    async def stream(self, request: ModelRequest):
        last = request.messages[-1]
        self.calls.append(last.role)
        await asyncio.sleep(self.delay_s)
        if last.role == "tool":
            yield TextDelta("It shipped.")
            yield ModelResponse(text="It shipped.", usage=Usage(10, 3))
            return
        yield ModelResponse(tool_calls=[ToolCall("lookup_order", {"order_id": "4567"}, "c1")], usage=Usage(10, 5))


def request(text: str) -> ModelRequest:
    return ModelRequest([Message("system", "s"), Message("user", text)], [], 64)


def test_an_identical_request_is_served_from_the_primed_call_and_a_different_one_is_not() -> None:
    async def go() -> tuple[list, list, PrimedModel]:
        model = PrimedModel(CountingModel(delay_s=0.05))
        model.prime(request("where is 4567"))
        hit = [ev async for ev in model.stream(request("where is 4567"))]
        model.prime(request("where is 45"))
        miss = [ev async for ev in model.stream(request("where is 4567?"))]  # the caller said more
        return hit, miss, model

    hit, miss, model = asyncio.run(go())
    assert hit[-1].tool_calls[0].arguments == {"order_id": "4567"} and miss[-1].tool_calls
    assert (model.hits, model.misses) == (1, 1) and model.primed == {}  # the stale primed call was dropped
    assert model.model.calls == ["user", "user"]  # the stale one was cancelled before it reached the model


def test_a_read_and_the_answer_after_it_are_ready_when_the_turn_ends(tmp_path: Path) -> None:
    """On the virtual clock: the pause primes the lookup and the answer; the run makes no model call of its own."""
    inner = CountingModel()
    desk = OrderDesk(tmp_path / "orders.db")
    tools = [replace(t, answers=False) for t in desk.tools()]  # the model words the answer after the read
    agent = Agent(model=inner, tools=tools, policy=order_policy(), config=LoopConfig.profile("voice"),
                  journal_path=str(tmp_path / "j.db"))
    session = CallSession(agent, LoudnessVAD(), ScriptedSTT({40: "where is my order 4567?"}), ToneTTS(),
                          WordChunker, SessionConfig(speculate=True, turns={"speculate_every_s": 10.0}))
    asyncio.run(session.run_file(track((0.2, 40), total_s=4.0)))
    assert session.turns[0].agent_text == "It shipped."
    primed = session.agent.model  # the call's own view of the agent holds the primed model; `agent` is as built
    assert isinstance(primed, PrimedModel) and primed.hits == 2 and primed.misses == 0 and agent.model is inner
    assert inner.calls == ["user", "user", "tool"]  # while speaking, in the pause, the answer: none after the end
    reads = [e for e in session.trace if e["kind"] == "speculative_read"]
    assert len(reads) == 1  # the lookup ran once, while the caller spoke, and was reused


def test_a_read_whose_words_are_the_answer_is_said_without_waiting_for_the_model(tmp_path: Path) -> None:
    inner = CountingModel()
    desk = OrderDesk(tmp_path / "orders.db")
    agent = Agent(model=inner, tools=desk.tools(), policy=order_policy(), config=LoopConfig.profile("voice"),
                  journal_path=str(tmp_path / "j.db"))
    session = CallSession(agent, LoudnessVAD(), ScriptedSTT({40: "where is my order 4567?"}), ToneTTS(),
                          WordChunker, SessionConfig(speculate=True, turns={"speculate_every_s": 10.0}))
    asyncio.run(session.run_file(track((0.2, 40), total_s=4.0)))
    assert session.turns[0].agent_text.startswith("Order 4567 has shipped")
    said = [e["text"] for e in session.trace if e["kind"] == "agent_said"]
    assert said and "It shipped." not in said  # the model's own words after the read are never said
    # the decision was primed in the pause; the answer after the read was not (nobody will say it)
    assert isinstance(session.agent.model, PrimedModel) and session.agent.model.hits == 1 and agent.model is inner
    assert inner.calls == ["user", "user", "tool"]
    reads = [e for e in session.trace if e["kind"] == "speculative_read"]
    assert len(reads) == 1  # the lookup ran once, while the caller spoke, and was reused
