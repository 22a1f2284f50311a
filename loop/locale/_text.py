"""Text helpers every language pack and every reader of a caller's words share."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from functools import partial
from types import ModuleType
from typing import Protocol


def unaccented(text: str) -> str:
    """`text` without accents ("sí" -> "si", "sábado" -> "sabado"): speech-to-text writes them one time and not
    the next, so answers and the pending call's values are compared without them."""
    decomposed = unicodedata.normalize("NFD", text)
    kept = [ch for i, ch in enumerate(decomposed) if not unicodedata.combining(ch)
            or (ch == "\u0303" and decomposed[i - 1] in "nN")]  # "ñ" is a letter of its own, not an accent
    return unicodedata.normalize("NFC", "".join(kept))


def plain(word: str) -> str:
    """A word as readers compare it: lower case, no apostrophes, no accents ("That's" -> "thats")."""
    return unaccented(word.lower().replace("'", ""))


def stem(word: str, suffixes: tuple[str, ...], undouble: bool) -> str:
    """A crude stem, the same on both sides of a comparison, by the language's suffixes (`STEM_SUFFIXES`): "booking",
    "booked", "books" -> "book"; "cancellation", "cancelled" -> "cancel" (`undouble`: a doubled last consonant
    is one, as English spells it)."""
    w = plain(word)
    for suffix in suffixes:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if undouble and suffix not in ("e", "s", "es") and len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiou":
                w = w[:-1]  # "cancell" -> "cancel", "transferr" -> "transfer"
            break
    return w


def stemmer(words: ModuleType) -> Callable[[str], str]:
    """`stem` by one language's suffixes (its pack's STEM_SUFFIXES, STEM_UNDOUBLE)."""
    return partial(stem, suffixes=tuple(words.STEM_SUFFIXES), undouble=bool(words.STEM_UNDOUBLE))


def without_enclitic(word: str, words: ModuleType) -> str:
    """`word` less a pronoun its language writes onto a verb ("cambiarles" -> "cambiar"; the pack's ENCLITICS),
    leaving at least three letters; else `word`."""
    for clitic in sorted(words.ENCLITICS, key=len, reverse=True):
        if word.endswith(clitic) and len(word) - len(clitic) >= 3:
            return word[: -len(clitic)]
    return word


class SpokenRules(Protocol):
    """One language's spoken form (its pack's `spoken_form()`): numbers, symbols and abbreviations as said, over
    text without markup ("$20" -> "twenty dollars")."""

    def speak(self, text: str) -> str: ...
