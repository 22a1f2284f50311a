"""Plain data that crosses the loop's boundaries: messages, tool calls, model stream events, usage.

Everything here is a small frozen-ish dataclass so it can be journaled as JSON and compared in tests.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["system", "user", "assistant", "tool"]


def canonical_json(value: Any) -> str:
    """Key-sorted, whitespace-free JSON: the same arguments always give the same bytes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


@dataclass
class ToolCall:
    """One action the model proposed: a tool name, its arguments, and the model's id for the call."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str = ""

    def __post_init__(self) -> None:
        if not self.id:
            self.id = "call_" + uuid.uuid4().hex[:12]

    @property
    def signature(self) -> str:
        """Identity of the intent: name + canonical args, never the call id or the result."""
        return f"{self.name}:{canonical_json(self.arguments)}"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCall:
        return cls(name=data["name"], arguments=dict(data.get("arguments") or {}), id=data.get("id", ""))


#: The `name` of an assistant message that holds the tools' own words, spoken as the turn's answer (`Tool.answers`).
TOOL_ANSWER = "tool_answer"


@dataclass
class Message:
    """One chat message. Tool results use role "tool" and name the call they answer."""

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        return cls(
            role=data["role"],
            content=data.get("content") or "",
            tool_calls=[ToolCall.from_dict(c) for c in data.get("tool_calls") or []],
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
        )


@dataclass
class Usage:
    """What one model call (or a whole run) actually consumed."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cost_usd: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens,
                     self.cached_input_tokens + other.cached_input_tokens, self.cost_usd + other.cost_usd)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---- model stream events -------------------------------------------------------------------


@dataclass
class TextDelta:
    """A piece of the model's visible reply, as it arrives."""

    text: str
    kind: Literal["text_delta"] = "text_delta"


@dataclass
class ToolCallDelta:
    """A fragment of a tool call as it streams: id/name arrive first, arguments in pieces."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    kind: Literal["tool_call_delta"] = "tool_call_delta"


@dataclass
class ModelResponse:
    """The finished model turn. Always the last event of a stream."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str = "stop"
    model: str = ""
    refusal: str = ""  # the provider's refusal text, if the model declined to answer
    kind: Literal["response"] = "response"

    @property
    def refused(self) -> bool:
        """A refusal is not an answer: a refusal field, a reply stopped by the provider's content filter, or one
        that stopped with finish reason `refusal` (Anthropic-style providers behind compatible servers)."""
        return bool(self.refusal) or self.finish_reason in ("content_filter", "refusal")

    def to_dict(self) -> dict[str, Any]:
        out = {
            "text": self.text,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "usage": self.usage.to_dict(),
            "finish_reason": self.finish_reason,
            "model": self.model,
        }
        if self.refusal:
            out["refusal"] = self.refusal
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelResponse:
        return cls(
            text=data.get("text", ""),
            tool_calls=[ToolCall.from_dict(c) for c in data.get("tool_calls", [])],
            usage=Usage(**data.get("usage", {})),
            finish_reason=data.get("finish_reason", "stop"),
            model=data.get("model", ""),
            refusal=data.get("refusal", ""),
        )


ModelEvent = TextDelta | ToolCallDelta | ModelResponse


@dataclass
class Pricing:
    """USD per million tokens; used to reserve a call's worst-case cost before it is made."""

    input_per_mtok: float = 0.0
    output_per_mtok: float = 0.0

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6


@dataclass
class ModelRequest:
    """Everything one model call gets. `stable_prefix` messages are byte-identical across turns."""

    messages: list[Message]
    tools: list[dict[str, Any]]
    max_output_tokens: int
    turn: int = 0
    stable_prefix: int = 1  # number of leading messages that never change within a session
    timeout_s: float | None = None
    # The caller has already heard this turn's answer (the tools' own words, `Tool.answers`): only a further
    # tool call matters, and the loop stops reading at the first word of text. A model may stop there itself.
    words_spoken: bool = False
    # Names of the tools that change data (`Tool.mutates`): a model may treat reads and writes differently.
    writes: frozenset[str] = frozenset()
    # Tool name -> words one of which the caller must have said before a small local model may name it (`Tool.cues`).
    cues: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # What the agent is for, said to a caller who asks about anything else (`Agent(scope=...)`); empty: a model
    # that needs one derives it from the tools (`loop.grounding._scope.scope_sentence`).
    scope: str = ""
    language: str = "en"  # the agent's language (`loop.locale`): what the model's fixed sentences are said in
    # Groups of words the agent's callers use for the same thing (`Agent(related=...)`: "fix" for a repair, "room"
    # at a hotel): what the caller's words are about is read with them (`loop.grounding._scope`).
    related: tuple[tuple[str, ...], ...] = ()


@runtime_checkable
class Model(Protocol):
    """The loop's only view of a language model, local or remote.

    `stream` yields TextDelta / ToolCallDelta events as they arrive and ends with exactly one
    ModelResponse. Provider failures raise `loop.errors.ModelError` subclasses.
    """

    name: str
    pricing: Pricing

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]: ...

    def count_tokens(self, text: str) -> int: ...
