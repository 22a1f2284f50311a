"""City Cabs' booking line: how soon a taxi reaches a pickup area, booking a taxi (after a yes), and a booking
checked or cancelled (after a yes) by its five-digit booking number. The bookings live in memory."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from loop import Tool
from loop.kinds import address, identifier, person_name, when

Area = Literal["city centre", "old town", "riverside", "university", "train station", "airport", "hillside"]
WAIT_MINUTES = {"city centre": 5, "old town": 8, "riverside": 12, "university": 10, "train station": 6,
                "airport": 25, "hillside": 15}
# booking number -> name, pickup address, pickup time, passengers, status
LATER = "booked; a driver is assigned 15 minutes before"
BOOKINGS = {
    "48215": ("Priya Nair", "14 Harbour Road", "today at 8:15 p.m.", 2, "booked; driver Mike, silver Toyota Prius"),
    "30972": ("Owen Hughes", "5 Castle Street", "tomorrow at 9 a.m.", 1, LATER),
    "51160": ("Daniel Okafor", "3 Station Approach", "tomorrow at 6:40 a.m.", 1, LATER),
    "72048": ("Helen Ward", "61 Park Lane", "today at 5:30 p.m.", 4, "booked; driver Sam, black Skoda Octavia estate"),
    "66315": ("James Reid", "9 Victoria Street", "Friday at 11 a.m.", 3, LATER),
}
FIRST_NEW_BOOKING = 60417

_NUMBER_WORDS = (r"\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
                 r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)\b")
BookingNumber = Annotated[str, identifier(digits=5)]


def _number(value: str) -> str:
    """'booking 48215', '48-215', '4 8 2 1 5' -> '48215'."""
    return "".join(ch for ch in str(value) if ch.isdigit())


class Cabs:
    """The day's bookings; the tools are its methods."""

    def __init__(self) -> None:
        self.bookings: dict[str, list[Any]] = {k: list(v) for k, v in BOOKINGS.items()}
        self.next_number = FIRST_NEW_BOOKING

    def pickup_wait(self, area: Area) -> dict[str, Any]:
        """How many minutes a taxi would take right now to reach a pickup area"""
        return {"area": area, "taxi arrives in": f"about {WAIT_MINUTES[area]} minutes"}

    def book_taxi(self, pickup_address: Annotated[str, address()], time: Annotated[str, when()],
                  passengers: Annotated[int, Field(ge=1, le=6)], name: Annotated[str, person_name()]) -> str:
        """Book a taxi from a pickup street address at a time, for 1 to 6 passengers, under the caller's name"""
        if not re.search(r"\d", pickup_address) and not re.search(_NUMBER_WORDS, pickup_address.lower()):
            return "I need the house number as well as the street for the pickup."
        when_said = time.strip().rstrip(".") + ("." if time.strip().endswith("m.") else "")
        if not re.match(r"(at|today|tonight|tomorrow|this|on|in)\b", when_said.lower()):
            when_said = f"at {when_said}"
        number, self.next_number = str(self.next_number), self.next_number + 1
        self.bookings[number] = [name.strip(), pickup_address.strip(), when_said, passengers, "booked"]
        people = "passenger" if passengers == 1 else "passengers"
        return (f"Booked: booking number {number}. A taxi will pick up {name.strip()} at {pickup_address.strip()} "
                f"{when_said} for {passengers} {people}".rstrip(".") + ".")

    def booking_details(self, booking_number: BookingNumber) -> dict[str, Any]:
        """A booking's name, pickup address, time, passengers and status, by its five-digit booking number"""
        number = _number(booking_number)
        if number not in self.bookings:
            return {"booking number": booking_number, "found": False, "note": "no booking with that number"}
        name, pickup, time, passengers, status = self.bookings[number]
        return {"booking number": number, "name": name, "pickup": pickup, "time": time, "passengers": passengers,
                "status": status}

    def cancel_booking(self, booking_number: BookingNumber) -> str:
        """Cancel a taxi booking by its five-digit booking number"""
        number = _number(booking_number)
        if number not in self.bookings:
            return f"There is no booking {booking_number}; booking numbers have five digits."
        if self.bookings[number][4] == "cancelled":
            return f"Booking {number} is already cancelled."
        self.bookings[number][4] = "cancelled"
        name, pickup, time = self.bookings[number][:3]
        return f"Cancelled: booking {number} for {name} from {pickup} {time}".rstrip(".") + ". There is no charge."

    def tools(self) -> list[Tool]:
        return [Tool(self.pickup_wait), Tool(self.booking_details),
                Tool(self.book_taxi, mutates=True,
                     confirm="book a taxi for {name} from {pickup_address} at {time} for {passengers} passengers"),
                Tool(self.cancel_booking, mutates=True, reversible=False, confirm="cancel booking {booking_number}")]


def open_cabs(data_dir: str | Path) -> Cabs:
    """The agent file's `toolset` (the bookings live in memory)."""
    return Cabs()
