"""The call core's work ahead of a turn's end: speculation offered while the caller speaks, the pause decision
started once and in time, one transcription in flight with the freshest audio next, late transcripts counted as
speech-to-text's wait, and all of it held back while a shared speech-to-text is busy."""

from __future__ import annotations

import pytest

from tests.fakes import WordChunker
from tests.voice.call.test_call_core import LOUD, SILENT, Clock, Harness, run_started
from voice.audio import FRAME_S
from voice.call.core import CallCore
from voice.call.events import CallerFrame, ClearAudio, Speculate, StartRun, StopSpeculating, Transcribe, TranscriptReady
from voice.call.state import SessionConfig
from voice.call.turns import TurnConfig


def test_speculation_is_offered_while_the_caller_speaks_and_never_during_a_run() -> None:
    h = Harness(speculate=True)  # offered while they speak only when asked for (`--speculate speech`)
    h.say("where is my order 4567", 1.5)
    assert [c.text for c in h.log if isinstance(c, Speculate)] == ["where is my order 4567"] * 3  # every 0.6 s
    run_started(h, "where is my order 4567?")
    h.log.clear()
    h.say("and another thing", 1.5)
    assert not any(isinstance(c, Speculate) for c in h.log)


def test_by_default_only_the_pause_starts_work_ahead_of_the_turns_end() -> None:
    """The default (`--speculate pause`): nothing while the caller speaks, one decision when they pause."""
    h = Harness()
    h.say("Where is my order 4567?", 1.5)
    assert not any(isinstance(c, Speculate) for c in h.log)
    h.frames(0.2, speech=False)
    assert [(c.text, c.in_pause) for c in h.log if isinstance(c, Speculate)] == [("Where is my order 4567?", True)]


def test_the_pause_decision_starts_in_time_for_the_turns_end_and_no_sooner() -> None:
    """A finished sentence or an open request is decided on at once; words that trail off, after which callers
    mostly go on, only `decide_lead_s` before the silence that would end them: fewer decisions thrown away."""
    cfg = TurnConfig()
    h = Harness()
    h.say("where is my order 4567", 1.5)
    h.frames(0.2, speech=False)
    assert [(c.text, c.in_pause) for c in h.log if isinstance(c, Speculate)] == [("where is my order 4567", True)]
    h = Harness()
    h.say("I'd like to book a", 1.5)
    h.frames(cfg.hold_silence_s - cfg.decide_lead_s - 0.04, speech=False)
    assert not any(isinstance(c, Speculate) for c in h.log)
    h.frames(0.08, speech=False)
    assert [(c.text, c.in_pause) for c in h.log if isinstance(c, Speculate)] == [("I'd like to book a", True)]


def test_only_one_transcription_is_in_flight_and_the_freshest_audio_is_asked_for_next() -> None:
    core = CallCore(SessionConfig(speculate=True), WordChunker, Clock())
    asks: list[Transcribe] = []
    t = 0.0
    for _ in range(60):  # 1.9 s of speech; nobody answers the transcriptions
        asks += [c for c in core.handle(CallerFrame(LOUD, t, 1.0, 0.0)) if isinstance(c, Transcribe)]
        t += FRAME_S
    assert len(asks) == 1
    again = [c for c in core.handle(TranscriptReady(asks[0].key, "where is", 900.0)) if isinstance(c, Transcribe)]
    assert len(again) == 1 and again[0].key > asks[0].key and len(again[0].audio) > len(asks[0].audio)


def test_late_transcripts_count_as_stt_wait_not_as_endpointing() -> None:
    core = CallCore(SessionConfig(), WordChunker, Clock())
    t, last = 0.0, None
    for i in range(60):  # 0.96 s of speech, then silence; partials while speaking come back at once
        speech = i < 30
        for c in core.handle(CallerFrame(LOUD if speech else SILENT, t, float(speech), 0.0)):
            if isinstance(c, Transcribe) and speech:
                core.handle(TranscriptReady(c.key, "Where is", 0.0))
            elif isinstance(c, Transcribe):
                last = c  # the one asked in the pause is slow
        t += FRAME_S
    assert last is not None and not core.talk.turns
    out = core.handle(TranscriptReady(last.key, "Where is my order?", 700.0))
    assert any(isinstance(c, StartRun) for c in out) and not any(isinstance(c, ClearAudio) for c in out)
    lat = core.talk.turns[0].latency_ms
    # asked in the frame that brings 3 frames (0.096 s) of silence, which starts 0.064 s into it, back 0.7 s later:
    # 0.316 s after the 0.448 s that ended the turn
    assert lat["endpointing"] == 448.0 and lat["stt"] == pytest.approx(316, abs=1)


def test_the_decision_is_started_in_the_pause_once_and_never_while_a_run_is_on() -> None:
    h = Harness()
    h.say("Where is my order?", 1.0)
    h.log.clear()
    h.frames(0.3, speech=False)  # past the 0.2 s early transcript, before the 0.42 s endpoint
    assert [c.text for c in h.log if isinstance(c, Speculate)] == ["Where is my order?"]
    h.frames(0.3, speech=False)
    assert [type(c).__name__ for c in h.log].count("Speculate") == 1 and h.core.run.active
    off = Harness(preempt=False)
    off.say("Where is my order?", 1.0)
    off.log.clear()
    off.frames(0.6, speech=False)
    assert not any(isinstance(c, Speculate) for c in off.log)


def test_a_late_transcript_still_ends_the_turn_where_the_silence_did_and_new_speech_is_a_new_turn() -> None:
    """Whisper is slow: 1.2 s of silence ends the turn by itself; speech after that is the next turn, even
    though the first turn's text arrives only after the caller started talking again."""
    core = CallCore(SessionConfig(), WordChunker, Clock())
    t, asked = 0.0, []

    def frames(seconds: float, speech: bool) -> None:
        nonlocal t
        for _ in range(round(seconds / FRAME_S)):
            asked.extend(c for c in core.handle(CallerFrame(LOUD if speech else SILENT, t, float(speech), 0.0))
                         if isinstance(c, Transcribe))
            t += FRAME_S

    frames(1.0, True)
    frames(1.4, False)  # nobody answers a transcription yet
    assert not core.detector.in_turn and core.hearing.closed is not None
    frames(0.5, True)  # the caller speaks again
    first = next(c for c in asked if c.key == core.hearing.closed.speech_end)
    out = core.handle(TranscriptReady(first.key, "where is my order", 2000.0))
    assert [c.text for c in out if isinstance(c, StartRun)] == ["where is my order"]
    assert core.talk.turns[0].latency_ms["endpointing"] == 1216.0 and core.talk.turns[0].latency_ms["stt"] > 0
    assert core.detector.in_turn and core.turn.barge is not None  # the new words are speech over a thinking agent


def test_a_number_dictated_in_pieces_reaches_the_preemptive_decision_and_the_run_joined() -> None:
    h = Harness()
    h.say("It's 4 5 6 7.", 1.0)
    h.frames(0.6, speech=False)
    assert [c.text for c in h.log if isinstance(c, Speculate) and c.in_pause] == ["It's 4567."]
    assert [c.text for c in h.log if isinstance(c, StartRun)] == ["It's 4567."]
    off = Harness(join_digits=False)
    assert run_started(off, "It's 4 5 6 7.").text == "It's 4 5 6 7."


def test_a_pause_stops_decisions_on_older_words_once_before_the_pause_decision() -> None:
    h = Harness()
    h.say("Where is my order 4567?", 1.0)
    h.frames(0.064, speech=False)
    assert not any(isinstance(c, StopSpeculating) for c in h.log)  # a breath is no pause
    h.frames(0.5, speech=False)
    kinds = [type(c) for c in h.log if isinstance(c, StopSpeculating | Speculate | StartRun)]
    assert kinds[-3:] == [StopSpeculating, Speculate, StartRun] and kinds.count(StopSpeculating) == 1
    off = Harness(preempt=False)
    off.say("Where is my order 4567?", 1.0)
    off.frames(0.6, speech=False)
    assert not any(isinstance(c, StopSpeculating) for c in off.log)


def test_a_pause_is_transcribed_early_on_an_idle_server_and_later_while_whisper_serves_other_calls() -> None:
    cfg = TurnConfig()
    for busy, starts in [(False, cfg.early_stt_s), (True, cfg.busy_stt_s)]:
        h = Harness()
        h.say("Where is my order 4567?", 1.5)
        spoke_until, asked_at = h.t, None
        while asked_at is None and h.t < spoke_until + 0.5:
            out = h.feed(CallerFrame(SILENT, h.t, 0.0, 0.0, stt_busy=busy))
            h.t += FRAME_S
            if any(isinstance(c, Transcribe) for c in out):
                asked_at = h.t - spoke_until
        assert asked_at is not None and starts <= asked_at < starts + 0.04, (busy, asked_at)


def test_speculation_waits_while_a_shared_speech_to_text_is_busy_and_the_turn_is_still_transcribed() -> None:
    """The driver reports the engine's load with each frame; the core decides to skip the optional partials."""
    h = Harness(speculate=True)
    for _ in range(round(3.0 / FRAME_S)):  # three seconds of speech while Whisper is busy with other calls
        h.feed(CallerFrame(LOUD, h.t, 1.0, 0.0, stt_busy=True))
        h.t += FRAME_S
    assert not any(isinstance(c, Transcribe) and c.optional for c in h.log)
    assert "speculation_skipped" in h.kinds()
    h.stt_text = "Where is my order?"
    h.frames(0.6, speech=False)  # the turn's own transcription is never skipped
    assert any(isinstance(c, Transcribe) and not c.optional for c in h.log)
    assert any(isinstance(c, StartRun) for c in h.log)
