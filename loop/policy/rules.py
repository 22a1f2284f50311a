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
    language: str = "en"  # the conversation's (`loop.locale`): the words its values are said in


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
        """Whether this rule applies. A `when` that raises propagates: the policy fails closed on it."""
        return fnmatch.fnmatchcase(call.name, self.tool) and (self.when is None or bool(self.when(call.arguments)))


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
        """Judge the validated arguments the tool will receive. A rule whose condition cannot be evaluated on
        them fails closed: DENY for a DENY rule, ASK otherwise, named in the verdict, never "no match"."""
        for rule in self.rules:
            try:
                matched = rule.matches(call)
            except Exception as exc:
                closed = Decision.DENY if rule.decision is Decision.DENY else Decision.ASK
                return Verdict(closed, f"rule {rule.name} could not check these arguments "
                               f"({type(exc).__name__}: {exc}); refused to be safe", rule.name)
            if matched:
                return Verdict(rule.decision, rule.reason or f"rule {rule.name}", rule.name)
        if call.name in self.grants:
            return Verdict(Decision.ALLOW, "granted for this session", GRANT_RULE)
        return Verdict(self.default, f"default {self.default.value.lower()}", "default")


def tighten(verdict: Verdict, tool: Tool, grants: Iterable[str] = (), *,
            mutations_need_approval: bool = False) -> Verdict:
    """Tool metadata may only tighten: an irreversible mutation needs a human unless granted. With
    `mutations_need_approval` (the voice profile) every mutation does, unless a rule ALLOWed it by name."""
    if verdict.decision is not Decision.ALLOW or not tool.mutates:
        return verdict
    granted = verdict.rule == GRANT_RULE or tool.name in grants
    if not tool.reversible and not granted:
        return Verdict(Decision.ASK, f"{tool.name} cannot be undone", "tool.irreversible")
    if mutations_need_approval and not granted and verdict.rule == "default":
        return Verdict(Decision.ASK, f"{tool.name} changes data, so it needs a yes first", "profile.mutations_ask")
    return verdict


def worst_hit(guardrails: Iterable[Guardrail], call: ToolCall, tool: Tool, ctx: VetContext) -> GuardrailHit | None:
    """HALT beats BLOCK; the first hit of the worst severity is reported."""
    hits = [h for g in guardrails if (h := g.check(call, tool, ctx)) is not None]
    for severity in (Severity.HALT, Severity.BLOCK):
        for hit in hits:
            if hit.severity is severity:
                return hit
    return None
