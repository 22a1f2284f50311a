"""The words-spoken check waits for the voice: it starts once text-to-speech has caught up (or after a cap)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from types import SimpleNamespace

from tests.voice.runtime.test_priming import CountingModel, request
from voice.runtime.priming import PrimedModel
from voice.runtime.speech_first import SpeechFirstModel, SpeechGate, install


async def _drain(model: object, req: object) -> None:
    async for _ in model.stream(req):  # type: ignore[attr-defined]
        pass


def test_a_words_spoken_check_starts_only_when_the_voice_has_caught_up() -> None:
    async def go() -> list[str]:
        order: list[str] = []
        gate = SpeechGate()
        model = SpeechFirstModel(CountingModel(), gate, max_wait_s=5.0)
        gate.queued()  # the answer's first clause is being synthesised
        gate.queued()
        check = asyncio.create_task(_drain(model, replace(request("x"), words_spoken=True)))
        await _drain(model, request("y"))  # an ordinary request is not held
        order.append(f"plain done, check {'done' if check.done() else 'waiting'}")
        gate.done()
        await asyncio.sleep(0.01)
        order.append(f"one clause left, check {'done' if check.done() else 'waiting'}")
        gate.done()
        await asyncio.wait_for(check, 1.0)
        order.append("check done")
        return order

    assert asyncio.run(go()) == ["plain done, check waiting", "one clause left, check waiting", "check done"]


def test_a_voice_that_never_catches_up_holds_the_check_only_up_to_the_cap() -> None:
    async def go() -> bool:
        gate = SpeechGate()
        gate.queued()
        model = SpeechFirstModel(CountingModel(), gate, max_wait_s=0.05)
        await asyncio.wait_for(_drain(model, replace(request("x"), words_spoken=True)), 2.0)
        return model.model.calls == ["user"]

    assert asyncio.run(go())


def test_the_gate_goes_beneath_a_primed_model_and_is_rebound_for_the_next_call() -> None:
    inner = CountingModel()
    agent = SimpleNamespace(model=PrimedModel(inner))
    first, second = SpeechGate(), SpeechGate()
    install(agent, first)
    assert isinstance(agent.model, PrimedModel) and isinstance(agent.model.model, SpeechFirstModel)
    install(agent, second)
    assert agent.model.model.gate is second and agent.model.model.model is inner
