"""The Twilio Media Streams wire codec on its own: messages in and out, no sockets, no event loop."""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np
import pytest

from voice.audio import ulaw_encode
from voice.transports import CloseCode, Drop
from voice.transports.twilio.codec import (
    CHUNK,
    MARK_EVERY,
    AgentAudioEncoder,
    CallerAudioDecoder,
    Connected,
    Dtmf,
    Mark,
    Media,
    Start,
    Stop,
    Unknown,
    check_stream_key,
    decode,
)


def start(**fields: Any) -> str:
    body = {"streamSid": "MZ1", "callSid": "CA1", "customParameters": {"key": "k"},
            "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}, **fields}
    return json.dumps({"event": "start", "start": body})


def media(payload: bytes, timestamp: int | None = None, track: str = "inbound") -> str:
    body: dict[str, Any] = {"track": track, "payload": base64.b64encode(payload).decode()}
    if timestamp is not None:
        body["timestamp"] = str(timestamp)
    return json.dumps({"event": "media", "media": body})


def test_every_event_decodes_to_its_type() -> None:
    assert decode(start()) == Start("MZ1", "CA1", {"key": "k"})
    assert decode(media(b"\xff" * 160, 40)) == Media(b"\xff" * 160, True, 40)
    assert decode(media(b"\xff", track="outbound")).inbound is False
    assert decode(json.dumps({"event": "mark", "mark": {"name": "vl0.1.320"}})) == Mark("vl0.1.320")
    assert decode(json.dumps({"event": "mark", "mark": {"name": 7}})) == Mark(None)  # malformed: a stale mark
    assert decode(json.dumps({"event": "dtmf", "dtmf": {"digit": "5"}})) == Dtmf("5")
    assert decode(json.dumps({"event": "stop"})) == Stop()
    assert decode(json.dumps({"event": "connected", "protocol": "Call"})) == Connected()
    assert decode(json.dumps({"event": "telepathy" * 10})) == Unknown(("telepathy" * 10)[:40])


@pytest.mark.parametrize("timestamp", ["Infinity", "-Infinity", "NaN", "1" * 5000, -20, True, [1], "2e400"])
def test_a_timestamp_that_is_not_a_finite_number_is_ignored(timestamp: Any) -> None:
    message = json.dumps({"event": "media", "media": {"payload": "//8=", "timestamp": timestamp}})
    if (isinstance(timestamp, str) and timestamp.endswith("Infinity")) or timestamp == "NaN":
        message = message.replace(f'"{timestamp}"', timestamp)  # the bare JSON tokens Python's parser accepts
    assert decode(message) == Media(b"\xff\xff", True, None)


@pytest.mark.parametrize(("message", "code", "reason"), [
    (b"\x00\x01", CloseCode.UNSUPPORTED_DATA, "binary frames"),
    ("{not json", CloseCode.INVALID_PAYLOAD, "malformed JSON"),
    ("[1, 2]", CloseCode.INVALID_PAYLOAD, "JSON object with an 'event'"),
    (json.dumps({"event": 5}), CloseCode.INVALID_PAYLOAD, "JSON object with an 'event'"),
    (json.dumps({"event": "media", "media": {"payload": "%%%"}}), CloseCode.INVALID_PAYLOAD, "not base64"),
    (json.dumps({"event": "media", "media": {"payload": 5}}), CloseCode.INVALID_PAYLOAD, "no string payload"),
    (json.dumps({"event": "media"}), CloseCode.INVALID_PAYLOAD, "no string payload"),
    (json.dumps({"event": "start"}), CloseCode.POLICY_VIOLATION, "no start object"),
    (start(streamSid=""), CloseCode.POLICY_VIOLATION, "no valid streamSid"),
    (start(streamSid="x" * 65), CloseCode.POLICY_VIOLATION, "no valid streamSid"),
    (start(mediaFormat={"encoding": "audio/x-l16", "sampleRate": 16000}), CloseCode.UNSUPPORTED_DATA,
     "unsupported mediaFormat"),
    ("[" * 100_000 + "]" * 100_000, CloseCode.INVALID_PAYLOAD, "malformed JSON"),  # too deep to parse
    (json.dumps({"event": "media", "media": {"payload": "A" * 4004}}), CloseCode.MESSAGE_TOO_BIG, "at most 4000"),
])
def test_bad_messages_raise_a_clear_close_code(message: str | bytes, code: CloseCode, reason: str) -> None:
    with pytest.raises(Drop, match=reason) as caught:
        decode(message)
    assert caught.value.code == code


def test_the_stream_key_is_checked() -> None:
    check_stream_key(Start("MZ1", "CA1", {"key": "k"}), "k")
    for params in ({}, {"key": "guess"}, {"key": 5}):
        with pytest.raises(Drop, match="stream key") as caught:
            check_stream_key(Start("MZ1", "CA1", params), "k")
        assert caught.value.code == CloseCode.POLICY_VIOLATION


def test_agent_audio_becomes_20ms_chunks_with_a_mark_every_200ms_and_at_each_pause() -> None:
    encoder = AgentAudioEncoder("MZ1")
    out = encoder.encode(np.ones(8000, np.int16))  # 500 ms: 25 chunks, a mark after 200 and 400 ms
    assert [o.kind for o in out] == (["media"] * 10 + ["mark"]) * 2 + ["media"] * 5
    first = json.loads(out[0].text)
    assert first["streamSid"] == "MZ1" and len(base64.b64decode(first["media"]["payload"])) == CHUNK
    marks = [json.loads(o.text)["mark"]["name"] for o in out if o.kind == "mark"]
    assert [encoder.ack(name) for name in marks] == [MARK_EVERY, MARK_EVERY] and encoder.has_tail()
    tail = encoder.flush_tail()  # the reply paused: the rest of its audio gets a mark of its own
    assert [o.kind for o in tail] == ["mark"] and not encoder.has_tail()
    assert encoder.ack(json.loads(tail[0].text)["mark"]["name"]) == 8000 - 2 * MARK_EVERY
    short = encoder.encode(np.ones(1000, np.int16))  # a partial chunk is padded with silence at the pause
    assert [o.kind for o in short + encoder.flush_tail()] == ["media"] * 4 + ["mark"]
    assert encoder.flush_tail() == []


def test_clear_makes_marks_already_sent_stale_but_each_echo_is_still_ours_once() -> None:
    encoder = AgentAudioEncoder("MZ1")
    out = encoder.encode(np.ones(2 * MARK_EVERY, np.int16))
    cleared = encoder.clear()
    assert json.loads(cleared.text) == {"event": "clear", "streamSid": "MZ1"}
    names = [json.loads(o.text)["mark"]["name"] for o in out if o.kind == "mark"]
    assert [encoder.ack(name) for name in names] == [0, 0]
    assert [encoder.echoed(name) for name in names] == [True, True]  # Twilio returns them after the clear
    assert [encoder.echoed(name) for name in [*names, "vl9.9.320", "x"]] == [False] * 4  # not twice, not forged
    again = encoder.encode(np.ones(MARK_EVERY, np.int16))
    assert json.loads(again[-1].text)["mark"]["name"].startswith("vl1.")  # a new epoch after the clear


def test_caller_audio_is_upsampled_and_lost_packets_become_silence() -> None:
    decoder = CallerAudioDecoder()
    tone = ulaw_encode((np.sin(np.arange(160) / 3) * 8000).astype(np.int16)).tobytes()
    assert [len(p) for p in decoder.decode(Media(tone, True, 0))] == [320]
    assert [len(p) for p in decoder.decode(Media(tone, True, 20))] == [320]
    gap = decoder.decode(Media(tone, True, 100))  # 60 ms of packets never arrived
    assert [len(p) for p in gap] == [960, 320] and not gap[0].any()
    assert decoder.gap_filled_ms == 60
    assert [len(p) for p in decoder.decode(Media(tone, True, None))] == [320]  # no timestamp: no gap check
    far = decoder.decode(Media(tone, True, 60_000))
    assert len(far[0]) == 1000 * 16  # a long gap is capped at a second
