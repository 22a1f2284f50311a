"""How a run ends: a closed set of outcomes, each raised as a typed exception where it is decided."""

from __future__ import annotations

from enum import StrEnum


class RunOutcome(StrEnum):
    """The one reason a run ended. Each has a different operational owner."""

    COMPLETED = "COMPLETED"  # model gave a non-truncated final answer
    BUDGET_EXHAUSTED = "BUDGET_EXHAUSTED"  # a hard ceiling would be breached
    GUARDRAIL_STOP = "GUARDRAIL_STOP"  # a guardrail halted the run
    LOOP_DETECTED = "LOOP_DETECTED"  # the same intent repeated without progress
    APPROVAL_DENIED = "APPROVAL_DENIED"  # a human declined and the run may not go on without it
    ESCALATED = "ESCALATED"  # handed to a human
    TOOL_FAILURE = "TOOL_FAILURE"  # a dependency stayed broken after retries
    ERROR = "ERROR"  # a defect in the harness: page yourself


class Terminal(Exception):
    """Raised to end a run; carries the outcome and a human-readable reason."""

    outcome: RunOutcome = RunOutcome.ERROR

    def __init__(self, reason: str, answer: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.answer = answer


class Completed(Terminal):
    outcome = RunOutcome.COMPLETED


class BudgetExhausted(Terminal):
    outcome = RunOutcome.BUDGET_EXHAUSTED

    def __init__(self, reason: str, dimension: str = "") -> None:
        super().__init__(reason)
        self.dimension = dimension


class GuardrailStop(Terminal):
    outcome = RunOutcome.GUARDRAIL_STOP


class LoopDetected(Terminal):
    outcome = RunOutcome.LOOP_DETECTED


class ApprovalDenied(Terminal):
    outcome = RunOutcome.APPROVAL_DENIED


class Escalated(Terminal):
    """Raise from a tool to hand the conversation to a human; the reason goes to the operator."""

    outcome = RunOutcome.ESCALATED


class ToolFailure(Terminal):
    outcome = RunOutcome.TOOL_FAILURE
