"""Riverbend Paddle Hire's phone line: the boats free on a day, hiring a boat (after a yes), and cancelling a hire
by its four-digit booking number (after a yes).

Run it with  voiceloop serve --agent evals/agents_set5/kayak_hire/paddle.py:build --llm local
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field

from loop import Agent, LoopConfig, ScriptedModel, Tool
from loop.kinds import count, identifier, person_name, when

Boat = Literal["single kayak", "double kayak", "canoe", "paddleboard"]
Day = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
FLEET = {"single kayak": 4, "double kayak": 2, "canoe": 3, "paddleboard": 5}
# booking number: (name, boat, day, start, hours)
HIRES = {
    "5120": ("Fiona Ward", "double kayak", "saturday", "10 a.m.", 2),
    "5133": ("George Bell", "canoe", "sunday", "1 p.m.", 3),
    "5147": ("Hana Sato", "paddleboard", "saturday", "2 p.m.", 1),
    "5151": ("Ian Ross", "double kayak", "saturday", "11 a.m.", 4),
}
FIRST_NEW = 6001
_HOUR_WORDS = {w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                                           "nine", "ten", "eleven", "twelve"))}


def start_hour(value: str) -> int | None:
    """'10 a.m.', '2 p.m.', '14:00', 'two in the afternoon', '10' -> the hour on a 24-hour clock (9 to 17)."""
    text = str(value).lower().replace(".", "")
    found = re.search(r"\d{1,2}", text) or re.search(r"\b(" + "|".join(_HOUR_WORDS) + r")\b", text)
    if not found:
        return None
    hour = int(found.group(0)) if found.group(0).isdigit() else _HOUR_WORDS[found.group(0)]
    later = "pm" in text.replace(" ", "") or "afternoon" in text or "evening" in text
    if hour < 12 and (later or ("am" not in text.replace(" ", "") and hour < 8)):   # "at two": the afternoon
        hour += 12
    return hour


def said_hour(hour: int) -> str:
    return f"{hour} a.m." if hour < 12 else "12 noon" if hour == 12 else f"{hour - 12} p.m."


def build(call_id: str = "") -> Agent:
    hires = dict(HIRES)   # each call starts from the same bookings
    made: list[str] = []

    def free_on(day: str) -> dict[str, int]:
        taken = {boat: 0 for boat in FLEET}
        for _, boat, d, _, _ in hires.values():
            if d == day:
                taken[boat] += 1
        return {boat: FLEET[boat] - taken[boat] for boat in FLEET}

    def boats_free(day: Day) -> dict[str, object]:
        """How many of each boat are free to hire on a day: single kayaks, double kayaks, canoes, paddleboards"""
        day = day.lower()
        free = free_on(day)
        return {"day": day.title(), **{f"{boat}s free": n for boat, n in free.items()}}

    def hire_boat(name: Annotated[str, person_name()], boat: Boat, day: Day,
                  start: Annotated[str, when(time=True)], hours: Annotated[int, count(), Field(ge=1, le=4)]) -> str:
        """Hire a boat for a day: the customer's name, the boat, the day, the start time and 1 to 4 hours"""
        day = day.lower()
        hour = start_hour(start)
        if hour is None:
            return f"I didn't catch the start time {start!r}; we hire boats from 9 a.m., the last back by 6 p.m."
        if hour < 9 or hour + hours > 18:
            return "Boats go out from 9 a.m. and must be back by 6 p.m.; please pick another start time."
        if free_on(day)[boat] < 1:
            return f"Sorry, all the {boat}s are hired out on {day.title()}."
        made.append(name)
        number = str(FIRST_NEW + len(made) - 1)
        hires[number] = (name, boat, day, said_hour(hour), hours)
        plural = "hour" if hours == 1 else "hours"
        return (f"Booked: a {boat} for {name} on {day.title()} from {said_hour(hour)} for {hours} {plural}. "
                f"The booking number is {number}; please arrive 15 minutes early.")

    def cancel_hire(booking_number: Annotated[str, identifier(digits=4)]) -> str:
        """Cancel a boat hire by its four-digit booking number"""
        number = "".join(ch for ch in str(booking_number) if ch.isdigit())
        if number not in hires:
            return f"I can't find a booking {booking_number}; the booking number is in the confirmation email."
        name, boat, day, start, _ = hires.pop(number)
        done = f"Cancelled: {name}'s {boat} on {day.title()} at {start}".rstrip(".")
        return done + ". The deposit is refunded within 5 days."

    prompt = (
        "You answer the phone for Riverbend Paddle Hire on the river. Be cheerful and brief: one or two short "
        "sentences.\n"
        "Only a tool knows which boats are free and what is booked. Never make up a boat, a time or a booking.\n"
        "- the caller asks what boats are free on a day -> boats_free\n"
        "- the caller wants to hire a boat, and has given their name, the boat, the day, the start time and the "
        "hours -> hire_boat\n"
        "- the caller wants to cancel and gives the four-digit booking number -> cancel_hire\n"
        "The boats are: single kayak, double kayak, canoe, paddleboard. Hires are 1 to 4 hours, between 9 a.m. and "
        "6 p.m.\n"
        "If the name, the boat, the day, the start time, the hours or the booking number is missing, ask for it. "
        "After a tool result, tell the caller what it says.\n"
        "What you may tell callers without a tool: an hour is $20 for a single kayak or a paddleboard, $30 for a "
        "double kayak or a canoe; life jackets are included; children must be 8 or older; if the river is too "
        "high we close and phone everyone who has booked.")
    return Agent(model=ScriptedModel(["I can help with boat hire. Which day are you thinking of?"]),
                 config=LoopConfig.profile("voice"),
                 tools=[Tool(boats_free),
                        Tool(hire_boat, mutates=True,
                             confirm="hire a {boat} for {name} on {day} at {start} for {hours} hours"),
                        Tool(cancel_hire, mutates=True, reversible=False, confirm="cancel booking {booking_number}")],
                 system_prompt=prompt, name="kayak_hire",
                 scope="Sorry, I can only help with hiring boats: what's free, bookings and cancellations.",
                 vocabulary=["Riverbend", "paddle hire", "kayak", "double kayak", "single kayak", "canoe",
                             "paddleboard", "booking number", "life jacket"],
                 related=[("boat", "boats", "kayak", "kayaks", "canoe", "paddleboard", "paddle", "hire", "rent"),
                          ("book", "booking", "hire", "reserve", "reservation")])


build.greeting = "Riverbend Paddle Hire, hi! How can I help?"
