"""The public API a user reads: `from voice import ...` and `from loop import ...` give the session, its
configuration, the speech stack, the agent loader and the testing helpers; `import voice` stays light."""

from __future__ import annotations

import subprocess
import sys

import loop
import voice
from tests.paths import ROOT


def test_loop_exposes_the_model_protocol_and_the_testing_helpers() -> None:
    from loop import Agent, Conversation, Model, TestModel, Tool
    from loop.testing import Conversation as FromTesting

    assert Conversation is FromTesting and {"Model", "Conversation", "TestModel", "Agent"} <= set(loop.__all__)
    def lookup_order(order_id: str) -> str:
        return f"Order {order_id} has shipped."

    agent = Agent(TestModel(), [Tool(lookup_order)])
    turn = Conversation(agent).say_sync("Where is order 4567?")
    turn.expect.executed("lookup_order")
    assert isinstance(TestModel(), Model)


def test_voice_exposes_the_session_the_config_the_stack_the_agent_loader_and_the_testing_helpers() -> None:
    from voice import (
        AgentSource,
        CallSession,
        SessionConfig,
        TurnConfig,
        check_call_script,
        load_agent,
        load_stack,
        run_audio_call,
    )
    from voice.runtime.session import CallSession as FromSession
    from voice.testing import run_audio_call as FromTesting

    assert CallSession is FromSession and run_audio_call is FromTesting and callable(check_call_script)
    assert SessionConfig().turns == TurnConfig() and callable(load_stack)
    assert isinstance(load_agent(), AgentSource)  # the default agent, the demo order desk
    assert set(voice.__all__) <= set(dir(voice))


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        voice.NoSuchThing  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("voice.NoSuchThing did not raise")


def test_importing_voice_loads_no_engine_or_session() -> None:
    code = "import sys, voice, voice.audio; print(sorted(m for m in sys.modules if m.startswith('voice.')))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['voice.audio']"
