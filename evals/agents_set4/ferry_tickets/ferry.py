"""Skerry Isles Ferries' booking line: sailing times on a day, booking tickets on a sailing (after a yes), and a
booking looked up by its reference (two letters and four digits, like FB2291).

Run it with  voiceloop serve --agent evals/agents_set4/ferry_tickets/ferry.py:build --llm local
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from loop import Agent, LoopConfig, ScriptedModel, Tool
from loop.kinds import count, identifier, person_name

Day = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
Sailing = Literal["7 a.m.", "9 a.m.", "10:30 a.m.", "1 p.m.", "2 p.m.", "5 p.m.", "6 p.m."]
Ticket = Literal["foot passenger", "car", "van", "motorbike"]
WEEKDAY_SAILINGS = ["7 a.m.", "10:30 a.m.", "2 p.m.", "6 p.m."]
WEEKEND_SAILINGS = ["9 a.m.", "1 p.m.", "5 p.m."]
FULL_FOR_VEHICLES = {("friday", "6 p.m."), ("saturday", "9 a.m.")}  # the car deck is full
PRICES = {"foot passenger": 12, "car": 45, "van": 60, "motorbike": 25}  # dollars each way; vehicle with its driver
# reference -> name, ticket, passengers, day, sailing
BOOKINGS = {"FB2291": ("Alan Marsh", "car", 2, "friday", "10:30 a.m."),
            "FB3050": ("Nina Patel", "foot passenger", 1, "saturday", "9 a.m."),
            "KX7714": ("Owen Price", "van", 1, "monday", "7 a.m."),
            "FB4408": ("Rosa Lind", "motorbike", 1, "sunday", "5 p.m.")}


def sailings_on(day: str) -> list[str]:
    return WEEKEND_SAILINGS if day in ("saturday", "sunday") else WEEKDAY_SAILINGS


def said(times: list[str]) -> str:
    return f"{', '.join(times[:-1])} and {times[-1]}" if len(times) > 1 else times[0]


def sailing_times(day: Day) -> str:
    """The ferry's sailing times from Kelport to Skerry Island on a day of the week"""
    day = day.lower()
    return f"On {day.title()} we sail from Kelport at {said(sailings_on(day))}".rstrip(".") + "."


def build(call_id: str = "") -> Agent:
    bookings = dict(BOOKINGS)   # each call starts from the same bookings
    made = [0]

    def find_booking(reference: Annotated[str, identifier(letters=2, digits=4)]) -> dict[str, object]:
        """A ferry booking's name, ticket, day and sailing, by its reference: two letters and four digits"""
        key = "".join(ch for ch in str(reference).upper() if ch.isalnum())
        if key not in bookings:
            return {"reference": reference, "found": False, "note": "no booking with that reference"}
        name, ticket, passengers, day, sailing = bookings[key]
        return {"reference": key, "name": name, "ticket": ticket, "passengers": passengers,
                "sailing": f"{day.title()} at {sailing}"}

    def book_tickets(name: Annotated[str, person_name()], day: Day, sailing: Sailing, ticket: Ticket,
                     passengers: Annotated[int, count(), Field(ge=1, le=9)] = 1) -> str:
        """Book tickets on a sailing: a vehicle (car, van, motorbike) with its passengers, or foot passengers"""
        day = day.lower()
        if sailing not in sailings_on(day):
            return f"There is no {sailing} sailing on {day.title()}; we sail at {said(sailings_on(day))}."
        if ticket != "foot passenger" and (day, sailing) in FULL_FOR_VEHICLES:
            return (f"Sorry, the car deck is full on the {sailing} sailing on {day.title()}. "
                    "Foot passenger tickets are still available.")
        made[0] += 1
        reference = f"FB{5500 + made[0]}"
        bookings[reference] = (name, ticket, passengers, day, sailing)
        people = "passenger" if passengers == 1 else "passengers"
        what = f"{passengers} foot {people}" if ticket == "foot passenger" else f"a {ticket} and {passengers} {people}"
        price = PRICES[ticket] * (passengers if ticket == "foot passenger" else 1) + (
            0 if ticket == "foot passenger" else PRICES["foot passenger"] * (passengers - 1))
        return (f"Booked: {what} on the {sailing} sailing on {day.title()}, under {name}. Your reference is "
                f"{reference}, and the fare is ${price} each way.")

    prompt = (
        "You answer the phone for Skerry Isles Ferries, sailing from Kelport to Skerry Island. Be friendly and brief: "
        "one or two short sentences.\n"
        "Only a tool knows the sailing times and the bookings. Never make up a time, a fare or a reference.\n"
        "- the caller asks when the ferry sails on a day -> sailing_times\n"
        "- the caller asks about their booking and gives the reference (two letters and four digits) -> find_booking\n"
        "- the caller wants to book and has given their name, the day, the sailing time and whether they bring a car, "
        "a van, a motorbike or come as a foot passenger, and how many people -> book_tickets\n"
        "If the name, the day, the sailing, the ticket type or the reference is missing, ask for it. "
        "After a tool result, tell the caller what it says.\n"
        "What you may tell callers without a tool: the crossing takes 50 minutes; check in 30 minutes before the "
        "sailing with a vehicle, 10 minutes on foot. Dogs travel free on a lead on the outside deck.\n"
        "You cannot help with anything else: no refunds, no lost property, no weather or sea conditions.")
    return Agent(model=ScriptedModel(["I can help with sailings and tickets. Which day are you travelling?"]),
                 config=LoopConfig.profile("voice"),
                 tools=[Tool(sailing_times), Tool(find_booking),
                        Tool(book_tickets, mutates=True,
                             confirm="book {ticket} tickets for {passengers} on the {sailing} sailing on {day} "
                                     "under {name}")],
                 system_prompt=prompt, name="ferry_tickets",
                 scope="Sorry, I can only help with sailing times and ferry bookings.",
                 vocabulary=["Skerry Isles", "Skerry Island", "Kelport", "ferry", "sailing", "foot passenger",
                             "car deck", "reference", "Alan Marsh", "Nina Patel", "Owen Price", "Rosa Lind"],
                 related=[["sailing", "ferry", "boat", "crossing", "departure"],
                          ["book", "booking", "ticket", "reserve", "reservation"]])


build.greeting = "Skerry Isles Ferries, how can I help?"
