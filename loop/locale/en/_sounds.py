"""English: a word's sound as its spelling shows it, roughly, so a word Whisper heard for one of the call's words
("calling" for "Colin") can propose that word; the audio then decides between them (voice/speech/_near_terms.py).
Labelled examples: tests/data/sound_alikes.tsv."""

from __future__ import annotations

import re

# spellings that sound as one: applied in order, longest first
_SAME_SOUND = (("ph", "f"), ("ck", "k"), ("gh", ""), ("wh", "w"), ("kn", "n"), ("wr", "r"), ("ing", "in"),
               ("tch", "ch"), ("c(?=[eiy])", "s"), ("c", "k"), ("q", "k"), ("x", "ks"), ("z", "s"), ("dg", "j"))


def sound_key(word: str) -> str:
    """The consonants a word sounds with, doubled ones once, vowels kept only at its start: "Colin" and "calling"
    are both "kln", "Maggie" "mg", "Mary" "mr"."""
    said = re.sub(r"[^a-z]", "", word.lower())
    for spelling, sound in _SAME_SOUND:
        said = re.sub(spelling, sound, said)
    said = re.sub(r"(.)\1+", r"\1", said)
    return said[:1] + re.sub(r"[aeiouyhw]", "", said[1:]) if said else ""
