"""Brightsmile Dental's appointment book, in memory: free times on a weekday, and a booking (after a yes).

Today is Monday, May 11, 2026; today's book is full, so a weekday means its next date (Monday is May 18).
Appointments are on the hour: 9, 10 and 11 a.m., 2, 3 and 4 p.m. (lunch 12 to 2), Monday to Friday.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from loop import Tool
from loop.kinds import person_name

Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
SlotTime = Literal["9 a.m.", "10 a.m.", "11 a.m.", "2 p.m.", "3 p.m.", "4 p.m."]
SLOTS: tuple[str, ...] = ("9 a.m.", "10 a.m.", "11 a.m.", "2 p.m.", "3 p.m.", "4 p.m.")
DATES = {"monday": "May 18", "tuesday": "May 12", "wednesday": "May 13", "thursday": "May 14", "friday": "May 15"}
# (day, time) -> patient: the booked appointments of the coming week
BOOKED = {("tuesday", "9 a.m."): "Olivia Grant", ("tuesday", "10 a.m."): "Marcus Webb",
          ("tuesday", "2 p.m."): "Helen Ford", ("tuesday", "3 p.m."): "Tom Reilly",
          ("thursday", "9 a.m."): "Raj Mehta", ("thursday", "4 p.m."): "Chloe Dunn",
          ("friday", "10 a.m."): "Ben Carter", ("friday", "11 a.m."): "Sara Novak"}


def _listed(times: list[str]) -> str:
    return f"{', '.join(times[:-1])} and {times[-1]}" if len(times) > 1 else times[0]


class AppointmentBook:
    """The coming week's appointments; the tools are its methods."""

    def __init__(self) -> None:
        self.booked = dict(BOOKED)

    def _free(self, day: str) -> list[str]:
        return [t for t in SLOTS if (day, t) not in self.booked]

    def free_times(self, day: Weekday) -> str:
        """The free appointment times on the next date of a weekday"""
        day = day.lower()
        if day not in DATES:
            return f"The practice is closed on {day.title()}; appointments are Monday to Friday."
        free = self._free(day)
        if not free:
            return f"{day.title()}, {DATES[day]}, is fully booked."
        return f"On {day.title()}, {DATES[day]}, the free times are {_listed(free)}."

    def book_appointment(self, patient_name: Annotated[str, person_name()], day: Weekday, time: SlotTime) -> str:
        """Book an appointment for a patient, by their full name, the weekday and one of the free times"""
        day, name = day.lower(), " ".join(patient_name.split())
        if day not in DATES:
            return f"The practice is closed on {day.title()}; appointments are Monday to Friday."
        if time not in SLOTS:
            return f"There is no appointment at {time}. {self.free_times(day)}"  # type: ignore[arg-type]
        if (day, time) in self.booked:
            return f"Sorry, {day.title()} at {time} is taken. {self.free_times(day)}"  # type: ignore[arg-type]
        self.booked[(day, time)] = name
        return f"Done: {name} is booked in for {day.title()}, {DATES[day]}, at {time}."

    def tools(self) -> list[Tool]:
        return [Tool(self.free_times),
                Tool(self.book_appointment, mutates=True, confirm="book {patient_name} in on {day} at {time}")]


def open_book(data_dir: str | Path) -> AppointmentBook:
    """The agent file's `toolset` (the appointments live in memory)."""
    return AppointmentBook()
