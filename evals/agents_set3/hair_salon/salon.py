"""Snip & Style hair salon: free times on a day, booking an appointment and cancelling one (each write after a yes).

The appointment book lives in memory; each toolset (one per server) starts from the same book.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from loop import Tool
from loop.kinds import person_name, when

Day = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
Service = Literal["haircut", "colour", "blow dry", "beard trim"]
OPEN_DAYS = ("tuesday", "wednesday", "thursday", "friday", "saturday")
SLOTS = ("9 a.m.", "10 a.m.", "11 a.m.", "1 p.m.", "2 p.m.", "3 p.m.", "4 p.m.")
# day -> {slot: (client, service)}
BOOK = {
    "tuesday": {"9 a.m.": ("Emma Clarke", "colour"), "10 a.m.": ("Lucy Park", "haircut"),
                "2 p.m.": ("Nina Rossi", "blow dry")},
    "wednesday": {"11 a.m.": ("Josh Reid", "haircut")},
    "thursday": {"9 a.m.": ("Amy Lowe", "colour"), "10 a.m.": ("Ben Hart", "beard trim"),
                 "11 a.m.": ("Carla Diaz", "haircut"), "1 p.m.": ("Dev Mehta", "haircut"),
                 "2 p.m.": ("Ella Stone", "colour"), "3 p.m.": ("Finn Walsh", "blow dry")},
    "friday": {"10 a.m.": ("Grace Holt", "colour"), "3 p.m.": ("Hugo Grant", "haircut")},
    "saturday": {"9 a.m.": ("Ivy Chen", "haircut"), "10 a.m.": ("Jack Moss", "beard trim"),
                 "11 a.m.": ("Kate Bell", "colour"), "1 p.m.": ("Leo Fox", "haircut"),
                 "2 p.m.": ("Mia Shaw", "blow dry")},
}
_WORDS = {w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                                      "nine", "ten", "eleven", "twelve"))}


def slot(value: str) -> str | None:
    """'11', '11am', 'eleven', '2 o'clock', '2:00 p.m.' -> '11 a.m.' / '2 p.m.' (the book's spelling)."""
    text = str(value).lower().replace(".", "")
    found = re.search(r"\d{1,2}", text) or re.search(r"\b(" + "|".join(_WORDS) + r")\b", text)
    if not found:
        return None
    hour = int(found.group(0)) if found.group(0).isdigit() else _WORDS[found.group(0)]
    hour = hour - 12 if hour > 12 else hour
    pm = "pm" in text.replace(" ", "") or "afternoon" in text or (hour < 8 and "am" not in text.replace(" ", ""))
    said = f"{hour} {'p.m.' if pm or hour == 12 else 'a.m.'}"
    return said if said in SLOTS else None


class Salon:
    def __init__(self) -> None:
        self.book = {day: dict(slots) for day, slots in BOOK.items()}

    def free_times(self, day: Day) -> str:
        """The free appointment times on a day of the week"""
        day = day.lower()
        if day not in OPEN_DAYS:
            return f"We're closed on {day.title()}; we're open Tuesday to Saturday."
        free = [s for s in SLOTS if s not in self.book.get(day, {})]
        if not free:
            return f"{day.title()} is fully booked."
        said = f"{', '.join(free[:-1])} and {free[-1]}" if len(free) > 1 else free[0]
        return f"On {day.title()} we have {said} free."

    def book_appointment(self, name: Annotated[str, person_name()], day: Day,
                         time: Annotated[str, when(time=True)], service: Service) -> str:
        """Book a haircut, colour, blow dry or beard trim for a client on a day at a time"""
        day, hour = day.lower(), slot(time)
        if day not in OPEN_DAYS:
            return f"We're closed on {day.title()}; we're open Tuesday to Saturday."
        if hour is None:
            return f"There's no appointment at {time}; appointments start on the hour from 9 a.m. to 4 p.m., not 12."
        taken = self.book.setdefault(day, {})
        if hour in taken:
            return f"Sorry, {day.title()} at {hour} is taken. {self.free_times(day)}"
        taken[hour] = (name, service)
        return f"Done: {name} is in for a {service} on {day.title()} at {hour}."

    def cancel_appointment(self, name: Annotated[str, person_name()], day: Day) -> str:
        """Cancel a client's appointment on a day, by their name"""
        day = day.lower()
        for hour, (client, service) in list(self.book.get(day, {}).items()):
            if client.lower() == name.strip().lower():
                del self.book[day][hour]
                return f"Done: {client}'s {service} on {day.title()} at {hour} is cancelled."
        return f"I can't find an appointment for {name} on {day.title()}."

    def tools(self) -> list[Tool]:
        return [Tool(self.free_times),
                Tool(self.book_appointment, mutates=True, confirm="book a {service} for {name} on {day} at {time}"),
                Tool(self.cancel_appointment, mutates=True, reversible=False,
                     confirm="cancel {name}'s appointment on {day}")]


def open_salon(data_dir: str | Path) -> Salon:
    """The agent file's toolset: the book is in memory."""
    return Salon()
