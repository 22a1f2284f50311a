"""Happy Paws Boarding Kennels: free kennels for a stay, booking a stay for a pet, and a stay by its booking number.

Plain functions over data in memory; their kinds are declared in agent.yaml. Dates are July and August days of this
summer ("July 14", "the fourteenth of July"); a booking number has five digits.
"""

from __future__ import annotations

import datetime as dt
import re

YEAR = 2026
KENNELS = 20
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_ORD = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh",
        "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth")
_CARD = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
# booking number -> owner surname, pet, arrival, nights
STAYS = {"40122": ("Bennett", "Biscuit", "July 3", 7), "40187": ("Okafor", "Luna", "July 10", 3),
         "40215": ("Hughes", "Max", "July 20", 14), "40230": ("Ferreira", "Pepper", "August 1", 5)}
FULL = (dt.date(YEAR, 7, 24), dt.date(YEAR, 7, 31))   # every kennel is taken these nights, both included
_made: dict[str, tuple[str, str, str, int]] = {}


def parse_date(value: str) -> dt.date | None:
    """'July 14', '14 July', 'the fourteenth of July', 'July 14th', 'July twenty-first' -> a date this summer."""
    text = str(value).lower().replace("-", " ")
    month = next((i + 1 for i, m in enumerate(MONTHS) if re.search(rf"\b{m[:3]}[a-z]*\b", text)), None)
    rest = re.sub(r"\b(" + "|".join(MONTHS) + r")\b", " ", text)
    day = None
    if found := re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\b", rest):
        day = int(found.group(1))
    else:
        words = re.findall(r"[a-z]+", rest)
        for i, w in enumerate(words):
            if w in ("twenty", "thirty", "twentieth", "thirtieth"):
                base = 30 if w.startswith("thirt") else 20
                nxt = words[i + 1] if i + 1 < len(words) else ""
                unit = (_ORD.index(nxt) + 1) if nxt in _ORD[:9] else (_CARD.index(nxt) + 1) if nxt in _CARD[:9] else 0
                day = base + unit
                break
            if w in _ORD or w in _CARD:
                day = (_ORD.index(w) if w in _ORD else _CARD.index(w)) + 1
                break
    if month is None or day is None:
        return None
    try:
        return dt.date(YEAR, month, day)
    except ValueError:
        return None


def _said(day: dt.date) -> str:
    return f"{day:%B} {day.day}"


def _full_nights(arrival: dt.date, nights: int) -> list[dt.date]:
    return [d for d in (arrival + dt.timedelta(days=i) for i in range(nights)) if FULL[0] <= d <= FULL[1]]


def availability(arrival: str, nights: int) -> str:
    """Whether there is a free kennel for a stay, by the arrival date and the number of nights"""
    day = parse_date(arrival)
    if day is None or nights < 1:
        return f"I didn't catch the date {arrival}; please say the month and the day, like July 14."
    if full := _full_nights(day, nights):
        return (f"Sorry, we're fully booked from {_said(FULL[0])} to {_said(FULL[1])}, so we can't take a stay "
                f"from {_said(day)} for {nights} nights; the night of {_said(full[0])} is full.")
    return f"Yes, we have a kennel free from {_said(day)} for {nights} nights."


def book_stay(last_name: str, pet_name: str, arrival: str, nights: int) -> str:
    """Book a boarding stay for a pet under the owner's surname, by arrival date and number of nights"""
    day = parse_date(arrival)
    if day is None or nights < 1:
        return f"I didn't catch the date {arrival}; please say the month and the day, like July 14."
    if _full_nights(day, nights):
        return f"Sorry, we're fully booked from {_said(FULL[0])} to {_said(FULL[1])}, so I can't book that stay."
    number = str(41001 + len(_made))
    _made[number] = (last_name, pet_name, _said(day), nights)
    return (f"Booked: {pet_name} {last_name} stays with us from {_said(day)} for {nights} nights, "
            f"booking number {number}.")


def check_stay(booking_number: str) -> dict[str, object]:
    """A boarding stay's pet, owner, arrival and nights, by its five-digit booking number"""
    number = "".join(ch for ch in str(booking_number) if ch.isdigit())
    stay = STAYS.get(number) or _made.get(number)
    if stay is None:
        return {"booking_number": booking_number, "found": False, "note": "no stay with that booking number"}
    surname, pet, arrival, nights = stay
    return {"booking_number": number, "pet": pet, "owner": surname, "arrival": arrival, "nights": nights}
