"""Swift Flow Plumbing's emergency line: book a callout, and the arrival window of a job by its 4-digit number."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from loop import Tool

Problem = Literal["leak", "blocked drain", "no hot water", "burst pipe"]
CALLOUT_FEE = 95  # dollars, the first hour included
# job number: (address, problem, plumber, arrival window or state)
JOBS = {"2719": ("14 Elm Grove", "leak", "Dave", "today between 2 and 4 p.m."),
        "3048": ("8 Mill Lane", "blocked drain", "Kate", "tomorrow between 10 a.m. and 12 noon"),
        "5561": ("22 Station Road", "burst pipe", "Ravi", "on site now"),
        "6630": ("3 Orchard Close", "no hot water", "", "not assigned yet; a plumber will be there within 4 hours"),
        "8102": ("41 Kings Road", "leak", "Kate", "finished yesterday"),
        "9027": ("17 Park Avenue", "blocked drain", "Dave", "today between 4 and 6 p.m.")}
# how soon a new callout is attended, by problem
WINDOW = {"burst pipe": "within the hour", "leak": "within 2 hours",
          "blocked drain": "today between 4 and 6 p.m.", "no hot water": "today between 4 and 6 p.m."}


class Dispatch:
    """The day's jobs; the tools are its methods."""

    def __init__(self) -> None:
        self.jobs = dict(JOBS)
        self.next_number = 7401

    def arrival_window(self, job_number: str) -> dict[str, Any]:
        """When the plumber will arrive for an existing job, by its four-digit job number"""
        number = "".join(ch for ch in job_number if ch.isdigit())
        if number not in self.jobs:
            return {"job": job_number, "found": False, "note": "no such job; job numbers have four digits"}
        address, problem, plumber, window = self.jobs[number]
        job = {"job": number, "address": address, "problem": problem, "arrival": window}
        return {**job, "plumber": plumber} if plumber else job

    def book_callout(self, address: str, problem: Problem) -> str:
        """Send a plumber to the caller's street address for one of: leak, blocked drain, no hot water, burst pipe"""
        for number, (there, what, _, window) in self.jobs.items():
            if there.lower() == address.strip().lower() and what == problem and "finished" not in window:
                found = f"There is already job {number} for a {problem} at {there}: the plumber arrives {window}"
                return found.rstrip(".") + "."
        number, self.next_number = str(self.next_number), self.next_number + 1
        self.jobs[number] = (address.strip(), problem, "", WINDOW[problem])
        done = f"Done: job {number}. A plumber will come to {address.strip()} ({problem}) {WINDOW[problem]}"
        return done.rstrip(".") + f". The callout fee is ${CALLOUT_FEE}."

    def tools(self) -> list[Tool]:
        return [Tool(self.arrival_window),
                Tool(self.book_callout, mutates=True, confirm="send a plumber to {address} for a {problem}")]


def open_dispatch(data_dir: str | Path) -> Dispatch:
    """The agent file's `toolset` (the day's jobs live in memory)."""
    return Dispatch()
