"""Packright Removals' phone line: a price for a move by the size of home and the miles, a moving day booked (after a
yes), what is booked for a move by its reference (like PR3018), and a move cancelled (after a yes).
Today is Monday, September 14, 2026. Written in a hurry: most arguments are plain str, explained in the docstrings.

Run it with  voiceloop serve --agent evals/agents_set7/removals/vans.py:build --llm local
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Literal

from loop import Agent, LoopConfig, ScriptedModel, Tool

TODAY = dt.date(2026, 9, 14)
Size = Literal["studio", "one bedroom", "two bedroom", "three bedroom", "four bedroom"]
PRICES = {"studio": 350, "one bedroom": 450, "two bedroom": 650, "three bedroom": 850, "four bedroom": 1100}
CREW = {"studio": 2, "one bedroom": 2, "two bedroom": 3, "three bedroom": 4, "four bedroom": 5}
FULL_DAYS = {dt.date(2026, 9, 18), dt.date(2026, 9, 25), dt.date(2026, 9, 26)}
# move reference: customer, size, from, to, date
MOVES = {
    "PR3018": ("Hannah Moss", "two bedroom", "5 Elm Grove", "31 Beech Avenue", dt.date(2026, 9, 18)),
    "PR3024": ("George Tan", "studio", "Flat 2, 10 Quay Street", "7 Mill Lane", dt.date(2026, 9, 22)),
    "PR3031": ("Olu Adeyemi", "four bedroom", "2 The Paddocks", "88 Kingsley Road", dt.date(2026, 9, 29)),
}
FIRST_NEW_MOVE = 3101
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
             "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
             "eighteenth", "nineteenth")
_DAY_WORDS = {w: i + 1 for i, w in enumerate(_ORDINALS)} | {"twentieth": 20, "thirtieth": 30}


def parse_date(value: str) -> dt.date | None:
    """'September 25', 'the twenty-fifth', '25th', 'Friday', 'tomorrow' -> a date from today on; None if unclear."""
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


def say(day: dt.date) -> str:
    return f"{day:%A}, {day:%B} {day.day}"


def reference_key(value: str) -> str:
    return re.sub(r"[^A-Z0-9]", "", str(value).upper())


def quote(size: Size, miles: int) -> str:
    """A price for a move: the size of home (studio, one to four bedroom) and how many miles it is to the new home"""
    extra = max(0, miles - 20) * 3
    total = PRICES[size] + extra
    crew = CREW[size]
    if extra:
        return (f"A {size} move of {miles} miles is £{total}: £{PRICES[size]} for the move and £3 a mile past "
                f"twenty miles, with a crew of {crew}.")
    return f"A {size} move of {miles} miles is £{total}, with a crew of {crew}."


def build(call_id: str = "") -> Agent:
    moves = dict(MOVES)
    cancelled: list[str] = []

    def move_details(move_reference: str) -> dict[str, Any]:
        """What is booked for a move, by its move reference, like PR3018"""
        key = reference_key(move_reference)
        if key not in moves or key in cancelled:
            return {"found": False, "note": f"no move {move_reference}; references are like PR3018"}
        name, size, origin, to, day = moves[key]
        return {"move": key, "name": name, "home": size, "from": origin, "to": to, "date": say(day),
                "crew arrives": "8 a.m."}

    def book_move(name: str, from_address: str, to_address: str, date: str, size: Size) -> str:
        """Book a moving day: the customer's name, the address they move from, the address they move to, the date
        (like September 29) and the size of home"""
        day = parse_date(date)
        if day is None:
            return f"I didn't catch the date {date!r}; say the day and the month, like September 29."
        if day <= TODAY:
            return "The earliest we can move you is tomorrow."
        if day.weekday() == 6:
            return "We don't move on Sundays."
        if day in FULL_DAYS or any(d == day for *_, d in moves.values()):
            return f"Sorry, we're fully booked on {say(day)}."
        key = f"PR{FIRST_NEW_MOVE + len(moves) - len(MOVES)}"
        moves[key] = (name, size, from_address, to_address, day)
        return (f"Booked: a {size} move for {name} on {say(day)}, from {from_address} to {to_address}. The crew "
                f"arrives at 8 a.m. Your move reference is {key}, and we'll ring you to agree the price.")

    def cancel_move(move_reference: str) -> str:
        """Cancel a booked move by its move reference"""
        key = reference_key(move_reference)
        if key not in moves or key in cancelled:
            return f"I can't find a move {move_reference}; references are like PR3018."
        name, size, _, _, day = moves[key]
        cancelled.append(key)
        note = " As it's within seven days, the £100 deposit is kept." if (day - TODAY).days <= 7 else ""
        return f"Cancelled: the {size} move for {name} on {say(day)}.{note}"

    prompt = (
        "You answer the phone for Packright Removals, a house removals firm. Be friendly and brief: one or two short "
        "sentences.\n"
        "Only a tool knows prices, free dates and booked moves. Never make up a price, a date or a reference.\n"
        "- the caller asks what a move costs, and has given the size of home and the miles -> quote\n"
        "- the caller wants to book a move, and has given their name, both addresses, the date and the size of "
        "home -> book_move\n"
        "- the caller asks about their booked move and gives the move reference -> move_details\n"
        "- the caller wants to cancel their move and gives the move reference -> cancel_move\n"
        "Homes are a studio, or one, two, three or four bedroom. Move references are like PR3018. Today is Monday, "
        "September 14. We move Monday to Saturday.\n"
        "If the name, an address, the date, the size of home, the miles or the reference is missing, ask for it. "
        "After a tool result, tell the caller what it says.\n"
        "What you may tell callers without a tool: we lend up to 30 packing boxes free, delivered a week before the "
        "move; goods in transit insurance up to £50,000 is included; we move upright pianos for £120 extra, but "
        "not grand pianos.\n"
        "You cannot help with anything else: no storage, no house clearances, no cleaning.")
    return Agent(model=ScriptedModel(["I can help with your move. How big is your home?"]),
                 config=LoopConfig.profile("voice"),
                 tools=[Tool(quote), Tool(move_details),
                        Tool(book_move, mutates=True,
                             confirm="book a {size} move for {name} on {date}, from {from_address} to {to_address}"),
                        Tool(cancel_move, mutates=True, reversible=False, confirm="cancel move {move_reference}")],
                 system_prompt=prompt, name="removals",
                 scope="Sorry, I can only help with house moves here.",
                 vocabulary=["Packright", "removals", "move reference", "studio", "bedroom", "PR", "Elm Grove",
                             "Beech Avenue", "Quay Street", "Kingsley Road"],
                 related=[("move", "moving", "removal", "removals", "van", "house", "flat", "home", "furniture",
                           "boxes", "packing", "crew"),
                          ("price", "quote", "cost", "estimate", "miles", "distance")])


build.greeting = "Packright Removals, good morning. How can I help?"
