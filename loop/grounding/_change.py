"""A change to a write the caller was asked to confirm, made by construction: "Actually make it Thursday." to
"Just to confirm: deliver ticket 48217 on Tuesday?" is the same call with the day the caller now said, proposed
(and confirmed) again, never left to a model that may read the order instead.

`changed_call(request)`: the declined call with each argument the caller's change words fill with exactly one
new value of its kind (an identifier, a name, a day, an amount, one of an enum's values) replaced, the others kept
(an item or an address, which only a span of words fills, too: the question read back shows them); None when
their words fill none of those, or one ambiguously: then the model decides, as before.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import jsonschema

from loop.grounding.arguments import Evidence, _narrow, described_among
from loop.tools import tool_name
from loop.types import Message, ModelRequest, ToolCall

_CHANGED = re.compile(r"^(\w+) was not approved \(the caller asked for a change: .*\)\. It was not done\.$", re.S)


def _declined_for_a_change(messages: list[Message]) -> tuple[ToolCall, list[Message]] | None:
    """The call the caller asked to change, and what they have said since, when that is where the call stands."""
    at = len(messages) - 1
    while at >= 0 and messages[at].role == "user":
        at -= 1
    if at < 0 or at == len(messages) - 1 or messages[at].role != "tool" or not _CHANGED.match(messages[at].content):
        return None
    call = next((c for m in messages[:at] for c in m.tool_calls if c.id == messages[at].tool_call_id), None)
    return (call, messages[at + 1:]) if call is not None else None


def changed_call(request: ModelRequest) -> ToolCall | None:
    """The declined call with the values the caller's change gave (see the module's docstring)."""
    found = _declined_for_a_change(request.messages)
    tool = next((t for t in request.tools if found and tool_name(t) == found[0].name), None)
    if found is None or tool is None:
        return None
    declined, since = found
    fn: dict[str, Any] = tool.get("function") or tool
    schema = fn.get("parameters") or {}
    evidence = Evidence.of(since)
    arguments, changed = dict(declined.arguments), False
    for name, prop in (schema.get("properties") or {}).items():
        narrowed = _narrow(name, prop, evidence, described_among(tool, request.tools))
        if narrowed is None or narrowed is prop:
            continue  # nothing of its kind in the change, or a kind left as the schema says
        if "enum" not in narrowed:
            continue  # a span of words (an item, an address): kept; the question read back shows it
        new = [v for v in narrowed["enum"] if str(v).strip().lower() != str(arguments.get(name, "")).strip().lower()]
        if len(narrowed["enum"]) > 1 or len(new) > 1:
            return None  # "Thursday or Friday": ambiguous
        if new:
            arguments[name], changed = new[0], True
    if not changed or not jsonschema.Draft202012Validator(schema).is_valid(arguments):
        return None
    return ToolCall(declined.name, arguments)


def fixed_call_tool(request: ModelRequest, call: ToolCall) -> dict[str, Any]:
    """`call`'s tool with each argument narrowed to the call's value: a grammar over it admits that call only."""
    tool = copy.deepcopy(next(t for t in request.tools if tool_name(t) == call.name))
    params = (tool.get("function") or tool).setdefault("parameters", {})
    params["properties"] = {name: {"enum": [value]} for name, value in call.arguments.items()}
    params["required"] = list(call.arguments)
    return tool
