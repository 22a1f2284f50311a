"""Bracken Hollow Campsite's booking line as plain functions: free pitches, a booking, a cancellation.

Today is Tuesday, July 7, 2026. The bookings live in memory at module level; what calls write is kept beside them.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Literal

TODAY = dt.date(2026, 7, 7)
Pitch = Literal["tent", "caravan", "campervan", "glamping pod"]
PRICES = {"tent": 22, "caravan": 30, "campervan": 30, "glamping pod": 65}   # dollars a night
MOST_PEOPLE = {"tent": 6, "caravan": 6, "campervan": 6, "glamping pod": 4}
# nights that are full, per kind of pitch
FULL = {"tent": {dt.date(2026, 7, 17), dt.date(2026, 7, 18)},
        "glamping pod": {TODAY + dt.timedelta(days=i) for i in range(13)}}   # every night to July 19
# booking number: name, pitch, arrival, nights, people
BOOKINGS = {
    "31207": ("Nadia Hussain", "caravan", dt.date(2026, 7, 10), 3, 2),
    "31215": ("Gary Fletcher", "tent", dt.date(2026, 7, 24), 2, 4),
    "31220": ("Li Wei", "glamping pod", dt.date(2026, 7, 13), 4, 2),
}
MADE: list[str] = []
CANCELLED: list[str] = []
FIRST_NEW_BOOKING = 31301

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
             "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
             "eighteenth", "nineteenth")
_DAY_WORDS = {w: i + 1 for i, w in enumerate(_ORDINALS)} | {"twentieth": 20, "thirtieth": 30}


def parse_date(value: str) -> dt.date | None:
    """'July 24', 'the twenty-fourth of July', '24th', 'Friday', 'tomorrow' -> a date on or after today."""
    text = str(value).lower().replace("-", " ")
    if "tomorrow" in text:
        return TODAY + dt.timedelta(days=1)
    month = next((i + 1 for i, m in enumerate(MONTHS) if re.search(rf"\b{m[:3]}[a-z]*\b", text)), None)
    day = None
    if found := re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\b", text):
        day = int(found.group(1))
    else:
        words = re.findall(r"[a-z]+", text)
        for i, word in enumerate(words):
            if word in ("twenty", "thirty"):
                nxt = _DAY_WORDS.get(words[i + 1], 0) if i + 1 < len(words) else 0
                day = (20 if word == "twenty" else 30) + (nxt if nxt < 10 else 0)
                break
            if word in _DAY_WORDS:
                day = _DAY_WORDS[word]
                break
    if day is not None:
        try:
            return dt.date(TODAY.year, month or TODAY.month, day)
        except ValueError:
            return None
    weekday = next((i for i, d in enumerate(WEEKDAYS) if d in text), None)
    if weekday is not None:
        return TODAY + dt.timedelta(days=(weekday - TODAY.weekday()) % 7 or 7)
    return None


def _say(day: dt.date) -> str:
    return f"{day:%A} {day:%B} {day.day}"


def _free(pitch: str, arrival: dt.date, nights: int) -> bool:
    return not any(arrival + dt.timedelta(days=i) in FULL.get(pitch, set()) for i in range(nights))


def pitches_free(arrival: str, nights: int) -> dict[str, Any]:
    """Which kinds of pitch (tent, caravan, campervan, glamping pod) are free from an arrival date for a number of
    nights, and the price a night"""
    day = parse_date(arrival)
    if day is None or day < TODAY:
        return {"note": f"I couldn't read the arrival date {arrival!r}; say the day and month, like July 24"}
    free = [p for p in PRICES if _free(p, day, nights)]
    full = [p for p in PRICES if p not in free]
    said: dict[str, Any] = {"arrival": _say(day), "nights": nights}
    if free:
        said["free"] = ", ".join(f"{p} at ${PRICES[p]} a night" for p in free)
    if full:
        said["full"] = ", ".join(full)
    return said


def book_pitch(name: str, pitch: Pitch, arrival: str, nights: int, people: int) -> str:
    """Book a pitch: the guest's name, the kind of pitch, the arrival date, how many nights and how many people"""
    day = parse_date(arrival)
    if day is None or day < TODAY:
        return f"I couldn't read the arrival date {arrival!r}; say the day and month, like July 24."
    if nights < 1 or nights > 14:
        return "We take bookings of 1 to 14 nights."
    if people > MOST_PEOPLE[pitch]:
        return f"A {pitch} takes at most {MOST_PEOPLE[pitch]} people."
    if not _free(pitch, day, nights):
        return f"Sorry, there's no {pitch} free for all of those nights from {_say(day)}."
    MADE.append(name)
    number = str(FIRST_NEW_BOOKING + len(MADE) - 1)
    BOOKINGS[number] = (name, pitch, day, nights, people)
    total = PRICES[pitch] * nights
    return (f"Booked: a {pitch} for {name}, {people} people, arriving {_say(day)} for {nights} nights. That's "
            f"${total}, paid on arrival. Your booking number is {number}.")


def cancel_booking(booking_number: str) -> str:
    """Cancel a booking by its five-digit booking number"""
    number = "".join(ch for ch in str(booking_number) if ch.isdigit())
    if number not in BOOKINGS or number in CANCELLED:
        return f"I can't find a booking {booking_number}; booking numbers have five digits."
    name, pitch, day, nights, _ = BOOKINGS[number]
    CANCELLED.append(number)
    return f"Cancelled: booking {number} for {name}, a {pitch} from {_say(day)} for {nights} nights."
