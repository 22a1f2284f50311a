"""What the browser page shows of a call, checked in headless Chromium and saved as screenshots (out/browser_*.png,
out/operator_*.png, out/timeline_*.png): the agent's state from the server's call core, the microphone meter driven
by the fake microphone, the transcript, approvals on the operator's page only, and nothing overlapping or cut off
on the caller's page, the operator's page or the call's timeline."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from tests.page_checks import layout_problems, seen, walks_through
from tests.voice.transports.browser import test_browser_e2e as e2e
from tests.voice.transports.browser.test_browser_e2e import (
    OPERATOR_TOKEN,
    OUT,
    SHORT_REPLY,
    Served,
    call_page,
    mic_wav,
    needs_chromium,
)

serve, stack = e2e.serve, e2e.stack  # the same fixtures: a served agent with a scripted model, the speech stack

NARROW = {"width": 760, "height": 900, "deviceScaleFactor": 1, "mobile": False}
REFUND = [{"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "4567"}}]},
          {"tool_calls": [{"name": "issue_refund", "arguments": {"order_id": "4567", "amount": 20}}]},
          "Done. I refunded twenty dollars for order 4567."]


def shot_and_check(page: object, name: str) -> list[str]:
    """Screenshot the page (out/NAME.png) and return what overlaps or is cut off on it, wide and narrow."""
    OUT.mkdir(exist_ok=True)
    page.screenshot(OUT / f"{name}.png")  # type: ignore[attr-defined]
    problems = layout_problems(page)  # type: ignore[arg-type]
    page.call("Emulation.setDeviceMetricsOverride", NARROW)  # type: ignore[attr-defined]
    time.sleep(0.2)
    page.screenshot(OUT / f"{name}_narrow.png")  # type: ignore[attr-defined]
    problems += [f"narrow: {p}" for p in layout_problems(page)]  # type: ignore[arg-type]
    page.call("Emulation.clearDeviceMetricsOverride")  # type: ignore[attr-defined]
    return problems


@needs_chromium
def test_the_page_shows_the_agents_state_the_microphone_level_and_the_transcript(
        serve: Callable[..., Served], tmp_path: Path) -> None:
    served = serve([SHORT_REPLY])
    wav = mic_wav(tmp_path / "mic.wav", [(1.0, "recordings/speech/goforward.wav")], total_s=14.0)
    with call_page(tmp_path, wav, served.port) as page:
        page.wait_for("document.getElementById('state').dataset.state === 'caller_speaking'", timeout=20)
        time.sleep(0.5)
        OUT.mkdir(exist_ok=True)
        page.screenshot(OUT / "browser_hearing.png")
        page.wait_for("document.getElementById('state').dataset.state === 'speaking'", timeout=40)
        speaking = page.evaluate("document.getElementById('state').textContent")
        OUT.mkdir(exist_ok=True)
        page.screenshot(OUT / "browser_speaking.png")
        page.wait_for("window.voiceloop.stats.played >= window.voiceloop.stats.received"
                      " && document.getElementById('state').dataset.state === 'listening'", timeout=30)
        time.sleep(0.6)  # the microphone is silent again: the meter must have fallen back
        shown = seen(page)
        problems = shot_and_check(page, "browser_call")
        timeline = page.evaluate("document.getElementById('timeline-link').href")
        page.evaluate("document.getElementById('hangup').click()")
        page.wait_for("document.getElementById('state').dataset.state === 'ended'", timeout=10)
        page.call("Page.navigate", {"url": timeline})
        page.wait_for("document.readyState === 'complete' && !!document.querySelector('svg')", timeout=10)
        timeline_problems = shot_and_check(page, "timeline_call")
    call = served.call()
    states = [e["state"] for e in call.events if e["kind"] == "call_state"]
    # the page showed the states the server's call core went through, in order
    assert walks_through(states, ["listening", "caller_speaking", "thinking", "speaking", "listening"]), states
    assert walks_through(shown["states"], ["connecting", "listening", "thinking", "speaking", "listening"]), shown
    assert speaking == "speaking"
    # the meter followed the fake microphone: still before the recording, loud during it, low again after it
    levels = shown["levels"]
    assert max(levels) >= 40 and levels[-1] <= 10 and len(set(levels)) >= 5, levels
    partials = [e["text"] for e in call.events if e["kind"] == "caller_partial" and e["text"]]
    # the server transcribes in the caller's pauses (`caller_partial`); the page showed each as the turn formed
    assert partials and set(partials) <= set(shown["partials"]), (partials, shown["partials"])
    assert "forward" in call.session.turns[0].user_text.lower()
    assert problems == [] and timeline_problems == [], (problems, timeline_problems)


@needs_chromium
def test_approvals_are_the_operators_and_the_callers_page_only_waits_for_a_yes(
        serve: Callable[..., Served], tmp_path: Path) -> None:
    served = serve(REFUND)
    wav = mic_wav(tmp_path / "mic.wav", [(1.0, "synthetic/refund_4567.wav")], total_s=20.0)
    with call_page(tmp_path, wav, served.port) as page:
        caller_tab = page.session_id
        page.wait_for("!document.getElementById('approval').hidden"
                      " && document.getElementById('state').dataset.state === 'awaiting_approval'", timeout=40)
        waiting = page.evaluate("[document.getElementById('state').textContent,"
                                " document.getElementById('approval').textContent]")
        buttons = page.evaluate("[...document.querySelectorAll('button')].map(b => b.textContent)")
        caller_problems = shot_and_check(page, "browser_approval")
        page.open_page(f"http://127.0.0.1:{served.port}/operator?token={OPERATOR_TOKEN}")
        page.wait_for("!!document.querySelector('.call-card .approval:not([hidden])')", timeout=10)
        pending = page.evaluate("document.querySelector('.call-card .approval-text').textContent")
        operator_problems = shot_and_check(page, "operator_approval")
        page.evaluate("document.querySelector('.call-card .approve').click()", user_gesture=True)
        page.wait_for("window.voiceloopOperator.decisions.length === 1", timeout=10)
        decisions = page.evaluate("window.voiceloopOperator.decisions")
        page.use(caller_tab)
        page.wait_for("document.getElementById('outcome').textContent.startsWith('COMPLETED')", timeout=30)
        rows = page.evaluate("[...document.querySelectorAll('#tools tr')]"
                             ".map(r => [...r.cells].map(c => c.textContent))")
        hidden = page.evaluate("document.getElementById('approval').hidden")
        after_problems = shot_and_check(page, "browser_approved")
        page.call("Page.navigate", {"url": page.evaluate("document.getElementById('timeline-link').href")})
        page.wait_for("document.readyState === 'complete' && !!document.querySelector('svg')", timeout=10)
        timeline_problems = shot_and_check(page, "timeline_approval")
    call = served.call()
    # the caller's page says what the agent waits for, and has nothing that approves on the operator's behalf
    assert waiting[0] == "waiting for your yes" and "issue_refund(" in waiting[1]
    assert not [b for b in buttons if "approve" in b.lower() or "decline" in b.lower()], buttons
    # the operator's page showed the pending call and approved it through the operator API
    assert pending.startswith("issue_refund(") and decisions == [[call.call_id, True, 200]]
    assert [e["approved"] for e in call.events if e["kind"] == "operator_decision"] == [True]
    assert [r[0].split("(")[0] for r in rows] == ["lookup_order", "issue_refund"]
    assert rows[0][1].startswith("ALLOW") and rows[1][1].startswith("ASK") and rows[1][1].endswith("approved")
    assert hidden and call.session.turns[0].outcome == "COMPLETED"
    desk = served.ctx.factory.make_agent.desk  # type: ignore[attr-defined]
    assert desk.db.execute("SELECT order_id, amount FROM refunds").fetchall() == [("4567", 20.0)]
    assert caller_problems == [] and operator_problems == [] and after_problems == [] and timeline_problems == []
