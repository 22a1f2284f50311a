"""Crumb & Co bakery's cake line: the celebration cakes and their prices, a cake order (after a yes), and an
order's progress by its four-digit order number. Today is Friday, June 12, 2026; cakes need 48 hours' notice.

Run it with  voiceloop serve --agent evals/agents_set5/cake_orders/cakes.py:build --llm local
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from loop import Agent, LoopConfig, ScriptedModel, Tool
from loop.kinds import free_text, identifier, person_name, when

TODAY = dt.date(2026, 6, 12)
Cake = Literal["chocolate fudge", "lemon drizzle", "carrot", "red velvet", "Victoria sponge"]
Size = Literal["small", "medium", "large"]
SIZES: dict[str, tuple[int, int]] = {"small": (24, 8), "medium": (34, 12), "large": (48, 20)}  # $, servings
CAKES = ("chocolate fudge", "lemon drizzle", "carrot", "red velvet", "Victoria sponge")
# order number: (name, size, cake, collection date, message, status)
ORDERS = {
    "7021": ("Martin Gale", "large", "chocolate fudge", dt.date(2026, 6, 14), "Happy 40th Martin",
             "being decorated, ready to collect from 9 a.m. on June 14"),
    "7035": ("Rosie Adams", "medium", "lemon drizzle", dt.date(2026, 6, 18), "Congratulations Rosie",
             "booked in, baked on June 17, ready to collect on June 18"),
    "7040": ("Kamal Singh", "small", "carrot", dt.date(2026, 6, 20), "",
             "waiting for the $10 deposit, paid in the shop"),
}
FIRST_NEW_ORDER = 7101
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
             "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
             "eighteenth", "nineteenth")
_UNITS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_WORDS = {**{w: i + 1 for i, w in enumerate(_ORDINALS)}, **{w: i + 1 for i, w in enumerate(_UNITS)},
          "twentieth": 20, "thirtieth": 30}


def parse_date(value: str) -> dt.date | None:
    """'June 20', 'the twentieth of June', '20th June', 'Saturday', 'tomorrow' -> a date this year; None if unclear."""
    text = str(value).lower().replace("-", " ")
    if "today" in text:
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
                unit = _WORDS.get(words[i + 1], 0) if i + 1 < len(words) else 0
                day = (20 if word == "twenty" else 30) + (unit if unit < 10 else 0)
                break
            if word in _WORDS:
                day = _WORDS[word]
                break
    if day is not None:
        try:
            return dt.date(TODAY.year, month or TODAY.month, day)
        except ValueError:
            return None
    weekday = next((i for i, d in enumerate(WEEKDAYS) if d in text), None)
    if weekday is not None:
        ahead = (weekday - TODAY.weekday()) % 7 or 7
        return TODAY + dt.timedelta(days=ahead)
    return None


def say_date(day: dt.date) -> str:
    return f"{day:%A}, {day:%B} {day.day}"


def cake_list() -> dict[str, str]:
    """The celebration cakes the bakery makes, and the price of each size"""
    said = {"cakes": ", ".join(CAKES[:-1]) + f" and {CAKES[-1]}"}
    return {**said, **{size: f"${price}, serves {serves}" for size, (price, serves) in SIZES.items()}}


def build(call_id: str = "") -> Agent:
    orders = dict(ORDERS)   # each call starts from the same order book
    made: list[str] = []

    def order_status(order_number: Annotated[str, identifier(digits=4)]) -> dict[str, Any]:
        """How a cake order is coming along, by its four-digit order number"""
        number = "".join(ch for ch in str(order_number) if ch.isdigit())
        if number not in orders:
            return {"order": order_number, "found": False, "note": "no order with that number"}
        _, size, cake, collect, _, status = orders[number]
        return {"order": number, "cake": f"{size} {cake}", "collection": say_date(collect), "status": status}

    def order_cake(cake: Cake, size: Size, name: Annotated[str, person_name()],
                   collection_date: Annotated[str, when(date=True)],
                   message: Annotated[str, free_text()] = "") -> str:
        """Order a celebration cake: the cake, its size, the customer's name, the collection date and an optional
        message piped on top"""
        day = parse_date(collection_date)
        if day is None:
            return f"I didn't catch the collection date {collection_date!r}; say the month and the day, like June 20."
        if day < TODAY + dt.timedelta(days=2):
            return ("Sorry, cakes need 48 hours' notice, so the earliest collection is "
                    f"{say_date(TODAY + dt.timedelta(days=2))}.")
        if day.weekday() == 0:
            return "Sorry, the bakery is closed on Mondays; please pick another collection day."
        made.append(name)
        number = str(FIRST_NEW_ORDER + len(made) - 1)
        orders[number] = (name, size, cake, day, message, "booked in")
        price, _ = SIZES[size]
        on_top = f" with '{message}' on top" if message else ""
        return (f"Ordered: a {size} {cake} cake{on_top} for {name}, to collect on {say_date(day)}. The order "
                f"number is {number}, and it's ${price}, with a $10 deposit paid in the shop.")

    prompt = (
        "You answer the phone for Crumb & Co, a bakery that makes celebration cakes. Be warm and brief: one or two "
        "short sentences.\n"
        "Only a tool knows the cakes, the prices and the orders. Never make up a price, a date or an order number.\n"
        "- the caller asks which cakes there are or what they cost -> cake_list\n"
        "- the caller wants to order a cake, and has given the cake, the size, their name and the collection date "
        "-> order_cake (add the message for the top if they gave one)\n"
        "- the caller asks about an order and gives the four-digit order number -> order_status\n"
        "The cakes are chocolate fudge, lemon drizzle, carrot, red velvet and Victoria sponge; sizes small, medium "
        "and large. Today is Friday, June 12.\n"
        "If the cake, the size, the name, the date or the order number is missing, ask for it. After a tool result, "
        "tell the caller what it says.\n"
        "What you may tell callers without a tool: cakes need 48 hours' notice; the shop is open Tuesday to "
        "Sunday, 8 a.m. to 4 p.m.; every cake is made in a kitchen that uses nuts, so we cannot promise any cake "
        "is free of nuts.")
    return Agent(model=ScriptedModel(["I can help with cakes. Which cake would you like?"]),
                 config=LoopConfig.profile("voice"),
                 tools=[Tool(cake_list), Tool(order_status),
                        Tool(order_cake, mutates=True,
                             confirm="order a {size} {cake} cake for {name}, to collect on {collection_date}")],
                 system_prompt=prompt, name="cake_orders",
                 scope="Sorry, I can only help with our cakes, their prices and cake orders.",
                 vocabulary=["Crumb & Co", "chocolate fudge", "lemon drizzle", "carrot cake", "red velvet",
                             "Victoria sponge", "order number", "collection"],
                 related=[("cake", "cakes", "birthday", "celebration", "sponge", "bake", "baking"),
                          ("order", "ordered", "collect", "collection", "pick", "ready")])


build.greeting = "Hello, Crumb and Co bakery, how can I help?"
