"""The short clauses answers open with ("Sure,", "Just to confirm:", "Done:", "Sorry,", "You're welcome."),
synthesised once and their audio said again.

Most answers begin with one of a handful of such clauses, and the caller hears nothing until the first clause is
synthesised (~40 ms of Piper here, more on a busy machine). A clause of a few words without a digit in it (a number
is an answer's own) is kept after its first synthesis, the most recently said `MAX_KEPT` of them, for every call
that shares the engine; anything else is synthesised as it comes. Kept audio is the voice's own first reading of
the clause, so a caller hears the same "Sure," each time, as from any recorded prompt.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

MAX_WORDS = 3  # "Just to confirm:", "You're welcome.", "I'm sorry,": an opener, not an answer's content
MAX_CHARS = 32
MAX_KEPT = 256


def is_stock(text: str) -> bool:
    """A clause short enough to be a stock opener, with no number in it."""
    text = text.strip()
    return bool(text) and len(text) <= MAX_CHARS and len(text.split()) <= MAX_WORDS and not re.search(r"\d", text)


class StockPhrases:
    """Any TTS engine, with its stock clauses (`is_stock`) synthesised once; every other attribute is the
    engine's."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine.engine if isinstance(engine, StockPhrases) else engine
        self._kept: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()  # calls synthesise on worker threads
        self.reused = 0

    def synthesize(self, text: str) -> np.ndarray:
        if not is_stock(text):
            return self.engine.synthesize(text)
        key = text.strip()
        with self._lock:
            audio = self._kept.get(key)
            if audio is not None:
                self._kept.move_to_end(key)
                self.reused += 1
        if audio is None:
            audio = self.engine.synthesize(text)
            if len(audio):  # a failed synthesis is not kept
                with self._lock:
                    self._kept[key] = audio
                    while len(self._kept) > MAX_KEPT:
                        self._kept.popitem(last=False)
        return audio.copy()  # the caller's own copy: the kept audio never changes

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)
