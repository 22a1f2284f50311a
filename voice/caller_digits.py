"""Numbers a caller dictated, put back together before the model reads the turn.

Whisper writes an id read digit by digit in pieces: "4 5 6 7", "12, 34", "45-67", or in words ("four five six
seven"). A small model given the pieces looks up "12" or asks for the number again; given "4567" it calls the
tool. Only runs of short digit groups are joined (each group 1-3 digits, 3 to 12 digits in all), never an amount
("$20 30", "20 30 dollars") or a time ("3 30 pm"), and never numbers in separate sentences.
"""

from __future__ import annotations

import re

from loop.speakable import join_digit_words

_SEP = r"(?:,?\s+|\s*-\s*)"
_GROUPS = re.compile(rf"(?<![$\d.,])\b\d{{1,3}}(?:{_SEP}\d{{1,3}})+\b(?![.,]?\d)")
_UNIT = re.compile(r"\s*(?:dollars?|bucks|cents?|percent|%|pounds?|euros?|[ap]\.?m\b|o'clock|minutes?|hours?|days?"
                   r"|weeks?|months?|years?)", re.IGNORECASE)


def _join_groups(m: re.Match[str]) -> str:
    text = m.group(0)
    if _UNIT.match(m.string, m.end()):
        return text  # an amount, not an id
    digits = re.sub(r"\D", "", text)
    return digits if 3 <= len(digits) <= 12 else text


def join_spoken_digits(text: str) -> str:
    """"It's 4 5 6 7." -> "It's 4567."; "order 12, 34" -> "order 1234"; "four five six seven" -> "4567"."""
    return _GROUPS.sub(_join_groups, join_digit_words(text))
