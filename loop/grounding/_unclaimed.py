"""Whole numbers the caller said that no identifier of the tool can be: a count's value, however many digits.

A bare number of four digits or more is read as naming something (an order, an account), never as a count: "order
4567" is no 4567 boxes. Within one tool whose identifiers declare their length that guess is not needed: "Account
55038810, and the reading is 1345" holds an eight-digit account, and 1345 fits no identifier of
`submit_reading(account_number: id:8, reading: count)`, so it is the reading's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from loop.grounding._arg_kinds import Kind, arg_kind, non_null
from loop.grounding._heard import id_candidates
from loop.locale import DEFAULT_WORDS


def unclaimed_numbers(kinds: Mapping[str, Kind], narrowed: Mapping[str, Any], texts: Sequence[str],
                      retracted: set[str], schema: Mapping[str, Any], words: Any = DEFAULT_WORDS) -> list[int]:
    """The whole numbers in `texts` (the freshest first) that fit none of the tool's identifiers: not one an
    identifier argument took (`narrowed`), nor of a length one declares (`kinds`); within the count's `schema`
    bounds. [] for a tool with no identifier of declared length: there the guess stands."""
    lengths = {k.digits for k in kinds.values() if k.kind == "id" and k.digits}
    if not lengths:
        return []
    taken = {str(v) for name, k in kinds.items() if k.kind == "id"
             for v in (narrowed.get(name) or {}).get("enum") or []}
    low, high = schema.get("minimum", 0), schema.get("maximum")
    found = []
    for text in texts:
        for said in id_candidates(text, words):
            if said.isdigit() and not any(said in t for t in taken) and said not in retracted \
                    and len(said) not in lengths \
                    and low <= int(said) and (high is None or int(said) <= high):
                found.append(int(said))
    return list(dict.fromkeys(found))


def fill_counts(declared: Mapping[str, Any], props: dict[str, Any], unfilled: list[str], ev: Any,
                described: str, words: Any = DEFAULT_WORDS) -> list[str]:
    """`unfilled` less the counts the tool's unclaimed numbers fill (`props` gets their values): the caller's
    numbers are accounted for by the arguments whose shape they fit."""
    kinds = _kinds(declared, described, words)
    left = []
    for name in unfilled:
        schema = non_null(declared.get(name)) or {}
        kind = kinds.get(name)
        values = unclaimed_numbers(kinds, props, [ev.fresh, ev.said], ev.retracted, schema, words) if (
            kind is not None and kind.kind == "integer") else []
        if values:
            props[name] = {"enum": values}
        else:
            left.append(name)
    return left


def is_free(name: str, schema: dict[str, Any], described: str, words: Any = DEFAULT_WORDS) -> bool:
    """The argument holds free text (`loop.kinds.free_text`): read last, from what no other argument took."""
    return (kind := arg_kind(name, non_null(schema) or {}, described, words)) is not None and kind.kind == "free"


def without_id_pieces(declared: Mapping[str, Any], props: dict[str, Any], said: str, described: str,
                      required: set[str], words: Any = DEFAULT_WORDS) -> list[str]:
    """Counts and amounts in `props` lose the numbers that were pieces of an identifier the tool took whole
    ("Customer 4 4029 187": 44029187, not 4 or 187 of anything); one left with none is dropped, and returned
    when it is `required`."""
    kinds = _kinds(declared, described, words)
    tokens = set(re.findall(r"\d+", said))
    joined = [str(v) for n, k in kinds.items() if k.kind == "id"
              for v in (props.get(n) or {}).get("enum") or [] if str(v) not in tokens]
    emptied = []
    for name, kind in kinds.items():
        enum = (props.get(name) or {}).get("enum")
        if kind.kind in ("integer", "number") and enum and joined:
            if kept := [v for v in enum if not any(_whole(v) in j for j in joined)]:
                props[name] = {**props[name], "enum": kept}
            else:
                del props[name]
                emptied += [name] if name in required else []
    return emptied


def _kinds(declared: Mapping[str, Any], described: str, words: Any) -> dict[str, Kind]:
    return {n: k for n, s in declared.items() if (k := arg_kind(n, non_null(s) or {}, described, words))}


def _whole(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
