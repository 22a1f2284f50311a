"""Harbourside Museum's timed tickets for the Ocean Giants exhibition: tickets left on a day, booking tickets,
and a booking looked up by its six-digit reference. In memory, one box office per toolset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from loop import Tool
from loop.kinds import count, identifier, person_name

Day = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
Slot = Literal["10 a.m.", "12 noon", "2 p.m.", "4 p.m."]
SLOTS = ("10 a.m.", "12 noon", "2 p.m.", "4 p.m.")
ADULT, CHILD = 16, 8   # dollars; under 5s free
# tickets left per slot (closed on Monday)
LEFT = {"tuesday": (25, 30, 30, 30), "wednesday": (18, 22, 30, 30), "thursday": (30, 30, 30, 30),
        "friday": (12, 20, 9, 30), "saturday": (0, 4, 11, 2), "sunday": (0, 0, 6, 15)}
# reference -> name, day, slot, adults, children
BOOKINGS = {"314159": ("Helen Ward", "saturday", "2 p.m.", 2, 1), "270518": ("Raj Patel", "sunday", "4 p.m.", 1, 0),
            "602211": ("Chloe Martin", "friday", "10 a.m.", 2, 2)}


class BoxOffice:
    def __init__(self) -> None:
        self.left = {day: dict(zip(SLOTS, n, strict=True)) for day, n in LEFT.items()}
        self.bookings = dict(BOOKINGS)
        self.next_reference = 800101

    def tickets_left(self, day: Day) -> dict[str, Any] | str:
        """How many Ocean Giants tickets are left in each time slot on a day"""
        day = day.lower()
        if day not in self.left:
            return "The museum is closed on Mondays."
        return {"day": day.title(), **{s: (f"{n} left" if n else "sold out") for s, n in self.left[day].items()}}

    def book_tickets(self, name: Annotated[str, person_name()], day: Day, slot: Slot,
                     adults: Annotated[int, count(), Field(ge=0, le=10)],
                     children: Annotated[int, count(), Field(ge=0, le=10)] = 0) -> str:
        """Book Ocean Giants tickets for adults and children in one time slot on a day"""
        day = day.lower()
        if day not in self.left:
            return "The museum is closed on Mondays."
        wanted = adults + children
        if wanted < 1:
            return "How many adults and children is the booking for?"
        if self.left[day][slot] < wanted:
            return f"Sorry, only {self.left[day][slot]} tickets are left on {day.title()} at {slot}."
        self.left[day][slot] -= wanted
        reference = str(self.next_reference)
        self.next_reference += 1
        self.bookings[reference] = (name, day, slot, adults, children)
        total = adults * ADULT + children * CHILD
        kids = f" and {children} {'child' if children == 1 else 'children'}" if children else ""
        return (f"Booked: {adults} {'adult' if adults == 1 else 'adults'}{kids} for {name} on {day.title()} at {slot}, "
                f"${total} to pay on arrival, reference {reference}.")

    def find_booking(self, reference: Annotated[str, identifier(digits=6)]) -> dict[str, Any]:
        """A ticket booking's name, day, time and tickets, by its six-digit reference"""
        ref = "".join(ch for ch in str(reference) if ch.isdigit())
        if ref not in self.bookings:
            return {"reference": reference, "found": False, "note": "references have six digits, in the email"}
        name, day, slot, adults, children = self.bookings[ref]
        return {"reference": ref, "name": name, "day": day.title(), "time": slot, "adults": adults,
                "children": children}

    def tools(self) -> list[Tool]:
        return [Tool(self.tickets_left), Tool(self.find_booking),
                Tool(self.book_tickets, mutates=True,
                     confirm="book {adults} adult and {children} child tickets for {name} on {day} at {slot}")]


def open_box_office(data_dir: str | Path) -> BoxOffice:
    return BoxOffice()
