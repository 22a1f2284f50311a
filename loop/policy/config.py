"""Policy from configuration: rules as data, so operators change who may do what without code."""

from __future__ import annotations

import operator
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from loop.policy.rules import Decision, Policy, Rule

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "gt": operator.gt, "gte": operator.ge, "lt": operator.lt, "lte": operator.le, "eq": operator.eq,
    "ne": operator.ne, "in": lambda a, b: a in b,
}


class RuleConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str
    """Named in every verdict, journal event and denial the model reads."""
    tool: str
    """Tool name or glob (`*`, `issue_*`)."""
    decision: Decision
    """ALLOW, DENY or ASK."""
    reason: str = ""
    """Why, in words the model can relay to the caller."""
    when: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Argument conditions, all of which must hold: `{amount: {gt: 500}}`."""

    def to_rule(self) -> Rule:
        for arg, conds in self.when.items():
            unknown = set(conds) - set(_OPS)
            if unknown:
                raise ValueError(f"rule {self.name}: unknown condition {sorted(unknown)} on {arg}; use {sorted(_OPS)}")
        return Rule(self.name, self.tool, self.decision, self.reason, when=self._matcher() if self.when else None)

    def _matcher(self) -> Callable[[dict[str, Any]], bool]:
        conditions = [(arg, _OPS[op], value) for arg, conds in self.when.items() for op, value in conds.items()]

        def matches(args: dict[str, Any]) -> bool:
            return all(arg in args and test(_number_or_text(args[arg]), value) for arg, test, value in conditions)

        return matches


class PolicyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    text: str = ""
    """Plain-language policy placed in the stable prompt prefix."""
    default: Decision = Decision.ALLOW
    """Decision when no rule matches."""
    rules: list[RuleConfig] = Field(default_factory=list)
    """First matching rule wins."""

    def to_policy(self) -> Policy:
        return Policy(rules=[r.to_rule() for r in self.rules], default=self.default, text=self.text.strip())


def _number_or_text(value: Any) -> Any:
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def load_policy(path: str | Path) -> Policy:
    data = yaml.safe_load(Path(path).read_text())
    return PolicyConfig.model_validate(data.get("policy", data)).to_policy()
