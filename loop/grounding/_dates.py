"""Calendar dates as callers say them ("July the sixteenth", "the 5th of August", "August 5th", "el cinco de
agosto"), read as (month, day) so a date argument holds the day as well as the month, and the runs of words that say
when ("Tuesday", "half past three"). Labelled examples: tests/data/calendar_dates.tsv."""

from __future__ import annotations

import functools
import re
from types import ModuleType

from loop.grounding._clock import time_spans_in, without_times
from loop.grounding._heard import Spoken, spoken
from loop.locale import DEFAULT_WORDS, unaccented

CalendarDate = tuple[int, int]  # month 1-12, day 1-31


@functools.cache
def _day_words(words: ModuleType) -> dict[str, int]:
    """Every way the pack says a day of the month: "5", "5th", "fifth", "twenty first", "cinco", "primero"."""
    days = {w: v for w, v in spoken(words).numbers.items() if 1 <= v <= 31}
    for n in range(1, 32):
        days.update({str(n): n, unaccented(words.ordinal(n).lower()).replace("-", " "): n})
        days.update({f"{n}{suffix}": n for suffix in ("st", "nd", "rd", "th")})
    return days


@functools.cache
def _date_pattern(words: ModuleType) -> re.Pattern[str]:
    day = "|".join(re.escape(d) for d in sorted(_day_words(words), key=len, reverse=True))
    month = "|".join(re.escape(m) for m in words.MONTHS)
    join = "".join(rf"(?:{re.escape(j)}\s+)?" for j in words.DATE_JOINERS)
    return re.compile(rf"(?<![\w-])(?:(?P<m1>{month})\s+{join}(?P<d1>{day})|(?P<d2>{day})\s+{join}(?P<m2>{month}))"
                      r"(?![\w-])")


def calendar_dates(text: str, words: ModuleType = DEFAULT_WORDS) -> list[CalendarDate]:
    """Every month with its day that `text` says, in order."""
    folded = re.sub(r"[ \t]+", " ", unaccented(text.lower()).replace("-", " "))  # a comma or a stop ends a date
    days, found = _day_words(words), []
    for m in _date_pattern(words).finditer(folded):
        name, day = m["m1"] or m["m2"], m["d1"] or m["d2"]
        if name in words.AMBIGUOUS_MONTHS and day.isdigit() and len(m.group().split()) == 2:
            continue  # "3 may tickets", "may 3 of us": a month that is also a word needs a day said as one
        found.append((words.MONTHS.index(name) + 1, days[day]))
    return list(dict.fromkeys(found))


@functools.cache
def _ordinal_day(words: ModuleType) -> tuple[re.Pattern[str], dict[str, int]]:
    """A day of the month said alone as an ordinal after its article ("the twenty-first"), not a cardinal; and
    each ordinal's day, as the match folds it."""
    said = sorted((words.ordinal(n) for n in range(1, 32) if words.ordinal(n) != words.cardinal(n)), key=len,
                  reverse=True)
    alternatives = "|".join(re.escape(o).replace(r"\-", "[- ]") for o in said)
    by_word = {_folded(words.ordinal(n)): n for n in range(1, 32)}
    return re.compile(rf"\b({re.escape(words.DAY_ARTICLE)}\s+)({alternatives})\b", re.IGNORECASE), by_word


@functools.cache
def _weekday_day(words: ModuleType) -> re.Pattern[str]:
    """A weekday, then its day of the month in digits, with or without the day's article ("Sunday the 19th",
    "domingo 19"), no month after it (a calendar date's)."""
    weekday = "|".join(re.escape(d) for d in words.WEEKDAYS)
    month = "|".join(re.escape(m) for m in words.MONTHS)
    article = re.escape(words.DAY_ARTICLE)
    return re.compile(rf"(?i)\b({weekday}),?\s+(?:{article}\s+)?(\d{{1,2}}(?:st|nd|rd|th)?)\b"
                      rf"(?!\s+(?:\w+\s+)?(?:{month})\b)")


def _folded(ordinal: str) -> str:
    return unaccented(ordinal).lower().replace("-", " ")


def ordinal_days_written(text: str, words: ModuleType = DEFAULT_WORDS) -> str:
    """`text` with each day said alone as an ordinal written in digits ("can we do the twenty-first instead?" ->
    "... the 21st instead?"), as speech-to-text writes it more often than not."""
    pattern, by_word = _ordinal_day(words)
    return pattern.sub(lambda m: m[1] + words.ordinal_digits(by_word[_folded(m[2])]), text)


def when_values(text: str, when: str, words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """What a time or date argument may hold from `text` (its kind's `when`: "time", "date", "" for either): a time
    as its clock reading ("half past seven in the evening", "Thursday evening, at seven": "7:30 p.m.", "7 p.m.";
    the pack's `clock_text`), a date as its month and day ("July the sixteenth": "July 16", the pack's
    `date_text`), and the words that say when ("Tuesday", "two" given alone)."""
    if when == "date":
        text = ordinal_days_written(text, words)  # "the twenty-first" alone is the 21st
        dates, spans = calendar_dates(text, words), time_spans(text, when, words)
        # "Saturday the twenty-seventh of June": the date whole; its weekday, month or day alone are no other value
        whole = [s.lower() for s in re.split(r"[.!?;]+", text) if calendar_dates(s, words)]
        # "Sunday the nineteenth": one date, its weekday with its day; neither alone is another value
        named = [(m[1], m[2]) for m in _weekday_day(words).finditer(text)
                 if not any(m.group().lower() in w for w in whole)]
        parts = {p.lower() for pair in named for p in pair}
        return list(dict.fromkeys([words.date_text(*d) for d in dates] + [f"{day} {n}" for day, n in named] + [
            s for s in spans if not any(s.lower() in w for w in whole) and s.lower() not in parts]))
    if when != "time":
        return time_spans(text, when, words)
    clocks = [words.clock_text(*clock) for clock, _, _ in time_spans_in(text, words)]
    return clocks + time_spans(without_times(text, words), when, words)  # and "two" of "make that two instead"


def _says_when(word: str, said: Spoken) -> bool:
    """A word that says when on its own ("Tuesday", "10", "noon"), unlike "p.m." or "past"."""
    w = unaccented(word.lower().strip(",."))
    return w in said.when_core or bool(re.match(r"\d", w))


def _says_time(word: str, said: Spoken) -> bool:
    w = unaccented(word.lower().strip(",."))
    named = w in said.units or w in said.tens or w in said.clock_words
    return named or bool(re.match(r"\d{1,2}(?::\d\d)?(?:am|pm)?$", w))


def _says_date(word: str, said: Spoken) -> bool:
    w = unaccented(word.lower().strip(",."))
    return w in said.days or bool(re.fullmatch(r"\d{1,2}(?:st|nd|rd|th)|\d{1,4}[/-]\d{1,2}(?:[/-]\d{1,4})?", w))


def _time_word(word: str, said: Spoken) -> bool:
    w = unaccented(word.lower().strip(",."))
    return w in said.time_words or bool(re.fullmatch(r"\d{1,4}(?::\d\d)?(?:am|pm|st|nd|rd|th)?", w))


def time_spans(text: str, when: str = "", words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """Runs of words that say when ("Tuesday", "10 a.m.", "half past three", "the 12th of June" -> "12th of June"),
    with every shorter run inside them: what a time or date argument may be filled with. `when="time"`: only runs
    with a number in them (an hour); `when="date"`: only runs with a day in them (a weekday, a month, "tomorrow",
    an ordinal). Words of the pack `words`."""
    said = spoken(words)
    says = functools.partial(_says_time if when == "time" else _says_date if when == "date" else _says_when, said=said)
    spans: list[str] = []
    for sentence in re.split(r"[!?\n,;]+|(?<![ap]\.m)\.(?=\s|$)", text, flags=re.IGNORECASE):  # "2 p.m." keeps its dot
        said_words = [w for w in (re.sub(r"[^\w'.:-]", "", w) for w in sentence.split()) if w]
        run: list[str] = []
        for i, word in enumerate([*said_words, ""]):
            joins = word.lower() == "of" and run and i + 1 < len(said_words) and _time_word(said_words[i + 1], said)
            if word and (_time_word(word, said) or joins):
                run.append(word.rstrip(".") if not word.lower().startswith(("a.m", "p.m")) else word)
                continue
            for a in range(len(run)):
                for b in range(len(run), a, -1):
                    if run[a].lower() != "of" and run[b - 1].lower() != "of" and any(map(says, run[a:b])):
                        spans.append(" ".join(run[a:b]))
                        spans.append(" ".join(said.digit_of.get(w.lower(), w) for w in run[a:b]))  # "eleven" -> "11"
            run = []
    return list(dict.fromkeys(spans))
