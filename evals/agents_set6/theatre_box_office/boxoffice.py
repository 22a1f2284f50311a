"""The Lyric Theatre's box office line: seats left for a show on a date, seats reserved to pay for at collection
(after a yes), and a reservation looked up by its reference (two letters and four digits, LY4821).
Today is Tuesday, July 7, 2026.

Run it with  voiceloop serve --agent evals/agents_set6/theatre_box_office/boxoffice.py:build --llm local
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from pydantic import Field

from loop import Agent, LoopConfig, ScriptedModel, Tool
from loop.kinds import count, identifier, person_name, when

TODAY = dt.date(2026, 7, 7)
Show = Literal["Macbeth", "The Wind in the Willows", "Blithe Spirit"]
Area = Literal["stalls", "circle"]
PRICES = {"stalls": 32, "circle": 24}
D = dt.date


def _performances() -> dict[tuple[str, dt.date], str]:
    shows: dict[tuple[str, dt.date], str] = {}
    for i in range(0, 19):                       # Macbeth: Tuesday to Saturday evenings, July 7 to 25
        day = TODAY + dt.timedelta(days=i)
        if day.weekday() in (1, 2, 3, 4, 5):
            shows[("Macbeth", day)] = "7:30 p.m."
        if day.weekday() in (5, 6):              # The Wind in the Willows: weekend matinees to July 26
            shows[("The Wind in the Willows", day)] = "2 p.m."
    shows[("The Wind in the Willows", D(2026, 7, 26))] = "2 p.m."
    for i in range(3, 9):                        # Blithe Spirit: August 3 to 8
        shows[("Blithe Spirit", D(2026, 8, i))] = "7:30 p.m."
    return shows


PERFORMANCES = _performances()
# seats left that differ from the usual 40 stalls, 30 circle
SEATS_LEFT = {("Macbeth", D(2026, 7, 10)): {"stalls": 0, "circle": 14},
              ("Macbeth", D(2026, 7, 11)): {"stalls": 6, "circle": 2},
              ("The Wind in the Willows", D(2026, 7, 12)): {"stalls": 0, "circle": 0}}
# reference: name, show, date, seats, area, paid?
RESERVATIONS = {
    "LY4821": ("Brian Cole", "Macbeth", D(2026, 7, 10), 2, "stalls", False),
    "LY5077": ("Tessa Morgan", "The Wind in the Willows", D(2026, 7, 18), 4, "circle", True),
    "LY5102": ("Priya Nair", "Blithe Spirit", D(2026, 8, 6), 2, "stalls", False),
}
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
             "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
             "eighteenth", "nineteenth")
_DAY_WORDS = {w: i + 1 for i, w in enumerate(_ORDINALS)} | {"twentieth": 20, "thirtieth": 30}


def parse_date(value: str) -> dt.date | None:
    """'July 18', 'the eighteenth of July', '19th', 'Friday', 'tonight', 'tomorrow' -> a date; None when unclear."""
    text = str(value).lower().replace("-", " ")
    if "tonight" in text or "today" in text:
        return TODAY
    if "tomorrow" in text:
        return TODAY + dt.timedelta(days=1)
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
            return dt.date(TODAY.year, month or TODAY.month, day)
        except ValueError:
            return None
    weekday = next((i for i, d in enumerate(WEEKDAYS) if d in text), None)
    if weekday is not None:
        return TODAY + dt.timedelta(days=(weekday - TODAY.weekday()) % 7)
    return None


def _say(day: dt.date) -> str:
    return f"{day:%A}, {day:%B} {day.day}"


def build(call_id: str = "") -> Agent:
    seats_left_now = {key: dict(v) for key, v in SEATS_LEFT.items()}
    reservations = dict(RESERVATIONS)

    def _left(show: str, day: dt.date) -> dict[str, int]:
        return seats_left_now.setdefault((show, day), {"stalls": 40, "circle": 30})

    def seats_left(show: Show, date: Annotated[str, when(date=True)]) -> dict[str, Any]:
        """How many seats are left in the stalls and the circle for a show on a date, and the start time"""
        day = parse_date(date)
        if day is None:
            return {"note": f"I couldn't read the date {date!r}; say the day and the month, like July 18"}
        if (show, day) not in PERFORMANCES:
            on = sorted(d for s, d in PERFORMANCES if s == show and d >= TODAY)
            span = f"{on[0]:%B} {on[0].day} to {on[-1]:%B} {on[-1].day}" if on else "no dates"
            return {"show": show, "note": f"no performance on {_say(day)}; it runs {span}"}
        left = _left(show, day)
        if not any(left.values()):
            return {"show": show, "date": _say(day), "note": "sold out"}
        return {"show": show, "date": _say(day), "starts": PERFORMANCES[(show, day)],
                "stalls": f"{left['stalls']} seats left at ${PRICES['stalls']}" if left["stalls"] else "sold out",
                "circle": f"{left['circle']} seats left at ${PRICES['circle']}" if left["circle"] else "sold out"}

    def reserve_seats(name: Annotated[str, person_name()], show: Show, date: Annotated[str, when(date=True)],
                      seats: Annotated[int, count(), Field(ge=1, le=8)], area: Area) -> str:
        """Reserve seats for a show on a date, paid for when collected at the box office: the customer's name,
        the show, the date, how many seats (up to 8) and stalls or circle"""
        day = parse_date(date)
        if day is None or (show, day) not in PERFORMANCES:
            return f"There's no performance of {show} on {date}."
        left = _left(show, day)
        if left[area] < seats:
            return f"Sorry, there are only {left[area]} seats left in the {area} for {show} on {_say(day)}."
        left[area] -= seats
        reference = f"LY{5201 + len(reservations) - len(RESERVATIONS)}"
        reservations[reference] = (name, show, day, seats, area, False)
        return (f"Reserved: {seats} seats in the {area} for {show} on {_say(day)} at {PERFORMANCES[(show, day)]}, "
                f"for {name}. That's ${seats * PRICES[area]}, paid when you collect. Your reference is {reference}.")

    def reservation(reference: Annotated[str, identifier(letters=2, digits=4)]) -> dict[str, Any]:
        """A reservation's details by its reference, two letters and four digits like LY4821"""
        ref = re.sub(r"[^A-Z0-9]", "", str(reference).upper())
        if ref not in reservations:
            return {"reference": reference, "found": False, "note": "no reservation with that reference"}
        name, show, day, seats, area, paid = reservations[ref]
        return {"reference": ref, "name": name, "show": show, "date": _say(day), "seats": f"{seats} in the {area}",
                "paid": "yes" if paid else "no, pay when you collect, at least 30 minutes before the start"}

    prompt = (
        "You answer the phone for the Lyric Theatre's box office. Be friendly and brief: one or two short "
        "sentences.\n"
        "Only a tool knows the performances, the seats and the reservations. Never make up a date, a price or a "
        "reference.\n"
        "- the caller asks whether there are seats for a show on a date -> seats_left\n"
        "- the caller wants to reserve seats, and has given their name, the show, the date, how many seats and "
        "stalls or circle -> reserve_seats\n"
        "- the caller asks about their reservation and gives its reference -> reservation\n"
        "The shows are Macbeth (Tuesday to Saturday evenings until July 25), The Wind in the Willows (weekend "
        "matinees until July 26) and Blithe Spirit (August 3 to 8). Today is Tuesday, July 7.\n"
        "If the name, the show, the date, the number of seats, stalls or circle, or the reference is missing, ask "
        "for it. After a tool result, tell the caller what it says.\n"
        "What you may tell callers without a tool: reserved seats are paid for at the box office, at least 30 "
        "minutes before the start; Macbeth runs two hours forty minutes with one twenty-minute interval; the "
        "theatre has step-free access to the stalls and a hearing loop.\n"
        "You cannot help with anything else: no cast lists, no restaurants, no parking.")
    return Agent(model=ScriptedModel(["I can help with tickets. Which show would you like to see?"]),
                 config=LoopConfig.profile("voice"),
                 tools=[Tool(seats_left), Tool(reservation),
                        Tool(reserve_seats, mutates=True,
                             confirm="reserve {seats} seats in the {area} for {show} on {date}, for {name}")],
                 system_prompt=prompt, name="theatre_box_office",
                 scope="Sorry, I can only help with tickets and reservations for our shows.",
                 vocabulary=["Lyric Theatre", "Macbeth", "The Wind in the Willows", "Blithe Spirit", "stalls",
                             "circle", "matinee", "reference", "box office"],
                 related=[("ticket", "tickets", "seat", "seats", "show", "performance", "matinee", "play"),
                          ("reserve", "reservation", "booking", "book", "reference")])


build.greeting = "Lyric Theatre box office, how can I help?"
