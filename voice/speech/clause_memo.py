"""Clauses an agent says again and again, synthesised once per voice and then the same audio again.

An approval question opens with "Just to confirm:", a refusal with "Okay,", a goodbye is "You're welcome." Piper
takes ~50 ms for such a clause on one core here, and when it is the first clause of an answer the caller waits
that long in silence, every time. A voice's memo keeps short clauses without digits (what recurs across turns and
calls; an order number or an amount rarely does), and the greeting whatever its length. It is shared by every
call on the same engine object: one per process for a server's pooled voices, one per loaded stack otherwise.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

MAX_CHARS = 48  # longer clauses say something particular to this turn
MAX_CLAUSES = 256
MAX_SAMPLES = 16000 * 600  # ten minutes of 16 kHz audio, ~19 MB: the memo never grows past it
_DIGIT = re.compile(r"\d")


def recurs(text: str) -> bool:
    """A clause worth keeping: short, and nothing in it particular to one caller (no digits)."""
    return 0 < len(text.strip()) <= MAX_CHARS and not _DIGIT.search(text)


class ClauseMemo:
    """Synthesised audio by clause text, least recently used first out; thread-safe."""

    def __init__(self, max_clauses: int = MAX_CLAUSES, max_samples: int = MAX_SAMPLES) -> None:
        self.max_clauses, self.max_samples = max_clauses, max_samples
        self._audio: OrderedDict[str, np.ndarray] = OrderedDict()
        self._samples = 0
        self._lock = threading.Lock()
        self.work = {"reused": 0, "kept": 0}

    def __contains__(self, text: str) -> bool:
        with self._lock:
            return text in self._audio

    def synthesize(self, text: str, synthesize: Callable[[str], np.ndarray], keep: bool) -> np.ndarray:
        """`text`'s audio: the kept copy when there is one, else `synthesize(text)`, kept if `keep` (the clause
        recurs, or it is the greeting). The caller gets its own copy: the kept audio never changes."""
        with self._lock:
            kept = self._audio.get(text)
            if kept is not None:
                self._audio.move_to_end(text)
                self.work["reused"] += 1
                return kept.copy()
        engine = getattr(synthesize, "__self__", None)
        fallbacks = getattr(engine, "fallbacks", 0)
        audio = synthesize(text)
        if getattr(engine, "fallbacks", 0) != fallbacks:  # a stand-in voice said it (voice/speech/remote.py):
            keep = False  # the real voice says it again once its server answers
        if keep and 0 < len(audio) <= self.max_samples:
            self._keep(text, audio.copy())
        return audio

    def _keep(self, text: str, audio: np.ndarray) -> None:
        with self._lock:
            if text in self._audio:
                return
            self._audio[text] = audio
            self._samples += len(audio)
            self.work["kept"] += 1
            while len(self._audio) > self.max_clauses or self._samples > self.max_samples:
                _, dropped = self._audio.popitem(last=False)
                self._samples -= len(dropped)


_MEMOS: weakref.WeakKeyDictionary[Any, ClauseMemo] = weakref.WeakKeyDictionary()
_MEMOS_LOCK = threading.Lock()


def memo_for(engine: Any) -> ClauseMemo | None:
    """The memo of this engine object (made on first use), shared by every call that speaks through it; None for
    an engine that cannot be referenced weakly (nothing is kept for it)."""
    with _MEMOS_LOCK:
        try:
            memo = _MEMOS.get(engine)
            if memo is None:
                memo = _MEMOS[engine] = ClauseMemo()
        except TypeError:
            return None
    return memo


def opening_clauses(words: ModuleType, chunker: Callable[[], Any]) -> list[str]:
    """The first clause of each of a language's fixed lines (`loop.locale`), where it holds no blank to fill:
    "Just to confirm:", "Okay,", "Sorry,", "Sure,". An answer that is one of these lines is heard once that
    clause is ready; the rest is synthesised while it plays."""
    out: list[str] = []
    for name in dir(words):
        line = getattr(words, name)
        if not name.isupper() or not isinstance(line, str) or " " not in line.strip():
            continue
        first = first_clause(line, chunker)
        if first and "{" not in first and recurs(first) and first not in out:
            out.append(first)
    return out


def first_clause(line: str, chunker: Callable[[], Any]) -> str:
    """The first clause of `line` as a reply's chunker hands it to the voice."""
    one = chunker()
    clauses = [*one.push(line), *one.flush()]
    return clauses[0] if clauses else ""
