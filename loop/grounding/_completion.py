"""Calls made without a model, when the caller's words leave no choice: the call the agent asked for, now
answered (`completed_ask`: "Could you tell me the order number?" - "It's 4567."), and the one an identifier the
caller gave unasked completes (`volunteered_call`), and the write their words state whole (`stated_call`).
`loop.grounding.phase.grounded_stream` makes them for every model; a write among them is still asked aloud."""

from __future__ import annotations

from typing import Any

import jsonschema

from loop import locale
from loop.grounding._schema import properties, required_of
from loop.grounding.arguments import ground, identifier_candidates, since_agent_spoke
from loop.grounding.tool_choice import (
    about_tool,
    answered_ask,
    asked_for,
    fresh_reads,
    sole_value,
    takes_id,
    uncued,
    unnamed_id_writes,
)
from loop.tools import tool_name
from loop.types import ModelRequest, ToolCall


def fits(value: Any, schema: dict[str, Any]) -> bool:
    """`value` is one the (grounded) schema admits."""
    if "enum" in schema:  # "4567" and 4567 are the same id
        return any(str(value).strip().lower() == str(option).strip().lower() for option in schema["enum"])
    return jsonschema.Draft202012Validator(schema).is_valid(value)


def completed_ask(request: ModelRequest) -> ToolCall | None:
    """The call the agent asked the caller for, when their answer leaves each of its arguments one value (an id,
    a name, the street address they said): made without a model, which may talk instead. None otherwise."""
    tools = unnamed_id_writes(uncued(request.tools, request.messages, request.cues), request.messages,
                              request.writes, request.language)
    grounded, _ = ground(tools, request.messages, request.language)
    completing = answered_ask(tools, request.messages, grounded, request.writes, request.language)
    if len(completing) != 1:
        return None
    values = {name: sole_value(schema) for name, schema in properties(completing[0]).items()}
    if any(v is None for v in values.values()):
        return None
    return ToolCall(tool_name(completing[0]), values)


def volunteered_call(request: ModelRequest) -> ToolCall | None:
    """An identifier the caller gave unasked, after the agent told them something ("yes, it's 60417." after "all
    four courts are free at 7") or asked for what no identifier is ("Could you tell me the stage?" - "The enrolment
    number is 30418."), that one tool alone has a place for: that call, made without a model, its other arguments
    the one value each holds, or the value the call just made used ("Thursday", "7" of the availability read). A
    write is then asked aloud. None after a question for an identifier (`completed_ask`) or when anything is in
    doubt."""
    messages = request.messages
    agent = next((m for m in reversed(messages) if m.role == "assistant"), None)
    if not messages or messages[-1].role != "user" or agent is None or agent.tool_calls \
            or (agent.content.rstrip().endswith("?") and _asked_for_an_id(request)):
        return None
    given = identifier_candidates(" ".join(m.content for m in since_agent_spoke(messages)),
                                  locale.get(request.language))
    if len(given) != 1:
        return None
    grounded, _ = ground(request.tools, messages, request.language)
    takers = [t for t in grounded if any(len(p.get("enum") or []) == 1 and fits(given[0], p)
                                         for p in properties(t).values())]
    if len(takers) != 1:
        return None
    last = next((c for m in reversed(messages) if m.role == "assistant" for c in m.tool_calls), None)
    values = {}
    for name, schema in properties(takers[0]).items():
        value = sole_value(schema)
        if value is None and last is not None and name in last.arguments and fits(last.arguments[name], schema):
            value = last.arguments[name]
        if value is None:
            return None
        values[name] = value
    return ToolCall(tool_name(takers[0]), values)


def _asked_for_an_id(request: ModelRequest) -> bool:
    """The agent's question was for an identifier, or for nothing a tool lacked (its own question): an identifier
    in the answer is that question's to place."""
    asked = asked_for(request.tools, request.messages, request.writes, request.language)
    by_name = {tool_name(t): t for t in request.tools}
    return not asked or any(takes_id(by_name[n]) for n in asked if n in by_name)


def stated_call(request: ModelRequest) -> ToolCall | None:
    """The one write the caller's words since the agent last spoke state whole, unasked ("Can I get a small
    chocolate fudge cake for tomorrow? Name's Ben Ito."): each required argument one value, said in those words,
    and the words speak of it; no read they fill. Made without a model (the 0.5B looked up the cake list
    instead), and asked aloud as every write is. None when anything is in doubt."""
    messages = request.messages
    if not messages or messages[-1].role != "user" or fresh_reads(request.tools, messages, request.writes,
                                                                    request.language):
        return None
    said = " ".join(m.content for m in since_agent_spoke(messages)).lower()
    grounded, _ = ground(request.tools, messages, request.language)
    words = locale.get(request.language)
    whole = []
    for tool in (t for t in grounded if tool_name(t) in request.writes):
        values = {name: sole_value(schema) for name, schema in properties(tool).items()}
        required = required_of(tool)
        if required and all(values.get(r) is not None and str(values[r]).lower() in said for r in required) \
                and about_tool(tool, messages, (), words):
            whole.append(ToolCall(tool_name(tool), {n: v for n, v in values.items() if v is not None}))
    return whole[0] if len(whole) == 1 else None
