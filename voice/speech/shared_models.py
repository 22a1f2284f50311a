"""The speech models one server shares across calls, wrapped for concurrent use from worker threads."""

from __future__ import annotations

import contextlib
import contextvars
import heapq
import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from voice.speech.clause_memo import memo_for
from voice.speech.engines import STT, TTS, EndOfTurn, transcribe_with

# How much agent audio is still to play ahead of the synthesis asked for from this context, in seconds: 0 means a
# caller is waiting in silence for it (the first clause of an answer). Set by the call's driver before `to_thread`
# (which copies the context into the worker thread).
SPEECH_AHEAD_S: contextvars.ContextVar[float] = contextvars.ContextVar("speech_ahead_s", default=0.0)
URGENT_WITHIN_S = 0.5  # a clause due to play within this long is urgent: someone will hear silence without it


class DeadlineSlots:
    """`size` slots handed out earliest deadline first. A clause that is not urgent yet (its call still has more
    than `URGENT_WITHIN_S` of audio to play) never takes the last free slot, so an answer's first clause starts at
    once instead of waiting behind audio nobody needs yet; it becomes urgent as its deadline nears."""

    def __init__(self, size: int, defer: Callable[[], bool] | None = None) -> None:
        """`defer`: while it says so (a transcription someone's turn waits for is running: it needs a core more than
        audio due in seconds), only urgent work starts, and only on a pool with nothing else running."""
        if size < 1:
            raise ValueError(f"a pool needs at least one slot (got {size})")
        self.size, self.free, self.defer = size, list(range(size)), defer
        self._cond = threading.Condition()
        self._waiting: list[tuple[float, int]] = []  # (deadline, ticket), a heap
        self._tickets = itertools.count()

    def waiting(self) -> int:
        with self._cond:
            return len(self._waiting)

    def running(self) -> int:
        with self._cond:
            return self.size - len(self.free)

    def _may_start(self, ticket: tuple[float, int]) -> bool:
        if not self.free or self._waiting[0] != ticket:
            return False
        urgent = ticket[0] - time.monotonic() <= URGENT_WITHIN_S
        if self.defer is not None and self.defer() and (not urgent or len(self.free) < self.size):
            return False  # a transcription runs: nothing that can wait, and one voice at a time, beside it
        return urgent or len(self.free) > 1 or self.size == 1

    @contextlib.contextmanager
    def hold(self, ahead_s: float) -> Iterator[int]:
        """A slot (its index) for work needed `ahead_s` seconds from now."""
        with self._cond:
            ticket = (time.monotonic() + max(0.0, ahead_s), next(self._tickets))
            heapq.heappush(self._waiting, ticket)
            while not self._may_start(ticket):
                self._cond.wait(timeout=0.05)  # a waiting clause turns urgent with time, not with a notify
            heapq.heappop(self._waiting)
            slot = self.free.pop()
            self._cond.notify_all()  # the next in line may start on another free slot
        try:
            yield slot
        finally:
            with self._cond:
                self.free.append(slot)
                self._cond.notify_all()


class PooledTTS:
    """The server's TTS: `voices` copies of the voice on one thread each, so two clauses synthesise on two cores,
    served by deadline (`DeadlineSlots`, from `SPEECH_AHEAD_S`). `full`: the voice on two threads, used for a clause
    alone on an idle machine (`busy()` false, nothing else running or waiting): it comes ~40 % sooner there, but
    costs more CPU than one thread when the cores are shared."""

    def __init__(self, voices: list[TTS], full: TTS | None = None, busy: Callable[[], bool] | None = None,
                 defer: Callable[[], bool] | None = None) -> None:
        """`defer`: see `DeadlineSlots`."""
        if not voices:
            raise ValueError("PooledTTS needs at least one voice")
        self.voices, self.full, self.busy = voices, full, busy
        self.slots = DeadlineSlots(len(voices), defer)
        self.work = {"syntheses": 0, "busy_s": 0.0, "waited_s": 0.0, "full": 0}

    def synthesize(self, text: str) -> np.ndarray:
        asked = time.perf_counter()
        with self.slots.hold(SPEECH_AHEAD_S.get()) as slot:
            started = time.perf_counter()
            engine = self.voices[slot]
            if self.full is not None and self._alone():
                engine = self.full
                self.work["full"] += 1
            try:
                return engine.synthesize(text)
            finally:
                self.work["syntheses"] += 1
                self.work["busy_s"] += time.perf_counter() - started
                self.work["waited_s"] += started - asked

    def spare(self) -> bool:
        """Work that may be wasted (a clause rehearsed in a caller's pause) may take a voice: none is synthesising
        or waited for, and Whisper is not busy. Under load the voices belong to audio callers are waiting for."""
        return not self.slots.running() and not self.slots.waiting() and not self._whisper_busy()

    def _alone(self) -> bool:
        return self.slots.running() == 1 and not self.slots.waiting() and not self._whisper_busy()

    def _whisper_busy(self) -> bool:
        return self.busy is not None and self.busy()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.voices[0], name)


class BusySpans:
    """When a shared model was busy lately: in flight now, or busy more than `busy_share` of the last `window_s`
    (back-pressure under load). Thread-safe; `enter` / `leave` bracket one use of the model."""

    def __init__(self, window_s: float, busy_share: float) -> None:
        self.window_s, self.busy_share = window_s, busy_share
        self.lock, self.in_flight = threading.Lock(), 0
        self._spans: deque[tuple[float, float]] = deque()  # (start, end) of recent uses

    def enter(self) -> float:
        """Start one use, busy or not; its start, for `leave`."""
        with self.lock:
            self.in_flight += 1
            return time.perf_counter()

    def enter_unless_busy(self) -> float | None:
        """Start one use unless the model is busy; its start, or None (nothing started)."""
        with self.lock:
            if self._busy(time.perf_counter()):
                return None
            self.in_flight += 1
            return time.perf_counter()

    def leave(self, started: float) -> None:
        with self.lock:
            self.in_flight -= 1
            self._spans.append((started, time.perf_counter()))

    def busy(self) -> bool:
        with self.lock:
            return self._busy(time.perf_counter())

    def _busy(self, now: float) -> bool:
        if self.in_flight:
            return True
        while self._spans and self._spans[0][1] < now - self.window_s:
            self._spans.popleft()
        recent = sum(end - max(start, now - self.window_s) for start, end in self._spans)
        return recent >= self.busy_share * self.window_s


class SharedSTT:
    """The one Whisper every call shares. It tells a call when the model is busy, so the call skips optional work
    (speculative partials) before anyone's turn waits for it: busy while a transcription is in flight, and while
    the model has been busy more than `busy_share` of the last `window_s` (back-pressure under load)."""

    def __init__(self, stt: STT, window_s: float = 3.0, busy_share: float = 0.25) -> None:
        self.stt, self.load = stt, BusySpans(window_s, busy_share)
        self.work = {"transcriptions": 0, "wall_s": 0.0}  # wall_s: asked -> text, queueing included

    @property
    def in_flight(self) -> int:
        return self.load.in_flight

    def transcribe(self, audio: np.ndarray, vocabulary: Sequence[str] = (), id_digits: Sequence[int] = ()) -> str:
        started = self.load.enter()
        try:
            return transcribe_with(self.stt, audio, vocabulary, id_digits)
        finally:
            self.load.leave(started)
            with self.load.lock:
                self.work["transcriptions"] += 1
                self.work["wall_s"] += time.perf_counter() - started

    def busy(self) -> bool:
        """Optional transcriptions should wait: one is in flight, or the model was mostly busy lately."""
        return self.load.busy()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stt, name)


class SharedTurnModel:
    """The one end-of-turn model (Smart Turn) every call of a server shares. Its verdict only ever shortens a wait
    the transcript rules bound anyway, so under load it is skipped rather than queued for: `claim` refuses while an
    inference is in flight or the model was busy more than `busy_share` of the last `window_s`. At 40 calls on
    2 cores, scoring every pause took about 40 % of the servers' CPU and its p95 was worse than without it."""

    def __init__(self, model: EndOfTurn, window_s: float = 2.0, busy_share: float = 0.25) -> None:
        self.model, self.load = model, BusySpans(window_s, busy_share)
        self.work = {"scored": 0, "skipped": 0}

    def claim(self) -> float | None:
        """A start to hand back to `release` once this call's pause is scored, or None: skip the pause."""
        started = self.load.enter_unless_busy()
        with self.load.lock:
            self.work["scored" if started is not None else "skipped"] += 1
        return started

    def release(self, started: float) -> None:
        self.load.leave(started)

    def complete(self, audio: np.ndarray) -> float:
        return self.model.complete(audio)


def work_summary(stt: Any, tts: Any, turn: SharedTurnModel | None = None) -> str:
    """One log line: what speech-to-text, text-to-speech and the end-of-turn model did for every call since the
    server started."""
    model = getattr(stt, "stt", stt)
    model = getattr(model, "stt", model)  # under a BatchedSTT
    stt_work, shared, tts_work = getattr(model, "work", {}), getattr(stt, "work", {}), getattr(tts, "work", {})
    memo = memo_for(getattr(tts, "engine", tts))  # the clauses the voice said again from its memo
    n = max(1, shared.get("transcriptions", 0))
    windows, batches = stt_work.get("windows", 0), max(1, stt_work.get("batches", 0))
    syntheses = max(1, tts_work.get("syntheses", 0))
    return (f"speech work: {shared.get('transcriptions', 0)} transcriptions (mean {shared.get('wall_s', 0) / n:.3f} s "
            f"asked -> text), Whisper busy {stt_work.get('busy_s', 0.0):.1f} s for {windows} windows in "
            f"{stt_work.get('batches', 0)} batches (mean batch {windows / batches:.2f}); "
            f"{tts_work.get('syntheses', 0)} syntheses, TTS busy {tts_work.get('busy_s', 0.0):.1f} s "
            f"(mean wait {tts_work.get('waited_s', 0.0) / syntheses:.3f} s; "
            f"clauses reused {memo.work['reused'] if memo else 0} times)"
            + (f"; end of turn scored {turn.work['scored']} pauses, skipped {turn.work['skipped']}" if turn else ""))
