"""Per-run budget: reserve before paying, settle actuals after. Pure bookkeeping, no I/O."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from loop.config import DIMENSIONS, Budget, Dimension
from loop.outcomes import BudgetExhausted
from loop.store.ledger import LedgerRefused, Reservation, TenantBudget
from loop.types import Pricing, Usage


@dataclass
class BudgetLedger:
    """Tracks consumed and reserved amounts per dimension and decides admission.

    Wall-clock consumption is derived from the clock, never stored, so it cannot drift; on resume it starts
    from what the journal says was consumed before the interruption (`resume_at`). With a `tenant`, every
    admission also holds the same amounts in the shared ledger, atomically across processes.
    """

    budget: Budget
    clock: Callable[[], float]
    started_at: float = 0.0
    consumed: dict[str, float] = field(default_factory=lambda: dict.fromkeys(DIMENSIONS, 0.0))
    reserved: dict[str, float] = field(default_factory=lambda: dict.fromkeys(DIMENSIONS, 0.0))
    warnings: list[str] = field(default_factory=list)
    tenant: TenantBudget | None = None
    run_id: str = ""
    elapsed_before: float = 0.0
    hold: Reservation | None = None

    def __post_init__(self) -> None:
        self.started_at = self.clock()

    def used(self, dim: Dimension) -> float:
        if dim == "wall_clock_s":
            return self.elapsed_before + self.clock() - self.started_at
        return self.consumed[dim]

    def resume_at(self, elapsed_s: float) -> None:
        """A journaled moment is being replayed: the run had consumed `elapsed_s` seconds by then."""
        self.elapsed_before, self.started_at = elapsed_s, self.clock()

    def exclude_wait(self, seconds: float) -> None:
        """Time spent waiting for a human (an approval, which has its own timeout) does not count as wall clock."""
        self.started_at += max(0.0, seconds)

    def check_turn(self, input_tokens: int, max_output: int, pricing: Pricing, *, model_timeout_s: float,
                   tool_calls: int, tool_cost: float, shared: bool = True) -> None:
        """Admit one model call: its estimated input, its full output cap and the per-turn tool allowance.
        The allowance never exceeds the tool calls left, so a run at its tool-call ceiling may still answer;
        a batch it proposes then is refused by `check_batch`. `shared=False`: a replayed turn, already paid."""
        left = max(self.budget.tool_calls.limit - self.used("tool_calls"), 0.0)
        self._admit("turn", {
            "turns": 1,
            "tokens": input_tokens + max_output,
            "wall_clock_s": model_timeout_s,
            "cost_usd": pricing.cost(input_tokens, max_output) + tool_cost,
            "tool_calls": min(float(tool_calls), left),
        }, shared)

    def check_speculation(self, input_tokens: int, max_output: int, pricing: Pricing, *,
                          model_timeout_s: float) -> None:
        """Admit one speculative model call (`loop.prefetch`): its tokens, cost and time, but no turn of a run."""
        self._admit("speculative model call", {"tokens": input_tokens + max_output, "wall_clock_s": model_timeout_s,
                                               "cost_usd": pricing.cost(input_tokens, max_output)}, True)

    def settle_speculation(self, usage: Usage) -> None:
        self._settle({"tokens": usage.total_tokens, "cost_usd": usage.cost_usd})

    def check_batch(self, n_calls: int, max_cost: float, max_seconds: float, shared: bool = True) -> None:
        """Replace the per-turn tool allowance with what the approved batch may actually spend."""
        self._admit(f"batch of {n_calls} tool call(s)", {
            "tool_calls": n_calls, "cost_usd": max_cost, "wall_clock_s": max_seconds,
        }, shared)

    def settle_model(self, usage: Usage) -> None:
        self._settle({"turns": 1, "tokens": usage.total_tokens, "cost_usd": usage.cost_usd})

    def settle_tools(self, n_calls: int, cost_usd: float) -> None:
        self._settle({"tool_calls": n_calls, "cost_usd": cost_usd})

    def _settle(self, actual: dict[str, float]) -> None:
        """What was actually spent: consumed here, settled in the shared ledger, the reservation cleared."""
        for dim, amount in actual.items():
            self.consumed[dim] += amount
        self._settle_shared(actual)
        self._clear()

    def close(self) -> None:
        """The run ended with a shared hold still open (a failed or cancelled call): spend may have happened,
        so the whole hold is committed rather than released."""
        self._settle_shared(None)

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

    def _admit(self, what: str, want: dict[str, float], shared: bool) -> None:
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
        if shared:
            self._hold_shared(what, want)
        self.reserved = {dim: want.get(dim, 0.0) for dim in DIMENSIONS}

    def _hold_shared(self, what: str, want: dict[str, float]) -> None:
        if self.tenant is None:
            return
        t = self.tenant
        try:
            self.hold = t.ledger.reserve(t.tenant, {r: want.get(r, 0.0) for r in t.resources}, run_id=self.run_id)
        except LedgerRefused as exc:
            raise BudgetExhausted(f"{what} refused by the shared budget: {exc}", dimension=exc.resource) from exc

    def _settle_shared(self, actual: dict[str, float] | None) -> None:
        if self.hold is None or self.tenant is None:
            return
        hold, self.hold = self.hold, None
        amounts = hold.amounts if actual is None else {r: actual.get(r, 0.0) for r in self.tenant.resources}
        self.tenant.ledger.settle(hold.id, amounts)

    def _clear(self) -> None:
        self.reserved = dict.fromkeys(DIMENSIONS, 0.0)


def _fmt(value: float) -> str:
    return f"{value:.6g}"
