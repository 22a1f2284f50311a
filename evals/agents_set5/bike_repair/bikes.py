"""Chainline Cycle Workshop's phone line: a repair's status by its ticket (two letters, four digits: CW4172), the
price of a service, and booking a bike in for a service (after a yes).

Run it with  voiceloop serve --agent evals/agents_set5/bike_repair/bikes.py:build --llm local
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from loop import Agent, LoopConfig, ScriptedModel, Tool
from loop.kinds import identifier, person_name, when

Service = Literal["puncture repair", "basic service", "full service", "brake bleed", "wheel true", "gear tune"]
# service: (price in dollars, how long it takes)
SERVICES: dict[str, tuple[int, str]] = {
    "puncture repair": (15, "done the same day"), "basic service": (55, "one day"),
    "full service": (95, "two days"), "brake bleed": (40, "one day"), "wheel true": (25, "done the same day"),
    "gear tune": (30, "done the same day")}
# ticket: (customer, bike, work, status, ready)
REPAIRS = {
    "CW4172": ("Sarah Hill", "road bike", "full service", "ready to collect", ""),
    "CW4190": ("Tom Price", "mountain bike", "brake bleed", "waiting for parts", "on Friday"),
    "CW4203": ("Emma Ross", "electric bike", "puncture repair", "in the workshop", "today at 4 p.m."),
}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
FULL_DAYS = {"saturday"}   # no room left this week
FIRST_NEW_TICKET = 4301


def _ticket(value: str) -> str:
    return "".join(ch for ch in str(value) if ch.isalnum()).upper()


def service_price(service: Service) -> str:
    """The price of a workshop service and how long it takes"""
    price, takes = SERVICES[service]
    return f"A {service} is ${price}, {takes}."


def build(call_id: str = "") -> Agent:
    repairs = dict(REPAIRS)   # each call starts from the same workshop
    booked: list[tuple[str, str, str]] = []

    def repair_status(ticket: Annotated[str, identifier(letters=2, digits=4)]) -> dict[str, Any]:
        """Where a bike repair is, by the repair ticket: two letters and four digits, like CW4172"""
        key = _ticket(ticket)
        if key not in repairs:
            return {"ticket": ticket, "found": False, "note": "no repair with that ticket; tickets are like CW4172"}
        _, bike, work, status, ready = repairs[key]
        found = {"ticket": key, "bike": bike, "work": work, "status": status}
        return {**found, "ready": ready} if ready else found

    def book_service(name: Annotated[str, person_name()], service: Service, day: Annotated[str, when()]) -> str:
        """Book a bike in for a service on a day: the customer's name, the service and the day they bring it in"""
        said = day.lower()
        weekday = next((d for d in WEEKDAYS if d in said), None)
        if weekday is None:
            return f"I need a day of the week for the booking, not {day!r}."
        if weekday == "sunday":
            return "The workshop is closed on Sunday; bikes can come in Monday to Saturday."
        if weekday in FULL_DAYS:
            return f"Sorry, {weekday.title()} is fully booked. The next free day is Monday."
        booked.append((name, service, weekday))
        number = f"CW{FIRST_NEW_TICKET + len(booked) - 1}"
        price, _ = SERVICES[service]
        return (f"Booked: {name}'s bike is in for a {service} on {weekday.title()}, drop it off before 10 a.m. "
                f"Your ticket is {number}, and the price is ${price}.")

    prompt = (
        "You answer the phone for Chainline Cycle Workshop, a bike repair shop. Be friendly and brief: one or two "
        "short sentences.\n"
        "Only a tool knows about repairs, prices and bookings. Never make up a status, a price or a ticket.\n"
        "- the caller asks whether their bike is ready or how the repair is going, and gives the ticket -> "
        "repair_status\n"
        "- the caller asks what a service costs or how long it takes -> service_price\n"
        "- the caller wants to book their bike in, and has given their name, the service and the day -> "
        "book_service\n"
        "The services are: puncture repair, basic service, full service, brake bleed, wheel true, gear tune. "
        "Repair tickets are two letters and four digits, like CW4172.\n"
        "If the ticket, the service, the day or the name is missing, ask for it. After a tool result, tell the "
        "caller what it says.\n"
        "What you may tell callers without a tool: we are open Monday to Saturday, 8 a.m. to 6 p.m.; we repair "
        "bikes but do not sell bikes.")
    return Agent(model=ScriptedModel(["I can help with repairs. What's your ticket?"]),
                 config=LoopConfig.profile("voice"),
                 tools=[Tool(repair_status), Tool(service_price),
                        Tool(book_service, mutates=True, confirm="book {name}'s bike in for a {service} on {day}")],
                 system_prompt=prompt, name="bike_repair",
                 scope="Sorry, I can only help with bike repairs: their status, service prices and bookings.",
                 vocabulary=["Chainline", "repair ticket", "puncture", "service", "brake bleed", "wheel true",
                             "gear tune", "mountain bike", "road bike", "e-bike"],
                 related=[("bike", "bicycle", "cycle", "e-bike", "mountain"),
                          ("repair", "fix", "fixed", "service", "ready", "mend", "tune")])


build.greeting = "Chainline Cycle Workshop, hello! How can I help?"
