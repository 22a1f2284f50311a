"""The order desk's own tests with the shipped helpers: a text conversation (`loop.testing`) and the demo call
over audio (`voice.testing`), as `./run demo` plays it with scripted replies."""

from __future__ import annotations

from pathlib import Path

from loop import ScriptedModel, ToolCall
from loop.testing import Conversation
from tests.paths import AUDIO_FIXTURES
from voice.agents.source import load_agent
from voice.demo import AGENT_FILE
from voice.testing import check_call_script

DEMO_CALL = AUDIO_FIXTURES / "refund_approved.yaml"


def test_a_refund_over_the_limit_is_denied_and_nothing_is_paid(tmp_path: Path) -> None:
    script = [ToolCall("issue_refund", {"order_id": "7788", "amount": 800}),
              "I can't refund that much myself; I can put you through to a supervisor."]
    maker = load_agent(str(AGENT_FILE)).maker(tmp_path, lambda _id: ScriptedModel(script))
    turn = Conversation(maker("c1")).say_sync("Refund 800 dollars on order 7788.")
    turn.expect.called("issue_refund", order_id="7788", amount=800).verdict("refund.over_limit", "DENY")
    turn.expect.executed().said("supervisor").outcome("COMPLETED")
    assert maker.state.refunded("7788") == 0


def test_two_turns_keep_the_conversation(tmp_path: Path) -> None:
    script = [ToolCall("lookup_order", {"order_id": "4567"}), "It has shipped to Lisbon.",
              ToolCall("delivery_status", {"city": "Lisbon"}), "One order is going to Lisbon."]
    maker = load_agent(str(AGENT_FILE)).maker(tmp_path, lambda _id: ScriptedModel(script))
    talk = Conversation(maker("c2"))
    talk.say_sync("Where is order 4567?").expect.executed("lookup_order").said("shipped")
    talk.say_sync("Anything else going to Lisbon?").expect.executed("delivery_status")
    talk.expect.executed("lookup_order", "delivery_status").heard("4567", "Lisbon")


def test_the_demo_call_passes_its_script() -> None:
    call = check_call_script(DEMO_CALL)
    call.expect.heard("refund").verdict("issue_refund", "ASK").executed("lookup_order", "issue_refund")
    call.expect.said("Just to confirm").outcome("COMPLETED")
    assert call.state.refunded("4567") == 20
