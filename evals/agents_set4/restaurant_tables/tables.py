"""The Olive Tree restaurant's table book, in memory: free tables, bookings and cancellations.

A booking is known by its four-digit booking number. Times are kept as a clock reading with the half of the day
("7:30 p.m."); a time said without one ("at eight") is read as the evening, when the restaurant is busiest.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from loop import Tool
from loop.kinds import count, identifier, person_name, when

Day = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
LUNCH = ("12 p.m.", "12:30 p.m.", "1 p.m.", "1:30 p.m.", "2 p.m.")
DINNER = ("6 p.m.", "6:30 p.m.", "7 p.m.", "7:30 p.m.", "8 p.m.", "8:30 p.m.", "9 p.m.")
SEATS = 40  # covers per sitting
# booking number -> name, party size, day, time
BOOKINGS = {"2281": ("Helen Ward", 4, "friday", "7:30 p.m."), "3107": ("Marco Bianchi", 2, "saturday", "8 p.m."),
            "4460": ("Jess Turner", 6, "saturday", "1 p.m."), "5132": ("Owen Clarke", 3, "sunday", "12:30 p.m.")}
FULL = {("saturday", "8 p.m."), ("saturday", "8:30 p.m.")}  # fully booked sittings


def clock(value: str) -> str:
    """'8', '8pm', 'eight', '7:30 PM', 'half past seven' -> '8 p.m.' / '7:30 p.m.'; as said if unclear."""
    words = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
             "ten": 10, "eleven": 11, "twelve": 12, "noon": 12}
    text = str(value).lower().replace(".", "")
    half = "half past" in text or "thirty" in text
    found = re.search(r"(\d{1,2})(?::(\d\d))?", text)
    if found:
        hour, minutes = int(found.group(1)), found.group(2) or ("30" if half else "00")
    else:
        hit = next((w for w in re.findall(r"[a-z]+", text) if w in words), None)
        if hit is None:
            return value
        hour, minutes = words[hit], "30" if half else "00"
    am = ("am" in text.replace(" ", "") or "morning" in text) and hour != 12
    suffix = "a.m." if am else "p.m."
    return f"{hour} {suffix}" if minutes == "00" else f"{hour}:{minutes} {suffix}"


class TableBook:
    """The bookings; the tools are its methods."""

    def __init__(self) -> None:
        self.bookings = dict(BOOKINGS)
        self.next_number = 6001

    def _open(self, day: str, time: str) -> str | None:
        if day == "monday":
            return "Sorry, we're closed on Mondays."
        if time not in LUNCH + DINNER:
            return (f"We don't seat at {time}. Lunch sittings are 12 to 2 p.m. and dinner 6 to 9 p.m., "
                    "on the hour and half hour.")
        return None

    def free_tables(self, party_size: Annotated[int, count(), Field(ge=1, le=12)], day: Day,
                    time: Annotated[str, when(time=True)]) -> str:
        """Whether there is a free table for a party size on a day at a time"""
        day, hour = day.lower(), clock(time)
        if closed := self._open(day, hour):
            return closed
        if (day, hour) in FULL:
            return f"Sorry, {day.title()} at {hour} is fully booked. We have tables at 7 p.m. and 9 p.m."
        taken = sum(n for _, n, d, t in self.bookings.values() if d == day and t == hour)
        if taken + party_size > SEATS:
            return f"Sorry, there isn't room for {party_size} on {day.title()} at {hour}."
        return f"Yes, we have a table for {party_size} on {day.title()} at {hour}."

    def book_table(self, name: Annotated[str, person_name()], party_size: Annotated[int, count(), Field(ge=1, le=12)],
                   day: Day, time: Annotated[str, when(time=True)]) -> str:
        """Book a table under a name for a party size on a day at a time"""
        day, hour = day.lower(), clock(time)
        if closed := self._open(day, hour):
            return closed
        if (day, hour) in FULL:
            return f"Sorry, {day.title()} at {hour} is fully booked. We have tables at 7 p.m. and 9 p.m."
        number, self.next_number = str(self.next_number), self.next_number + 1
        self.bookings[number] = (name, party_size, day, hour)
        return f"Booked: a table for {party_size} under {name} on {day.title()} at {hour}, booking number {number}."

    def cancel_booking(self, booking_number: Annotated[str, identifier(digits=4)]) -> str:
        """Cancel a table booking by its four-digit booking number"""
        number = "".join(ch for ch in str(booking_number) if ch.isdigit())
        if number not in self.bookings:
            return f"I can't find booking number {booking_number}. It's on the confirmation text we sent."
        name, size, day, hour = self.bookings.pop(number)
        return f"Cancelled: booking {number}, the table for {size} under {name} on {day.title()} at {hour}."

    def tools(self) -> list[Tool]:
        return [Tool(self.free_tables),
                Tool(self.book_table, mutates=True,
                     confirm="book a table for {party_size} under {name} on {day} at {time}"),
                Tool(self.cancel_booking, mutates=True, reversible=False, confirm="cancel booking {booking_number}")]


def open_table_book(data_dir: str | Path) -> TableBook:
    """The agent file's `toolset`: the bookings live in memory."""
    return TableBook()
