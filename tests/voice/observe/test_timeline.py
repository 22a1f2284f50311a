"""The picture of a call: `voiceloop call --out` writes timeline.html from the call's trace, a self-contained page
with the caller's speech, the transcript, the runs, the tools with their verdicts, the agent's audio, the
barge-ins and each turn's latency parts."""

from __future__ import annotations

import asyncio
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from loop import Agent, LoopConfig, ScriptedModel
from tests.fakes import LoudnessVAD, ScriptedSTT, ToneTTS, WordChunker, track
from tests.helpers import assert_heard
from voice.call.reply import LATENCY_PARTS
from voice.cli import main
from voice.demo.order_desk import OrderDesk, order_policy
from voice.observe.timeline import build_timeline
from voice.observe.timeline_html import render_timeline
from voice.runtime.session import CallSession
from voice.testing.scripted_call import FIXTURES


class Elements(HTMLParser):
    """Every element as (tag, attributes), and all text."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, {k: v or "" for k, v in attrs}))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def of_class(self, cls: str) -> list[dict[str, str]]:
        return [a for _, a in self.found if cls in a.get("class", "").split()]


def test_voiceloop_call_draws_the_whole_call(tmp_path: Path) -> None:
    out = tmp_path / "refund"
    assert main(["call", str(FIXTURES / "refund_approved.yaml"), "--llm", "script", "--out", str(out)]) == 0
    html = (out / "timeline.html").read_text()
    trace = [json.loads(line) for line in (out / "trace.jsonl").read_text().splitlines()]
    page = Elements(html)

    # self-contained: no scripts, no external files, nothing fetched
    tags = {tag for tag, _ in page.found}
    assert "script" not in tags and "link" not in tags and "img" not in tags
    assert not [a for _, a in page.found if "src" in a or "href" in a]
    assert "svg" in tags

    # the caller: the refund request, then "yes" over the confirmation question
    speech = page.of_class("caller-speech")
    assert len(speech) == len([e for e in trace if e["kind"] == "caller_turn_ended"]) == 2
    (turn,) = page.of_class("turn")  # one turn: the yes answered its question, it did not start a run
    assert turn["data-turn"] == "0"
    (transcript,) = page.of_class("transcript")
    assert transcript["data-turn"] == "0"
    text = " ".join(page.text)
    # what Whisper wrote is drawn as written; its words are checked as key words (they differ between CPUs)
    request, answer = [e["text"] for e in trace if e["kind"] == "caller_turn_ended"]
    assert f"turn 0: {request}" in text and f": {answer}" in text
    assert_heard(request, "refund", "20", "4567")
    assert_heard(answer, ("yes", "go ahead"))  # "Yes, go ahead.": float32 Whisper heard only "Go ahead."
    (run,) = page.of_class("model-run")
    assert run["data-outcome"] == "COMPLETED"

    # the tools with their verdicts: the read allowed by default, the refund asked and approved
    tools = [(t["data-tool"], t["data-verdict"], t["data-status"]) for t in page.of_class("tool-mark")]
    assert tools == [("lookup_order", "ALLOW", "ok"), ("issue_refund", "ASK", "ok")]
    assert "refund.confirm" in text and "(approved)" in text

    parts = [a["data-part"] for a in page.of_class("agent-audio")]
    # the lookup's own words (said at once, the refund decided meanwhile), the question (a clause at a time), "Okay."
    # to the yes as the refund waits its moment, the refund's own words
    assert parts == ["reply"] * 3 + ["prompt"] * 2 + ["ack"] + ["reply"] * 2, parts
    assert "Just to confirm:" in text and "refund $20 on order 4567?" in text

    # the question came after one clause of the lookup, so the caller's "yes" followed it (barge-ins: the next test)
    assert len(page.of_class("barge-in")) == 0
    # the latency parts of the turn, labelled, with the voice-to-voice total
    assert [a["data-part"] for a in page.of_class("latency-part")] == list(LATENCY_PARTS)
    assert all(part in text for part in LATENCY_PARTS)
    latency = next(e["latency_ms"] for e in reversed(trace) if e.get("latency_ms", {}).get("voice_to_voice"))
    assert f"{latency['voice_to_voice']:.0f} ms" in text


def test_a_barge_in_cuts_the_agent_audio_where_the_caller_came_in(tmp_path: Path) -> None:
    desk = OrderDesk(tmp_path / "orders.db")
    agent = Agent(model=ScriptedModel([" ".join(["word"] * 60) + ".", "Sure."]), tools=desk.tools(),
                  policy=order_policy(), config=LoopConfig.profile("voice"), journal_path=str(tmp_path / "j.db"))
    stt = ScriptedSTT({40: "tell me everything about my order.", 30: "no stop that please right now."})
    session = CallSession(agent, LoudnessVAD(), stt, ToneTTS(), WordChunker)
    asyncio.run(session.run_file(track((0.2, 40), (4.0, 30), total_s=9.0)))

    timeline = build_timeline(session.trace)
    (barge,) = timeline.barge_ins
    assert [t.caller_text for t in timeline.turns] == ["tell me everything about my order.",
                                                       "no stop that please right now."]
    assert timeline.turns[0].barged_in and timeline.turns[0].outcome == "COMPLETED"
    first_answer = [s for s in timeline.agent if s.start < barge.start]
    assert first_answer and max(s.end for s in first_answer) <= barge.start + 1e-9  # unheard audio is not drawn
    assert 4.0 <= barge.start <= 5.0
    assert timeline.agent[-1].text == "Sure." and timeline.agent[-1].start >= timeline.turns[1].ended_s
    html = Elements(render_timeline(timeline, "barge"))
    assert len(html.of_class("turn")) == 2 and len(html.of_class("barge-in")) == 1
    assert "cut off by the caller" in " ".join(html.text)


def test_the_timeline_reads_a_trace_from_before_turns_carried_their_latency() -> None:
    old: list[dict[str, Any]] = [
        {"t": 0.5, "kind": "caller_speech_started", "onset_s": 0.5},
        {"t": 2.0, "kind": "caller_turn_ended", "text": "hello", "speech_s": 1.0},
        {"t": 2.0, "kind": "loop.verdict", "call_id": "c1", "decision": "DENY", "rule": "no.refunds", "reason": ""},
        {"t": 2.0, "kind": "loop.tool_result", "call": {"id": "c1", "name": "issue_refund", "arguments": {}},
         "executed": False, "status": "denied"},
        {"t": 2.0, "kind": "loop.run_finished", "outcome": "COMPLETED", "reason": "", "answer": "Hi."},
        {"t": 2.0, "kind": "agent_said", "part": "reply", "text": "Hi.", "seconds": 0.5},
        {"t": 2.0, "kind": "agent_audio_started"},
        {"t": 3.0, "kind": "call_ended", "reason": "call ended"}]
    timeline = build_timeline(old)
    (turn,) = timeline.turns
    assert (turn.speech.start, turn.speech.end) == (0.5, 1.5)
    assert [(t.name, t.decision, t.status) for t in turn.tools] == [("issue_refund", "DENY", "denied")]
    page = Elements(render_timeline(timeline))
    assert [a["data-verdict"] for a in page.of_class("tool-mark")] == ["DENY"]
    assert page.of_class("latency-part") == []  # no latency recorded: none drawn


def test_the_last_seconds_label_stays_inside_the_picture() -> None:
    """A call whose length is a whole number of ticks puts its last label at the right edge: it is drawn leftwards
    of its tick (the browser check found "22s" running outside the picture on a slow machine's longer call)."""
    import re

    from voice.observe.timeline_html import WIDTH

    leftwards = 0
    for seconds in (12.0, 22.0, 22.4, 37.0):
        page = render_timeline(build_timeline([{"t": seconds, "kind": "call_ended", "reason": "call ended"}]))
        ticks = re.findall(r'<text x="([\d.]+)"[^>]*?( text-anchor="end")?>\d+s</text>', page)
        assert ticks and all(float(x) + 30 <= WIDTH for x, end in ticks if not end), seconds
        leftwards += sum(1 for _, end in ticks if end)
    assert leftwards == 3  # 12 s, 22 s and 22.4 s end on a tick at the edge; 37 s (every 3 s) on 36 s
