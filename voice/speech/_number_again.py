"""A number said in one go late in a long window, heard again from just before it.

Whisper tiny.en drops digits of an id said fluently after a few sentences ("My power has gone off. Can you report
it? My account number is four zero two one three." -> "... 4023."); the same audio from a second before the
number it hears whole ("account number is 40213."). So when a window's last number of three digits or more starts
late in it, the audio from `LEAD_S` before that number is decoded again on its own, and a number it hears there
that holds every digit of the first one in order, and one or two more, replaces it: only digits dropped are put
back, never a different number chosen.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from contextvars import ContextVar
from types import ModuleType

import numpy as np

from loop.locale import DEFAULT_WORDS
from voice.audio import SAMPLE_RATE
from voice.speech._dictated_digits import Word, _number_runs, splice
from voice.speech.caller_digits import join_spoken_digits

LATE_S = 1.5  # a number starting this far into its window has enough before it to lose digits to
LEAD_S = 1.0  # audio kept before the number when it is heard again (a word or two of its sentence)
MIN_DIGITS = 3  # an id, not "2 nights"
_AN_ID = re.compile(rf"\d{{{MIN_DIGITS},}}")
_STOPS = (".", "?", "!")
HEARING_AGAIN: ContextVar[bool] = ContextVar("voiceloop_number_heard_again", default=False)  # no third time
ENABLED = os.environ.get("VOICELOOP_NUMBER_AGAIN", "1") == "1"  # for measuring without it


def _digits(words: list[Word], language: ModuleType) -> str:
    return "".join(re.findall(r"\d", join_spoken_digits(" ".join(w.text for w in words), words=language)))


def _put_back(old: str, new: str) -> bool:
    """`new` is `old` with one or two digits it had dropped (every digit of `old`, in order)."""
    if not 1 <= len(new) - len(old) <= 2:
        return False
    rest = iter(new)
    return all(d in rest for d in old)


def hear_number_again(text: str, words: Callable[[], list[Word]], window: np.ndarray,
                      decode: Callable[[np.ndarray], str], language: ModuleType = DEFAULT_WORDS) -> str:
    """`text` (a window's, with its `words` and their times) with a late number's dropped digits put back by
    decoding the audio from shortly before it (`decode`: the window's engine on that part alone; `language`: the
    callers' pack)."""
    if not ENABLED or HEARING_AGAIN.get() or not _AN_ID.search(join_spoken_digits(text, words=language)):
        return text
    heard = words()
    runs = [run for run in _number_runs(heard, language) if len(_digits(run, language)) >= MIN_DIGITS]
    if not runs or runs[-1][0].start_s < LATE_S:
        return text
    run = runs[-1]
    old = _digits(run, language)
    start = max(0, int((run[0].start_s - LEAD_S) * SAMPLE_RATE))
    token = HEARING_AGAIN.set(True)
    try:
        again = _AN_ID.findall(join_spoken_digits(decode(window[start:]), words=language))
    finally:
        HEARING_AGAIN.reset(token)
    better = next((n for n in reversed(again) if _put_back(old, n)), None)
    if better is None:
        return text
    later = min([w.start_s for w in heard if w.start_s > run[-1].end_s], default=1e9)
    # splice drops the sentence's full stop with the old digits ("4023." or "4023" "."): the new ones carry it
    follows = next((w.text.strip() for w in heard if w.start_s >= run[-1].end_s), "")
    end = follows if follows in _STOPS else run[-1].text.strip()[-1:]
    digits = [*better[:-1], better[-1] + (end if end in _STOPS else "")]
    return splice(heard, [((run[0].start_s, run[-1].end_s, later), digits)], language)
