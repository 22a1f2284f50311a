"""What a tool's schema says, read the same way by every grounding module: its function object, its description
(and the other tools': "by its five-digit ticket number" in one tool says what `ticket` is in every tool), its
properties, and how many digits its identifiers have."""

from __future__ import annotations

import re
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from loop.grounding._arg_kinds import arg_kind, digits_named
from loop.locale import DEFAULT_WORDS


def function_of(tool: dict[str, Any]) -> dict[str, Any]:
    return tool.get("function") or tool


def description_of(tool: dict[str, Any]) -> str:
    return str(function_of(tool).get("description", ""))


def described_among(tool: dict[str, Any], tools: Sequence[dict[str, Any]]) -> str:
    """The tool's description, then the others': "by its five-digit ticket number" in one tool's description says
    what `ticket` is in every tool."""
    return "\n".join([description_of(tool), *(description_of(t) for t in tools if t is not tool)])


def properties(tool: dict[str, Any]) -> dict[str, Any]:
    return (function_of(tool).get("parameters") or {}).get("properties") or {}


def required_of(tool: dict[str, Any]) -> list[str]:
    """The names of the tool's required arguments."""
    return list((function_of(tool).get("parameters") or {}).get("required") or [])


_PATTERN_DIGITS = re.compile(r"\\d\{(\d+)\}|\[0-9\]\{(\d+)\}")


def id_digit_counts(tools: Sequence[dict[str, Any]], context: str = "", words: ModuleType = DEFAULT_WORDS
                    ) -> tuple[int, ...]:
    """How many digits the tools' identifiers have, where the agent says (`identifier(digits=8)`, a `pattern` of
    `^\\d{6}$`, "by its four-digit order number" in a description or in `context`, the agent's instructions): what
    a caller's dictated identifier comes to, for speech-to-text to check its reading against."""
    counts: set[int] = set()
    for tool in tools:
        among = described_among(tool, tools)
        for name, schema in properties(tool).items():
            kind = arg_kind(name, schema, among, words)
            if kind is None or kind.kind != "id":
                continue
            in_pattern = [int(a or b) for a, b in _PATTERN_DIGITS.findall(kind.pattern)]
            digits = kind.digits or (in_pattern[0] if len(in_pattern) == 1 else 0) or digits_named(
                name, f"{among}\n{context}", words)
            if digits > 0:
                counts.add(digits)
    return tuple(sorted(counts))
