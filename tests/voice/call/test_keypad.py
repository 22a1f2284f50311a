"""The phone's keypad counts (Twilio `dtmf`): digits keyed in are the caller's turn, and the keys an approval
question offers ("Press 1 to confirm, or 2 to cancel.") answer it, as IVRs do. Frame by frame in the call core,
then over a real Twilio Media Streams socket."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest
import websockets

from loop import Decision, ScriptedTurn, ToolCall, Verdict
from loop.locale.en import KEYS_HINT, SAID_NO
from tests.voice.call.test_call_core import Harness, ask, run_started
from tests.voice.transports.twilio.test_twilio import close_code, media_msgs, running, start_msg, utterance
from voice.call.events import ApprovalRequested, KeyPressed, SettleApproval, SpeechKind, StartRun, Synthesize
from voice.speech.stack import SpeechStack, load_stack


@pytest.fixture(scope="module")
def stack() -> SpeechStack:
    return load_stack("tiny.en", tts="piper")


def keys(h: Harness, digits: str) -> None:
    for digit in digits:
        h.feed(KeyPressed(digit))


def test_digits_keyed_in_are_a_turn_when_the_caller_presses_hash() -> None:
    h = Harness(keypad=True)
    keys(h, "4567")
    assert not any(isinstance(c, StartRun) for c in h.log)
    keys(h, "#")
    assert [c.text for c in h.log if isinstance(c, StartRun)] == ["4567"]
    assert "caller_keyed" in h.kinds()


def test_digits_keyed_in_end_after_a_pause_and_star_starts_again() -> None:
    h = Harness(keypad=True, keys_gap_s=2.0)
    keys(h, "12*77")
    h.frames(1.5, speech=False)
    keys(h, "88")
    h.frames(1.5, speech=False)
    assert not any(isinstance(c, StartRun) for c in h.log)  # 1.5 s since the last key
    h.frames(0.6, speech=False)
    assert [c.text for c in h.log if isinstance(c, StartRun)] == ["7788"]


def ask_on_a_phone(h: Harness) -> None:
    call = ToolCall("issue_refund", {"order_id": "4567", "amount": 20})
    h.feed(ApprovalRequested(call, Verdict(Decision.ASK, "refunds need a yes", "ask_refunds")))


def test_on_a_phone_the_question_offers_keys_and_1_confirms() -> None:
    h = Harness(keypad=True)
    run_started(h, "Refund twenty dollars on order 4567.")
    ask_on_a_phone(h)
    hints = [c for c in h.log if isinstance(c, Synthesize) and c.kind is SpeechKind.HINT]
    assert " ".join(c.text for c in hints) == KEYS_HINT
    keys(h, "1")
    assert [c.answer.approved for c in h.log if isinstance(c, SettleApproval)] == [True]


def test_2_declines_and_says_so() -> None:
    h = Harness(keypad=True)
    run_started(h, "Refund twenty dollars on order 4567.")
    ask_on_a_phone(h)
    keys(h, "2")
    (settle,) = [c for c in h.log if isinstance(c, SettleApproval)]
    assert not settle.answer.approved and h.core.run.decline_line == SAID_NO


def test_without_a_keypad_no_key_is_offered_and_none_approves() -> None:
    h = Harness()
    run_started(h, "Refund twenty dollars on order 4567.")
    h.log.clear()
    ask(h, heard=False)
    assert not any(isinstance(c, Synthesize) and c.kind is SpeechKind.HINT for c in h.log)
    keys(h, "1#")
    assert not any(isinstance(c, SettleApproval) and c.answer.approved for c in h.log)


def said(call) -> str:
    return " ".join(e["text"] for e in call.events if e["kind"] == "agent_said")


async def _live_call(served):
    async with asyncio.timeout(60):
        while not (calls := served.ctx.registry.live()):
            await asyncio.sleep(0.05)
        return calls[0]


async def _until(check, timeout: float = 60.0) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.05)


async def test_over_twilio_1_confirms_a_refund_and_keyed_digits_are_heard(stack: SpeechStack, tmp_path: Path) -> None:
    refund = ScriptedTurn(tool_calls=[ToolCall("issue_refund", {"order_id": "4567", "amount": 20})])
    async with running(stack, tmp_path, [refund, "Done.", "Thanks."]) as served, \
            websockets.connect(served.twilio_url) as ws:
        await ws.send(start_msg())
        for message in utterance():
            await ws.send(message)
        call = await _live_call(served)
        await _until(lambda: call.session.approval is not None and "Press 1" in said(call))
        assert said(call).index("Just to confirm") < said(call).index("Press 1 to confirm")
        await ws.send(json.dumps({"event": "dtmf", "streamSid": "MZtest", "dtmf": {"digit": "1"}}))
        await _until(lambda: served.desk.db.execute("SELECT count(*) FROM refunds").fetchone()[0] == 1)
        await _until(lambda: call.session.approval is None and not call.session.core.run.active)
        for digit in "7788#":  # no speech at all: the keys are the turn
            await ws.send(json.dumps({"event": "dtmf", "streamSid": "MZtest", "dtmf": {"digit": digit}}))
        for message in media_msgs(np.zeros(8000, np.int16)):
            await ws.send(message)
        await _until(lambda: len(call.session.turns) == 2)
        assert call.session.turns[1].user_text == "7788"
        await ws.send(json.dumps({"event": "stop", "streamSid": "MZtest"}))
        assert (await close_code(ws))[0] == 1000
    assert served.desk.db.execute("SELECT order_id, amount FROM refunds").fetchall() == [("4567", 20.0)]
    keyed = [e for e in call.events if e["kind"] == "caller_keyed"]
    assert [e["digits"] for e in keyed] == ["7788"]
