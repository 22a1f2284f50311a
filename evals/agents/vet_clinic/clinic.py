"""Oakfield Vets: pets' vaccinations by pet name and owner surname, and check-up bookings (in memory)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Literal

from loop import Tool

TODAY = dt.date(2026, 5, 11)  # a Monday
Day = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
Time = Literal["9 a.m.", "9:30 a.m.", "10 a.m.", "10:30 a.m.", "11 a.m.", "11:30 a.m.",
               "2 p.m.", "2:30 p.m.", "3 p.m.", "3:30 p.m.", "4 p.m.", "4:30 p.m."]
TIMES: tuple[str, ...] = Time.__args__
# pet, owner's surname, species, {vaccine: next due date}
PETS = [("Biscuit", "Hughes", "dog", {"rabies": "2026-04-28", "distemper booster": "2026-09-02"}),
        ("Luna", "Patel", "cat", {"cat flu": "2026-05-20", "feline leukaemia": "2027-01-15"}),
        ("Max", "O'Brien", "dog", {"rabies": "2026-11-30", "kennel cough": "2026-05-14"}),
        ("Pepper", "Nowak", "rabbit", {"myxomatosis": "2026-03-01"}),
        ("Milo", "Fraser", "cat", {"cat flu": "2026-12-10"}),
        ("Bella", "Okafor", "dog", {"rabies": "2026-08-19", "kennel cough": "2026-07-01"}),
        ("Luna", "Green", "dog", {"rabies": "2026-06-05"})]
BOOKED = {("tuesday", "10 a.m."): "Milo", ("wednesday", "2 p.m."): "Bella", ("friday", "9 a.m."): "Pepper"}


def _name(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalpha())


def _say(day: dt.date) -> str:
    return f"{day:%B} {day.day}"


class Clinic:
    """The pets and the check-up book; the tools are its methods."""

    def __init__(self) -> None:
        self.booked = dict(BOOKED)

    def vaccinations_due(self, pet_name: str, owner_surname: str) -> dict[str, Any]:
        """Which of a pet's vaccinations are due or overdue, by the pet's name and the owner's surname"""
        key = (_name(pet_name), _name(owner_surname))
        for pet, owner, species, shots in PETS:
            if (_name(pet), _name(owner)) == key:
                status = {}
                for shot, due in shots.items():
                    when = dt.date.fromisoformat(due)
                    status[shot] = (f"overdue since {_say(when)}" if when < TODAY else
                                    f"due soon, on {_say(when)}" if (when - TODAY).days <= 30 else
                                    f"up to date, next due {_say(when)}")
                return {"pet": pet, "owner": owner, "species": species, "vaccinations": status}
        return {"found": False, "note": f"no pet called {pet_name} under the surname {owner_surname}"}

    def free_checkup_times(self, day: Day) -> str:
        """Free check-up times on a day of the week"""
        if day == "sunday":
            return "The clinic is closed on Sunday; check-ups are Monday to Saturday."
        free = [t for t in TIMES if (day, t) not in self.booked]
        return f"On {day.title()} check-ups are free at {', '.join(free)}" if free else f"{day.title()} is full."

    def book_checkup(self, pet_name: str, day: Day, time: Time) -> str:
        """Book a check-up for a pet on a day at a time"""
        if day == "sunday":
            return "The clinic is closed on Sunday; check-ups are Monday to Saturday."
        if (day, time) in self.booked:
            return f"{day.title()} at {time} is already taken. {self.free_checkup_times(day)}"
        self.booked[(day, time)] = pet_name
        return f"Done: {pet_name} is booked for a check-up on {day.title()} at {time}".rstrip(".") + "."

    def tools(self) -> list[Tool]:
        return [Tool(self.vaccinations_due), Tool(self.free_checkup_times),
                Tool(self.book_checkup, mutates=True, confirm="book a check-up for {pet_name} on {day} at {time}")]


def open_clinic(data_dir: str | Path) -> Clinic:
    """The agent file's `toolset` (nothing is kept in data_dir: the clinic lives in memory)."""
    return Clinic()
