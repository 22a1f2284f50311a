"""Sunway Car Rental's bookings on SQLite: a booking by its reference (two letters, four digits, like KX4729),
and extending a rental to a later return date. Dates are month and day ("June 18", "the 18th of June") in 2026.
"""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
from pathlib import Path
from typing import Any

from loop import Tool

YEAR = 2026
# reference, driver, car, pick-up place, pick-up date, return date, dollars a day
BOOKINGS = [("KX4729", "Priya Nair", "white Toyota Corolla", "Lisbon Airport", "06-08", "06-14", 42),
            ("BT1186", "George Miller", "grey Volkswagen Polo", "Faro Airport", "06-10", "06-17", 35),
            ("MR5530", "Elena Popescu", "black BMW 3 Series", "Porto city centre", "06-05", "06-09", 89),
            ("ZD9012", "Kwame Mensah", "blue Renault Clio", "Lisbon Airport", "06-12", "06-19", 33),
            ("HL3307", "Sarah O'Neill", "silver Ford Kuga", "Faro Airport", "06-01", "06-21", 58),
            ("PC6604", "Yuki Tanaka", "red Fiat 500", "Porto Airport", "06-15", "06-18", 30)]
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def parse_date(value: str) -> dt.date | None:
    """'June 18', '18th June', 'the 18th of June', '2026-06-18' -> a date in 2026; None if unclear."""
    text = str(value).lower()
    if iso := re.fullmatch(r"\s*(\d{4})-(\d{1,2})-(\d{1,2})\s*", text):
        return dt.date(int(iso[1]), int(iso[2]), int(iso[3]))
    month = next((i + 1 for i, m in enumerate(MONTHS) if re.search(rf"\b{m}[a-z]*\b", text)), None)
    day = re.search(r"\b(\d{1,2})(st|nd|rd|th)?\b", text)
    try:
        return dt.date(YEAR, month, int(day[1])) if month and day else None
    except ValueError:
        return None


def ref_key(value: str) -> str:
    return re.sub(r"[^A-Z0-9]", "", str(value).upper())


class Rentals:
    """Owns the bookings table; the tools are its methods."""

    def __init__(self, path: str | Path) -> None:
        self.db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self.db.execute("CREATE TABLE IF NOT EXISTS bookings (ref TEXT PRIMARY KEY, driver TEXT, car TEXT, "
                        "place TEXT, pickup TEXT, dropoff TEXT, rate INTEGER)")
        if not self.db.execute("SELECT count(*) FROM bookings").fetchone()[0]:
            self.db.executemany("INSERT INTO bookings VALUES (?,?,?,?,?,?,?)",
                                [(*b[:4], f"{YEAR}-{b[4]}", f"{YEAR}-{b[5]}", b[6]) for b in BOOKINGS])

    def booking_details(self, reference: str) -> dict[str, Any]:
        """A car rental booking: driver, car, where and when it is picked up and returned, by its reference"""
        row = self.db.execute("SELECT * FROM bookings WHERE ref=?", (ref_key(reference),)).fetchone()
        if row is None:
            return {"reference": reference, "found": False,
                    "note": "no booking with that reference; references are like KX4729"}
        ref, driver, car, place, pickup, dropoff, rate = row
        say = lambda iso: f"{dt.date.fromisoformat(iso):%B} {dt.date.fromisoformat(iso).day}"  # noqa: E731
        return {"reference": ref, "driver": driver, "car": car, "pick-up": f"{place}, {say(pickup)}",
                "return": f"{place}, {say(dropoff)}", "price": f"${rate} a day"}

    def extend_rental(self, reference: str, new_return_date: str) -> str:
        """Extend a rental to a later return date (month and day, like June 18)"""
        row = self.db.execute("SELECT ref, dropoff, rate FROM bookings WHERE ref=?", (ref_key(reference),)).fetchone()
        new = parse_date(new_return_date)
        if row is None:
            return f"There is no booking {reference}; the reference is in the confirmation email."
        if new is None:
            return f"I didn't catch the date {new_return_date!r}; say the month and the day, like June 18."
        old = dt.date.fromisoformat(row[1])
        if new <= old:
            return f"Booking {row[0]} already ends on {old:%B} {old.day}; a new return date must be later."
        extra = (new - old).days
        self.db.execute("UPDATE bookings SET dropoff=? WHERE ref=?", (new.isoformat(), row[0]))
        return (f"Done: booking {row[0]} now ends on {new:%B} {new.day}, {extra} more day{'s' * (extra > 1)} "
                f"at ${row[2]} a day, ${extra * row[2]} in all.")

    def tools(self) -> list[Tool]:
        return [Tool(self.booking_details),
                Tool(self.extend_rental, mutates=True, confirm="extend booking {reference} to {new_return_date}")]


def open_rentals(data_dir: str | Path) -> Rentals:
    """The agent file's `toolset`: one bookings database per server (or scripted call)."""
    return Rentals(Path(data_dir) / "rentals.db")
