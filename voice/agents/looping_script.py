"""Scripted models for live calls and agent files: a script cut into one block per caller turn, played round
and round (`LoopingScript`), and its YAML form (`load_script`, `load_script_turns`)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import yaml

from loop import Message, ModelResponse, Pricing, ScriptedTurn, TextDelta, ToolCall, Usage
from loop.types import ModelEvent, ModelRequest, ToolCallDelta


class LoopingScript:
    """A scripted model for live calls. The script is cut into blocks, one per user turn, each ending at a
    reply with no tool calls; user turn k plays block k (round and round), step by step within the turn.
    Tool call ids carry the call id and turn so a refund in one call never collides with another's."""

    grounds_output = True  # the loop adds no grounding phase (`loop.grounding.phase`): its words are the developer's

    provider = "voiceloop.scripted"  # gen_ai.provider.name

    def __init__(self, turns: list[ScriptedTurn], call_id: str = "", name: str = "scripted") -> None:
        if not turns:
            raise ValueError("the script has no turns")
        self.blocks: list[list[ScriptedTurn]] = [[]]
        for turn in turns:
            self.blocks[-1].append(turn)
            if not turn.tool_calls:
                self.blocks.append([])
        if not self.blocks[-1]:
            self.blocks.pop()
        self.call_id, self.name, self.pricing = call_id or uuid.uuid4().hex[:8], name, Pricing()

    def count_tokens(self, text: str) -> int:
        return (len(text) + 3) // 4

    def _step(self, messages: list[Message]) -> tuple[int, int, ScriptedTurn]:
        users = [i for i, m in enumerate(messages) if m.role == "user"]
        user_turn = max(0, len(users) - 1)
        since = sum(1 for m in messages[users[-1] + 1:] if m.role == "assistant") if users else 0
        block = self.blocks[user_turn % len(self.blocks)]
        return user_turn, since, block[min(since, len(block) - 1)]

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        user_turn, step, turn = self._step(list(request.messages))
        if turn.delay_s:
            await asyncio.sleep(turn.delay_s)
        words = turn.text.split(" ") if turn.text else []
        for i, word in enumerate(words):
            yield TextDelta(word if i == len(words) - 1 else word + " ")
        calls = [ToolCall(c.name, dict(c.arguments), f"{self.call_id}_u{user_turn}_s{step}_{i}")
                 for i, c in enumerate(turn.tool_calls)]
        for i, call in enumerate(calls):
            yield ToolCallDelta(index=i, id=call.id, name=call.name, arguments=json.dumps(call.arguments))
        tokens = sum(self.count_tokens(m.content) + 4 for m in request.messages)
        yield ModelResponse(text=turn.text, tool_calls=calls, model=self.name,
                            usage=Usage(input_tokens=tokens, output_tokens=self.count_tokens(turn.text),
                                        cost_usd=0.0))


def load_script(path: str | Path) -> list[ScriptedTurn]:
    """A YAML list of turns (`- text: ...` / `- tool_calls: [{name, arguments}]`, optional `delay_s`),
    or a fixture file whose `model:` key holds that list."""
    data = yaml.safe_load(Path(path).read_text())
    if isinstance(data, dict):
        data = data.get("model")
    return load_script_turns(data, str(path))


def load_script_turns(data: Any, where: str) -> list[ScriptedTurn]:
    """Scripted turns from their YAML form (a list of strings or `{text, tool_calls, delay_s}` mappings)."""
    if not isinstance(data, list) or not data:
        raise ValueError(f"{where}: expected a YAML list of model turns (or a mapping with a 'model:' list)")
    turns = []
    for i, item in enumerate(data):
        if isinstance(item, str):
            item = {"text": item}
        if not isinstance(item, dict):
            raise ValueError(f"{where}: turn {i + 1} must be a mapping with 'text' and/or 'tool_calls'")
        calls = [ToolCall(c["name"], dict(c.get("arguments") or {})) for c in item.get("tool_calls") or []]
        turns.append(ScriptedTurn(text=str(item.get("text", "")), tool_calls=calls,
                                  delay_s=float(item.get("delay_s", 0.0))))
    return turns


DEFAULT_SCRIPT = [ScriptedTurn(text="Thanks, I heard you. How else can I help?")]


class ScriptedReplies(LoopingScript):
    """What `--llm script` chooses: scripted replies, never an LLM. An agent with a script of its own (an agent
    file's `script:`, a factory's `ScriptedModel`) keeps it (`voice.agents.source.AgentMaker`); for any other agent
    this plays DEFAULT_SCRIPT, the looping acknowledgement."""

    def __init__(self, call_id: str = "") -> None:
        super().__init__(DEFAULT_SCRIPT, call_id)


def is_scripted(model: Any) -> bool:
    """A model that plays a script the developer wrote (no LLM behind it)."""
    from loop import ScriptedModel, TestModel

    return isinstance(model, ScriptedModel | LoopingScript | TestModel)
