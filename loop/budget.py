"""Per-run budget: reserve before paying, settle actuals after. Pure bookkeeping, no I/O."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from loop.config import DIMENSIONS, Budget, Dimension
from loop.outcomes import BudgetExhausted
from loop.types import Pricing, Usage


@dataclass
class BudgetLedger:
    """Tracks consumed and reserved amounts per dimension and decides admission.

    Wall-clock consumption is derived from the clock, never stored, so it cannot drift.
    """

    budget: Budget
    clock: Callable[[], float]
    started_at: float = 0.0
    consumed: dict[str, float] = field(default_factory=lambda: dict.fromkeys(DIMENSIONS, 0.0))
    reserved: dict[str, float] = field(default_factory=lambda: dict.fromkeys(DIMENSIONS, 0.0))
    warnings: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.started_at = self.clock()

    def used(self, dim: Dimension) -> float:
        if dim == "wall_clock_s":
            return self.clock() - self.started_at
        return self.consumed[dim]

    def check_turn(self, input_tokens: int, max_output: int, pricing: Pricing, *, model_timeout_s: float,
                   tool_calls: int, tool_cost: float) -> None:
        """Admit one model call: its estimated input, its full output cap and the per-turn tool allowance."""
        self._admit("turn", {
            "turns": 1,
            "tokens": input_tokens + max_output,
            "wall_clock_s": model_timeout_s,
            "cost_usd": pricing.cost(input_tokens, max_output) + tool_cost,
            "tool_calls": tool_calls,
        })

    def check_batch(self, n_calls: int, max_cost: float, max_seconds: float) -> None:
        """Replace the per-turn tool allowance with what the approved batch may actually spend."""
        self._admit(f"batch of {n_calls} tool call(s)", {
            "tool_calls": n_calls, "cost_usd": max_cost, "wall_clock_s": max_seconds,
        })

    def settle_model(self, usage: Usage) -> None:
        self.consumed["turns"] += 1
        self.consumed["tokens"] += usage.total_tokens
        self.consumed["cost_usd"] += usage.cost_usd
        self._clear()

    def settle_tools(self, n_calls: int, cost_usd: float) -> None:
        self.consumed["tool_calls"] += n_calls
        self.consumed["cost_usd"] += cost_usd
        self._clear()

    def headroom(self) -> dict[str, float]:
        """(ceiling - consumed) / ceiling per dimension, for the report."""
        out = {}
        for dim in DIMENSIONS:
            limit = self.budget.ceiling(dim).limit
            out[dim] = round((limit - self.used(dim)) / limit, 4) if limit else 0.0
        return out

    def snapshot(self) -> dict[str, dict[str, float]]:
        return {
            dim: {"consumed": round(self.used(dim), 6), "reserved": round(self.reserved[dim], 6),
                  "ceiling": self.budget.ceiling(dim).limit}
            for dim in DIMENSIONS
        }

    def _admit(self, what: str, want: dict[str, float]) -> None:
        # Check every dimension in a fixed order; the first hard one that rejects names the outcome.
        for dim in DIMENSIONS:
            ceiling = self.budget.ceiling(dim)
            used, need = self.used(dim), want.get(dim, 0.0)
            if used + need <= ceiling.limit:
                continue
            detail = (f"{what} refused on {dim}: consumed {_fmt(used)} + reserved {_fmt(need)} "
                      f"> ceiling {_fmt(ceiling.limit)}")
            if ceiling.hard:
                raise BudgetExhausted(detail, dimension=dim)
            self.warnings.append(detail.replace("refused", "over soft limit"))
        self.reserved = {dim: want.get(dim, 0.0) for dim in DIMENSIONS}

    def _clear(self) -> None:
        self.reserved = dict.fromkeys(DIMENSIONS, 0.0)


def _fmt(value: float) -> str:
    return f"{value:.6g}"
