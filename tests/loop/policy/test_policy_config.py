"""Policy as configuration: the demo's refund rules load from voice/demo/ and decide as written."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from loop import Decision, ToolCall
from loop.policy.config import PolicyConfig, load_policy
from tests.paths import ROOT
from voice.demo.order_desk import OrderDesk

CONFIG = ROOT / "voice" / "demo" / "order_support.yaml"


@pytest.mark.parametrize(("name", "args", "decision", "rule"), [
    ("lookup_order", {"order_id": "4567"}, Decision.ALLOW, "default"),
    ("issue_refund", {"order_id": "4567", "amount": 20}, Decision.ASK, "refund.confirm"),
    ("issue_refund", {"order_id": "4567", "amount": "20"}, Decision.ASK, "refund.confirm"),
    ("issue_refund", {"order_id": "7788", "amount": 820}, Decision.DENY, "refund.over_limit"),
    ("issue_refund", {"order_id": "7788", "amount": 500}, Decision.ASK, "refund.confirm"),
])
def test_demo_policy_from_config(tmp_path: Path, name: str, args: dict, decision: Decision, rule: str) -> None:
    policy = load_policy(CONFIG)
    tools = {t.name: t for t in OrderDesk(tmp_path / "o.db").tools()}
    verdict = policy.evaluate(ToolCall(name, args), tools[name])
    assert (verdict.decision, verdict.rule) == (decision, rule)
    assert "Refunds above $500 are refused" in policy.text


def test_bad_policy_config_is_rejected_with_a_reason() -> None:
    with pytest.raises(ValidationError):
        PolicyConfig.model_validate({"rules": [{"name": "x", "tool": "*", "decision": "MAYBE"}]})
    with pytest.raises(ValueError, match="unknown condition"):
        PolicyConfig.model_validate({"rules": [{"name": "x", "tool": "*", "decision": "ASK",
                                                "when": {"amount": {"bigger": 1}}}]}).to_policy()
