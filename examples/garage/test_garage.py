"""The garage's own tests, written the way a user tests their agent: text conversations with `loop.testing`
(fast, no audio), two call scripts with their scripted replies over audio (`voice.testing`), every call script
checked without audio, and one call with the embedded model (`-m slow`). All the calls over audio, scripted or
with the embedded model: `voiceloop bench voice --calls examples/garage/calls [--llm local]`."""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.garage import AGENT_FILE
from examples.garage.workshop import clock_time
from loop import ScriptedModel, ToolCall
from loop.testing import Conversation, TestModel
from voice.agents.source import load_agent
from voice.testing import check_call_script, check_call_scripts_complete, check_call_with_embedded_model

CALLS = sorted((Path(__file__).resolve().parent / "calls").glob("*.yaml"))
AUDIO = CALLS[0].parent / "audio"


def agent_for(tmp_path: Path, *script: object):
    """The agent from agent.yaml, its workshop in tmp_path, answering with `script`."""
    maker = load_agent(str(AGENT_FILE)).maker(tmp_path, lambda _id: ScriptedModel(list(script)))
    return maker("test-call"), maker.state


def test_a_job_number_that_is_not_an_id_reaches_the_tool(tmp_path: Path) -> None:
    agent, _ = agent_for(tmp_path, ToolCall("repair_status", {"job_number": "47-12"}), "Your Focus is ready.")
    turn = Conversation(agent).say_sync("Is job 47-12 ready?")
    turn.expect.called("repair_status", job_number="47-12").executed("repair_status").said("ready")
    assert any("ready for collection" in m.content for m in turn.result.messages if m.role == "tool")


def test_a_collection_is_booked_only_after_a_yes(tmp_path: Path) -> None:
    script = [ToolCall("book_collection", {"job_number": "6021", "day": "friday", "time": "ten a.m."}),
              "You can collect it on Friday at 10 a.m."]
    agent, workshop = agent_for(tmp_path, *script)
    Conversation(agent, approve=False).say_sync("Friday at ten, job 6021.").expect \
        .verdict("book_collection", "ASK").executed()
    assert workshop.collections() == {}
    agent, workshop = agent_for(tmp_path / "yes", *script)
    Conversation(agent, approve=True).say_sync("Friday at ten, job 6021.").expect.executed("book_collection")
    assert workshop.collections() == {"6021": "friday 10 a.m."}


def test_a_car_that_is_not_ready_cannot_be_collected(tmp_path: Path) -> None:
    agent, workshop = agent_for(tmp_path, ToolCall("book_collection", {"job_number": "3390", "day": "monday",
                                                                       "time": "9"}), "It isn't ready yet.")
    Conversation(agent, approve=True).say_sync("Monday at nine for job 3390.").expect.executed("book_collection")
    assert workshop.collections() == {}
    assert [clock_time(t) for t in ("10am", "two in the afternoon", "3 p.m.")] == ["10 a.m.", "2 p.m.", "3 p.m."]


def test_plain_data_comes_back_from_every_tool(tmp_path: Path) -> None:
    maker = load_agent(str(AGENT_FILE)).maker(tmp_path, lambda _id: TestModel(args={
        "repair_status": {"job_number": "3390"}, "price_quote": {"job_number": "job 5186"},
        "book_collection": {"job_number": "4712", "day": "saturday", "time": "9 a.m."}}))
    turn = Conversation(maker("c1"), approve=True).say_sync("Test everything.")
    turn.expect.executed("repair_status", "price_quote", "book_collection")
    turn.expect.said("waiting for parts", "$180", "collected on Saturday at 9 a.m.")


@pytest.mark.parametrize("name", ["status_read", "collection_yes"])
def test_a_call_script_passes_over_audio(name: str) -> None:
    check_call_script(AUDIO.parent / f"{name}.yaml")


def test_every_call_script_is_complete(tmp_path: Path) -> None:
    """Recordings that load and are in the manifest, this agent, and expectations its toolset knows."""
    check_call_scripts_complete(AUDIO.parent, "garage", lambda sub: agent_for(tmp_path / sub)[1])


@pytest.mark.slow
def test_a_status_call_with_the_embedded_model(tmp_path: Path) -> None:
    check_call_with_embedded_model(AUDIO.parent / "status_read.yaml", tmp_path)
