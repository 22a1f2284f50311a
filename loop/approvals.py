"""What an approver answers: yes or no, why, and whether a no ends the run."""

from __future__ import annotations

import re
from dataclasses import dataclass

_NOT_APPROVED = re.compile(r"^(?P<tool>\w+) was not approved \((?P<reason>.*)\)\. It was not done\.$", re.S)


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


def not_approved(tool: str, reason: str) -> str:
    """The tool result of a write the caller did not approve, as the model and the grounding read it."""
    return f"{tool} was not approved ({reason}). It was not done."


def not_approved_reason(content: str) -> str | None:
    """Why a write was not approved, read back from its tool result (`not_approved`); None for any other result."""
    m = _NOT_APPROVED.match(content)
    return m.group("reason") if m else None
