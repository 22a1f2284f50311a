"""Muddy Paws Dog Grooming's phone line: a groom's price by service and the dog's size, free times on a date, a
groom booked (after a yes), a groom cancelled by its four-digit booking number (after a yes).
Today is Monday, September 14, 2026; the salon is open Tuesday to Saturday. The date, the time, the dog's name and
the booking number are plain str, explained in the docstrings.

Run it with  voiceloop serve --agent evals/agents_set7/dog_grooming/grooming.py:build --llm local
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Literal

from loop import Agent, LoopConfig, ScriptedModel, Tool
from loop.kinds import person_name

TODAY = dt.date(2026, 9, 14)
Service = Literal["full groom", "bath and brush", "nail trim"]
Size = Literal["small", "medium", "large"]
PRICES = {"full groom": (40, 50, 65), "bath and brush": (30, 38, 48), "nail trim": (12, 12, 12)}
SLOTS = ("9 a.m.", "10:30 a.m.", "12 noon", "1:30 p.m.", "3 p.m.")
# date: slots taken
TAKEN = {dt.date(2026, 9, 15): {"9 a.m.", "10:30 a.m.", "12 noon"},
         dt.date(2026, 9, 17): {"9 a.m.", "10:30 a.m.", "12 noon", "1:30 p.m."},
         dt.date(2026, 9, 19): set(SLOTS)}
# booking number: owner, dog, service, date, time
BOOKINGS = {
    "7014": ("Rachel Green", "Bella", "full groom", dt.date(2026, 9, 15), "9 a.m."),
    "7019": ("Jan Kowalski", "Max", "bath and brush", dt.date(2026, 9, 17), "10:30 a.m."),
    "7022": ("Sue Dunn", "Pip", "nail trim", dt.date(2026, 9, 19), "12 noon"),
}
FIRST_NEW_BOOKING = 7101
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
             "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
             "eighteenth", "nineteenth")
_DAY_WORDS = {w: i + 1 for i, w in enumerate(_ORDINALS)} | {"twentieth": 20, "thirtieth": 30}
_HOURS = {w: i + 1 for i, w in enumerate(("one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                           "ten", "eleven", "twelve"))}


def parse_date(value: str) -> dt.date | None:
    """'September 17', 'the seventeenth', '17th', 'Thursday', 'tomorrow' -> a date from today on; None if unclear."""
    text = str(value).lower().replace("-", " ")
    if "tomorrow" in text:
        return TODAY + dt.timedelta(days=1)
    if "today" in text:
        return TODAY
    month = next((i + 1 for i, m in enumerate(MONTHS) if re.search(rf"\b{m[:3]}[a-z]*\b", text)), None)
    day = None
    if found := re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\b", text):
        day = int(found.group(1))
    else:
        words = re.findall(r"[a-z]+", text)
        for i, word in enumerate(words):
            if word in ("twenty", "thirty"):
                nxt = _DAY_WORDS.get(words[i + 1], 0) if i + 1 < len(words) else 0
                day = (20 if word == "twenty" else 30) + (nxt if nxt < 10 else 0)
                break
            if word in _DAY_WORDS:
                day = _DAY_WORDS[word]
                break
    if day is not None:
        try:
            found_date = dt.date(TODAY.year, month or TODAY.month, day)
        except ValueError:
            return None
        if month is None and found_date < TODAY:
            found_date = dt.date(TODAY.year, TODAY.month % 12 + 1, day)
        return found_date
    weekday = next((i for i, d in enumerate(WEEKDAYS) if d in text), None)
    if weekday is not None:
        return TODAY + dt.timedelta(days=(weekday - TODAY.weekday()) % 7 or 7)
    return None


def parse_slot(value: str) -> str | None:
    """'10:30', 'half past ten', 'half ten', '1.30pm', 'noon', 'twelve', '3' -> one of SLOTS; None otherwise."""
    text = str(value).lower().replace(".", ":").replace(" ", "")
    if "noon" in text or "midday" in text:
        return "12 noon"
    spoken = str(value).lower()
    half = "half" in spoken or ":30" in text
    found = re.search(r"(\d{1,2})", text)
    hour = int(found.group(1)) if found else next((n for w, n in _HOURS.items() if re.search(rf"\b{w}\b", spoken)),
                                                  None)
    if hour is None:
        return None
    for slot in SLOTS:
        slot_hour = int(re.match(r"\d+", slot).group(0))  # type: ignore[union-attr]
        if slot_hour == hour and (":30" in slot) == half:
            return slot
    return None


def say(day: dt.date) -> str:
    return f"{day:%A}, {day:%B} {day.day}"


def groom_price(service: Service, size: Size) -> str:
    """What a groom costs: the service (full groom, bath and brush, nail trim) and the dog's size (small, medium,
    large)"""
    price = PRICES[service][("small", "medium", "large").index(size)]
    if service == "nail trim":
        return f"A nail trim is £{price} for any size of dog, and takes about 15 minutes."
    return f"A {service} for a {size} dog is £{price}, and takes two to three hours."


def build(call_id: str = "") -> Agent:
    taken = {day: set(slots) for day, slots in TAKEN.items()}
    bookings = dict(BOOKINGS)
    cancelled: list[str] = []

    def free_times(date: str) -> str:
        """Free grooming times on a date, like September 17 or Thursday"""
        day = parse_date(date)
        if day is None:
            return f"I didn't catch the date {date!r}; say the day, like Thursday, or the date, like September 17."
        if day.weekday() in (0, 6):
            return "We're closed on Sundays and Mondays; we groom Tuesday to Saturday."
        free = [s for s in SLOTS if s not in taken.get(day, set())]
        if not free:
            return f"Sorry, we're fully booked on {say(day)}."
        return f"On {say(day)} we have {', '.join(free)} free."

    def book_groom(owner: Annotated[str, person_name()], dog_name: str, size: Size, service: Service, date: str,
                   time: str) -> str:
        """Book a groom: the owner's name, the dog's name, the dog's size, the service, the date (like September 17)
        and the time (like 10:30 a.m.)"""
        day = parse_date(date)
        if day is None:
            return f"I didn't catch the date {date!r}; say the day or the date, like September 17."
        if day <= TODAY:
            return "The first day we can fit you in is tomorrow, Tuesday."
        if day.weekday() in (0, 6):
            return "We're closed on Sundays and Mondays; we groom Tuesday to Saturday."
        slot = parse_slot(time)
        if slot is None:
            return f"We start grooms at {', '.join(SLOTS)}; which would suit?"
        if slot in taken.get(day, set()):
            free = [s for s in SLOTS if s not in taken.get(day, set())]
            others = f" We still have {', '.join(free)}." if free else " That day is fully booked."
            return f"Sorry, {slot} on {say(day)} is taken.{others}"
        taken.setdefault(day, set()).add(slot)
        number = str(FIRST_NEW_BOOKING + len(bookings) - len(BOOKINGS))
        bookings[number] = (owner, dog_name, service, day, slot)
        price = PRICES[service][("small", "medium", "large").index(size)]
        return (f"Booked: a {service} for {dog_name} on {say(day)} at {slot}, £{price}, paid on collection. The "
                f"booking number is {number}.")

    def cancel_groom(booking_number: str) -> str:
        """Cancel a groom by its four-digit booking number"""
        number = "".join(ch for ch in str(booking_number) if ch.isdigit())
        if number not in bookings or number in cancelled:
            return f"I can't find booking {booking_number}; booking numbers have four digits."
        _owner, dog, service, day, slot = bookings[number]
        cancelled.append(number)
        taken.get(day, set()).discard(slot)
        return f"Cancelled: {dog}'s {service} on {say(day)} at {slot}".rstrip(".") + "."

    prompt = (
        "You answer the phone for Muddy Paws Dog Grooming. Be warm and brief: one or two short sentences.\n"
        "Only a tool knows prices, free times and bookings. Never make up a price, a time or a booking number.\n"
        "- the caller asks what a groom costs, and has said the service and the dog's size -> groom_price\n"
        "- the caller asks which times are free on a day -> free_times\n"
        "- the caller wants to book, and has given their name, the dog's name, its size, the service, the date and "
        "the time -> book_groom\n"
        "- the caller wants to cancel, and gives the four-digit booking number -> cancel_groom\n"
        "Services are a full groom, a bath and brush, or a nail trim; dogs are small, medium or large. We are open "
        "Tuesday to Saturday. Today is Monday, September 14.\n"
        "If the name, the dog's name, the size, the service, the date, the time or the booking number is missing, "
        "ask for it. After a tool result, tell the caller what it says.\n"
        "What you may tell callers without a tool: dogs must be up to date with their vaccinations; puppies can come "
        "from 16 weeks old; a badly matted coat may have to be clipped short; we ring you when your dog is ready, "
        "usually two to three hours.\n"
        "You cannot help with anything else: no vet advice, no dog walking, no boarding.")
    return Agent(model=ScriptedModel(["I can help with grooming. What's your dog's name?"]),
                 config=LoopConfig.profile("voice"),
                 tools=[Tool(groom_price), Tool(free_times),
                        Tool(book_groom, mutates=True,
                             confirm="book a {service} for {dog_name} on {date} at {time}, in the name of {owner}"),
                        Tool(cancel_groom, mutates=True, confirm="cancel booking {booking_number}")],
                 system_prompt=prompt, name="dog_grooming",
                 scope="Sorry, I can only help with dog grooming here.",
                 vocabulary=["Muddy Paws", "groom", "full groom", "bath and brush", "nail trim", "booking number",
                             "cockapoo", "spaniel", "labrador", "shih tzu"],
                 related=[("groom", "grooming", "trim", "haircut", "cut", "clip", "wash", "bath", "nails", "coat",
                           "dog", "puppy", "pup", "appointment"),
                          ("book", "booking", "slot", "space", "fit", "cancel")])


build.greeting = "Muddy Paws Dog Grooming, hello! How can I help?"
