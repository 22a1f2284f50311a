"""The hotel's own tests, written the way a user tests their agent: text conversations with `loop.testing`
(fast, no audio), two call scripts with their scripted replies over audio (`voice.testing`), every call script
checked without audio, and one call with the embedded model (`-m slow`). All the calls over audio, scripted or
with the embedded model: `voiceloop bench voice --calls examples/hotel/calls [--llm local]`."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from examples.hotel import AGENT_FILE
from examples.hotel.reservations import parse_date
from loop import ScriptedModel, ToolCall
from loop.testing import Conversation, TestModel
from voice.agents.source import load_agent
from voice.testing import check_call_script, check_call_scripts_complete, check_call_with_embedded_model

CALLS = sorted((Path(__file__).resolve().parent / "calls").glob("*.yaml"))
AUDIO = CALLS[0].parent / "audio"


def agent_for(tmp_path: Path, *script: object):
    """The agent from agent.yaml, its reservations in tmp_path, answering with `script`."""
    maker = load_agent(str(AGENT_FILE)).maker(tmp_path, lambda _id: ScriptedModel(list(script)))
    return maker("test-call"), maker.state


def test_dates_are_read_as_callers_say_them() -> None:
    june_12 = dt.date(2026, 6, 12)
    assert [parse_date(s) for s in ("June 12", "12 June", "the twelfth of June", "June 12th")] == [june_12] * 4
    assert parse_date("June twenty-first") == dt.date(2026, 6, 21) and parse_date("tomorrow") is None


def test_a_booking_is_made_only_after_a_yes_and_fills_a_room(tmp_path: Path) -> None:
    book = ToolCall("book_room", {"guest_name": "Daniel Reed", "arrival": "June 12", "nights": 2,
                                  "room_type": "double"})
    agent, hotel = agent_for(tmp_path, book, "Not booked.")
    Conversation(agent, approve=False).say_sync("A double from June 12 for two nights, Daniel Reed.").expect \
        .verdict("book_room", "ASK").executed()
    assert hotel.check_expectations({"new_bookings": []}) == []
    agent, hotel = agent_for(tmp_path / "yes", book, "Booked, reference 5201.")
    Conversation(agent, approve=True).say_sync("A double from June 12 for two nights, Daniel Reed.").expect \
        .executed("book_room").said("5201")
    assert hotel.check_expectations({"new_bookings": ["double June 12 2 nights"]}) == []
    free = hotel.room_availability("June 12", 2)["rooms"]
    assert [r["free"] for r in free] == [2, 1, 0]  # single, double (one fewer), suite


def test_a_cancellation_is_irreversible_so_it_is_asked(tmp_path: Path) -> None:
    agent, hotel = agent_for(tmp_path, ToolCall("cancel_booking", {"booking_reference": "reference 3091"}),
                             "Cancelled.")
    Conversation(agent, approve=True).say_sync("Cancel booking 3091.").expect \
        .verdict("cancel_booking", "ASK").executed("cancel_booking")
    assert hotel.check_expectations({"cancelled": ["3091"]}) == []


def test_plain_data_comes_back_from_every_tool(tmp_path: Path) -> None:
    maker = load_agent(str(AGENT_FILE)).maker(tmp_path, lambda _id: TestModel(args={
        "room_availability": {"arrival": "June 5", "nights": 3}, "booking_details": {"booking_reference": "4418"},
        "book_room": {"guest_name": "Ana", "arrival": "June 5", "nights": 1, "room_type": "suite"},
        "cancel_booking": {"booking_reference": "3091"}}))
    turn = Conversation(maker("c1"), approve=True).say_sync("Test everything.")
    turn.expect.executed("room_availability", "booking_details", "book_room", "cancel_booking")
    turn.expect.said("Maria Lopez", "booking reference 5201", "Booking 3091 for Tom Hale")


@pytest.mark.parametrize("name", ["booking_read", "book_yes"])
def test_a_call_script_passes_over_audio(name: str) -> None:
    check_call_script(AUDIO.parent / f"{name}.yaml")


def test_every_call_script_is_complete(tmp_path: Path) -> None:
    """Recordings that load and are in the manifest, this agent, and expectations its toolset knows."""
    check_call_scripts_complete(AUDIO.parent, "hotel", lambda sub: agent_for(tmp_path / sub)[1])


@pytest.mark.slow
def test_a_booking_call_with_the_embedded_model(tmp_path: Path) -> None:
    check_call_with_embedded_model(AUDIO.parent / "booking_read.yaml", tmp_path)
