"""Petal & Stem florist's phone line: today's bouquets and prices, ordering a bouquet for delivery (after a yes),
and tracking an order by its five-digit order number.

Run it with  voiceloop serve --agent evals/agents_set4/florist/florist.py:build --llm local
"""

from __future__ import annotations

from typing import Annotated, Literal

from loop import Agent, LoopConfig, ScriptedModel, Tool
from loop.kinds import address, free_text, identifier, person_name

Bouquet = Literal["summer meadow", "red roses", "white lilies", "sunflower burst", "peony blush"]
# bouquet -> price in dollars, in stock today
TODAY = {"summer meadow": (45, True), "red roses": (60, True), "white lilies": (50, True),
         "sunflower burst": (35, True), "peony blush": (55, False)}
# order number -> bouquet, recipient, address, status
ORDERS = {"58213": ("red roses", "Emma Stone", "22 Hill Street", "out for delivery, arriving by 3 p.m. today"),
          "58190": ("white lilies", "George Baker", "5 Mill Lane", "delivered yesterday at 11:40 a.m."),
          "58302": ("summer meadow", "Aisha Khan", "9 Park Road", "being made up; it goes out tomorrow morning"),
          "58311": ("sunflower burst", "Lily Evans", "14 Kingsway",
                    "waiting: nobody answered, we'll try again at 4 p.m.")}


def bouquets_today() -> str:
    """The bouquets the shop can make today, and their prices"""
    ready = [f"{name} at ${price}" for name, (price, stock) in TODAY.items() if stock]
    gone = [name for name, (_, stock) in TODAY.items() if not stock]
    text = f"Today we have {', '.join(ready[:-1])} and {ready[-1]}."
    return text + (f" Sorry, {' and '.join(gone)} is sold out today." if gone else "")


def build(call_id: str = "") -> Agent:
    orders = dict(ORDERS)   # each call starts from the same orders
    made = [0]

    def track_order(order_number: Annotated[str, identifier(digits=5)]) -> dict[str, str]:
        """Where a flower delivery is, by its five-digit order number"""
        number = "".join(ch for ch in str(order_number) if ch.isdigit())
        if number not in orders:
            return {"order_number": order_number, "found": False, "note": "no order with that number"}
        bouquet, recipient, _where, status = orders[number]
        return {"order_number": number, "bouquet": bouquet, "for": recipient, "status": status}

    def order_bouquet(bouquet: Bouquet, recipient: Annotated[str, person_name()],
                      delivery_address: Annotated[str, address()], card_message: Annotated[str, free_text()]) -> str:
        """Order a bouquet delivered today to a recipient at a street address, with a message on the card"""
        price, stock = TODAY[bouquet]
        if not stock:
            return f"Sorry, {bouquet} is sold out today. {bouquets_today()}"
        made[0] += 1
        number = str(59000 + made[0])
        orders[number] = (bouquet, recipient, delivery_address, "being made up; it goes out this afternoon")
        return (f"Ordered: {bouquet} for {recipient} at {delivery_address}, delivered this afternoon, with the card "
                f"\"{card_message}\". That's ${price + 8} with delivery. Your order number is {number}.")

    prompt = (
        "You answer the phone for Petal & Stem, a flower shop. Be cheerful and brief: one or two short sentences.\n"
        "Only a tool knows today's bouquets, prices and the orders. Never make up a bouquet, a price or an order.\n"
        "- the caller asks what flowers or bouquets there are today, or what they cost -> bouquets_today\n"
        "- the caller asks where their delivery is and gives the five-digit order number -> track_order\n"
        "- the caller wants flowers delivered and has given the bouquet, the recipient's name, the delivery address "
        "and the card message -> order_bouquet\n"
        "The bouquets are: summer meadow, red roses, white lilies, sunflower burst, peony blush. If the bouquet, the "
        "recipient, the address, the card message or the order number is missing, ask for it. After a tool result, "
        "tell the caller what it says.\n"
        "What you may tell callers without a tool: delivery is $8 anywhere in town, same day for orders before 1 p.m.; "
        "the shop is open 8 a.m. to 6 p.m., Monday to Saturday.\n"
        "You cannot help with anything else: no weddings or funerals (the events team emails), no plant care advice.")
    return Agent(model=ScriptedModel(["I can help with flowers. Would you like to hear today's bouquets?"]),
                 config=LoopConfig.profile("voice"),
                 tools=[Tool(bouquets_today), Tool(track_order),
                        Tool(order_bouquet, mutates=True,
                             confirm="send {bouquet} to {recipient} at {delivery_address} with the card "
                                     "\"{card_message}\"")],
                 system_prompt=prompt, name="florist",
                 scope="Sorry, I can only help with today's bouquets, flower orders and deliveries.",
                 vocabulary=["Petal & Stem", "bouquet", "summer meadow", "red roses", "white lilies",
                             "sunflower burst", "peony blush", "order number", "card message", "delivery"],
                 related=[["flowers", "bouquet", "bunch", "arrangement", "roses", "lilies"],
                          ["order", "delivery", "deliver", "send"]])


build.greeting = "Petal and Stem, how can I help?"
