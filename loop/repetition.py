"""Repetition detection on canonical signatures. Pure functions: no state, no side effects."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from loop.types import ToolCall


def turn_signature(calls: Sequence[ToolCall]) -> str:
    """One turn's intent: its calls' canonical signatures, order-free (a batch is a set of proposals)."""
    return " & ".join(sorted(c.signature for c in calls))


def detect_repetition(turns: Sequence[str], threshold: int) -> str | None:
    """Reason text if the latest turns repeat with period 1 or 2 at least `threshold` times, else None."""
    if threshold < 2 or not turns:
        return None
    tail = turns[-threshold:]
    if len(tail) == threshold and len(set(tail)) == 1:
        return f"the same call was proposed {threshold} times in a row: {tail[0]}"
    window = turns[-2 * threshold:]
    if len(window) == 2 * threshold:
        a, b = window[0], window[1]
        if a != b and all(sig == (a if i % 2 == 0 else b) for i, sig in enumerate(window)):
            return f"two calls alternated {threshold} times without progress: {a} <-> {b}"
    return None


def repeated_intent_depth(calls: Sequence[ToolCall]) -> int:
    """Largest number of times any one canonical call signature occurs in a run."""
    counts = Counter(c.signature for c in calls)
    return max(counts.values(), default=0)
