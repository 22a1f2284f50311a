"""Northvale Council's waste line: the next bin collection on a street, reporting a missed collection and ordering a
replacement bin (each write after the caller's yes). Today is Monday, May 11, 2026.

Run it with  voiceloop serve --agent evals/agents_fresh/bins/bins.py:build --llm local
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from loop import Agent, LoopConfig, ScriptedModel, Tool
from loop.kinds import address

BinColour = Literal["green", "blue", "black"]
BIN_KIND = {"green": "garden waste", "blue": "recycling", "black": "general waste"}
TODAY = "Monday, May 11, 2026"
# street -> (day and date of the next collection, which bin goes out then)
STREETS = {"elm grove": ("Elm Grove", "Tuesday, May 12", "blue"),
           "kingsway": ("Kingsway", "Tuesday, May 12", "black"),
           "mill lane": ("Mill Lane", "Wednesday, May 13", "green"),
           "beech avenue": ("Beech Avenue", "Wednesday, May 13", "blue"),
           "station road": ("Station Road", "Thursday, May 14", "black"),
           "church street": ("Church Street", "Thursday, May 14", "green"),
           "orchard close": ("Orchard Close", "Friday, May 15", "blue"),
           "willow way": ("Willow Way", "Friday, May 15", "black")}
_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
MISSED_RETURN_BY = "Wednesday, May 13"   # two working days from today
NEW_BIN_BY = "Friday, May 22"            # nine working days from today


def _street_key(text: str) -> str | None:
    """'Mill Lane', 'mill lane.', '12 Mill Lane', 'the Mill Lane' -> 'mill lane'; None if not on the rounds."""
    words = re.sub(r"[^a-z ]", " ", str(text).lower().replace("'", "")).split()
    plain = " ".join(w for w in words if w != "the")
    for key in STREETS:
        if key in plain:
            return key
    return None


def house_number(text: str) -> str | None:
    """'14 Kingsway' -> '14'; 'fourteen Kingsway' -> '14'; 'forty-two Beech Avenue' -> '42'; None if there is none."""
    if found := re.search(r"\b\d+[a-z]?\b", str(text).lower()):
        return found.group(0)
    words = re.findall(r"[a-z]+", str(text).lower().replace("-", " "))
    total, seen = 0, False
    for word in words:
        if word in _TENS:
            total, seen = total + _TENS[word], True
        elif word in _UNITS:
            total, seen = total + _UNITS.index(word), True
        elif word == "hundred" and seen:
            total *= 100
        elif word == "and" and seen:
            continue
        elif seen:
            break
    return str(total) if seen and total else None


def next_collection(street: str) -> dict[str, Any]:
    """Which bin is collected next on a street, and on which day, by the street name"""
    key = _street_key(street)
    if key is None:
        return {"street": street, "found": False, "note": "not a street on Northvale's collection rounds"}
    name, day, colour = STREETS[key]
    return {"street": name, "next collection": day, "bin": f"{colour} {BIN_KIND[colour]} bin"}


def build(call_id: str = "") -> Agent:
    missed: list[tuple[str, str]] = []     # each call starts with no reports and no orders
    orders: list[tuple[str, str]] = []

    def _house(where: str) -> tuple[str | None, str | None]:
        key = _street_key(where)
        return (STREETS[key][0] if key else None), house_number(where)

    def report_missed_collection(address: Annotated[str, address()], bin_colour: BinColour) -> str:
        """Report that a bin was not emptied on its collection day, at a house number and street, by bin colour"""
        street, number = _house(address)
        if street is None:
            return f"{address} is not on Northvale's collection rounds; please check the street name."
        if number is None:
            return "I need the house number as well as the street to report a missed bin."
        missed.append((f"{number} {street}", bin_colour))
        reference = 3300 + len(missed)
        return (f"Reported: the missed {bin_colour} {BIN_KIND[bin_colour]} bin at {number} {street}, reference "
                f"{reference}. A crew will come back for it by {MISSED_RETURN_BY}; please leave it out at the kerb.")

    def order_replacement_bin(address: Annotated[str, address()], bin_colour: BinColour) -> str:
        """Order a new bin of one colour (green, blue or black) for a house number and street"""
        street, number = _house(address)
        if street is None:
            return f"{address} is not on Northvale's collection rounds; please check the street name."
        if number is None:
            return "I need the house number as well as the street to order a bin."
        orders.append((f"{number} {street}", bin_colour))
        order = 7700 + len(orders)
        return (f"Ordered: a new {bin_colour} {BIN_KIND[bin_colour]} bin for {number} {street}, order {order}. "
                f"It will be delivered by {NEW_BIN_BY}, free of charge.")

    prompt = (
        "You answer Northvale Council's waste line. Be friendly and brief: one or two short sentences.\n"
        f"Today is {TODAY}.\n"
        "Only the tools know collection days, reports and orders. Never make up a day, a date, a bin or a number.\n"
        "The bins: green is garden waste, blue is recycling, black is general waste.\n"
        "- the caller asks which bin is collected next, or on which day, and gives their street -> next_collection\n"
        "- the caller says a bin was not emptied (a missed collection) and gives the house number, the street and the "
        "bin colour -> report_missed_collection\n"
        "- the caller wants a new or replacement bin and gives the bin colour, the house number and the street "
        "-> order_replacement_bin\n"
        "If the street, the house number or the bin colour is missing, ask for it. After a tool result, tell the "
        "caller what it says.\n"
        "You cannot help with anything else: no recycling centre or tip opening times, no bulky waste, no council "
        "tax, no parking, no weather.")
    return Agent(model=ScriptedModel(["I can help with bins. Which street do you live on?"]),
                 config=LoopConfig.profile("voice"),
                 tools=[Tool(next_collection),
                        Tool(report_missed_collection, mutates=True,
                             confirm="report a missed {bin_colour} bin at {address}"),
                        Tool(order_replacement_bin, mutates=True,
                             confirm="order a new {bin_colour} bin for {address}")],
                 system_prompt=prompt, name="bins",
                 scope="Sorry, this line can only help with bin collection days, missed bins and replacement bins.",
                 vocabulary=["Northvale", "bin", "bins", "collection", "missed", "replacement", "recycling",
                             "garden waste", "general waste", "green bin", "blue bin", "black bin", "Elm Grove",
                             "Kingsway", "Mill Lane", "Beech Avenue", "Station Road", "Church Street",
                             "Orchard Close", "Willow Way"])


build.greeting = "Northvale Council waste line. How can I help?"
