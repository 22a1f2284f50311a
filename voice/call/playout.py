"""Agent audio on its way to the caller, and the cursor of what the caller has actually heard."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from voice.audio import FRAME_SAMPLES as FRAME  # 32 ms at 16 kHz
from voice.audio import SAMPLE_RATE


@dataclass
class Segment:
    """One synthesised clause: its words and its audio."""

    text: str
    audio: np.ndarray
    kind: str = "reply"  # reply | prompt (approval question) | greeting
    sent: int = 0  # samples handed to the transport
    heard: int = 0  # samples the transport confirmed as played

    def heard_words(self) -> list[str]:
        # Words are assumed evenly spread over the clause's audio; a word counts once half of it was heard.
        words = self.text.split()
        if not words or len(self.audio) == 0:
            return []
        fraction = self.heard / len(self.audio)
        return words[: int(fraction * len(words) + 0.5)]


class PlayoutCursor:
    """Queue of agent speech. `next_frame` feeds the transport; `advance` records what it played."""

    def __init__(self) -> None:
        self.queue: deque[Segment] = deque()
        self.done: list[Segment] = []
        self.paused = False

    def enqueue(self, text: str, audio: np.ndarray, kind: str = "reply") -> None:
        self.queue.append(Segment(text, audio, kind))

    @property
    def speaking(self) -> bool:
        """Agent audio the caller has not heard yet, whether still here or already in the transport's buffer."""
        return any(s.heard < len(s.audio) for s in self.queue)

    def unheard_samples(self) -> int:
        """Agent audio queued that the caller has not heard yet (what plays before anything synthesised now)."""
        return sum(len(s.audio) - s.heard for s in self.queue)

    def next_frame(self) -> np.ndarray | None:
        """The next 32 ms of agent audio, or None when paused or nothing is queued."""
        if self.paused:
            return None
        for seg in self.queue:
            if seg.sent < len(seg.audio):
                chunk = seg.audio[seg.sent : seg.sent + FRAME]
                seg.sent += len(chunk)
                return chunk if len(chunk) == FRAME else np.pad(chunk, (0, FRAME - len(chunk)))
        return None

    def advance(self, samples: int) -> None:
        """The transport reports `samples` more agent audio as played to the caller."""
        while samples > 0 and self.queue:
            seg = self.queue[0]
            step = min(samples, seg.sent - seg.heard)
            if step <= 0:
                break
            seg.heard += step
            samples -= step
            if seg.heard >= len(seg.audio):
                self.done.append(self.queue.popleft())

    def rewind_unheard(self) -> None:
        """After a pause, resume from what was actually heard (the transport's buffer was cleared)."""
        for seg in self.queue:
            seg.sent = seg.heard

    def drop_unsent(self, kind: str) -> None:
        """Forget the clauses of `kind` not yet handed to the transport (the one playing finishes)."""
        self.queue = deque(s for s in self.queue if s.kind != kind or s.sent)

    def clear(self) -> None:
        """Barge-in: drop everything not yet heard; keep the record of what was."""
        self.done.extend(s for s in self.queue if s.heard)
        self.queue.clear()
        self.paused = False

    def heard_s(self, kind: str = "reply") -> float:
        """Seconds of speech of this kind the transport confirmed as played."""
        return sum(s.heard for s in self.done + list(self.queue) if s.kind == kind) / SAMPLE_RATE

    def heard_text(self, kind: str = "reply") -> str:
        return " ".join(w for s in self.done + list(self.queue) if s.kind == kind for w in s.heard_words())

    def reset(self) -> None:
        self.queue.clear()
        self.done.clear()
        self.paused = False
