"""Whisper batched across calls (voice/speech/stt_batch.py): the same text as one at a time, real batches under
concurrency, errors handed to every caller of a batch."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from tests.paths import RECORDINGS
from voice.audio import SAMPLE_RATE, load_audio
from voice.speech.stt import WhisperSTT
from voice.speech.stt_batch import BatchedSTT

CLIPS = ["speech/forever.wav", "speech/goforward.wav", "telephone/osr34_002.wav", "telephone/osr34_004.wav",
         "telephone/osr34_007.wav", "speech/one_two_three.wav"]


@pytest.fixture(scope="module")
def tiny() -> WhisperSTT:
    return WhisperSTT("tiny.en")


def test_a_batch_gives_each_window_the_text_it_gets_alone(tiny: WhisperSTT) -> None:
    clips = [load_audio(RECORDINGS / name) for name in CLIPS]
    clips.append(np.zeros(2 * SAMPLE_RATE, np.int16))  # silence in the batch: gated out, "" as alone
    alone = [tiny.transcribe_window(clip) for clip in clips]
    assert tiny.transcribe_windows(clips) == alone
    assert alone[-1] == "" and all(alone[:-1])


def test_concurrent_calls_are_batched_and_agree(tiny: WhisperSTT) -> None:
    clips = [load_audio(RECORDINGS / name) for name in CLIPS]
    alone = [tiny.transcribe(clip) for clip in clips]
    batched = BatchedSTT(tiny, max_batch=8)
    with ThreadPoolExecutor(max_workers=len(clips)) as pool:
        assert list(pool.map(batched.transcribe, clips)) == alone
    assert batched.windows == len(clips) and batched.batches < len(clips)  # some ran together
    assert batched.transcribe(clips[0]) == alone[0]  # a lone request runs alone, at once


class SlowWindows:
    """A fake model that records its batches; the first batch waits until released."""

    def __init__(self) -> None:
        self.batches: list[int] = []
        self.release = threading.Event()
        self.entered = threading.Event()

    def split_windows(self, samples: np.ndarray) -> list[tuple[int, int]]:
        return [(0, len(samples))]

    def transcribe_windows(self, windows: list[np.ndarray]) -> list[str]:
        self.entered.set()
        if not self.batches:
            self.release.wait(5)
        self.batches.append(len(windows))
        if any(len(w) == 13 for w in windows):
            raise RuntimeError("model failed")
        return [f"len {len(w)}" for w in windows]


def test_requests_that_queue_behind_a_batch_run_together_up_to_max_batch() -> None:
    model = SlowWindows()
    batched = BatchedSTT(model, max_batch=3)
    with ThreadPoolExecutor(max_workers=6) as pool:
        first = pool.submit(batched.transcribe, np.zeros(1, np.int16))
        assert model.entered.wait(5)  # the first request is being "decoded"
        rest = [pool.submit(batched.transcribe, np.zeros(n, np.int16)) for n in (2, 3, 4, 5)]
        model.release.set()
        assert first.result(5) == "len 1" and [f.result(5) for f in rest] == ["len 2", "len 3", "len 4", "len 5"]
    assert model.batches[0] == 1 and max(model.batches) <= 3 and sum(model.batches) == 5


def test_a_failed_batch_fails_its_callers_and_the_next_one_still_runs() -> None:
    model = SlowWindows()
    model.release.set()
    batched = BatchedSTT(model)
    with pytest.raises(RuntimeError, match="model failed"):
        batched.transcribe(np.zeros(13, np.int16))
    assert batched.transcribe(np.zeros(4, np.int16)) == "len 4"
    with pytest.raises(ValueError, match="max_batch"):
        BatchedSTT(model, max_batch=0)


class SleepySTT:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def transcribe(self, audio: np.ndarray) -> str:
        threading.Event().wait(self.seconds)
        return "words"


def test_shared_whisper_reports_busy_while_in_flight_and_after_a_busy_spell() -> None:
    from voice.speech.shared_models import SharedSTT

    shared = SharedSTT(SleepySTT(0.3), window_s=1.0, busy_share=0.2)
    assert not shared.busy()
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(shared.transcribe, np.zeros(10, np.int16))
        while not shared.in_flight:
            pass
        assert shared.busy()  # in flight
        assert pending.result(5) == "words"
    assert shared.busy()  # 0.3 s of the last second: busy, optional partials wait
    threading.Event().wait(1.1)
    assert not shared.busy() and shared.work["transcriptions"] == 1
