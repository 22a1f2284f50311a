"""The browser page's wire codec on its own: messages in and out, no sockets, no event loop."""

from __future__ import annotations

import json

import numpy as np
import pytest

from voice.transports import CloseCode, Drop
from voice.transports.browser import codec


def test_server_messages() -> None:
    assert json.loads(codec.hello("c1", 400, "ct_x")) == {"type": "hello", "call_id": "c1", "lead_ms": 400, "audio": {
        "encoding": "pcm_s16le", "sample_rate": 16000, "channels": 1}, "call_token": "ct_x"}
    assert json.loads(codec.event({"t": 1.5, "kind": "agent_said", "text": "Hi"})) == {
        "type": "event", "t": 1.5, "kind": "agent_said", "text": "Hi"}
    assert json.loads(codec.clear(3)) == {"type": "clear", "epoch": 3}
    assert json.loads(codec.error("nope")) == {"type": "error", "error": "nope"}
    assert json.loads(codec.bye("hangup")) == {"type": "bye", "reason": "hangup"}
    pcm = np.array([1, -2, 300], np.int16)
    assert codec.audio_frame(pcm) == pcm.astype("<i2").tobytes()


def test_page_messages_decode_or_are_rejected_with_a_reason() -> None:
    assert codec.decode_text(json.dumps({"type": "played", "samples": 512, "epoch": 2})) == codec.Played(512, 2)
    assert codec.decode_text(json.dumps({"type": "played", "samples": 0})) == codec.Played(0, 0)
    assert codec.decode_text(json.dumps({"type": "approval", "approved": False})) == codec.Approval(False)
    assert codec.decode_text(json.dumps({"type": "hangup"})) == codec.Hangup()
    for text, reason in [("{not json", "malformed JSON"),
                         (json.dumps({"type": "dance"}), "unknown message type 'dance'"),
                         (json.dumps([1]), "unknown message type None"),
                         (json.dumps({"type": "x" * 60_000}), "^unknown message type 'x{39}…$"),  # not echoed in full
                         ("[" * 100_000 + "]" * 100_000, "malformed JSON"),
                         (json.dumps({"type": "played", "samples": -1}), "non-negative integer"),
                         (json.dumps({"type": "played", "samples": True}), "non-negative integer"),
                         (json.dumps({"type": "played", "samples": 5, "epoch": "1"}), "integer 'epoch'"),
                         (json.dumps({"type": "approval", "approved": "yes"}), "boolean 'approved'")]:
        with pytest.raises(codec.Rejected, match=reason):
            codec.decode_text(text)


def test_audio_frames_must_be_even_and_small() -> None:
    assert codec.decode_audio(np.arange(320, dtype=np.int16).tobytes()).tolist() == list(range(320))
    with pytest.raises(Drop) as odd:
        codec.decode_audio(b"\x00\x01\x02")
    assert odd.value.code == CloseCode.UNSUPPORTED_DATA
    with pytest.raises(Drop, match="audio frame of 18000 bytes; at most 16000") as big:
        codec.decode_audio(bytes(18000))
    assert big.value.code == CloseCode.MESSAGE_TOO_BIG


def test_audio_may_not_run_ahead_of_the_wall_clock() -> None:
    guard = codec.RealTimeGuard(started=100.0, slack_s=1.0)
    guard.admit(16000, now=100.5)  # 1 s of audio after 0.5 s: within the slack
    guard.admit(16000, now=101.1)
    with pytest.raises(Drop, match="faster than real time") as fast:
        guard.admit(16000, now=101.2)
    assert fast.value.code == CloseCode.POLICY_VIOLATION


def test_turn_summaries_are_sent_only_when_they_change() -> None:
    updates = codec.TurnUpdates()
    first = {"user_text": "hi", "agent_text": "", "latency_ms": {}}
    assert [json.loads(t)["index"] for t in updates.changed([first])] == [0]
    assert updates.changed([first]) == []
    first["latency_ms"]["stt"] = 120.0  # the session fills in the same dict later
    second = {"user_text": "and?", "agent_text": "", "latency_ms": {}}
    sent = [json.loads(t) for t in updates.changed([first, second])]
    assert [(m["type"], m["index"]) for m in sent] == [("turn", 0), ("turn", 1)]
    assert sent[0]["latency_ms"] == {"stt": 120.0}
