"""Eastfield Council's household recycling centre: what it takes, booking a visit slot, cancelling a slot.

A toolset kept in memory. Most arguments are left as plain `str` with a docstring, to see whether that is enough.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

Day = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
OPEN_DAYS = ("thursday", "friday", "saturday", "sunday", "monday")
# item words: (accepted?, what to say)
ITEMS = {
    "mattress": (True, "Mattresses are taken free, in the bulky items bay."),
    "garden waste": (True, "Garden waste is free: grass, hedge cuttings and branches."),
    "cardboard": (True, "Cardboard is free; flatten it first."),
    "fridge": (True, "Fridges and freezers are taken free."),
    "electrical": (True, "Small electricals, TVs and washing machines are taken free."),
    "paint": (True, "Household paint is taken free, in its tin with the lid on."),
    "plasterboard": (True, "Plasterboard is accepted at $5 a bag or sheet, paid by card at the gate."),
    "rubble": (True, "Rubble and soil are accepted at $4 a bag, paid by card at the gate."),
    "tyre": (True, "Car tyres are accepted at $3 each, up to four per visit."),
    "asbestos": (False, "We can't take asbestos. Call the council's hazardous waste team on 0300 555 0190."),
    "gas bottle": (False, "We can't take gas bottles; take them back to the supplier."),
}
_ALIASES = {"mattresses": "mattress", "grass": "garden waste", "hedge": "garden waste", "branches": "garden waste",
            "boxes": "cardboard", "freezer": "fridge", "tv": "electrical", "television": "electrical",
            "telly": "electrical", "washing machine": "electrical", "soil": "rubble", "bricks": "rubble",
            "tyres": "tyre", "tires": "tyre", "tire": "tyre", "calor": "gas bottle", "propane": "gas bottle",
            "plaster board": "plasterboard"}
# booking number: registration, day, time
BOOKED = {"610442": ("VN21KPL", "saturday", "10 a.m."), "610457": ("SK68WDE", "sunday", "1:30 p.m.")}
FULL = {("saturday", "10 a.m."), ("saturday", "10:30 a.m."), ("saturday", "11 a.m."), ("saturday", "11:30 a.m.")}
FIRST_NEW_BOOKING = 610501
_HOURS = {w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                                      "nine", "ten", "eleven", "twelve"))}


def slot_time(value: str) -> str | None:
    """'10', '10:30', 'half past ten', 'half ten', 'two in the afternoon', '2pm' -> '10 a.m.', '2 p.m.'."""
    text = str(value).lower().replace(".", "")
    half = "half" in text or ":30" in text or "thirty" in text
    found = re.search(r"\b(\d{1,2})(?::(\d\d))?", text)
    if found:
        hour = int(found.group(1))
        half = half or found.group(2) == "30"
    else:
        word = next((w for w in re.findall(r"[a-z]+", text) if w in _HOURS), None)
        if word is None:
            return None
        hour = _HOURS[word]
    pm = "pm" in text.replace(" ", "") or "afternoon" in text or (hour < 8 and "am" not in text.replace(" ", ""))
    if hour > 12:
        hour, pm = hour - 12, True
    minutes = ":30" if half else ""
    return f"{hour}{minutes} {'p.m.' if pm or hour == 12 else 'a.m.'}"


def _reg(registration: str) -> str:
    return re.sub(r"[^A-Z0-9]", "", str(registration).upper())


class RecyclingCentre:
    def __init__(self) -> None:
        self.booked = dict(BOOKED)
        self.full = set(FULL)

    def item_accepted(self, item: str) -> dict[str, Any]:
        """Whether the recycling centre takes something the caller wants to bring, and whether there is a charge.
        item: what they want to get rid of, in their words (a mattress, paint, tyres)"""
        text = str(item).lower()
        key = next((k for k in ITEMS if k in text), None) or next((v for k, v in _ALIASES.items() if k in text), None)
        if key is None:
            return {"item": item, "note": "not on our list; the staff at the gate will tell you where it goes"}
        taken, said = ITEMS[key]
        return {"item": item, "accepted": "yes" if taken else "no", "note": said}

    def book_slot(self, registration: str, day: Day, time: str) -> str:
        """Book a half-hour slot to visit the recycling centre in a car.
        registration: the car's registration plate, like LK19 RXT.
        time: when they arrive, between 9 a.m. and 4:30 p.m."""
        reg = _reg(registration)
        if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z]{3}", reg):
            return f"That registration, {registration}, doesn't look right: two letters, two numbers, three letters."
        if day not in OPEN_DAYS:
            return "Sorry, the centre is closed on Tuesdays and Wednesdays."
        at = slot_time(time)
        if at is None:
            return f"I didn't catch the time {time!r}; slots are every half hour from 9 a.m. to 4:30 p.m."
        if (day, at) in self.full:
            return f"Sorry, {day.title()} at {at} is full. Saturday is free from 12 noon."
        self.full.add((day, at))
        number = str(FIRST_NEW_BOOKING + len(self.booked) - len(BOOKED))
        self.booked[number] = (reg, day, at)
        return f"Booked: {reg[:4]} {reg[4:]} on {day.title()} at {at}, booking number {number}."

    def cancel_slot(self, booking_number: str) -> str:
        """Cancel a booked visit slot. booking_number: the six-digit booking number from the confirmation"""
        number = "".join(ch for ch in str(booking_number) if ch.isdigit())
        if number not in self.booked:
            return f"I can't find booking {booking_number}; booking numbers have six digits."
        reg, day, at = self.booked.pop(number)
        self.full.discard((day, at))
        return f"Cancelled: the slot on {day.title()} at {at} for {reg[:4]} {reg[4:]}."

    def tools(self) -> list[Any]:
        from loop import Tool
        return [Tool(self.item_accepted),
                Tool(self.book_slot, mutates=True, confirm="book a slot on {day} at {time} for the car {registration}"),
                Tool(self.cancel_slot, mutates=True, confirm="cancel booking {booking_number}")]


def open_tip(data_dir: str | Path) -> RecyclingCentre:
    return RecyclingCentre()
