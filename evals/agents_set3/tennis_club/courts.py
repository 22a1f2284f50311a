"""Riverside Tennis Club's court sheet: free courts at an hour, booking a court (member number), cancelling a booking.

Plain functions over an in-memory court sheet; the agent file declares their argument kinds.
"""

from __future__ import annotations

import re

COURTS = (1, 2, 3, 4)
MEMBERS = {"51234": "Alan Brooks", "60417": "Rachel Kim", "72290": "Sophie Turner", "38861": "Marcus Webb"}
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# booking number -> (member, day, hour 0-23, court)
BOOKINGS: dict[str, tuple[str, str, int, int]] = {
    "4410": ("60417", "saturday", 9, 1), "4417": ("72290", "sunday", 11, 2), "4452": ("38861", "wednesday", 18, 4),
    "4453": ("51234", "wednesday", 18, 1), "4454": ("72290", "wednesday", 18, 2), "4455": ("60417", "wednesday", 18, 3),
    "4460": ("38861", "saturday", 10, 1), "4461": ("51234", "saturday", 10, 2), "4462": ("72290", "saturday", 10, 3),
}
_next = [8801]
_WORDS = {w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                                      "nine", "ten", "eleven", "twelve"))}


def _day(value: str) -> str | None:
    text = str(value).lower()
    return next((d for d in DAYS if d in text or re.search(rf"\b{d[:3]}\b", text)), None)


def _hour(value: str) -> int | None:
    """'10 a.m.' -> 10, '7pm' / 'seven in the evening' -> 19, '14:00' -> 14."""
    text = str(value).lower().replace(".", "")
    found = re.search(r"\d{1,2}", text) or re.search(r"\b(" + "|".join(_WORDS) + r")\b", text)
    if not found:
        return None
    hour = int(found.group(0)) if found.group(0).isdigit() else _WORDS[found.group(0)]
    squashed = text.replace(" ", "")
    if hour < 12 and ("pm" in squashed or "evening" in text or "afternoon" in text or "night" in text
                      or (hour < 8 and "am" not in squashed)):
        hour += 12
    return hour


def _said(hour: int) -> str:
    return f"{hour - 12 if hour > 12 else hour} {'p.m.' if hour >= 12 else 'a.m.'}"


def _free(day: str, hour: int) -> list[int]:
    taken = {court for _m, d, h, court in BOOKINGS.values() if d == day and h == hour}
    return [c for c in COURTS if c not in taken]


def court_availability(day: str, time: str) -> str:
    """Which of the four courts are free on a day at an hour"""
    d, h = _day(day), _hour(time)
    if d is None or h is None:
        return "Please tell me the day of the week and the hour, like Saturday at 10 a.m."
    if not 8 <= h <= 20:
        return "Courts can be booked from 8 a.m.; the last booking starts at 8 p.m."
    free = _free(d, h)
    if not free:
        return f"All four courts are booked on {d.title()} at {_said(h)}."
    names = " and ".join(f"court {c}" for c in free) if len(free) < 4 else "all four courts"
    return f"On {d.title()} at {_said(h)}, {names} {'is' if len(free) == 1 else 'are'} free."


def book_court(member_number: str, day: str, time: str) -> str:
    """Book a court for one hour for a club member, by their five-digit member number"""
    member = "".join(ch for ch in str(member_number) if ch.isdigit())
    d, h = _day(day), _hour(time)
    if member not in MEMBERS:
        return f"There is no member {member_number}; member numbers have five digits and are on the club card."
    if d is None or h is None or not 8 <= h <= 20:
        return "Courts can be booked on the hour from 8 a.m. to 8 p.m.; which day and hour?"
    free = _free(d, h)
    if not free:
        return f"Sorry, all four courts are booked on {d.title()} at {_said(h)}."
    number = str(_next[0])
    _next[0] += 1
    BOOKINGS[number] = (member, d, h, free[0])
    return (f"Done: court {free[0]} is booked for {MEMBERS[member]} on {d.title()} at {_said(h)}, "
            f"booking number {number}.")


def cancel_booking(booking_number: str) -> str:
    """Cancel a court booking by its four-digit booking number"""
    number = "".join(ch for ch in str(booking_number) if ch.isdigit())
    if number not in BOOKINGS:
        return f"There is no booking {booking_number}; the booking number is in the confirmation text."
    member, d, h, court = BOOKINGS.pop(number)
    return f"Done: booking {number}, court {court} on {d.title()} at {_said(h)}, is cancelled."
