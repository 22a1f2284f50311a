"""Small agents written the way the README teaches, for shops that are not the demo: plain functions with type
hints returning plain data (a dict or a short string), no `answers=True`, no `cues`, no naming conventions.
Used by tests/loop/models/llama/test_plain_agents.py (the real embedded model) and
tests/loop/grounding/test_grounding_kinds.py (no model)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import Field

from loop import Agent, LoopConfig, Tool
from loop.types import Model

# ---- a garage's repair-status line: job numbers -------------------------------------------------------------

JOBS = {"4521": {"car": "blue Ford Focus", "status": "waiting for parts", "ready": "Thursday"},
        "7730": {"car": "Honda Civic", "status": "ready to collect", "ready": "today"}}


def repair_status(job_number: str) -> dict:
    """Where a car's repair is, by the job number on the customer's ticket"""
    job = JOBS.get(job_number.replace(" ", ""))
    return {"job_number": job_number, "found": False} if job is None else {"job_number": job_number, **job}


def book_service(day: str, name: str) -> str:
    """Book a car in for a service"""
    return f"{name} is booked in for a service on {day}."


def garage(model: Model, config: LoopConfig | None = None) -> Agent:
    return Agent(model=model, config=config or LoopConfig.profile("voice"),
                 tools=[Tool(repair_status), Tool(book_service, mutates=True)],
                 system_prompt="You answer the phone for Kwik Fix, a car repair garage. Say one or two short "
                               "sentences.")


# ---- a utility's outage line: postcode, account number ---------------------------------------------------------


def outage_status(postcode: str) -> str:
    """Whether there is a power cut at a postcode, and when power should be back"""
    if postcode.replace(" ", "").upper().startswith("LS6"):
        return "There is a power cut in LS6. Engineers expect power back by 6 pm."
    return f"There are no known power cuts at {postcode}."


def report_outage(account: Annotated[str, Field(description="the 8-digit account number")]) -> str:
    """Report a power cut at the caller's home"""
    return f"The power cut is logged on account {account}, reference PC-1042."


def outage_line(model: Model, config: LoopConfig | None = None) -> Agent:
    return Agent(model=model, config=config or LoopConfig.profile("voice"),
                 tools=[Tool(outage_status), Tool(report_outage, mutates=True)],
                 system_prompt="You answer the outage line of Northern Power. Be brief and friendly.",
                 related=[("power", "outage", "electricity", "supply", "blackout", "light")])  # "my lights are off"


# ---- a hotel's booking line ------------------------------------------------------------------------------------


def room_availability(check_in: str, nights: int) -> str:
    """Free rooms for a stay"""
    return f"We have a double room free from {check_in} for {nights} nights, at 120 dollars a night."


def book_room(guest_name: str, check_in: str, nights: int) -> dict:
    """Book a room"""
    return {"booking_ref": "HB-2291", "guest": guest_name, "check_in": check_in, "nights": nights}


def booking_details(booking_ref: Annotated[str, Field(pattern=r"^HB-?[0-9]{4}$")]) -> dict:
    """A booking's guest, dates and room"""
    return {"booking_ref": booking_ref, "guest": "Ana Silva", "check_in": "Friday", "nights": 2}


def cancel_booking(booking_ref: Annotated[str, Field(pattern=r"^HB-?[0-9]{4}$")]) -> str:
    """Cancel a booking"""
    return f"Booking {booking_ref} is cancelled."


def hotel(model: Model, config: LoopConfig | None = None) -> Agent:
    return Agent(model=model, config=config or LoopConfig.profile("voice"),
                 tools=[Tool(room_availability), Tool(booking_details), Tool(book_room, mutates=True),
                        Tool(cancel_booking, mutates=True)],
                 system_prompt="You take calls for the Harbour Hotel's front desk. Answer in one or two sentences.")


# ---- a pizza shop ------------------------------------------------------------------------------------------------

MENU = {"margherita": 9.5, "pepperoni": 11.0, "veggie": 10.5}


def menu() -> dict:
    """The pizzas on the menu and their prices"""
    return MENU


def order_pizza(pizza: str, address: str) -> str:
    """Order a pizza for delivery"""
    return f"One {pizza} is on its way to {address}, in about 30 minutes."


def order_status(order_number: int) -> str:
    """Where a pizza order is"""
    return f"Order {order_number} left the shop ten minutes ago." if order_number == 311 else (
        f"I can't find order {order_number}.")


def pizza_shop(model: Model, config: LoopConfig | None = None) -> Agent:
    return Agent(model=model, config=config or LoopConfig.profile("voice"),
                 tools=[Tool(menu), Tool(order_pizza, mutates=True), Tool(order_status)],
                 system_prompt="You answer the phone at Luigi's Pizza. Keep it short.")


# ---- a courier's parcel line: a read and a write that take the same tracking code -----------------------------

Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]


def track_parcel(tracking_code: str) -> str:
    """Where a parcel is and when it will be delivered, by its tracking code"""
    return f"Parcel {tracking_code} is out for delivery today between 1 and 3 p.m."


def rearrange_delivery(tracking_code: str, day: Weekday) -> str:
    """Move a parcel's delivery to another weekday"""
    return f"Parcel {tracking_code} will now be delivered on {day.title()}."


def courier(model: Model, config: LoopConfig | None = None) -> Agent:
    return Agent(model=model, config=config or LoopConfig.profile("voice"),
                 tools=[Tool(track_parcel), Tool(rearrange_delivery, mutates=True)],
                 system_prompt="You answer a courier's parcel line. Be brief.")


AGENTS: dict[str, Callable[..., Agent]] = {"garage": garage, "outage": outage_line, "hotel": hotel,
                                                "pizza": pizza_shop, "courier": courier}
