"""Fast stand-ins for the speech models, for unit tests of the session logic above them. The real
models are exercised by the fixture, STT/VAD/TTS and real-time tests."""

from __future__ import annotations

import numpy as np

from voice.audio import FRAME_SAMPLES as FRAME  # 512 samples: defined once, in voice/audio.py


class LoudnessVAD:
    """Speech is any frame louder than a threshold."""

    def prob(self, frame: np.ndarray) -> float:
        return 1.0 if np.sqrt(np.mean(frame.astype(np.float64) ** 2)) > 500 else 0.0

    def reset(self) -> None:
        pass


class ScriptedSTT:
    """Each burst of speech in the caller track is one utterance; a partial is the prefix of its text in
    proportion to how much of the burst was heard. Bursts are matched by their length in frames."""

    def __init__(self, texts_by_frames: dict[int, str]) -> None:
        self.texts = texts_by_frames

    def transcribe(self, audio: np.ndarray) -> str:
        voiced = int(sum(LoudnessVAD().prob(audio[i:i + FRAME]) for i in range(0, len(audio), FRAME)))
        if not voiced:
            return ""
        full = min((n for n in self.texts if n >= voiced - 2), key=lambda n: n - voiced, default=max(self.texts))
        words = self.texts[full].split()
        return " ".join(words[: max(1, round(len(words) * min(1.0, voiced / full)))])


class ToneTTS:
    """80 ms of tone per word, so heard-word arithmetic is easy."""

    def synthesize(self, text: str) -> np.ndarray:
        n = len(text.split()) * 1280
        return (3000 * np.sin(np.arange(n) * 0.1)).astype(np.int16)


class WordChunker:
    def __init__(self) -> None:
        self.buf = ""

    def push(self, delta: str) -> list[str]:
        self.buf += delta
        if self.buf.rstrip().endswith((".", "?", "!")):
            out, self.buf = [self.buf.strip()], ""
            return out
        return []

    def flush(self) -> list[str]:
        out = [self.buf.strip()] if self.buf.strip() else []
        self.buf = ""
        return out


def speech(frames: int) -> np.ndarray:
    return (4000 * np.sin(np.arange(frames * FRAME) * 0.05)).astype(np.int16)


def track(*parts: tuple[float, int], total_s: float) -> np.ndarray:
    """A caller track with bursts of `frames` speech frames starting at the given seconds."""
    out = np.zeros(int(total_s * 16000), np.int16)
    for at, frames in parts:
        start = int(at * 16000)
        out[start:start + frames * FRAME] = speech(frames)
    return out
