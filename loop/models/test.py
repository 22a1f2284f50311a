"""`TestModel`: a model that needs no script, in the manner of pydantic-ai's `TestModel`.

On every user turn it calls each offered tool (or those named in `call_tools`) once, with arguments made from
the tool's JSON schema (or given in `args`), then answers with `text` (by default the tool results it read).
That exercises an agent's tools, schemas, policy and approvals before any real model is involved:

    agent = Agent(model=TestModel(args={"book": {"day": "tuesday"}}), tools=calendar.tools())
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from loop.types import ModelEvent, ModelRequest, ModelResponse, Pricing, TextDelta, ToolCall, ToolCallDelta, Usage


class TestModel:
    __test__ = False  # not a pytest test class despite the name
    grounds_output = True  # the loop adds no grounding phase (`loop.grounding.phase`): its words are the test's

    def __init__(self, call_tools: Sequence[str] | None = None, text: str | None = None,
                 args: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.call_tools, self.text, self.args = call_tools, text, dict(args or {})
        self.name, self.pricing = "test", Pricing()

    def count_tokens(self, text: str) -> int:
        return (len(text) + 3) // 4

    def tool_calls(self, request: ModelRequest) -> list[ToolCall]:
        """This turn's calls: every chosen tool once, unless the user's turn already called tools."""
        users = [i for i, m in enumerate(request.messages) if m.role == "user"]
        since = request.messages[users[-1] + 1:] if users else []
        if any(m.role == "assistant" and m.tool_calls for m in since):
            return []
        calls = []
        for schema in request.tools:
            fn = schema.get("function", schema)
            if self.call_tools is None or fn["name"] in self.call_tools:
                arguments = {**example_arguments(fn.get("parameters", {})), **self.args.get(fn["name"], {})}
                calls.append(ToolCall(fn["name"], arguments, f"test_{len(request.messages)}_{len(calls)}"))
        return calls

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        tokens = sum(self.count_tokens(m.content) + 4 for m in request.messages)
        calls = self.tool_calls(request)
        for i, call in enumerate(calls):
            yield ToolCallDelta(index=i, id=call.id, name=call.name, arguments=json.dumps(call.arguments))
        text = "" if calls else self._answer(request)
        if text:
            yield TextDelta(text)
        yield ModelResponse(text=text, tool_calls=calls, model=self.name,
                            usage=Usage(input_tokens=tokens, output_tokens=self.count_tokens(text)))

    def _answer(self, request: ModelRequest) -> str:
        if self.text is not None:
            return self.text
        users = [i for i, m in enumerate(request.messages) if m.role == "user"]
        results = [m.content for m in request.messages[(users[-1] if users else 0):] if m.role == "tool"]
        return " ".join(results) or "OK."


def example_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments that satisfy a JSON schema's object: every required property (and those with no default)."""
    defs = schema.get("$defs", {})
    props = schema.get("properties", {})
    required = set(schema.get("required", props))
    return {name: example_value(prop, defs) for name, prop in props.items() if name in required}


def example_value(prop: Mapping[str, Any], defs: Mapping[str, Any]) -> Any:
    """A small valid value for one property: its first enum value or example, else one of its type."""
    if "$ref" in prop:
        return example_value(defs.get(prop["$ref"].rsplit("/", 1)[-1], {}), defs)
    for key in ("const", "default"):
        if key in prop:
            return prop[key]
    if prop.get("enum"):
        return prop["enum"][0]
    if prop.get("examples"):
        return prop["examples"][0]
    if options := prop.get("anyOf") or prop.get("oneOf"):
        return example_value(next((o for o in options if o.get("type") != "null"), options[0]), defs)
    kind = prop.get("type", "string")
    if kind in ("integer", "number"):
        low = prop.get("minimum", prop.get("exclusiveMinimum", 0))
        value = max(1, low + 1) if "maximum" not in prop else min(max(1, low + 1), prop["maximum"])
        return int(value) if kind == "integer" else float(value)
    if kind == "object":
        return example_arguments(prop)
    return {"boolean": False, "array": [], "null": None}.get(kind, "a" * max(1, prop.get("minLength", 1)))
