"""Calendar dates as callers say them ("July the sixteenth", "the 5th of August", "August 5th", "el cinco de
agosto"), read as (month, day) so a date argument holds the day as well as the month. Labelled examples:
tests/data/calendar_dates.tsv."""

from __future__ import annotations

import functools
import re
from types import ModuleType

from loop.grounding._heard import spoken
from loop.locale import DEFAULT_WORDS, unaccented

CalendarDate = tuple[int, int]  # month 1-12, day 1-31


@functools.cache
def _day_words(words: ModuleType) -> dict[str, int]:
    """Every way the pack says a day of the month: "5", "5th", "fifth", "twenty first", "cinco", "primero"."""
    said = spoken(words)
    days: dict[str, int] = {}
    for n in range(1, 32):
        for form in (str(n), unaccented(words.ordinal(n).lower()).replace("-", " ")):
            days[form] = n
        days.update({w: n for w, v in said.numbers.items() if v == n})
    for suffix in ("st", "nd", "rd", "th"):
        days.update({f"{n}{suffix}": n for n in range(1, 32)})
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
