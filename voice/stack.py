"""The real offline speech stack, loaded once: Silero VAD, Whisper STT, a TTS engine and the clause chunker."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any


@dataclass
class SpeechStack:
    vad: Any
    stt: Any
    tts: Any
    chunker: type
    load_s: float = 0.0


def load_stack(stt_model: str = "tiny.en", tts: str = "auto", threads: int = 1) -> SpeechStack:
    from voice.stt import WhisperSTT
    from voice.tts import ClauseChunker, load_tts
    from voice.vad import SileroVAD

    started = time.perf_counter()
    stack = SpeechStack(
        SileroVAD(threads=threads), WhisperSTT(stt_model, threads=threads), load_tts(tts), ClauseChunker
    )
    stack.load_s = time.perf_counter() - started
    return stack
