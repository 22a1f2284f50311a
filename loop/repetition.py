"""Repetition detection on canonical signatures. Pure functions: no state, no side effects."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from loop.types import ToolCall, canonical_json


def _canonical(value: Any) -> Any:
    """Whitespace and letter case carry no intent: " checkout  Errors" and "checkout errors" are one ask."""
    if isinstance(value, str):
        return " ".join(value.split()).casefold()
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


def canonical_signature(call: ToolCall) -> str:
    """Tool name + canonical JSON of normalised arguments; never the call id or the result. A retry that only
    respaces or recases an argument is the same failure disguised as exploration."""
    return f"{call.name}:{canonical_json(_canonical(call.arguments))}"


def turn_signature(calls: Sequence[ToolCall]) -> str:
    """One turn's intent: its calls' canonical signatures, order-free (a batch is a set of proposals)."""
    return " & ".join(sorted(canonical_signature(c) for c in calls))


def detect_repetition(turns: Sequence[str], threshold: int,
                      observations: Sequence[Sequence[str]] = ()) -> str | None:
    """Reason text if the latest turns repeat with period 1 or 2 at least `threshold` times, else None.
    `observations[i]` are what turn i's calls returned; the repeated ones are shown together in the reason."""
    if threshold < 2 or not turns:
        return None
    tail = turns[-threshold:]
    if len(tail) == threshold and len(set(tail)) == 1:
        why = f"the same call was proposed {threshold} times in a row: {tail[0]}"
        return why + _seen(turns, threshold, observations)
    window = turns[-2 * threshold:]
    if len(window) == 2 * threshold:
        a, b = window[0], window[1]
        if a != b and all(sig == (a if i % 2 == 0 else b) for i, sig in enumerate(window)):
            why = f"two calls alternated {threshold} times without progress: {a} <-> {b}"
            return why + _seen(turns, 2 * threshold, observations)
    return None


def _seen(turns: Sequence[str], span: int, observations: Sequence[Sequence[str]]) -> str:
    first = len(turns) - span
    seen = [f"[turn {i + 1}] " + " / ".join(" ".join(o.split())[:160] for o in observations[i])
            for i in range(first, min(len(turns), len(observations)))]
    return "; what it observed each time: " + "; ".join(seen) if seen else ""


def repeated_intent_depth(calls: Sequence[ToolCall]) -> int:
    """Largest number of times any one canonical call signature occurs in a run."""
    counts = Counter(canonical_signature(c) for c in calls)
    return max(counts.values(), default=0)
