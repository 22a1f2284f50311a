"""Loop configuration: one loop, four named profiles. The model never sees or changes these."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Dimension = Literal["turns", "tokens", "wall_clock_s", "cost_usd", "tool_calls"]
DIMENSIONS: tuple[Dimension, ...] = ("turns", "tokens", "wall_clock_s", "cost_usd", "tool_calls")


class Ceiling(BaseModel):
    """One limit. Hard limits refuse admission; soft limits only raise a warning event."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    limit: float
    """The most the run may consume of this resource."""
    hard: bool = True
    """True: admission is refused when it would cross the limit. False: a warning is journaled."""


class Budget(BaseModel):
    """The five ceilings of a run. Frozen: nothing inside the run can extend it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    turns: Ceiling = Ceiling(limit=20)
    """Model calls. Catches structural non-convergence."""
    tokens: Ceiling = Ceiling(limit=200_000)
    """Input + output tokens across all model calls. Catches context blowup."""
    wall_clock_s: Ceiling = Ceiling(limit=600)
    """Seconds since the run started. Catches hung dependencies that spend no tokens."""
    cost_usd: Ceiling = Ceiling(limit=5.0)
    """Dollars across model calls and tools with a declared cost."""
    tool_calls: Ceiling = Ceiling(limit=100)
    """Executed tool calls. Catches fan-out."""

    def ceiling(self, dim: Dimension) -> Ceiling:
        return getattr(self, dim)

    @classmethod
    def of(cls, hard: bool = True, **limits: float) -> Budget:
        """`Budget.of(turns=9, cost_usd=1.0)`: shorthand with the other ceilings at defaults."""
        return cls(**{k: Ceiling(limit=v, hard=hard) for k, v in limits.items()})


class LoopConfig(BaseModel):
    """How one run of the loop behaves. Profiles differ only in these values, never in code."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True, extra="forbid")

    name: str = "task"
    """Name of the profile these values came from (journaled with every run)."""
    budget: Budget = Field(default_factory=Budget)
    """The run's five ceilings."""
    max_output_tokens: int = 1024
    """Cap on one model reply; reserved in full before every call."""
    context_tokens: int = 32_000
    """Token budget for the assembled prompt; oldest history is trimmed (in whole groups) to fit."""
    turn_wall_clock_s: Ceiling = Ceiling(limit=120, hard=False)
    """Per-turn latency budget (model + tools). Soft by default: a slow turn is flagged, not killed."""
    model_timeout_s: float = 60.0
    """Deadline for one model call; also reserved against the wall-clock ceiling."""
    tool_calls_reserved_per_turn: int = 1
    """Tool calls reserved at turn admission, before the model has proposed any."""
    tool_cost_reserved_per_turn: float = 0.0
    """Tool dollars reserved at turn admission; replaced by the approved batch's declared maximum."""
    parallel_reads: bool = True
    """Run the read-only calls of one batch concurrently."""
    max_parallel_reads: int = 8
    """Bound on concurrently running reads."""
    default_tool_timeout_s: float = 30.0
    """Used for tools that declare no timeout."""
    max_observation_chars: int = 4000
    """Tool results longer than this are trimmed, with a note telling the model so."""
    repeat_threshold: int = 3
    """Stop as LOOP_DETECTED when the same turn signature repeats this many times (period 1 or 2)."""
    max_consecutive_tool_failures: int = 3
    """A tool failing this many times in a row ends the run as TOOL_FAILURE."""
    stop_on_decline: bool = False
    """End the run as APPROVAL_DENIED when a human declines; else the decline is only an observation."""
    mutations_need_approval: bool = False
    """Every mutating call, reversible or not, waits for a human's yes (ASK) unless a policy rule ALLOWs it by
    name or the session granted the tool. On in the voice profile: a misheard caller must not change data."""

    @classmethod
    def profile_names(cls) -> tuple[str, ...]:
        return tuple(PROFILES)

    @classmethod
    def profile(cls, name: str, **overrides: object) -> LoopConfig:
        """A named profile (`voice`, `chat`, `task`, `long_horizon`), optionally with overrides."""
        if name not in PROFILES:
            raise ValueError(f"unknown loop profile {name!r}; choose one of {', '.join(PROFILES)}")
        # Validate, so a misspelt or mistyped override is an error instead of silently ignored.
        return cls.model_validate({**PROFILES[name].model_dump(), **overrides})


PROFILES: dict[str, LoopConfig] = {
    # A caller is audibly waiting: few turns, a sub-second per-turn budget, reads in parallel.
    "voice": LoopConfig(
        name="voice",
        budget=Budget.of(turns=4, tokens=16_000, wall_clock_s=30, cost_usd=0.10, tool_calls=8),
        max_output_tokens=160,
        context_tokens=4096,
        turn_wall_clock_s=Ceiling(limit=0.8, hard=False),
        model_timeout_s=8.0,
        default_tool_timeout_s=2.0,
        max_observation_chars=1200,
        repeat_threshold=2,
        mutations_need_approval=True,
    ),
    "chat": LoopConfig(
        name="chat",
        budget=Budget.of(turns=15, tokens=100_000, wall_clock_s=300, cost_usd=1.0, tool_calls=40),
        max_output_tokens=800,
        context_tokens=16_000,
        turn_wall_clock_s=Ceiling(limit=20, hard=False),
        model_timeout_s=30.0,
    ),
    "task": LoopConfig(name="task", stop_on_decline=True),
    # Unattended for hours: more turns and time, tight fan-out, decline stops the run.
    "long_horizon": LoopConfig(
        name="long_horizon",
        budget=Budget.of(turns=500, tokens=5_000_000, wall_clock_s=6 * 3600, cost_usd=50.0, tool_calls=2000),
        max_output_tokens=4096,
        context_tokens=100_000,
        turn_wall_clock_s=Ceiling(limit=600, hard=False),
        model_timeout_s=300.0,
        default_tool_timeout_s=300.0,
        stop_on_decline=True,
        repeat_threshold=4,
    ),
}
