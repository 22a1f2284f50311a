"""Spanish: a word's sound as its spelling shows it, so a word Whisper heard for one of the call's words can
propose that word; the audio then decides (voice/speech/_near_terms.py). Labelled: tests/data/sound_alikes.tsv."""

from __future__ import annotations

import re

from loop.locale._text import unaccented

# spellings that sound as one in Spanish (seseo: "c" before e/i as "s", as most callers say it)
_SAME_SOUND = (("ch", "X"), ("qu", "k"), ("c(?=[ei])", "s"), ("c", "k"), ("z", "s"), ("v", "b"), ("ll", "y"),
               ("h", ""), ("g(?=[ei])", "j"), ("x", "ks"))


def sound_key(word: str) -> str:
    """The consonants a word sounds with, vowels kept only at its start: "Valencia" and "Balensia" are alike."""
    said = re.sub(r"[^a-zñ]", "", unaccented(word.lower()))
    for spelling, sound in _SAME_SOUND:
        said = re.sub(spelling, sound, said)
    said = re.sub(r"(.)\1+", r"\1", said)
    return said[:1] + re.sub(r"[aeiouy]", "", said[1:]) if said else ""
