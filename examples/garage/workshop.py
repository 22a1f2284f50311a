"""Hartley's Garage: repair jobs, their quotes and collection times on SQLite, seeded on first use.

The tools are plain methods with type hints that return plain data (a dict for a look-up, a sentence for a
booking), and a job is known by its job number: four digits on the customer's booking slip, not an `*_id`.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from pathlib import Path
from typing import Any, Literal

from loop import Tool

# job number, car, work, status, quote in dollars, when it will be ready
JOBS = [("4712", "silver Ford Focus", "new brake pads and front discs", "ready for collection", 240, "now"),
        ("3390", "red Honda Civic", "a new clutch", "waiting for parts", 680, "on Thursday"),
        ("5186", "white Volkswagen Golf", "a yearly service", "in the workshop", 180, "today at 5 p.m."),
        ("6021", "black Toyota Yaris", "a new battery", "ready for collection", 150, "now")]
OPEN_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
Day = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_HOUR_WORDS = {w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                                           "nine", "ten", "eleven", "twelve"))}


def job_key(job_number: str) -> str:
    """'job 4712', '47-12', '4 7 1 2' -> '4712'."""
    return "".join(ch for ch in str(job_number) if ch.isdigit())


def clock_time(value: str) -> str:
    """'10', '10am', 'ten a.m.', '2 pm', 'two in the afternoon' -> '10 a.m.' / '2 p.m.'; else as said."""
    text = value.lower().replace(".", "")
    found = re.search(r"\d{1,2}", text) or re.search(r"\b(" + "|".join(_HOUR_WORDS) + r")\b", text)
    if not found:
        return value
    hour = int(found.group(0)) if found.group(0).isdigit() else _HOUR_WORDS[found.group(0)]
    pm = "pm" in text.replace(" ", "") or "afternoon" in text or "evening" in text or (hour < 8 and "am" not in text)
    return f"{hour} {'p.m.' if pm else 'a.m.'}"


class Workshop:
    """Owns the jobs and collections tables; the tools are its methods."""

    def __init__(self, path: str | Path) -> None:
        self.db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self.lock = threading.Lock()
        with self.lock:
            self.db.execute("CREATE TABLE IF NOT EXISTS jobs (job TEXT PRIMARY KEY, car TEXT, work TEXT, "
                            "status TEXT, quote INTEGER, ready TEXT)")
            self.db.execute("CREATE TABLE IF NOT EXISTS collections (job TEXT PRIMARY KEY, day TEXT, time TEXT)")
            if not self.db.execute("SELECT count(*) FROM jobs").fetchone()[0]:
                self.db.executemany("INSERT INTO jobs VALUES (?,?,?,?,?,?)", JOBS)

    def job(self, job_number: str) -> dict[str, Any] | None:
        with self.lock:
            row = self.db.execute("SELECT job, car, work, status, quote, ready FROM jobs WHERE job=?",
                                  (job_key(job_number),)).fetchone()
        return dict(zip(("job", "car", "work", "status", "quote", "ready"), row, strict=True)) if row else None

    def repair_status(self, job_number: str) -> dict[str, Any]:
        """Where a repair job is: the car, the work, and whether it is ready, by the job number"""
        job = self.job(job_number)
        if job is None:
            return {"job": job_number, "found": False, "note": "no such job; job numbers have four digits"}
        status = {"job": job["job"], "car": job["car"], "work": job["work"], "status": job["status"]}
        return status if job["ready"] == "now" else {**status, "ready": job["ready"]}

    def price_quote(self, job_number: str) -> dict[str, Any]:
        """The price quoted for a repair job, by the job number"""
        job = self.job(job_number)
        if job is None:
            return {"job": job_number, "found": False, "note": "no such job; job numbers have four digits"}
        return {"job": job["job"], "work": job["work"], "quote": f"${job['quote']}", "includes": "parts and labour"}

    def book_collection(self, job_number: str, day: Day, time: str) -> str:
        """Book a time to collect the car of a repair job"""
        job, hour = self.job(job_number), clock_time(time)
        if job is None:
            return f"There is no job {job_number}; the job number is on the booking slip."
        if day not in OPEN_DAYS:
            return "The garage is closed on Sunday; collections are Monday to Saturday."
        if job["status"] != "ready for collection":
            return f"Job {job['job']} is not ready yet: it is {job['status']}, ready {job['ready']}."
        with self.lock:
            self.db.execute("INSERT OR REPLACE INTO collections VALUES (?,?,?)", (job["job"], day, hour))
        done = f"Done: the {job['car']} of job {job['job']} can be collected on {day.title()} at {hour}"
        return done.rstrip(".") + "."

    def collections(self) -> dict[str, str]:
        """Every booked collection: job number -> 'friday 10 a.m.'."""
        with self.lock:
            rows = self.db.execute("SELECT job, day, time FROM collections").fetchall()
        return {job: f"{day} {time}" for job, day, time in rows}

    def tools(self) -> list[Tool]:
        return [Tool(self.repair_status), Tool(self.price_quote),
                Tool(self.book_collection, mutates=True, confirm="book the collection of job {job_number} on "
                                                                 "{day} at {time}")]

    def check_expectations(self, expect: dict[str, object]) -> list[str]:
        """A call script's `collections: {job: "friday 10 a.m."}` (every collection booked), as unmet lines."""
        fails: list[str] = []
        if "collections" in expect:
            want = {str(k): str(v) for k, v in dict(expect.pop("collections") or {}).items()}  # type: ignore[call-overload]
            if self.collections() != want:
                fails.append(f"collections should be {want}, got {self.collections()}")
        if expect:
            fails.append(f"expect: {', '.join(sorted(expect))} unknown to the workshop")
        return fails


def open_workshop(data_dir: str | Path) -> Workshop:
    """The agent file's `toolset`: one workshop per server (or scripted call)."""
    return Workshop(Path(data_dir) / "workshop.db")
