"""The words a call's speech-to-text is biased towards: what the agent declares its callers say
(`Agent(vocabulary=...)`, an agent file's `vocabulary:`) and the string values of its tools' enums.

    agent = Agent(model, tools=[Tool(order_pizza)], vocabulary=("Margherita", "Quattro Formaggi"))
    agent_vocabulary(agent)  # ("Margherita", "Quattro Formaggi", "small", "medium", "large")

An enum value written as an identifier is given as it is said ("out_of_stock" -> "out of stock"). Duplicates
(case aside) are dropped, the declared words first: when the words are more than the engine takes (Whisper reads
~220 prompt tokens), the first ones are kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

_IDENTIFIER_GAPS = re.compile(r"[_]+")


def enum_strings(schema: Any) -> Iterator[str]:
    """Every string in an `enum` (or a `const`) anywhere in a JSON schema, `$defs` included, in order."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "enum" and isinstance(value, list):
                yield from (v for v in value if isinstance(v, str))
            elif key == "const" and isinstance(value, str):
                yield value
            else:
                yield from enum_strings(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from enum_strings(item)


def spoken_vocabulary(words: Iterable[str]) -> tuple[str, ...]:
    """Words as said, stripped, once each (the first spelling kept)."""
    seen: dict[str, str] = {}
    for word in words:
        said = " ".join(_IDENTIFIER_GAPS.sub(" ", word).split())
        if said and said.lower() not in seen:
            seen[said.lower()] = said
    return tuple(seen.values())


def agent_vocabulary(agent: Any) -> tuple[str, ...]:
    """The agent's declared vocabulary, then its tools' enum values (tools without a schema have none)."""
    tools = getattr(agent, "tools", {}) or {}
    enums = (value for tool in (tools.values() if isinstance(tools, dict) else tools)
             for value in enum_strings(getattr(tool, "schema", {})))
    return spoken_vocabulary([*getattr(agent, "vocabulary", ()), *enums])


def agent_id_digits(agent: Any) -> tuple[int, ...]:
    """How many digits the agent's identifiers have, where its tools or instructions say
    (`loop.grounding.arguments.id_digit_counts`): a dictated id heard a digit long or short is read again at
    that length (`voice/speech/_id_length.py`)."""
    from loop import locale
    from loop.grounding.arguments import id_digit_counts

    tools = getattr(agent, "tools", {}) or {}
    tools = list(tools.values()) if isinstance(tools, dict) else list(tools)
    specs = [tool.openai_schema() for tool in tools if hasattr(tool, "openai_schema")]
    assembler = getattr(agent, "assembler", None)
    words = locale.get(str(getattr(agent, "language", "") or locale.DEFAULT))
    return id_digit_counts(specs, str(getattr(assembler, "system", "") or ""), words)
