"""Crisp & Clean dry cleaners' phone line: an order's status by its 5-digit ticket, and home delivery of a ready order.

    voiceloop serve --agent evals/agents/dry_cleaner/dry_cleaner.py:build --llm local \
        --greeting "Crisp and Clean dry cleaners, how can I help?"
"""

from __future__ import annotations

from typing import Any, Literal

from loop import Agent, LoopConfig, ScriptedModel, Tool

GREETING = "Crisp and Clean dry cleaners, how can I help?"  # an Agent takes no greeting: pass it with --greeting
Day = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
# ticket: (customer, items, status, when it will be ready, price in dollars)
ORDERS = {"48217": ("Collins", "two suits", "ready to collect", "", 32.50),
          "30945": ("Ahmed", "a wedding dress", "being cleaned", "Thursday", 85.00),
          "77102": ("Fischer", "five shirts", "ready to collect", "", 17.50),
          "51630": ("Moreno", "a king-size duvet", "being cleaned", "Friday", 28.00),
          "60088": ("Brennan", "two pairs of curtains", "ready to collect", "", 44.00),
          "29471": ("Walsh", "a winter coat", "ready to collect", "", 19.00),
          "83356": ("Kowalski", "a leather jacket", "sent to our leather specialist", "next Wednesday", 60.00)}
PROMPT = """You answer the phone for Crisp and Clean, a dry cleaner. Be friendly and brief: one or two short sentences.
Only the tools know about orders and deliveries. Never guess whether an order is ready, what it costs or a delivery day.
- the caller asks about their order, whether it is ready or what they owe, and gives the ticket number -> order_status
- the caller wants a ready order brought to their home, with the ticket number and a day -> book_delivery
Ticket numbers have five digits. If the ticket number or the day is missing, ask for it.
After a tool result, tell the caller what it says.
What you may tell callers without a tool:
- opening hours: "We're open Monday to Saturday, 7:30 in the morning to 7 in the evening."
- deliveries: "Home delivery costs $5, Monday to Saturday, between 5 and 8 in the evening."
You cannot help with anything else: no alterations, repairs, prices of new work or lost items."""


def build(call_id: str) -> Agent:
    deliveries: dict[str, str] = {}  # ticket -> day, for this call

    def order_status(ticket: str) -> dict[str, Any]:
        """The status, items and price of a dry-cleaning order, by its five-digit ticket number"""
        number = "".join(ch for ch in ticket if ch.isdigit())
        if number not in ORDERS:
            return {"ticket": ticket, "found": False, "note": "no such ticket; ticket numbers have five digits"}
        name, items, status, ready, price = ORDERS[number]
        out = {"ticket": number, "name": name, "items": items, "status": status, "to pay": f"${price:.2f}"}
        return {**out, "ready on": ready} if ready else out

    def book_delivery(ticket: str, day: Day) -> str:
        """Book a home delivery of a ready order on a day"""
        number = "".join(ch for ch in ticket if ch.isdigit())
        if number not in ORDERS:
            return f"There is no order with ticket {ticket}; the number is on the pink ticket."
        if day == "sunday":
            return "We don't deliver on Sunday; deliveries are Monday to Saturday."
        _, items, status, ready, _ = ORDERS[number]
        if ready:
            return f"Order {number} is not ready yet: it is {status}, ready {ready}; it can't be delivered before."
        deliveries[number] = day
        return f"Done: {items} from ticket {number} will be delivered {day.title()} between 5 and 8 p.m.; $5 delivery."

    tools = [Tool(order_status),
             Tool(book_delivery, mutates=True, confirm="deliver the order on ticket {ticket} on {day}")]
    return Agent(model=ScriptedModel(["I can help with your order. What's the ticket number?"]),
                 config=LoopConfig.profile("voice"), tools=tools, system_prompt=PROMPT, name="dry_cleaner",
                 scope="Sorry, I can only help with order status and home deliveries on this line.",
                 vocabulary=["Crisp and Clean", "dry cleaning", "ticket number", "delivery", "suit", "wedding dress",
                             "shirts", "duvet", "curtains", "coat", "leather jacket"])
