"""The OpenAI-compatible client end to end against a real server running a real model on this machine:
llama-cpp-python's bundled OpenAI-compatible server with the embedded Qwen2.5-Coder 0.5B weights."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from loop import Agent, LoopConfig, RunOutcome, TextDelta
from loop.models.openai import OpenAICompatModel
from loop.types import Message, ModelRequest, ModelResponse
from voice.demo.order_desk import OrderDesk, order_policy

llama_server = pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python[server] is not installed")


def _gguf() -> Path:
    from loop.models.llama.weights import WeightsMissing, ensure_gguf

    try:
        return ensure_gguf()
    except WeightsMissing as exc:
        pytest.skip(f"LLM weights not installed: {exc}")


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "HF_HUB_OFFLINE": "1"}
    log = tmp_path_factory.mktemp("llama-server") / "server.log"  # a file: a full pipe would stall the server
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(_gguf()), "--host", "127.0.0.1",
                             "--port", str(port), "--n_ctx", "2048", "--n_threads", "1", "--n_threads_batch", "2",
                             "--chat_format", "chatml-function-calling", "--verbose", "False"],
                            env=env, stdout=subprocess.DEVNULL, stderr=log.open("w"))
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("llama.cpp server did not start: " + log.read_text()[-2000:])
    yield url
    proc.terminate()
    proc.wait(timeout=30)


async def _collect(model: OpenAICompatModel, request: ModelRequest) -> list:
    return [ev async for ev in model.stream(request)]


def test_text_streams_token_by_token_with_usage(server_url: str) -> None:
    import asyncio

    model = OpenAICompatModel(server_url, "qwen2.5-coder-0.5b", timeout_s=120)
    request = ModelRequest(messages=[Message("system", "Answer briefly."), Message("user", "Name three colours.")],
                           tools=[], max_output_tokens=30)
    events = asyncio.run(_collect(model, request))
    deltas = [e for e in events if isinstance(e, TextDelta)]
    final = events[-1]
    assert isinstance(final, ModelResponse) and len(deltas) >= 3
    assert final.text == "".join(d.text for d in deltas) and final.text.strip()
    assert final.usage.input_tokens > 0 and final.usage.output_tokens > 0


def test_streamed_tool_call_then_a_spoken_answer(server_url: str, tmp_path: Path) -> None:
    desk = OrderDesk(tmp_path / "orders.db")
    force = {"tool_choice": {"type": "function", "function": {"name": "lookup_order"}}}
    first = OpenAICompatModel(server_url, "qwen2.5-coder-0.5b", timeout_s=120, extra_body=force)
    seen: list = []
    agent = Agent(model=first, tools=desk.tools(), policy=order_policy(),
                  config=LoopConfig.profile("chat", budget={"turns": {"limit": 1}}),
                  system_prompt="You are an order-support agent. Use the tools.", listeners=[seen.append])
    result = agent.run_sync("Where is my order 4567?")
    assert [c.name for m in result.messages for c in m.tool_calls] == ["lookup_order"]
    assert result.trajectory[0].call.arguments == {"order_id": "4567"}
    assert "Lisbon" in result.trajectory[0].content
    assert any(e.kind == "model_delta" and e.payload["type"] == "tool_call" for e in seen)
    # second turn without forcing: the model reads the tool result and answers in words
    answer = Agent(model=OpenAICompatModel(server_url, "qwen2.5-coder-0.5b", timeout_s=120), tools=desk.tools(),
                   policy=order_policy(), config=LoopConfig.profile("chat", budget={"turns": {"limit": 2}}),
                   system_prompt="You are an order-support agent. Use the tools.")
    followup = answer.run_sync("So where is it?", history=result.messages)
    assert followup.outcome is RunOutcome.COMPLETED and followup.answer.strip()
