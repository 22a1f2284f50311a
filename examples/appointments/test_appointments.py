"""The appointment line's own tests, written the way a user tests their agent: text conversations with
`loop.testing` (fast, no audio), whole audio calls with `voice.testing`, every call script checked without audio,
and one call with the embedded model (`-m slow`). All the calls over audio, scripted or with the embedded model:
`voiceloop bench voice --calls examples/appointments/calls [--llm local]`."""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.appointments import AGENT_FILE
from loop import ScriptedModel, ToolCall
from loop.testing import Conversation, TestModel
from voice.agents.source import load_agent
from voice.testing import check_call_script, check_call_scripts_complete, check_call_with_embedded_model, run_audio_call

CALLS = Path(__file__).resolve().parent / "calls"


def agent_for(tmp_path: Path, *script: object):
    """The agent from agent.yaml, its calendar in tmp_path, answering with `script`."""
    maker = load_agent(str(AGENT_FILE)).maker(tmp_path, lambda _id: ScriptedModel(list(script)))
    return maker("test-call"), maker.state


def test_a_weekend_booking_is_denied_by_the_policy_file(tmp_path: Path) -> None:
    agent, calendar = agent_for(tmp_path, ToolCall("book_appointment", {"day": "Saturday", "time": "10",
                                                                        "name": "Sam"}),
                                "Sorry, we're closed at the weekend.")
    turn = Conversation(agent).say_sync("Can I come in on Saturday at ten? It's Sam.")
    turn.expect.called("book_appointment", day="saturday", time="10").verdict("booking.weekend", "DENY")
    turn.expect.executed().outcome("COMPLETED").said("closed")
    assert calendar.booked("saturday") == {}


def test_a_booking_runs_after_a_yes_and_lands_in_the_calendar(tmp_path: Path) -> None:
    agent, calendar = agent_for(tmp_path, ToolCall("book_appointment", {"day": "Wednesday", "time": "3pm",
                                                                        "name": "Ana"}),
                                "You're booked for Wednesday at 3 p.m.")
    Conversation(agent, approve=True).say_sync("Wednesday at 3 for Ana").expect \
        .verdict("book_appointment", "ASK").executed("book_appointment").said("booked")
    assert calendar.booked("wednesday") == {"3 p.m.": "Ana"}


def test_a_declined_booking_writes_nothing(tmp_path: Path) -> None:
    agent, calendar = agent_for(tmp_path, ToolCall("book_appointment", {"day": "monday", "time": "9",
                                                                        "name": "Ana"}),
                                "Alright, I haven't booked anything.")
    Conversation(agent, approve=False).say_sync("Monday at nine for Ana").expect.executed()
    assert calendar.booked("monday") == {}


def test_assertions_explain_what_happened(tmp_path: Path) -> None:
    agent, _ = agent_for(tmp_path, ToolCall("free_slots", {"day": "friday"}), "Friday has room at ten.")
    turn = Conversation(agent).say_sync("Anything on Friday?")
    with pytest.raises(AssertionError, match=r"(?s)expected a call book_appointment.*free_slots"):
        turn.expect.called("book_appointment")
    with pytest.raises(AssertionError, match="expected outcome ESCALATED, got COMPLETED"):
        turn.expect.outcome("ESCALATED")


def test_the_booking_call_script_passes() -> None:
    call = check_call_script(CALLS / "book_tuesday.yaml")
    call.expect.heard("tuesday").called("book_appointment", name="Sam Lee").executed("book_appointment")
    call.expect.said("Just to confirm", "booked")
    assert call.state.booked("tuesday")["11 a.m."] == "Sam Lee"


def test_free_times_over_audio_with_the_agents_own_greeting(tmp_path: Path) -> None:
    call = run_audio_call(AGENT_FILE, [(CALLS / "audio" / "friday_free.wav", 3.0)], workdir=tmp_path,
                          script=[{"tool_calls": [{"name": "free_slots", "arguments": {"day": "friday"}}]},
                                  "On Friday we have room at ten."])
    call.expect.heard("friday").executed("free_slots").said("Smile Dental", "room at ten").outcome("COMPLETED")


def test_every_tool_runs_with_the_test_model(tmp_path: Path) -> None:
    """No script: TestModel calls each tool once with arguments from its schema (a monday booking for "a")."""
    maker = load_agent(str(AGENT_FILE)).maker(tmp_path, lambda _id: TestModel(args={"book_appointment": {
        "time": "3 p.m."}, "cancel_appointment": {"day": "tuesday", "time": "10 a.m.", "name": "Priya Shah"}}))
    turn = Conversation(maker("c1"), approve=True).say_sync("Test everything.")
    turn.expect.executed("free_slots", "book_appointment", "cancel_appointment", "opening_hours")
    turn.expect.verdict("cancel.confirm", "ASK").said("On Monday we have openings", "Priya Shah's appointment")
    assert maker.state.booked("monday") == {"3 p.m.": "a"} and "10 a.m." not in maker.state.booked("tuesday")


def test_every_call_script_is_complete(tmp_path: Path) -> None:
    """Recordings that load and are in the manifest, this agent, and expectations its toolset knows."""
    check_call_scripts_complete(CALLS, "appointments", lambda sub: agent_for(tmp_path / sub)[1])


@pytest.mark.slow
def test_the_booking_call_with_the_embedded_model(tmp_path: Path) -> None:
    check_call_with_embedded_model(CALLS / "book_tuesday.yaml", tmp_path)
