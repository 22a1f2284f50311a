"""The pack's `sound_key`: a heard word proposes one of the call's words only when they sound alike (the audio
decides between them afterwards). Labelled: tests/data/sound_alikes.tsv; the dev rows must all hold, the held-out
rows are reported and must mostly hold (5/8 when written: "Stephen" is not "Steven" to it, "Garret" is
"Gareth", Spanish "x" is "ks"; a miss only leaves a word as heard)."""

from __future__ import annotations

import pytest

from loop import locale
from tests.helpers import labelled

ROWS = [(language, *rest.split("\t")) for language, rest in labelled("sound_alikes.tsv")]


def _alike(language: str, heard: str, word: str) -> bool:
    key = locale.get(language).sound_key
    return key(heard) == key(word)


@pytest.mark.parametrize(("language", "heard", "word", "alike"),
                         [(lang, heard, word, alike) for lang, half, heard, word, alike in ROWS if half == "dev"])
def test_words_sound_alike_as_labelled(language: str, heard: str, word: str, alike: str) -> None:
    assert _alike(language, heard, word) == (alike == "yes")


def test_the_held_out_rows_mostly_hold() -> None:
    held_out = [(lang, heard, word, alike) for lang, half, heard, word, alike in ROWS if half == "test"]
    right = sum(_alike(lang, heard, word) == (alike == "yes") for lang, heard, word, alike in held_out)
    assert right >= 0.6 * len(held_out), f"{right}/{len(held_out)}"  # 5/8 when written (a proposal only)
