"""`Agent.override()`: a call's own view of the user's agent. Drivers wire their approver, listeners and model into
the view; the object the user built stays as it was, so one agent can serve many calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from loop import Agent, LoopConfig, ScriptedModel
from voice.demo.order_desk import OrderDesk, order_policy


def _agent(tmp_path: Path) -> Agent:
    desk = OrderDesk(tmp_path / "orders.db")
    return Agent(model=ScriptedModel(["Hello."]), tools=desk.tools(), policy=order_policy(),
                 config=LoopConfig.profile("voice"))


def test_a_view_takes_the_changes_and_the_agent_keeps_its_own(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    other = ScriptedModel(["Hi there."])
    view = agent.override(model=other, approver=lambda call, verdict: True, listeners=[print],
                          conversation_id="call-7")
    assert view.model is other and view.approver is not None and view.listeners == [print]
    assert view.conversation_id == "call-7" and view.tools == agent.tools
    assert agent.model is not other and agent.approver is None and agent.listeners == []
    assert agent.conversation_id == "" and view.speculative is not agent.speculative
    assert view.run_sync("hi").answer == "Hi there." and agent.run_sync("hi").answer == "Hello."


def test_an_unknown_change_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="aproover"):
        _agent(tmp_path).override(aproover=None)
