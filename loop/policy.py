"""Guardrails and policy: pure decisions about proposed calls. The controller decides; the loop acts."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from loop.tools import Tool
from loop.types import ToolCall


class Decision(StrEnum):
    ALLOW = "ALLOW"
    DENY = "DENY"
    ASK = "ASK"


@dataclass(frozen=True)
class Verdict:
    """A policy decision with the rule that made it and a reason the model (or caller) can read."""

    decision: Decision
    reason: str
    rule: str


class Severity(StrEnum):
    BLOCK = "BLOCK"  # refuse this call, keep the run going
    HALT = "HALT"  # stop the whole run before anything in the batch executes


@dataclass(frozen=True)
class GuardrailHit:
    severity: Severity
    detail: str
    guardrail: str


@dataclass
class VetContext:
    """What guardrails may look at: the conversation so far, as plain text, and earlier results."""

    user_text: str = ""
    observations: list[str] = field(default_factory=list)


class Guardrail(Protocol):
    """Content-shaped check on one proposed call. Returns None to pass."""

    name: str

    def check(self, call: ToolCall, tool: Tool, ctx: VetContext) -> GuardrailHit | None: ...


@dataclass(frozen=True)
class Rule:
    """`tool` is a glob on the tool name; `when` optionally narrows it on the arguments."""

    name: str
    tool: str
    decision: Decision
    reason: str = ""
    when: Callable[[dict[str, Any]], bool] | None = None

    def matches(self, call: ToolCall) -> bool:
        if not fnmatch.fnmatchcase(call.name, self.tool):
            return False
        try:
            return self.when is None or bool(self.when(call.arguments))
        except (TypeError, ValueError, KeyError):
            return False  # a rule that cannot read the args does not match; validation reports them


GRANT_RULE = "session.grant"


@dataclass
class Policy:
    """First matching rule wins; otherwise `default`. Session grants pre-approve named tools."""

    rules: list[Rule] = field(default_factory=list)
    default: Decision = Decision.ALLOW
    grants: set[str] = field(default_factory=set)
    text: str = ""  # plain-language policy put in the stable prompt prefix

    def grant(self, tool_name: str) -> None:
        self.grants.add(tool_name)

    def evaluate(self, call: ToolCall, tool: Tool) -> Verdict:
        for rule in self.rules:
            if rule.matches(call):
                return Verdict(rule.decision, rule.reason or f"rule {rule.name}", rule.name)
        if call.name in self.grants:
            return Verdict(Decision.ALLOW, "granted for this session", GRANT_RULE)
        return Verdict(self.default, f"default {self.default.value.lower()}", "default")


def tighten(verdict: Verdict, tool: Tool, grants: Iterable[str] = ()) -> Verdict:
    """Tool metadata may only tighten: an irreversible mutation needs a human unless granted."""
    irreversible = tool.mutates and not tool.reversible
    if verdict.decision is Decision.ALLOW and irreversible and verdict.rule != GRANT_RULE \
            and tool.name not in grants:
        return Verdict(Decision.ASK, f"{tool.name} cannot be undone", "tool.irreversible")
    return verdict


def worst_hit(guardrails: Iterable[Guardrail], call: ToolCall, tool: Tool, ctx: VetContext) -> GuardrailHit | None:
    """HALT beats BLOCK; the first hit of the worst severity is reported."""
    hits = [h for g in guardrails if (h := g.check(call, tool, ctx)) is not None]
    for severity in (Severity.HALT, Severity.BLOCK):
        for hit in hits:
            if hit.severity is severity:
                return hit
    return None
