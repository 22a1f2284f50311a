"""Whole numbers the caller said that no identifier of the tool can be: a count's value, however many digits.

A bare number of four digits or more is read as naming something (an order, an account), never as a count: "order
4567" is no 4567 boxes. Within one tool whose identifiers declare their length that guess is not needed: "Account
55038810, and the reading is 1345" holds an eight-digit account, and 1345 fits no identifier of
`submit_reading(account_number: id:8, reading: count)`, so it is the reading's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from loop.grounding._arg_kinds import Kind
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
    from loop.grounding._arg_kinds import arg_kind, non_null

    kinds = {n: k for n, s in declared.items() if (k := arg_kind(n, non_null(s) or {}, described, words))}
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
