"""What an approver answers: yes or no, why, and whether a no ends the run."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ApprovalAnswer:
    """What an approver may return instead of a bool: the decision, why (journaled, and told to the model), and
    whether a decline ends the run (`end_run`: the approver has said what happened itself, as a voice call does;
    the run ends APPROVAL_DENIED with `reason`)."""

    approved: bool
    reason: str = ""
    end_run: bool = False

    @classmethod
    def of(cls, answer: bool | ApprovalAnswer) -> ApprovalAnswer:
        return answer if isinstance(answer, ApprovalAnswer) else cls(bool(answer))
