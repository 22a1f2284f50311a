"""The Harbour View Hotel's rooms and bookings on SQLite, seeded on first use.

The tools are plain methods with type hints that return plain data (a dict for a look-up, a sentence for a
booking or a cancellation). A booking is known by its booking reference (four digits), dates by month and day
("June 12", "the twelfth of June"), all in one season.
"""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
import threading
from pathlib import Path
from typing import Any, Literal

from loop import Tool

YEAR = 2026
RoomType = Literal["single", "double", "suite"]
ROOMS: dict[str, tuple[int, int]] = {"single": (3, 90), "double": (4, 140), "suite": (1, 260)}  # rooms, $ a night
# reference, guest, room type, arrival, nights
BOOKINGS = [("3091", "Tom Hale", "double", "June 20", 3), ("4418", "Maria Lopez", "suite", "June 12", 2),
            ("2207", "Ken Adams", "double", "June 12", 1), ("2208", "Lea Brun", "double", "June 11", 3),
            ("2209", "Omar Said", "single", "June 12", 2)]
FIRST_NEW_REFERENCE = 5201
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
             "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
             "eighteenth", "nineteenth", "twentieth")
_UNITS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_DAY_WORDS = {**{w: i + 1 for i, w in enumerate(_ORDINALS)}, **{w: i + 1 for i, w in enumerate(_UNITS)},
              "thirtieth": 30}


def spoken_day(text: str) -> int | None:
    """'12', '12th', 'twelfth', 'twelve', 'twenty-first', 'thirty first' -> the day of the month."""
    if found := re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\b", text):
        return int(found.group(1))
    words = re.findall(r"[a-z]+", text.replace("-", " "))
    for i, word in enumerate(words):
        if word in ("twenty", "thirty"):
            unit = _DAY_WORDS.get(words[i + 1], 0) if i + 1 < len(words) else 0
            return (20 if word == "twenty" else 30) + (unit if unit < 10 else 0)
        if word in _DAY_WORDS:
            return _DAY_WORDS[word]
    return None


def parse_date(value: str) -> dt.date | None:
    """'June 12', '12 June', 'the twelfth of June', 'June 12th' -> that date in the season's year; None if unclear."""
    text = str(value).lower()
    month = next((i + 1 for i, m in enumerate(MONTHS) if re.search(rf"\b{m[:3]}[a-z]*\b", text)), None)
    day = spoken_day(re.sub(r"\b(" + "|".join(MONTHS) + r")\b", " ", text))
    if month is None or day is None:
        return None
    try:
        return dt.date(YEAR, month, day)
    except ValueError:
        return None


def say_date(day: dt.date) -> str:
    return f"{day:%B} {day.day}"


class Reservations:
    """Owns the bookings table; the tools are its methods."""

    def __init__(self, path: str | Path) -> None:
        self.db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self.lock = threading.Lock()
        with self.lock:
            self.db.execute("CREATE TABLE IF NOT EXISTS bookings (reference TEXT PRIMARY KEY, guest TEXT, "
                            "room TEXT, arrival TEXT, nights INTEGER)")
            if not self.db.execute("SELECT count(*) FROM bookings").fetchone()[0]:
                seeded = [(r, g, room, parse_date(a).isoformat(), n) for r, g, room, a, n in BOOKINGS]  # type: ignore[union-attr]
                self.db.executemany("INSERT INTO bookings VALUES (?,?,?,?,?)", seeded)

    def _free(self, room: str, arrival: dt.date, nights: int) -> int:
        """Rooms of a type free on every night of a stay."""
        with self.lock:
            rows = self.db.execute("SELECT arrival, nights FROM bookings WHERE room=?", (room,)).fetchall()
        stays = [(dt.date.fromisoformat(a), n) for a, n in rows]
        taken = max(sum(1 for a, n in stays if a <= night < a + dt.timedelta(days=n))
                    for night in (arrival + dt.timedelta(days=i) for i in range(nights)))
        return ROOMS[room][0] - taken

    def room_availability(self, arrival: str, nights: int) -> dict[str, Any]:
        """Which rooms are free for a stay, by the arrival date and the number of nights"""
        day = parse_date(arrival)
        if day is None or nights < 1:
            return {"arrival": arrival, "nights": nights, "note": "say the month and the day, like June 12"}
        rooms = [{"type": room, "free": self._free(room, day, nights), "price": f"${price} a night"}
                 for room, (_count, price) in ROOMS.items()]
        return {"arrival": say_date(day), "nights": nights, "rooms": rooms}

    def book_room(self, guest_name: str, arrival: str, nights: int, room_type: RoomType) -> str:
        """Book a room for a guest"""
        day = parse_date(arrival)
        if day is None or nights < 1:
            return f"I didn't catch the date {arrival!r}; say the month and the day, like June 12."
        if self._free(room_type, day, nights) < 1:
            return f"Sorry, there is no {room_type} room free from {say_date(day)} for {nights} nights."
        with self.lock:
            last = self.db.execute("SELECT max(CAST(reference AS INTEGER)) FROM bookings "
                                   "WHERE CAST(reference AS INTEGER) >= ?", (FIRST_NEW_REFERENCE,)).fetchone()[0]
            reference = str((last or FIRST_NEW_REFERENCE - 1) + 1)
            self.db.execute("INSERT INTO bookings VALUES (?,?,?,?,?)",
                            (reference, guest_name, room_type, day.isoformat(), nights))
        plural = "night" if nights == 1 else "nights"
        return (f"Booked: a {room_type} room for {guest_name} from {say_date(day)} for {nights} {plural}, "
                f"booking reference {reference}.")

    def booking_details(self, booking_reference: str) -> dict[str, Any]:
        """A booking's guest, room and dates, by its booking reference"""
        booking = self.booking(booking_reference)
        if booking is None:
            return {"reference": booking_reference, "found": False, "note": "no booking with that reference"}
        return booking

    def cancel_booking(self, booking_reference: str) -> str:
        """Cancel a booking"""
        booking = self.booking(booking_reference)
        if booking is None:
            return f"There is no booking {booking_reference}; the reference is in the confirmation email."
        with self.lock:
            self.db.execute("DELETE FROM bookings WHERE reference=?", (booking["reference"],))
        return f"Booking {booking['reference']} for {booking['guest']} on {booking['arrival']} is cancelled."

    def booking(self, booking_reference: str) -> dict[str, Any] | None:
        reference = "".join(ch for ch in str(booking_reference) if ch.isdigit())
        with self.lock:
            row = self.db.execute("SELECT reference, guest, room, arrival, nights FROM bookings WHERE reference=?",
                                  (reference,)).fetchone()
        if row is None:
            return None
        ref, guest, room, arrival, nights = row
        return {"reference": ref, "guest": guest, "room": room, "arrival": say_date(dt.date.fromisoformat(arrival)),
                "nights": nights}

    def references(self) -> list[str]:
        with self.lock:
            return sorted(r[0] for r in self.db.execute("SELECT reference FROM bookings").fetchall())

    def tools(self) -> list[Tool]:
        return [Tool(self.room_availability), Tool(self.booking_details),
                Tool(self.book_room, mutates=True,
                     confirm="book a {room_type} room for {guest_name} from {arrival} for {nights} nights"),
                Tool(self.cancel_booking, mutates=True, reversible=False, confirm="cancel booking {booking_reference}")]

    def check_expectations(self, expect: dict[str, object]) -> list[str]:
        """A call script's `cancelled: [reference, ...]` (seeded bookings gone) and `new_bookings: ["double June
        12 2 nights"]` (bookings made in the call, without the guest's name), as unmet lines."""
        fails: list[str] = []
        if "cancelled" in expect:
            want = sorted(str(r) for r in expect.pop("cancelled") or [])  # type: ignore[union-attr]
            gone = sorted(r for r, *_ in BOOKINGS if r not in self.references())
            if gone != want:
                fails.append(f"cancelled bookings should be {want}, got {gone}")
        if "new_bookings" in expect:
            want = [str(b).lower() for b in expect.pop("new_bookings") or []]  # type: ignore[union-attr]
            made = [f"{b['room']} {b['arrival']} {b['nights']} nights".lower() for r in self.references()
                    if int(r) >= FIRST_NEW_REFERENCE and (b := self.booking(r))]
            if made != want:
                fails.append(f"new bookings should be {want}, got {made}")
        if expect:
            fails.append(f"expect: {', '.join(sorted(expect))} unknown to the reservations")
        return fails


def open_reservations(data_dir: str | Path) -> Reservations:
    """The agent file's `toolset`: one reservations database per server (or scripted call)."""
    return Reservations(Path(data_dir) / "reservations.db")
