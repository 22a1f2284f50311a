"""Where the first clause of an answer is cut so the caller hears it sooner.

The caller hears nothing until the first clause is synthesised, and Piper's time grows with its length: "We're open
Monday to Friday from 8 in the morning to 6 in the evening," took ~200 ms here, its first five words ~70 ms. A long
first clause is cut before a word that starts a phrase (`loop.locale` PHRASE_STARTS: "from", "and", "at", ...),
once there are `HEAD_WORDS` spoken words before it and `TAIL_WORDS` after it, so neither part is a stub. A number
counts a word per digit, as the voice says it ("4567": four). The voice says the cut part as a phrase that goes on
(`voice.speech.spoken.SpokenTTS`), and the rest follows while it plays.
"""

from __future__ import annotations

import re

import numpy as np

from loop.locale import DEFAULT_WORDS

HEAD_WORDS = 4  # spoken words before the cut, at least
TAIL_WORDS = 3  # spoken words after the phrase's first word, at least (or the clause is said whole)
_WORD = re.compile(r"\S+")
_OPEN_END = re.compile(r"[^.,!?;:\u2026\"'\u201d\u2019)\]]$")  # text that ends without punctuation: a cut phrase


def spoken_words(word: str) -> int:
    """How many words the voice says for this written one: a digit each for a number, else one."""
    return max(1, sum(c.isdigit() for c in word))


def head_cut(text: str, closed: bool, starts: tuple[str, ...] = tuple(DEFAULT_WORDS.PHRASE_STARTS)) -> int | None:
    """Where to cut `text` (the first clause so far; `closed`: it has ended, else more may come): the index of the
    phrase-starting word to cut before, or None (no cut; while not `closed`, maybe later)."""
    words = list(_WORD.finditer(text))
    if not closed and words and words[-1].end() == len(text):
        words.pop()  # the last word may still be growing
    said = 0
    for i, word in enumerate(words):
        if said >= HEAD_WORDS and word.group().lower() in starts:
            tail = sum(spoken_words(w.group()) for w in words[i + 1:])
            return word.start() if tail >= TAIL_WORDS else None
        said += spoken_words(word.group())
    return None


def is_cut_phrase(text: str) -> bool:
    """A clause that stops without punctuation: the first part of a clause cut for the voice (or at a length cap)."""
    return bool(_OPEN_END.search(text.strip()))


CUT_PAUSE_S = 0.12  # the pause kept after a cut phrase: a breath between phrases, not the end of a sentence
_QUIET = 400  # int16 level below which the voice is silent


def trim_pause(audio: np.ndarray, keep_s: float = CUT_PAUSE_S, rate: int = 16000) -> np.ndarray:
    """`audio` without the silence after its last sound beyond `keep_s` (the voice pauses ~0.15-0.3 s after a
    phrase it says as ending on a comma; inside a clause that pause is too long)."""
    loud = np.flatnonzero(np.abs(audio.astype(np.int32)) > _QUIET)
    if not len(loud):
        return audio
    return audio[: min(len(audio), int(loud[-1]) + 1 + int(keep_s * rate))]
