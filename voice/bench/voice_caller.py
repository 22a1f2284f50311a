"""The caller's side of a `voiceloop bench voice` call (`voice/bench/voice.py`): each line of a call script as
audio with its speech frames, and when it is spoken: a line that answers the agent waits until the agent has
finished speaking, a line meant to overlap it keeps its place."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from voice.audio import FRAME_S, load_audio
from voice.audio import FRAME_SAMPLES as FRAME
from voice.call.turns import TurnConfig
from voice.testing.scripted_call import Fixture

REPLY_GAP_S = 6.0  # a caller line this long after the previous one answers the agent (see Caller)
MAX_WAIT_S = 40.0  # ... and waits at most this long past its scheduled time for the agent to finish


def _line_audio(fixture: Fixture, u: dict[str, Any]) -> np.ndarray:
    audio = load_audio(fixture.audio_path(u["audio"])).astype(np.float64) * 10 ** (u.get("gain_db", 0) / 20)
    return np.clip(audio, -32768, 32767).astype(np.int16)


def _line_spans(audio: np.ndarray, vad: Any, threshold: float) -> list[tuple[float, float]]:
    """Speech frames of one recording, relative to its start."""
    vad.reset()
    spans = []
    for j in range(-(-len(audio) // FRAME)):
        frame = audio[j * FRAME:(j + 1) * FRAME]
        if vad.prob(np.pad(frame, (0, FRAME - len(frame)))) >= threshold:
            spans.append((j * FRAME_S, (j + 1) * FRAME_S))
    vad.reset()
    return spans


@dataclass
class Line:
    audio: np.ndarray
    at: float  # earliest start, as the fixture schedules it
    waits: bool  # answers the agent: held until the agent has finished speaking
    spans: list[tuple[float, float]]  # speech frames, relative to the line's start
    start: float | None = None  # when it was actually spoken, in call time


class Caller:
    """The caller's side of a call, frame by frame.

    A line that answers the agent (it starts `REPLY_GAP_S` or more after the previous one, or says
    `waits_for_agent: true`) is held until the agent has finished speaking, and never starts before the
    fixture's time: a slow agent is not talked over by a caller who has not heard the question yet. Lines meant
    to overlap the agent (barge-in, backchannels) keep their place. With background noise, or with no line that
    waits, the fixture's own mix is fed unchanged."""

    def __init__(self, fixture: Fixture, vad: Any) -> None:
        threshold = TurnConfig(**fixture.data.get("turns", {})).threshold
        self.lines: list[Line] = []
        prev = None
        for u in fixture.data["caller"]:
            audio = _line_audio(fixture, u)
            at = float(u["at"])
            waits = bool(u.get("waits_for_agent", prev is not None and at - prev >= REPLY_GAP_S))
            self.lines.append(Line(audio, at, waits, _line_spans(audio, vad, threshold)))
            prev = at
        self.static = fixture.caller_audio() if fixture.data.get("noise") or not any(
            ln.waits for ln in self.lines) else None
        if self.static is not None:
            for ln in self.lines:
                ln.start = ln.at
        self.tail_s = float(fixture.data.get("tail_s", 4))

    def frame(self, i: int, agent_quiet: Callable[[], bool]) -> np.ndarray:
        if self.static is not None:
            chunk = self.static[i * FRAME:(i + 1) * FRAME]
            return np.pad(chunk, (0, FRAME - len(chunk)))
        t = i * FRAME_S
        for k, ln in enumerate(self.lines):
            due = ln.start is None and t >= ln.at and (k == 0 or self.lines[k - 1].start is not None)
            if due and (not ln.waits or t - ln.at >= MAX_WAIT_S or agent_quiet()):
                ln.start = t
        out = np.zeros(FRAME, np.int32)
        for ln in self.lines:
            if ln.start is not None:
                off = i * FRAME - round(ln.start / FRAME_S) * FRAME
                if 0 <= off < len(ln.audio):
                    chunk = ln.audio[off:off + FRAME]
                    out[:len(chunk)] += chunk
        return np.clip(out, -32768, 32767).astype(np.int16)

    def spans(self) -> list[tuple[float, float]]:
        return sorted((ln.start + a, ln.start + b) for ln in self.lines if ln.start is not None for a, b in ln.spans)

    def waiting_for(self) -> Line | None:
        """The next line that has not been spoken yet."""
        return next((ln for ln in self.lines if ln.start is None), None)

    def last_speech_s(self) -> float | None:
        """The end of the caller's last word, once every line has been spoken."""
        if self.waiting_for() is not None:
            return None
        return max((end for _, end in self.spans()), default=0.0)

    def end_s(self) -> float | None:
        """Where the recording (with its silent tail) ends, once every line has been spoken."""
        if self.waiting_for() is not None:
            return None
        if self.static is not None:
            return len(self.static) / 16000
        return max(ln.start + len(ln.audio) / 16000 for ln in self.lines) + self.tail_s
