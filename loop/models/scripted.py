"""ScriptedModel: a model that plays back a script, so tests can force every branch of the loop."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from loop.types import (
    TOOL_ANSWER,
    Message,
    ModelEvent,
    ModelRequest,
    ModelResponse,
    Pricing,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)


@dataclass
class ScriptedTurn:
    """One model reply: text and/or tool calls, with the usage and cost to report."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    input_tokens: int | None = None  # None: count the request
    output_tokens: int | None = None
    cost_usd: float | None = None  # None: price the tokens with the model's pricing
    finish_reason: str = "stop"
    delay_s: float = 0.0  # before the first token
    error: Exception | None = None  # raise this instead of answering
    refusal: str = ""  # the model declines (as a provider's refusal field does)


ScriptItem = ScriptedTurn | str | ToolCall | Sequence[ToolCall] | dict[str, Any]


def _as_turn(item: ScriptItem) -> ScriptedTurn:
    if isinstance(item, ScriptedTurn):
        return item
    if isinstance(item, str):
        return ScriptedTurn(text=item)
    if isinstance(item, ToolCall):
        return ScriptedTurn(tool_calls=[item])
    if isinstance(item, dict):
        calls = [c if isinstance(c, ToolCall) else ToolCall.from_dict(c) for c in item.get("tool_calls", [])]
        return ScriptedTurn(**{**item, "tool_calls": calls})
    return ScriptedTurn(tool_calls=list(item))


class ScriptExhausted(RuntimeError):
    """The loop asked for more turns than the script has: a test bug, reported as ERROR."""


class ScriptedModel:
    """Replies with the script line after the latest of its own replies found in the request (by tool call
    ids, or by text; a reply cut short by a barge-in still counts), else with line 0. Assistant messages
    it did not write (`history=` from elsewhere) are ignored, trimming cannot make it lose its place (the
    latest reply is always kept), a resumed run finds its replayed replies, and a peek (speculation) moves
    nothing: the model keeps no state between calls."""

    grounds_output = True  # the loop adds no grounding phase (`loop.grounding.phase`): its words are the developer's

    provider = "voiceloop.scripted"  # gen_ai.provider.name

    def __init__(self, turns: Sequence[ScriptItem], name: str = "scripted", pricing: Pricing | None = None,
                 chunk_words: int = 1) -> None:
        self.turns = [_as_turn(t) for t in turns]
        for t, turn in enumerate(self.turns):  # stable ids, so a resumed process proposes the same calls
            for i, call in enumerate(turn.tool_calls):
                if call.id.startswith("call_"):
                    call.id = f"call_t{t}_{i}"
        self.name, self.pricing, self.chunk_words = name, pricing or Pricing(), chunk_words
        self.requests: list[ModelRequest] = []

    def line_for(self, messages: Sequence[Message]) -> int:
        """The script line that answers `messages`."""
        line = 0
        for msg in messages:
            if msg.role != "assistant" or line >= len(self.turns):
                continue
            if msg.name == TOOL_ANSWER or (not msg.content.strip() and not msg.tool_calls):
                # a reply nobody heard, or one left unsaid because the tools' words were the answer, took its line
                line += 0 if self.turns[line].tool_calls else 1
                continue
            line = next((j + 1 for j in range(line, len(self.turns)) if self._wrote(j, msg)), line)
        return line

    def _wrote(self, j: int, msg: Message) -> bool:
        turn = self.turns[j]
        if turn.tool_calls or msg.tool_calls:
            return [c.id for c in msg.tool_calls] == [c.id for c in turn.tool_calls]
        return turn.text.startswith(msg.content.strip())

    def count_tokens(self, text: str) -> int:
        return (len(text) + 3) // 4

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        index = self.line_for(request.messages)
        if index >= len(self.turns):
            raise ScriptExhausted(f"the script has {len(self.turns)} turns; the loop asked for turn {index + 1}")
        turn = self.turns[index]
        if turn.delay_s:
            await asyncio.sleep(turn.delay_s)
        if turn.error is not None:
            raise turn.error
        words = turn.text.split(" ")
        for i in range(0, len(words) if turn.text else 0, self.chunk_words):
            piece = " ".join(words[i:i + self.chunk_words])
            yield TextDelta(piece if i + self.chunk_words >= len(words) else piece + " ")
        for i, call in enumerate(turn.tool_calls):
            yield ToolCallDelta(index=i, id=call.id, name=call.name, arguments=json.dumps(call.arguments))
        yield ModelResponse(text=turn.text, tool_calls=[ToolCall(c.name, dict(c.arguments), c.id)
                                                        for c in turn.tool_calls],
                            usage=self._usage(turn, request), finish_reason=turn.finish_reason, model=self.name,
                            refusal=turn.refusal)

    def _usage(self, turn: ScriptedTurn, request: ModelRequest) -> Usage:
        inp = turn.input_tokens if turn.input_tokens is not None else sum(
            self.count_tokens(m.content) + 4 for m in request.messages)
        out = turn.output_tokens if turn.output_tokens is not None else self.count_tokens(
            turn.text + "".join(c.signature for c in turn.tool_calls))
        cost = turn.cost_usd if turn.cost_usd is not None else self.pricing.cost(inp, out)
        return Usage(input_tokens=inp, output_tokens=out, cost_usd=cost)
