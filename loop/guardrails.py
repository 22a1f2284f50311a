"""Guardrails shipped with the loop. Each is pure: it looks at one proposed call and the conversation."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from loop.policy import GuardrailHit, Severity, VetContext
from loop.tools import Tool
from loop.types import ToolCall

_UNITS = {w: i for i, w in enumerate(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                      "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                                      "seventeen", "eighteen", "nineteen"])}
_TENS = {w: 10 * (i + 2) for i, w in enumerate(["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
                                                "ninety"])}
_SCALES = {"hundred": 100, "thousand": 1000}


def spoken_numbers(text: str) -> set[float]:
    """Every number a caller (or a tool result) stated, however it was written: "4567", "4 5 6 7",
    "$20.50", "twenty dollars", "four five six seven", "one hundred and twenty"."""
    text = text.lower().replace(",", "")
    found = {float(m) for m in re.findall(r"\d+(?:\.\d+)?", text)}
    found |= {float(m.replace(" ", "")) for m in re.findall(r"\b\d(?: \d\b)+", text)}  # digit by digit
    words = re.findall(r"[a-z]+", text)
    found |= _word_numbers(words)
    return found


def _word_numbers(words: list[str]) -> set[float]:
    out: set[float] = set()
    run: list[str] = []
    for w in [*words, "."]:
        if w in _UNITS or w in _TENS or w in _SCALES or (w == "and" and run):
            run.append(w)
        elif run:
            out |= _parse_run([x for x in run if x != "and"])
            run = []
    return out


def _parse_run(run: list[str]) -> set[float]:
    out: set[float] = set()
    if len(run) > 1 and all(_UNITS.get(w, 10) < 10 for w in run):  # "four five six seven" -> 4567
        out.add(float("".join(str(_UNITS[w]) for w in run)))
    total, current, last = 0, 0, None
    for w in run:
        if w in _SCALES:
            current = max(current, 1) * _SCALES[w]
            if _SCALES[w] >= 1000:
                total, current = total + current, 0
        else:
            value = _UNITS.get(w, _TENS.get(w, 0))
            joins = last is None or last in _SCALES or (last in _TENS and value < 10)
            if not joins:  # "thirty five fifty" is two numbers: 35 and 50
                out.add(float(total + current))
                total, current = 0, 0
            current += value
        last = w
    out.add(float(total + current))
    return out


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
        numbers, lowered = spoken_numbers(said), said.lower()
        missing = [f"{k}={v!r}" for k, v in call.arguments.items()
                   if k in set(self.keys) and not _grounded(v, numbers, lowered)]
        if not missing:
            return None
        return GuardrailHit(Severity.BLOCK, f"{', '.join(missing)} did not come from the caller or from an earlier "
                            "tool result. Ask the caller for the missing details; do not guess them.", self.name)


def _grounded(value: object, numbers: set[float], text: str) -> bool:
    try:
        return float(str(value).replace("$", "")) in numbers
    except ValueError:
        return str(value).lower() in text
