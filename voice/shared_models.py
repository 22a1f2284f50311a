"""The speech models one server shares across calls, wrapped for concurrent use from worker threads."""

from __future__ import annotations

import contextlib
import contextvars
import heapq
import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from voice.engines import STT, TTS

# How urgent the synthesis asked for from this context is: 0 = a caller is waiting in silence for it (the first
# clause of an answer), 1 = audio is still playing ahead of it. Set by the call's driver before `to_thread`
# (which copies the context into the worker thread).
SPEECH_URGENCY: contextvars.ContextVar[int] = contextvars.ContextVar("speech_urgency", default=0)


class PriorityLock:
    """A lock whose waiters go in by priority (lower first), then in arrival order."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._busy = False
        self._waiting: list[tuple[int, int]] = []
        self._tickets = itertools.count()

    def waiting(self) -> int:
        """How many are waiting to go in."""
        with self._cond:
            return len(self._waiting)

    @contextlib.contextmanager
    def hold(self, priority: int) -> Iterator[None]:
        with self._cond:
            ticket = (priority, next(self._tickets))
            heapq.heappush(self._waiting, ticket)
            while self._busy or self._waiting[0] != ticket:
                self._cond.wait()
            heapq.heappop(self._waiting)
            self._busy = True
        try:
            yield
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()


class LockedTTS:
    """The shared TTS engine, one synthesis at a time (calls synthesise from worker threads); a clause a caller
    is waiting for in silence goes ahead of clauses whose call still has audio playing (`SPEECH_URGENCY`).

    `lean`: the same voice on one thread, used while other clauses wait or `busy()` says the machine is loaded:
    two threads make one clause sooner only when the other core is free; under load they cost more CPU."""

    def __init__(self, tts: TTS, lean: TTS | None = None, busy: Callable[[], bool] | None = None) -> None:
        self.tts, self.lean, self.busy, self.lock = tts, lean, busy, PriorityLock()
        self.work = {"syntheses": 0, "busy_s": 0.0, "waited_s": 0.0, "lean": 0}

    def synthesize(self, text: str) -> np.ndarray:
        asked = time.perf_counter()
        with self.lock.hold(SPEECH_URGENCY.get()):
            started = time.perf_counter()
            engine = self.tts
            if self.lean is not None and (self.lock.waiting() or (self.busy is not None and self.busy())):
                engine = self.lean
                self.work["lean"] += 1
            try:
                return engine.synthesize(text)
            finally:
                self.work["syntheses"] += 1
                self.work["busy_s"] += time.perf_counter() - started
                self.work["waited_s"] += started - asked

    def __getattr__(self, name: str) -> Any:
        return getattr(self.tts, name)


class SharedSTT:
    """The one Whisper every call shares. It tells a call when the model is busy, so the call skips optional work
    (speculative partials) before anyone's turn waits for it: busy while a transcription is in flight, and while
    the model has been busy more than `busy_share` of the last `window_s` (back-pressure under load)."""

    def __init__(self, stt: STT, window_s: float = 3.0, busy_share: float = 0.5) -> None:
        self.stt, self.lock, self.in_flight = stt, threading.Lock(), 0
        self.window_s, self.busy_share = window_s, busy_share
        self._spans: deque[tuple[float, float]] = deque()  # (start, end) of recent transcriptions
        self.work = {"transcriptions": 0, "wall_s": 0.0}  # wall_s: asked -> text, queueing included

    def transcribe(self, audio: np.ndarray) -> str:
        started = time.perf_counter()
        with self.lock:
            self.in_flight += 1
        try:
            return self.stt.transcribe(audio)
        finally:
            ended = time.perf_counter()
            with self.lock:
                self.in_flight -= 1
                self.work["transcriptions"] += 1
                self.work["wall_s"] += ended - started
                self._spans.append((started, ended))

    def busy(self) -> bool:
        """Optional transcriptions should wait: one is in flight, or the model was mostly busy lately."""
        now = time.perf_counter()
        with self.lock:
            if self.in_flight:
                return True
            while self._spans and self._spans[0][1] < now - self.window_s:
                self._spans.popleft()
            recent = sum(end - max(start, now - self.window_s) for start, end in self._spans)
        return recent >= self.busy_share * self.window_s

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stt, name)


def work_summary(stt: Any, tts: Any) -> str:
    """One log line: what speech-to-text and text-to-speech did for every call since the server started."""
    model = getattr(stt, "stt", stt)
    model = getattr(model, "stt", model)  # under a BatchedSTT
    stt_work, shared, tts_work = getattr(model, "work", {}), getattr(stt, "work", {}), getattr(tts, "work", {})
    n = max(1, shared.get("transcriptions", 0))
    windows, batches = stt_work.get("windows", 0), max(1, stt_work.get("batches", 0))
    syntheses = max(1, tts_work.get("syntheses", 0))
    return (f"speech work: {shared.get('transcriptions', 0)} transcriptions (mean {shared.get('wall_s', 0) / n:.3f} s "
            f"asked -> text), Whisper busy {stt_work.get('busy_s', 0.0):.1f} s for {windows} windows in "
            f"{stt_work.get('batches', 0)} batches (mean batch {windows / batches:.2f}); "
            f"{tts_work.get('syntheses', 0)} syntheses, TTS busy {tts_work.get('busy_s', 0.0):.1f} s "
            f"(mean wait {tts_work.get('waited_s', 0.0) / syntheses:.3f} s)")
