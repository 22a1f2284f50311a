"""The outage line's own tests, written the way a user tests their agent: text conversations with `loop.testing`
(fast, no audio), two call scripts with their scripted replies over audio (`voice.testing`), every call script
checked without audio, and one call with the embedded model (`-m slow`). All the calls over audio, scripted or
with the embedded model: `voiceloop bench voice --calls examples/outage_line/calls [--llm local]`."""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.outage_line import AGENT_FILE
from loop import ScriptedModel, ToolCall
from loop.testing import Conversation, TestModel
from voice.agents.source import load_agent
from voice.testing import check_call_script, check_call_scripts_complete, check_call_with_embedded_model

CALLS = sorted((Path(__file__).resolve().parent / "calls").glob("*.yaml"))
AUDIO = CALLS[0].parent / "audio"


def agent_for(tmp_path: Path, *script: object):
    """The agent from agent.yaml, its outage map in tmp_path, answering with `script`."""
    maker = load_agent(str(AGENT_FILE)).maker(tmp_path, lambda _id: ScriptedModel(list(script)))
    return maker("test-call"), maker.state


def test_a_postcode_is_read_from_the_map(tmp_path: Path) -> None:
    agent, _ = agent_for(tmp_path, ToolCall("outage_by_postcode", {"postcode": "3058"}),
                         "Yes, a damaged cable; power should be back today at about 6 p.m.")
    turn = Conversation(agent).say_sync("Is there a power cut in 3058?")
    turn.expect.called("outage_by_postcode", postcode="3058").verdict("outage_by_postcode", "ALLOW")
    turn.expect.executed("outage_by_postcode").said("6 p.m.").outcome("COMPLETED")


def test_a_report_runs_only_after_a_yes_and_gets_a_reference(tmp_path: Path) -> None:
    script = [ToolCall("report_outage", {"account_number": "51877"}), "Reported, reference 1001."]
    agent, outages = agent_for(tmp_path, *script)
    Conversation(agent, approve=False).say_sync("Report my power cut, account 51877.").expect \
        .verdict("report_outage", "ASK").executed()
    assert outages.reports() == []
    agent, outages = agent_for(tmp_path / "yes", *script)
    Conversation(agent, approve=True).say_sync("Report my power cut, account 51877.").expect \
        .executed("report_outage").said("1001")
    assert outages.reports() == ["51877"]


def test_plain_data_comes_back_from_every_tool(tmp_path: Path) -> None:
    """No script: TestModel calls each tool once with arguments made from its schema (an unknown "a")."""
    maker = load_agent(str(AGENT_FILE)).maker(tmp_path, lambda _id: TestModel(args={
        "outage_by_postcode": {"postcode": "3102"}, "outage_for_account": {"account_number": "account 72904"},
        "report_outage": {"account_number": "40213"}}))
    turn = Conversation(maker("c1"), approve=True).say_sync("Test everything.")
    turn.expect.executed("outage_by_postcode", "outage_for_account", "report_outage")
    turn.expect.said("planned work", "31 Hill Crescent", "reference 1001")
    assert maker.state.reports() == ["40213"]


@pytest.mark.parametrize("name", ["postcode_read", "report_yes"])
def test_a_call_script_passes_over_audio(name: str) -> None:
    check_call_script(AUDIO.parent / f"{name}.yaml")


def test_every_call_script_is_complete(tmp_path: Path) -> None:
    """Recordings that load and are in the manifest, this agent, and expectations its toolset knows."""
    check_call_scripts_complete(AUDIO.parent, "outage_line", lambda sub: agent_for(tmp_path / sub)[1])


@pytest.mark.slow
def test_a_postcode_call_with_the_embedded_model(tmp_path: Path) -> None:
    check_call_with_embedded_model(AUDIO.parent / "postcode_read.yaml", tmp_path)
