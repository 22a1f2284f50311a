"""The server's shared TTS: copies of the voice synthesising at once, earliest deadline first, with a slot kept
for the clause a caller is waiting for; the two-thread voice only for a clause alone on an idle machine."""

from __future__ import annotations

import contextvars
import threading
import time

import numpy as np
import pytest

from voice.speech.clause_memo import memo_for
from voice.speech.shared_models import SPEECH_AHEAD_S, DeadlineSlots, PooledTTS
from voice.speech.spoken import SpokenTTS


class NamedTTS:
    def __init__(self, name: str, seconds: float = 0.0, log: list[str] | None = None) -> None:
        self.name, self.seconds, self.used, self.log = name, seconds, 0, log

    def synthesize(self, text: str) -> np.ndarray:
        self.used += 1
        if self.log is not None:
            self.log.append(f"{text} start")
        time.sleep(self.seconds)
        if self.log is not None:
            self.log.append(f"{text} end")
        return np.zeros(160, np.int16)


def _synthesize_in_thread(tts: PooledTTS, text: str, ahead_s: float) -> threading.Thread:
    """As the call's driver does: the audio still to play ahead of the clause goes with it into the thread."""
    def run() -> None:
        SPEECH_AHEAD_S.set(ahead_s)
        tts.synthesize(text)

    thread = threading.Thread(target=contextvars.copy_context().run, args=(run,))
    thread.start()
    return thread


def test_a_lone_clause_on_an_idle_machine_gets_the_two_thread_voice() -> None:
    full, lean = NamedTTS("full"), NamedTTS("lean")
    tts = PooledTTS([lean], full, busy=lambda: False)
    tts.synthesize("Order 4567 has shipped,")
    assert (full.used, lean.used, tts.work["full"]) == (1, 0, 1)


def test_a_loaded_machine_gets_the_one_thread_voices() -> None:
    full, lean = NamedTTS("full"), NamedTTS("lean")
    assert PooledTTS([lean], full, busy=lambda: True).synthesize("Sure,").size and (full.used, lean.used) == (0, 1)


def test_a_rehearsal_may_only_take_a_voice_nobody_is_using_or_waiting_for() -> None:
    """Work that may be wasted never takes a voice from audio a caller is waiting for, nor a core from Whisper."""
    assert PooledTTS([NamedTTS("a")], busy=lambda: False).spare()
    assert not PooledTTS([NamedTTS("a")], busy=lambda: True).spare()  # Whisper busy with other calls
    tts = PooledTTS([NamedTTS("a", 0.3)], busy=lambda: False)
    running = _synthesize_in_thread(tts, "another call's clause", 0.0)
    while not tts.slots.running():
        time.sleep(0.005)
    assert not tts.spare()
    running.join()
    assert tts.spare()


def test_two_voices_synthesise_two_clauses_at_once() -> None:
    log: list[str] = []
    a, b = NamedTTS("a", 0.2, log), NamedTTS("b", 0.2, log)
    tts = PooledTTS([a, b], busy=lambda: True)
    threads = [_synthesize_in_thread(tts, f"call {i}", 0.0) for i in range(2)]
    for t in threads:
        t.join()
    assert (a.used, b.used) == (1, 1)
    assert log.index("call 0 end") > log.index("call 1 start") and log.index("call 1 end") > log.index("call 0 start")


def test_a_clause_nobody_needs_yet_leaves_the_last_voice_free_for_a_waiting_caller() -> None:
    log: list[str] = []
    tts = PooledTTS([NamedTTS("a", 0.3, log), NamedTTS("b", 0.3, log)], busy=lambda: True)
    later = [_synthesize_in_thread(tts, f"later {i}", 4.0) for i in range(2)]  # 4 s of audio still to play
    time.sleep(0.05)
    first = _synthesize_in_thread(tts, "first clause", 0.0)  # a caller waits in silence for this one
    for t in [*later, first]:
        t.join()
    assert log[:2] == ["later 0 start", "first clause start"] or log[:2] == ["later 1 start", "first clause start"]
    assert log.index("first clause start") < log.index("later 0 end")  # it did not wait for either later one


def test_earliest_deadline_goes_first_among_waiters() -> None:
    log: list[str] = []
    tts = PooledTTS([NamedTTS("a", 0.15, log)], busy=lambda: True)
    busy = _synthesize_in_thread(tts, "running", 0.0)
    time.sleep(0.05)
    waiters = [_synthesize_in_thread(tts, name, ahead) for name, ahead in (("in 3 s", 3.0), ("in 1 s", 1.0),
                                                                            ("now", 0.0))]
    for t in [busy, *waiters]:
        t.join()
    assert [e.removesuffix(" start") for e in log if e.endswith("start")] == ["running", "now", "in 1 s", "in 3 s"]


def test_a_clause_that_is_not_urgent_turns_urgent_as_its_audio_comes_due() -> None:
    slots = DeadlineSlots(2)
    with slots.hold(0.0):  # one slot busy for a while
        started = time.monotonic()
        with slots.hold(0.6):  # due in 0.6 s: it may not take the last slot until it is within 0.5 s of that
            waited = time.monotonic() - started
    assert 0.05 <= waited < 0.5


def test_a_pool_needs_a_voice() -> None:
    with pytest.raises(ValueError, match="at least one"):
        PooledTTS([])
    with pytest.raises(ValueError, match="at least one slot"):
        DeadlineSlots(0)


def test_while_a_transcription_runs_only_urgent_clauses_start() -> None:
    transcribing = True
    slots = DeadlineSlots(2, defer=lambda: transcribing)
    started = time.monotonic()
    with slots.hold(0.0):
        pass  # a caller waits in silence: it starts at once, transcription or not
    assert time.monotonic() - started < 0.05
    started = time.monotonic()
    with slots.hold(0.8):  # due in 0.8 s: it waits for the transcription, or until it is nearly due
        waited = time.monotonic() - started
    assert 0.2 <= waited < 0.6
    transcribing = False
    started = time.monotonic()
    with slots.hold(3.0):
        assert time.monotonic() - started < 0.05


def test_beside_a_transcription_only_one_voice_runs_even_for_a_waiting_caller() -> None:
    log: list[str] = []
    transcribing = [True]
    tts = PooledTTS([NamedTTS("a", 0.2, log), NamedTTS("b", 0.2, log)], defer=lambda: transcribing[0])
    threads = [_synthesize_in_thread(tts, f"call {i}", 0.0) for i in range(2)]
    for t in threads:
        t.join()
    assert log[1].endswith("end")  # Whisper keeps a core: the second caller's clause waited for the first
    transcribing[0] = False
    log.clear()
    threads = [_synthesize_in_thread(tts, f"call {i}", 0.0) for i in range(2)]
    for t in threads:
        t.join()
    assert log[1].endswith("start")  # nothing to transcribe: both voices at once


def test_a_greeting_is_synthesised_once_by_the_pool_and_its_audio_reused() -> None:
    voice = NamedTTS("a")
    tts = PooledTTS([voice])
    calls = [SpokenTTS(tts), SpokenTTS(tts)]  # two calls' drivers over the server's one pool
    first = calls[0].synthesize("Hello, Smile Dental, how can I help you today with your teeth?", fixed=True)
    first[:] = 7  # what a caller does with its copy never reaches the kept audio
    again = calls[1].synthesize("Hello, Smile Dental, how can I help you today with your teeth?", fixed=True)
    assert voice.used == 1 and memo_for(tts).work["reused"] == 1 and not again.any()
    calls[0].synthesize("Order 4567 has shipped.")  # an answer about one order is never kept
    calls[1].synthesize("Order 4567 has shipped.")
    assert voice.used == 3 and tts.work["syntheses"] == 3


