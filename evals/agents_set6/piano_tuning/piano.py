"""Keynote Piano Services' phone line: what a tuning costs, a home tuning visit booked (after a yes), and how a
workshop repair is going by its five-digit repair number. Today is Tuesday, July 7, 2026.

Run it with  voiceloop serve --agent evals/agents_set6/piano_tuning/piano.py:build --llm local
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from loop import Agent, LoopConfig, ScriptedModel, Tool
from loop.kinds import address, identifier, person_name, when

TODAY = dt.date(2026, 7, 7)
Piano = Literal["upright", "baby grand", "grand", "digital"]
PRICES = {"upright": 110, "baby grand": 140, "grand": 160}
TUNER_BOOKED = {dt.date(2026, 7, 9), dt.date(2026, 7, 10), dt.date(2026, 7, 16)}
# repair number: customer, piano, work, status
REPAIRS = {
    "40817": ("Margaret Doyle", "upright", "two broken bass strings replaced", "ready on July 14"),
    "40822": ("Sam Whitfield", "upright", "the hammers re-felted",
              "waiting for hammer felt from Germany, about two more weeks"),
    "40835": ("St Anne's School", "grand", "a sticking key action repaired", "finished, delivered back on Friday"),
}
FIRST_NEW_VISIT = 5501
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
             "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
             "eighteenth", "nineteenth")
_DAY_WORDS = {w: i + 1 for i, w in enumerate(_ORDINALS)} | {"twentieth": 20, "thirtieth": 30}


def parse_date(value: str) -> dt.date | None:
    """'July 15', 'the fifteenth of July', '21st', 'Wednesday', 'tomorrow' -> a date; None when unclear."""
    text = str(value).lower().replace("-", " ")
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
        return TODAY + dt.timedelta(days=(weekday - TODAY.weekday()) % 7 or 7)
    return None


def tuning_price(piano: Piano) -> str:
    """What a tuning costs for a kind of piano: upright, baby grand, grand or digital"""
    if piano == "digital":
        return "Digital pianos never need tuning, so there's nothing to pay; if one sounds wrong, ask its maker."
    article = "an" if piano == "upright" else "a"
    return f"Tuning {article} {piano} piano is ${PRICES[piano]}, and takes about an hour and a half."


def repair_status(repair_number: Annotated[str, identifier(digits=5)]) -> dict[str, Any]:
    """How a piano repair in our workshop is going, by its five-digit repair number"""
    number = "".join(ch for ch in str(repair_number) if ch.isdigit())
    if number not in REPAIRS:
        return {"repair": repair_number, "found": False, "note": "no repair with that number; it has five digits"}
    _, piano, work, status = REPAIRS[number]
    return {"repair": number, "piano": piano, "work": work, "status": status}


def build(call_id: str = "") -> Agent:
    visits: list[str] = []
    booked = set(TUNER_BOOKED)

    def book_tuning(name: Annotated[str, person_name()], address: Annotated[str, address()],
                    date: Annotated[str, when(date=True)], piano: Piano) -> str:
        """Book a tuner to come and tune a piano at the customer's home: their name, address, the date and the
        kind of piano"""
        if piano == "digital":
            return "Digital pianos never need tuning, so I haven't booked a visit."
        day = parse_date(date)
        if day is None:
            return f"I didn't catch the date {date!r}; say the day and the month, like July 15."
        if day <= TODAY:
            return "The earliest we can come is tomorrow."
        if day.weekday() >= 5:
            return "Our tuners visit Monday to Friday only."
        if day in booked:
            return f"Sorry, the tuner is fully booked on {day:%A}, {day:%B} {day.day}."
        booked.add(day)
        visits.append(name)
        number = FIRST_NEW_VISIT + len(visits) - 1
        return (f"Booked: the tuner will come to {address} on {day:%A}, {day:%B} {day.day}, between 9 and 1, to "
                f"tune your {piano}. It's ${PRICES[piano]}, paid on the day. Your visit number is {number}.")

    prompt = (
        "You answer the phone for Keynote Piano Services, piano tuners and repairers. Be friendly and brief: one or "
        "two short sentences.\n"
        "Only a tool knows prices, free dates and repairs. Never make up a price, a date or a repair's progress.\n"
        "- the caller asks what a tuning costs for their kind of piano -> tuning_price\n"
        "- the caller wants a tuner to come, and has given their name, address, the date and the kind of piano "
        "-> book_tuning\n"
        "- the caller asks how their repair is going and gives the five-digit repair number -> repair_status\n"
        "Pianos are upright, baby grand, grand or digital. Today is Tuesday, July 7.\n"
        "If the name, the address, the date, the kind of piano or the repair number is missing, ask for it. After a "
        "tool result, tell the caller what it says.\n"
        "What you may tell callers without a tool: a piano should be tuned twice a year, or once a year if it isn't "
        "played much; we don't move pianos, but we can recommend a piano mover; our workshop is open Monday to "
        "Friday, 9 to 5.\n"
        "You cannot help with anything else: we don't sell pianos, give lessons or value pianos.")
    return Agent(model=ScriptedModel(["I can help with piano tuning. What kind of piano is it?"]),
                 config=LoopConfig.profile("voice"),
                 tools=[Tool(tuning_price), Tool(repair_status),
                        Tool(book_tuning, mutates=True,
                             confirm="book a tuning of your {piano} for {name} at {address} on {date}")],
                 system_prompt=prompt, name="piano_tuning",
                 scope="Sorry, I can only help with piano tuning and our piano repairs.",
                 vocabulary=["Keynote", "upright", "baby grand", "grand piano", "repair number", "tuner", "tuning",
                             "Rowan Crescent", "Hillside Road"],
                 related=[("piano", "pianos", "tune", "tuning", "tuner", "keys", "out of tune", "sounds"),
                          ("repair", "repairs", "fix", "fixed", "workshop", "ready", "strings", "hammers")])


build.greeting = "Keynote Piano Services, hello. How can I help?"
