"""Times of day as a caller says them and as a tool lists them, read as clock values so one meets the other:
"five o'clock" is the "5 p.m." of an enum of showtimes, "seven thirty" and "7.30" its "7:30 p.m.", "quarter to
nine" its "8:45 p.m.". Labelled examples: tests/data/clock_times.tsv."""

from __future__ import annotations

import re

from loop.grounding._heard import TENS, UNITS
from loop.locale import en

Clock = tuple[int, int, str]  # hour 1-12, minute, "am" / "pm" / "" (not said)

_DIGITS = re.compile(r"(?<![$£€.,\d])\b(\d{1,2})(?:[:.](\d{2})|\s+(\d{2})(?!\d))?"
                     r"\s*(a\.?\s?m\b\.?|p\.?\s?m\b\.?|o'?clock)?", re.IGNORECASE)
_CUES = frozenset(en.CLOCK_CUES)
_MONEY = frozenset({*en.MONEY_WORDS, "pounds", "pound", "euros", "euro", "percent", "pence"})


def _number(word: str) -> int | None:
    word = word.lower().replace("-", " ")
    if word.isdigit():
        return int(word)
    parts = word.split()
    if len(parts) == 1:
        return UNITS.get(parts[0], TENS.get(parts[0]))
    if len(parts) == 2 and parts[0] in TENS and parts[1] in UNITS and 0 < UNITS[parts[1]] < 10:
        return TENS[parts[0]] + UNITS[parts[1]]
    return None


def _clock(hour: int | None, minute: int | None, meridiem: str = "") -> Clock | None:
    if hour is None or minute is None or not 0 <= minute < 60 or not 0 < hour < 24:
        return None
    if hour > 12:
        return hour - 12, minute, "pm"
    return hour, minute, meridiem


def _meridiem(text: str | None) -> str:
    low = (text or "").lower().replace(".", "").replace(" ", "")
    return low if low in ("am", "pm") else ""


Span = tuple[Clock, int, int]  # a time and where it is in the text (character offsets)
_TOKEN = re.compile(r"[a-z]\.\s?[a-z]\b\.?|[a-z']+|\d+", re.IGNORECASE)


def _tokens(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    found = [(m.group().lower().replace(".", "").replace(" ", ""), m.span()) for m in _TOKEN.finditer(text)]
    return [w for w, _ in found], [span for _, span in found]


def _spoken(words: list[str]) -> list[tuple[Clock, int, int]]:
    """'seven thirty', 'nine fifteen p.m.', "five o'clock", 'nine oh five' (an hour word, then minutes): each
    with the first and last word it spans."""
    found = []
    for i, word in enumerate(words):
        hour = UNITS.get(word) if word in UNITS and 0 < UNITS[word] <= 12 else None
        if hour is None:
            continue
        rest = words[i + 1: i + 4]
        if rest[:1] in (["o'clock"], ["oclock"]):
            half = _meridiem(rest[1] if len(rest) > 1 else "")
            found.append(((hour, 0, half), i, i + 1 + bool(half)))
            continue
        minute_words = rest[:2] if rest[:1] and rest[0] in TENS and rest[1:2] and rest[1] in UNITS else rest[:1]
        minute = _number(" ".join(minute_words)) if minute_words and (minute_words[0] in TENS or (
            minute_words[0] in UNITS and UNITS[minute_words[0]] >= 10)) else None
        if minute is None and rest[:1] == ["oh"] and rest[1:2] and rest[1] in UNITS:  # "nine oh five"
            minute_words, minute = rest[:2], UNITS[rest[1]]
        half = _meridiem(rest[len(minute_words)] if len(rest) > len(minute_words) else "")
        if minute is not None and (clock := _clock(hour, minute, half)):
            found.append((clock, i, i + len(minute_words) + bool(half)))
        elif rest[:1] in (["am"], ["pm"]):
            found.append(((hour, 0, rest[0]), i, i + 1))
    return found


def _past_or_to(words: list[str]) -> list[tuple[Clock, int, int]]:
    """'half past eight', 'quarter to nine', 'twenty five past six' (minutes in words, a multiple of five; never
    'from nine to five')."""
    found = []
    for i, word in enumerate(words[1:-1], 1):
        if word not in ("past", "to"):
            continue
        two = " ".join(words[max(0, i - 2): i]) if i >= 2 and words[i - 2] in TENS else ""
        amount = {"half": 30, "quarter": 15}.get(words[i - 1]) or (_number(two) if two else None) \
            or (_number(words[i - 1]) if not words[i - 1].isdigit() else None)
        hour = _number(words[i + 1])
        if amount is None or hour is None or amount % 5 or not 0 < amount < 60 or (word == "to" and amount > 30):
            continue
        start = i - (2 if two else 1)
        if start > 0 and words[start - 1] in ("from", "between"):
            continue
        clock = _clock(hour, amount) if word == "past" else _clock(hour - 1 if hour > 1 else 12, 60 - amount)
        if clock:
            found.append((clock, start, i + 1))
    return found


def time_spans_in(text: str) -> list[Span]:
    """Every time of day `text` says, in digits or words, with its place in the text."""
    found: list[Span] = []
    for m in _DIGITS.finditer(text):
        hour, minute = int(m.group(1)), m.group(2) or m.group(3)
        cue = m.group(4) or ""
        before = re.findall(r"[a-z]+", text[max(0, m.start() - 12): m.start()].lower())[-1:]
        after = re.findall(r"[a-z]+", text[m.end(): m.end() + 12].lower())[:1]
        if (minute is None and not cue and not set(before) & _CUES) or set(after) & _MONEY:
            continue  # "4 seats", "7.30 dollars" are no times
        if clock := _clock(hour, int(minute or 0), _meridiem(cue)):
            found.append((clock, m.start(), m.end()))
    words, spans = _tokens(text)
    for clock, first, last in [*_past_or_to(words), *_spoken(words)]:
        found.append((clock, spans[first][0], spans[last][1]))
    return found


def clock_times(text: str) -> list[Clock]:
    """Every time of day `text` says, in digits or words."""
    return list(dict.fromkeys(clock for clock, _, _ in time_spans_in(text)))


def without_times(text: str) -> str:
    """`text` with its times of day blanked out: the "five" of "five o'clock" is no count of seats."""
    for _, start, end in sorted(time_spans_in(text), key=lambda s: -s[1]):
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def same_time(said: Clock, listed: Clock) -> bool:
    """A time the caller said is a listed one: the same hour and minute, and the same half of the day when both
    say it."""
    return said[:2] == listed[:2] and (not said[2] or not listed[2] or said[2] == listed[2])


def times_named(values: list[str], text: str) -> list[str]:
    """The values of an enum of times ("5 p.m.", "7:30 p.m.") that `text` says, however it says them; [] when
    the enum's values are not all times."""
    listed = [clock_times(v) for v in values]
    if not values or not all(len(c) == 1 for c in listed):
        return []
    said = clock_times(text)
    return [v for v, (clock,) in zip(values, listed, strict=True) if any(same_time(s, clock) for s in said)]
