"""Guardrails shipped with the loop. Each is pure: it looks at one proposed call and the conversation."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType

from loop import locale
from loop.grounding.arguments import id_candidates, number_candidates
from loop.locale import DEFAULT_WORDS
from loop.policy.rules import GuardrailHit, Severity, VetContext
from loop.tools import Tool
from loop.types import ToolCall


def spoken_values(text: str, words: ModuleType = DEFAULT_WORDS) -> tuple[set[float], set[str]]:
    """The numbers and identifiers someone actually said, however they said them ("4 5 6 7",
    "four five six seven", "$20", "twenty dollars"). The same evidence narrows the local model's grammar
    (`loop.grounding.arguments`), so what the grammar admits, this guardrail admits too. Words of the pack
    `words`."""
    ids = set(id_candidates(text, words))
    numbers = set(number_candidates(text, words)) | {float(i) for i in ids if i.replace(".", "", 1).isdigit()}
    return numbers, ids


@dataclass
class GroundedArguments:
    """BLOCK a mutating call whose identifying arguments (order ids, amounts) appear neither in what the
    caller said nor in earlier tool results. Small models invent them; a refund must not."""

    keys: Iterable[str] = ("order_id", "amount", "account_id", "customer_id")
    name: str = "grounded_arguments"

    def check(self, call: ToolCall, tool: Tool, ctx: VetContext) -> GuardrailHit | None:
        if not tool.mutates:
            return None
        said = " ".join([ctx.user_text, *ctx.observations])
        numbers, ids = spoken_values(said, locale.get(ctx.language))
        missing = [f"{k}={_shown(v)}" for k, v in call.arguments.items()
                   if k in set(self.keys) and not _grounded(v, numbers, ids, said.lower())]
        if not missing:
            return None
        return GuardrailHit(Severity.BLOCK, f"{', '.join(missing)} did not come from the caller or from an earlier "
                            "tool result. Ask the caller for the missing details; do not guess them.", self.name)


def _shown(value: object) -> str:
    """Validated amounts are floats; show 20.0 as the caller would say it, 20."""
    return repr(int(value)) if isinstance(value, float) and value.is_integer() else repr(value)


def _grounded(value: object, numbers: set[float], ids: set[str], text: str) -> bool:
    if str(value) in ids:
        return True
    try:
        return float(str(value).replace("$", "")) in numbers
    except ValueError:
        return str(value).lower() in text
