"""The speech models one server shares across calls, wrapped for concurrent use from worker threads."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from voice.engines import STT, TTS


class LockedTTS:
    """The shared TTS engine, one synthesis at a time (calls synthesise from worker threads)."""

    def __init__(self, tts: TTS) -> None:
        self.tts, self.lock = tts, threading.Lock()

    def synthesize(self, text: str) -> np.ndarray:
        with self.lock:
            return self.tts.synthesize(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.tts, name)


class SharedSTT:
    """The one Whisper every call shares, counting transcriptions in flight so a call can tell the
    model is busy and skip optional work (speculative partials) under load."""

    def __init__(self, stt: STT) -> None:
        self.stt, self.lock, self.in_flight = stt, threading.Lock(), 0

    def transcribe(self, audio: np.ndarray) -> str:
        with self.lock:
            self.in_flight += 1
        try:
            return self.stt.transcribe(audio)
        finally:
            with self.lock:
                self.in_flight -= 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stt, name)
