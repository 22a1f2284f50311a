"""Perfect hearing for the outside-agents evaluation (`eval_agents.py run --stt oracle`): each audio window a call
transcribes is found in the caller's track, and the words of the lines it covers are returned as the call's
author wrote them (a line heard in part gives that share of its words). What the product does with the right
words, apart from what Whisper makes of synthetic voices. An evaluation tool, never a call's engine."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

NEEDLE = 256  # samples compared to find a window in the track, around its loudest one


class OracleSTT:
    def __init__(self, fallback: object) -> None:
        self.fallback = fallback  # what hears a window not found in the track
        self.track = np.zeros(0, np.int16)
        self.lines: list[tuple[int, int, list[str]]] = []  # start, end (samples), words
        self.missed = 0

    def set_call(self, track: np.ndarray, spans: Sequence[tuple[int, int, str]]) -> None:
        """`spans`: where each line's speech starts and ends in `track` (samples), and its words."""
        self.track = track
        self.lines = [(start, max(end, start + 1), text.split()) for start, end, text in spans]

    def _offset(self, audio: np.ndarray) -> int | None:
        """Where `audio` starts in the track: its loudest stretch, matched sample for sample."""
        if not len(audio) or not audio.any():
            return None
        peak = int(np.argmax(np.abs(audio.astype(np.int32))))
        first = max(0, min(peak - NEEDLE // 2, len(audio) - NEEDLE))
        needle = audio[first:first + NEEDLE]
        for at in np.flatnonzero(self.track == needle[0]):
            if np.array_equal(self.track[at:at + len(needle)], needle):
                return int(at) - first
        return None

    def transcribe(self, audio: np.ndarray, vocabulary: Sequence[str] = ()) -> str:
        audio = np.asarray(audio)
        offset = self._offset(audio)
        if offset is None:
            self.missed += 1
            return self.fallback.transcribe(audio)  # type: ignore[attr-defined]
        lo, hi = offset, offset + len(audio)
        heard = []
        for start, end, words in self.lines:  # the words of each line's stretch inside the window, pro rata
            first, last = (max(start, lo) - start) / (end - start), (min(end, hi) - start) / (end - start)
            if last > first:
                heard += words[int(first * len(words)):len(words) if last > 0.97 else round(last * len(words))]
        return " ".join(heard)
