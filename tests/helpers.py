"""Shared builders for loop tests: small tools, a transcript renderer for golden snapshots, and `assert_heard` for
what Whisper wrote (key words, never its exact words: those differ between CPUs)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

from loop import Agent, LoopConfig, Message, RunResult, Tool
from tests.paths import DATA


def labelled(name: str) -> list[tuple[str, str]]:
    """The rows of a labelled set in tests/data (tab-separated, `#` comments, a header row)."""
    lines = (DATA / name).read_text().splitlines()
    rows = [line.split("\t", 1) for line in lines if line and not line.startswith("#")][1:]
    return [(said, label) for said, label in rows]  # a label of several columns keeps its tabs


ORDER_SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}


class Calls:
    """Records tool executions (thread-safe) and the peak number running at once."""

    def __init__(self) -> None:
        self.log: list[tuple[str, dict[str, Any]]] = []
        self.running = 0
        self.peak = 0
        self._lock = threading.Lock()

    def enter(self, name: str, args: dict[str, Any]) -> None:
        with self._lock:
            self.log.append((name, args))
            self.running += 1
            self.peak = max(self.peak, self.running)

    def leave(self) -> None:
        with self._lock:
            self.running -= 1


def read_tool(calls: Calls, name: str = "lookup_order", delay: float = 0.0, result: Any = None) -> Tool:
    async def fn(order_id: str) -> Any:
        calls.enter(name, {"order_id": order_id})
        try:
            await asyncio.sleep(delay)
            return result if result is not None else {"order_id": order_id, "status": "shipped"}
        finally:
            calls.leave()

    return Tool(fn, name=name, description=f"{name} by order id", args=ORDER_SCHEMA)


def write_tool(calls: Calls, name: str = "cancel_order", reversible: bool = True, cost: float = 0.0) -> Tool:
    def fn(order_id: str) -> str:
        calls.enter(name, {"order_id": order_id})
        calls.leave()
        return f"{name} done for {order_id}"

    return Tool(fn, name=name, description=f"{name} by order id", args=ORDER_SCHEMA, mutates=True,
                reversible=reversible, max_cost_usd=cost)


def agent(model: Any, tools: list[Tool], config: LoopConfig | None = None, **kwargs: Any) -> Agent:
    return Agent(model=model, tools=tools, config=config or LoopConfig.profile("task"), **kwargs)


def transcript(result: RunResult) -> str:
    """Whole-run rendering compared against inline golden snapshots."""
    lines = [_line(m) for m in result.messages]
    lines.append(f"=> {result.outcome.value}: {result.reason}")
    return "\n".join(lines)


def _line(m: Message) -> str:
    if m.role == "assistant" and m.tool_calls:
        calls = ", ".join(f"{c.name}({c.signature.split(':', 1)[1]})" for c in m.tool_calls)
        return f"assistant: {m.content + ' ' if m.content else ''}-> {calls}"
    if m.role == "tool":
        return f"tool[{m.name}]: {m.content}"
    return f"{m.role}: {m.content}"


def assert_heard(text: str, *wanted: str | Sequence[str]) -> None:
    """`text` (what Whisper or another model wrote) holds each key word or phrase of `wanted`, or one of each
    tuple's alternatives; case, punctuation and digits against number words do not count ("twenty" is "20",
    "four five six seven" is "4567"), and the last word may be the start of a longer one ("refund", "refunded").
    Use it for real-model text only: text the code itself builds is compared exactly."""
    from voice.testing.heard import mentions

    missing = [w for w in wanted if not mentions(text, w)]
    assert not missing, f"{text!r} lacks " + ", ".join(
        repr(w) if isinstance(w, str) else " or ".join(map(repr, w)) for w in missing)


def embedded_model(n_ctx: int = 2048) -> Any:
    """The embedded Qwen2.5-Coder 0.5B for a test module, or the test skipped naming what is not installed."""
    import pytest

    from loop.models.llama import weights
    from loop.models.llama.model import LlamaModel  # first: it sets OMP_WAIT_POLICY before llama.cpp's OpenMP loads

    pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed (scripts/install_llama.sh)")
    try:
        weights.ensure_gguf()
    except (weights.WeightsMissing, weights.WeightsCorrupt) as exc:
        pytest.skip(f"Qwen2.5-Coder-0.5B GGUF not installed: {exc}")
    return LlamaModel(n_ctx=n_ctx, state_dir=None)
