"""A dental practice's appointment book on SQLite: free slots, bookings and cancellations, seeded on first use.

Every result is a sentence a receptionist would say; the model reads it and passes it on.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from loop import Tool

DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday")
HOURS = ("9 a.m.", "10 a.m.", "11 a.m.", "2 p.m.", "3 p.m.", "4 p.m.")
SEED = [("tuesday", "10 a.m.", "Priya Shah"), ("tuesday", "2 p.m.", "Tom Berg"), ("friday", "9 a.m.", "Ada Quinn")]

Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


def _hour(value: str) -> str:
    """'10', '10am', '10:00 AM', '2 pm' -> '10 a.m.' / '2 p.m.' (the calendar's spelling)."""
    text = value.lower().replace(".", "").replace(":00", "").replace(" ", "")
    digits = "".join(ch for ch in text if ch.isdigit())
    if not digits:
        return value
    hour = int(digits)
    pm = "pm" in text or (hour < 8 and "am" not in text)
    return f"{hour} {'p.m.' if pm else 'a.m.'}"


class DayArgs(BaseModel):
    day: Weekday = Field(description="Day of the week, e.g. tuesday")

    @field_validator("day", mode="before")
    @classmethod
    def _lower(cls, value: str) -> str:
        return str(value).strip().lower()


class SlotArgs(DayArgs):
    time: str = Field(description="The hour, e.g. 10 a.m.")
    name: str = Field(description="The patient's name")

    @field_validator("time", mode="before")
    @classmethod
    def _spell(cls, value: str) -> str:
        return _hour(str(value))


class Calendar:
    """Owns the appointments table; the tools are its methods."""

    def __init__(self, path: str | Path) -> None:
        self.db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self.lock = threading.Lock()
        self.db.execute("CREATE TABLE IF NOT EXISTS appointments (day TEXT, time TEXT, name TEXT, "
                        "PRIMARY KEY (day, time))")
        if not self.db.execute("SELECT count(*) FROM appointments").fetchone()[0]:
            self.db.executemany("INSERT INTO appointments VALUES (?,?,?)", SEED)

    def booked(self, day: str) -> dict[str, str]:
        with self.lock:
            return dict(self.db.execute("SELECT time, name FROM appointments WHERE day=?", (day,)).fetchall())

    def free_slots(self, day: str) -> str:
        if day not in DAYS:
            return f"The practice is closed on {day.title()}; we are open Monday to Friday."
        free = [h for h in HOURS if h not in self.booked(day)]
        if not free:
            return f"{day.title()} is fully booked."
        times = f"{', '.join(free[:-1])} and {free[-1]}" if len(free) > 1 else free[0]
        return f"On {day.title()} we have openings at {times}" + ("" if times.endswith(".") else ".")  # "4 p.m."

    def book_appointment(self, day: str, time: str, name: str) -> str:
        if day not in DAYS or time not in HOURS:
            return f"There is no appointment time at {time} on {day.title()}; we are open Monday to Friday."
        with self.lock:
            cur = self.db.execute("INSERT OR IGNORE INTO appointments VALUES (?,?,?)", (day, time, name))
        if cur.rowcount == 0:
            taken = self.booked(day).get(time, "")
            if taken.lower() == name.lower():
                return f"{name} is already booked on {day.title()} at {time}."
            return f"{day.title()} at {time} is already taken. {self.free_slots(day)}"
        return f"Done: {name} is booked on {day.title()} at {time}."

    def cancel_appointment(self, day: str, time: str, name: str) -> str:
        with self.lock:
            cur = self.db.execute("DELETE FROM appointments WHERE day=? AND time=? AND lower(name)=lower(?)",
                                  (day, time, name))
        if cur.rowcount == 0:
            return f"I can't find an appointment for {name} on {day.title()} at {time}."
        return f"Done: {name}'s appointment on {day.title()} at {time} is cancelled."

    def tools(self) -> list[Tool]:
        return [
            Tool(self.free_slots, description="Free appointment times on a weekday", args=DayArgs),
            Tool(self.book_appointment, description="Book an appointment", args=SlotArgs, mutates=True,
                 reversible=True, confirm="book {name} on {day} at {time}"),
            Tool(self.cancel_appointment, description="Cancel an appointment", args=SlotArgs, mutates=True,
                 reversible=False, confirm="cancel {name}'s appointment on {day} at {time}"),
        ]

    def check_expectations(self, expect: dict[str, object]) -> list[str]:
        """A call script's `appointments: {day: {time: name}}` (the whole book on those days), as unmet lines."""
        fails: list[str] = []
        for day, want in dict(expect.pop("appointments", {}) or {}).items():  # type: ignore[call-overload]
            got = self.booked(str(day).lower())
            if got != dict(want or {}):
                fails.append(f"appointments on {day} should be {want}, got {got}")
        if expect:
            fails.append(f"expect: {', '.join(sorted(expect))} unknown to the appointment book")
        return fails


def open_calendar(data_dir: str | Path) -> Calendar:
    """The agent file's `toolset`: one appointment book per server (or scripted call)."""
    return Calendar(Path(data_dir) / "appointments.db")


def opening_hours() -> str:
    """The practice's opening hours"""
    return "We are open Monday to Friday, from 9 in the morning to 5 in the afternoon, closed for lunch 12 to 2."
