"""One Whisper for every call, batched: transcriptions asked for at the same time by different calls run as
one CTranslate2 batch instead of one after the other.

With many calls, speech-to-text is a queue: each call's transcription waits for the ones ahead of it. CTranslate2
decodes a batch of windows in one `generate()` (one encoder pass over the stacked features, then one decoder step
for all of them at a time), which costs less than the same windows one by one. `BatchedSTT` keeps a queue of
windows; one worker thread takes everything queued when it is free (up to `max_batch`) and runs it as one
batch. A lone request runs at once, alone: no waiting for company, so one call is as fast as before. Under load
the queue fills while a batch runs, and the next batch takes all of it ("continuous batching").

Greedy decoding of a window gives the same tokens in a batch as alone (tests/voice/speech/test_stt_batch.py checks
it). Each window keeps its call's vocabulary (the agent's words, `voice/speech/vocabulary.py`): windows with different
ones share the worker's turn but are decoded as separate CTranslate2 batches (one prompt per batch).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any, Protocol

import numpy as np

from voice.audio import as_int16


class WindowBatcher(Protocol):
    """`voice.speech.stt.WhisperSTT`; `transcribe_windows` is given `vocabularies` only when a window has one."""

    def split_windows(self, samples: np.ndarray) -> list[tuple[int, int]]: ...

    def transcribe_windows(self, windows: list[np.ndarray]) -> list[str]: ...


Vocabulary = tuple[str, ...]
Digits = tuple[int, ...]  # how many digits the call's identifiers have


class BatchedSTT:
    """An STT engine (`transcribe(audio) -> str`) over a `WhisperSTT`, batching concurrent calls' windows."""

    def __init__(self, stt: WindowBatcher, max_batch: int = 8) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be 1 or more (got {max_batch})")
        self.stt, self.max_batch = stt, max_batch
        self._queue: deque[tuple[np.ndarray, Vocabulary, Digits, Future[str]]] = deque()
        self._ready = threading.Condition()
        self._worker: threading.Thread | None = None
        self.batches = 0  # batches run so far
        self.windows = 0  # windows transcribed so far (windows / batches: the mean batch size)

    def transcribe(self, samples: np.ndarray, vocabulary: Sequence[str] = (), id_digits: Sequence[int] = ()) -> str:
        """Text of 16 kHz mono int16 audio of any length (its windows queued together, so they batch), biased
        towards `vocabulary`, its identifiers checked against the lengths `id_digits`."""
        audio = as_int16(samples)
        futures = [self._submit(audio[a:b], tuple(vocabulary), tuple(id_digits))
                   for a, b in self.stt.split_windows(audio)]
        return " ".join(text for text in (f.result() for f in futures) if text)

    def _submit(self, window: np.ndarray, vocabulary: Vocabulary, id_digits: Digits = ()) -> Future[str]:
        future: Future[str] = Future()
        with self._ready:
            self._queue.append((window, vocabulary, id_digits, future))
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._run, name="stt-batch", daemon=True)
                self._worker.start()
            self._ready.notify()
        return future

    def _take(self) -> list[tuple[np.ndarray, Vocabulary, Digits, Future[str]]]:
        with self._ready:
            while not self._queue:
                self._ready.wait()
            return [self._queue.popleft() for _ in range(min(self.max_batch, len(self._queue)))]

    def _run(self) -> None:
        while True:
            batch = self._take()
            windows, vocabularies, lengths = [b[0] for b in batch], [b[1] for b in batch], [b[2] for b in batch]
            try:
                if any(lengths):  # an engine told the calls' identifier lengths takes them third
                    texts = self.stt.transcribe_windows(windows, vocabularies, lengths)  # type: ignore[call-arg]
                elif any(vocabularies):
                    texts = self.stt.transcribe_windows(windows, vocabularies)  # type: ignore[call-arg]
                else:
                    texts = self.stt.transcribe_windows(windows)
            except Exception as exc:  # every caller in the batch gets the error, and the worker goes on
                for *_, future in batch:
                    future.set_exception(exc)
                continue
            self.batches += 1
            self.windows += len(batch)
            for (*_, future), text in zip(batch, texts, strict=True):
                future.set_result(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stt, name)
