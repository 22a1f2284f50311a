"""The outside agents and their callers (evals/README.md) stay runnable: every agent loads, every call carries an
expectation, each half is non-empty; and a call script's `calls:` / `not_called:` expectations read as written."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.paths import ROOT
from voice.agents.source import load_agent
from voice.testing.scripted_call import _check_calls

AGENTS = ROOT / "evals" / "agents"
SPECS = sorted(AGENTS.glob("*/calls.yaml"))


def test_twelve_agents_and_at_least_150_calls() -> None:
    calls = [c for p in SPECS for c in yaml.safe_load(p.read_text())["calls"]]
    assert len(SPECS) >= 12 and len(calls) >= 150


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.parent.name)
def test_each_agent_loads_and_every_call_expects_something(spec: Path, tmp_path: Path) -> None:
    data = yaml.safe_load(spec.read_text())
    ref = data["agent"]
    ref = str(spec.parent / ref) if ":" not in ref else f"{spec.parent / ref.split(':')[0]}:{ref.split(':')[1]}"
    agent = load_agent(ref).maker(tmp_path)("c1")
    assert agent.tools
    for call in data["calls"]:
        expect = call["expect"]
        assert call["lines"] and (expect.get("calls") or expect.get("not_called") or expect.get("says")), call
        for want in expect.get("calls", []):
            assert want["tool"] in agent.tools, (call["name"], want)


def test_calls_expectations_compare_arguments_as_text() -> None:
    ran = [{"name": "freeze_card", "arguments": {"last_four": 77, "reason": "Lost "}}]
    assert _check_calls({"calls": [{"tool": "freeze_card", "args": {"last_four": "77", "reason": "lost"}}]}, ran) == []
    assert _check_calls({"calls": [{"tool": "freeze_card", "args": {"last_four": "0077"}}]}, ran)
    assert _check_calls({"not_called": ["freeze_card"]}, ran) == ["freeze_card should not have run"]
