"""One reply the caller waits for: its generation, its clauses, what of it was played and heard, and
the marks its latency is computed from. A new reply starts at each caller turn and after an approval answer;
a reply the caller cut off is dropped whole (its generation no longer matches)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Protocol

from voice.call.playout import PlayoutCursor
from voice.call.state import TurnRecord

LATENCY_PARTS = ("endpointing", "stt", "llm_first_token", "first_clause", "tts_first_audio")


class Chunker(Protocol):
    """Streamed text in, speakable clauses out."""

    def push(self, delta: str) -> list[str]: ...

    def flush(self) -> list[str]: ...


@dataclass
class Reply:
    generation: int
    chunker: Chunker
    record: TurnRecord | None = None  # None for the greeting
    playout: PlayoutCursor = field(default_factory=PlayoutCursor)
    marks: dict[str, float] = field(default_factory=dict)
    synthesising: int = 0  # clauses sent to TTS whose audio has not come back

    @property
    def busy(self) -> bool:
        return self.synthesising > 0 or self.playout.speaking

    @classmethod
    def start(cls, generation: int, chunker_cls: Callable[[], Chunker], record: TurnRecord | None,
              now: float) -> Reply:
        return cls(generation, chunker_cls(), record, marks={"run_start": now})

    def restart(self, chunker: Chunker, now: float) -> None:
        """The run goes on after an approval: what it says next is measured as a new answer."""
        self.chunker, self.marks = chunker, {"run_start": now}

    def mark(self, name: str, now: float) -> None:
        self.marks.setdefault(name, now)

    @property
    def speaking(self) -> bool:
        return self.playout.speaking

    def heard_text(self) -> str:
        return self.playout.heard_text("reply")

    def record_latency(self) -> None:
        """At the first reply audio: the parts of this turn's voice-to-voice latency, in ms."""
        m, rec = self.marks, self.record
        if rec is None or "voice_to_voice" in rec.latency_ms:
            return
        if not {"run_start", "first_token", "first_clause", "first_audio_ready"} <= m.keys():
            return
        lat = rec.latency_ms
        lat["llm_first_token"] = round((m["first_token"] - m["run_start"]) * 1000, 1)
        lat["first_clause"] = round((m["first_clause"] - m["first_token"]) * 1000, 1)
        lat["tts_first_audio"] = round((m["first_audio_ready"] - m["first_clause"]) * 1000, 1)
        if all(p in lat for p in LATENCY_PARTS):
            lat["voice_to_voice"] = round(sum(lat[p] for p in LATENCY_PARTS), 1)


def chunkers_in(chunker_cls: Callable[[], Chunker], words: ModuleType) -> Callable[[], Chunker]:
    """Chunkers that cut a first phrase before the reply language's phrase-starting words, where the chunker takes
    them (`ClauseChunker(phrase_starts=...)`); another chunker as it is."""
    try:
        takes = "phrase_starts" in inspect.signature(chunker_cls).parameters
    except (TypeError, ValueError):
        takes = False
    return functools.partial(chunker_cls, phrase_starts=tuple(words.PHRASE_STARTS)) if takes else chunker_cls
