"""The speech models one server shares across calls, wrapped for concurrent use from worker threads."""

from __future__ import annotations

import threading
from typing import Any


class LockedTTS:
    """The shared TTS engine, one synthesis at a time (calls synthesise from worker threads)."""

    def __init__(self, tts: Any) -> None:
        self.tts, self.lock = tts, threading.Lock()

    def synthesize(self, text: str) -> Any:
        with self.lock:
            return self.tts.synthesize(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.tts, name)


class SharedSTT:
    """The one Whisper every call shares, counting transcriptions in flight so a call can tell the
    model is busy and skip optional work (speculative partials) under load."""

    def __init__(self, stt: Any) -> None:
        self.stt, self.lock, self.in_flight = stt, threading.Lock(), 0

    def transcribe(self, audio: Any) -> str:
        with self.lock:
            self.in_flight += 1
        try:
            return self.stt.transcribe(audio)
        finally:
            with self.lock:
                self.in_flight -= 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stt, name)
