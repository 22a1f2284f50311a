"""Warmwell Heating's diary as a toolset: free visits by weekday, booking a visit, a job's status, cancelling.

Kept in memory: each toolset (one per server, or per scripted call) starts from the same seeded diary.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from loop import Tool
from loop.kinds import address, identifier, person_name

Day = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
Half = Literal["morning", "afternoon"]
Visit = Literal["annual service", "repair"]
JobNumber = Annotated[str, identifier(digits=6)]

# the halves of each weekday an engineer is still free this week
FREE = {"monday": ["morning", "afternoon"], "tuesday": [], "wednesday": ["afternoon"], "thursday": ["afternoon"],
        "friday": ["morning"]}
# job number: name, address, visit, status
JOBS = {
    "204518": ("Alan Pike", "9 Mill Street", "repair",
               "the engineer is waiting for a new diverter valve and will fit it on Thursday morning"),
    "204533": ("Grace Obi", "41 Station Road", "annual service", "booked for Friday afternoon"),
    "204560": ("Tom Harding", "5 Brook Lane", "annual service",
               "done on July 3; the safety certificate was emailed to you"),
}
FIRST_NEW_JOB = 204601


def _digits(value: str) -> str:
    return "".join(ch for ch in str(value) if ch.isdigit())


class HeatingDiary:
    def __init__(self) -> None:
        self.free = {day: list(halves) for day, halves in FREE.items()}
        self.jobs = dict(JOBS)
        self.new_jobs: list[str] = []
        self.cancelled: list[str] = []

    def free_visits(self, day: Day) -> dict[str, Any]:
        """Which halves of a weekday (morning, afternoon) an engineer is free to visit"""
        if day not in self.free:
            return {"day": day.title(), "note": "engineers only visit Monday to Friday"}
        halves = self.free[day]
        if not halves:
            return {"day": day.title(), "note": "we're fully booked that day"}
        return {"day": day.title(), "free": " and ".join(halves)}

    def book_visit(self, name: Annotated[str, person_name()], address: Annotated[str, address()], day: Day,
                   slot: Half, visit: Visit) -> str:
        """Book an engineer's visit for an annual boiler service or a repair: the customer's name, their address,
        the weekday, and morning or afternoon"""
        if day not in self.free:
            return "Sorry, engineers only visit Monday to Friday."
        if slot not in self.free[day]:
            free = " and ".join(self.free[day]) or "nothing"
            return f"Sorry, {day.title()} {slot} is taken; {day.title()} has {free} free."
        self.free[day].remove(slot)
        number = str(FIRST_NEW_JOB + len(self.new_jobs))
        self.new_jobs.append(number)
        self.jobs[number] = (name, address, visit, f"booked for {day.title()} {slot}")
        return (f"Booked: an engineer will come to {address} on {day.title()} {slot} for the {visit}. "
                f"Your job number is {number}.")

    def job_status(self, job_number: JobNumber) -> dict[str, Any]:
        """How a job is going (a service or a repair), by its six-digit job number"""
        number = _digits(job_number)
        if number not in self.jobs or number in self.cancelled:
            return {"job": job_number, "found": False, "note": "no job with that number; it has six digits"}
        name, _, visit, status = self.jobs[number]
        return {"job": number, "name": name, "visit": visit, "status": status}

    def cancel_visit(self, job_number: JobNumber) -> str:
        """Cancel a booked engineer visit, by its six-digit job number"""
        number = _digits(job_number)
        if number not in self.jobs or number in self.cancelled:
            return f"There is no booked visit with job number {job_number}."
        _, where, visit, status = self.jobs[number]
        if not status.startswith("booked"):
            return f"Job {number} can't be cancelled: {status}."
        self.cancelled.append(number)
        return f"Cancelled: the {visit} at {where}, job {number}. There's no charge."

    def tools(self) -> list[Tool]:
        return [Tool(self.free_visits), Tool(self.job_status),
                Tool(self.book_visit, mutates=True,
                     confirm="book a {visit} visit for {name} at {address} on {day} {slot}"),
                Tool(self.cancel_visit, mutates=True, reversible=False,
                     confirm="cancel the visit for job {job_number}")]


def open_heating(data_dir: str | Path) -> HeatingDiary:
    """The agent file's toolset: the diary lives in memory, so data_dir is not used."""
    return HeatingDiary()
