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

from loop import locale
from loop.approvals import not_approved_reason
from loop.grounding._arg_kinds import arg_kind
from loop.grounding._heard import spoken, street_addresses
from loop.grounding._unclaimed import fill_counts
from loop.grounding.arguments import Evidence, _narrow, counted_spans, described_among
from loop.locale import unaccented
from loop.tools import tool_name
from loop.types import Message, ModelRequest, ToolCall


def _declined_for_a_change(messages: list[Message], words: Any = None) -> tuple[ToolCall, list[Message]] | None:
    """The call the caller asked to change, and what they have said since, when that is where the call stands.
    With the call's pack `words`: any write not approved (a no, no yes heard) when the caller's words since ask
    for a change of it ("can we do the 21st instead?" after "Okay, I haven't done that.")."""
    at = len(messages) - 1
    while at >= 0 and messages[at].role == "user":
        at -= 1
    if at == len(messages) - 1:
        return None
    since = messages[at + 1:]
    if words is not None:  # past the agent's own words saying it was not done
        while at >= 0 and messages[at].role == "assistant" and not messages[at].tool_calls:
            at -= 1
    reason = not_approved_reason(messages[at].content) if at >= 0 and messages[at].role == "tool" else None
    if reason is None:
        return None
    if not reason.startswith("the caller asked for a change: ") and not (
            words is not None and _asks_a_change(" ".join(m.content for m in since), words)):
        return None
    call = next((c for m in messages[:at] for c in m.tool_calls if c.id == messages[at].tool_call_id), None)
    return (call, since) if call is not None else None


def _asks_a_change(text: str, words: Any) -> bool:
    """The words ask for a change (the pack's ANSWER_CHANGE anywhere: "instead", "make it", "how about")."""
    return bool(re.search(r"\b(?:{})\b".format("|".join(words.ANSWER_CHANGE)), unaccented(text.lower())))


def declined_just_now(messages: list[Message]) -> bool:
    """A write was put to the caller and not approved since their turn before this one (said no, asked for a
    change, or no yes came): their "Yes, please." now is about that write, not a remark."""
    at = len(messages) - 1
    while at >= 0 and messages[at].role == "user":
        at -= 1
    while at >= 0 and messages[at].role != "user":
        if messages[at].role == "tool" and not_approved_reason(messages[at].content) is not None:
            return True
        at -= 1
    return False


def unclear_change(request: ModelRequest) -> bool:
    """The caller asked to change the write being confirmed, and their words since give no new value of any of
    its arguments ("Actually make it thirsty."): they are asked what to change, not left to a model that may
    read the order instead."""
    found = _declined_for_a_change(request.messages)
    tool = next((t for t in request.tools if found and tool_name(t) == found[0].name), None)
    return tool is not None and found is not None and not _new_values(tool, found[0], found[1], request)


def _is_address(name: str, prop: dict[str, Any], tool: dict[str, Any], request: ModelRequest) -> bool:
    kind = arg_kind(name, prop, described_among(tool, request.tools))
    return kind is not None and kind.kind == "address"


def _new_values(tool: dict[str, Any], declined: ToolCall, since: list[Message], request: ModelRequest
                ) -> dict[str, list[Any]]:
    """Each argument the caller's words since give values of its kind other than the declined call's."""
    fn: dict[str, Any] = tool.get("function") or tool
    evidence = Evidence.of(since, locale.get(request.language))
    props = (fn.get("parameters") or {}).get("properties") or {}
    counted = counted_spans(props, evidence.said, described_among(tool, request.tools), evidence.words)
    found, heard = {}, {}
    for name, prop in props.items():
        others = [span for arg, spans in counted.items() if arg != name for span in spans]  # "three passengers"
        narrowed = heard[name] = _narrow(name, prop, evidence.without(others), described_among(tool, request.tools))
        old = str(declined.arguments.get(name, "")).strip().lower()
        if narrowed is not None and "pattern" in narrowed and _is_address(name, prop, tool, request):
            # "it's 16 Birch Avenue"
            narrowed = {"enum": list(dict.fromkeys(street_addresses(evidence.fresh, evidence.words)))}
        if narrowed is None or narrowed is prop or "enum" not in narrowed:
            continue  # nothing of its kind, a kind left as the schema says, or a span of words (kept)
        # a word of the declined call's other values is no new one of this ("It's 21 Church Lane, not Road": the
        # name is not "Road", a word of the address it had)
        theirs = {w for arg, v in declined.arguments.items() if arg != name for w in str(v).lower().split()}
        fresh = [v for v in narrowed["enum"] if str(v).strip().lower() != old
                 and not (isinstance(v, str) and set(v.lower().split()) <= theirs)]
        if new := _one_per_value(fresh, evidence):
            found[name] = new
    # "Sorry, I read that wrong, it's 9921.": a number no identifier of the call can be is its count's
    wanting = [n for n in props if n not in found]
    left = fill_counts(props, heard, wanting, evidence, described_among(tool, request.tools), evidence.words)
    for name in [n for n in wanting if n not in left]:
        if new := [v for v in heard[name]["enum"] if str(v) != str(declined.arguments.get(name, ""))]:
            found[name] = new
    return found


def _one_per_value(values: list[Any], evidence: Evidence) -> list[Any]:
    """`values` with a number said in words dropped where its figures are there too ("eleven" and "11" are one new
    time, not two to choose between)."""
    digit_of, said = spoken(evidence.words).digit_of, {str(v) for v in values}

    def in_figures(value: Any) -> str:
        return " ".join(digit_of.get(w.lower(), w) for w in str(value).split())

    return [v for v in values if in_figures(v) == str(v) or in_figures(v) not in said]


def changed_call(request: ModelRequest) -> ToolCall | None:
    """The declined call with the values the caller's change gave (see the module's docstring)."""
    found = _declined_for_a_change(request.messages, locale.get(request.language))
    tool = next((t for t in request.tools if found and tool_name(t) == found[0].name), None)
    if found is None or tool is None:
        return None
    declined, since = found
    new = _new_values(tool, declined, since, request)
    if not new or any(len(values) > 1 for values in new.values()):
        return None  # nothing new, or "Thursday or Friday": ambiguous
    arguments = {**declined.arguments, **{name: values[0] for name, values in new.items()}}
    schema = (tool.get("function") or tool).get("parameters") or {}
    return ToolCall(declined.name, arguments) if jsonschema.Draft202012Validator(schema).is_valid(arguments) else None


def fixed_call_tool(request: ModelRequest, call: ToolCall) -> dict[str, Any]:
    """`call`'s tool with each argument narrowed to the call's value: a grammar over it admits that call only."""
    tool = copy.deepcopy(next(t for t in request.tools if tool_name(t) == call.name))
    params = (tool.get("function") or tool).setdefault("parameters", {})
    params["properties"] = {name: {"enum": [value]} for name, value in call.arguments.items()}
    params["required"] = list(call.arguments)
    return tool
