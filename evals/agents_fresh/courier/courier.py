"""Swiftbox Couriers' parcel line: track a parcel by its tracking code; rearrange a redelivery to another weekday,
or have the parcel left with a neighbour (each after a yes).

Run it with  voiceloop serve --agent evals/agents_fresh/courier/courier.py:build --llm local
"""

from typing import Annotated, Any, Literal

from pydantic import Field

from loop import Agent, LoopConfig, ScriptedModel, Tool
from loop.kinds import identifier

Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
DELIVERY_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday")   # no deliveries on Sunday
# tracking code -> recipient's street, status, delivery (today is Monday, May 11, 2026)
PARCELS = {"SB48207315": ("Elm Grove", "out for delivery", "today between 1 and 3 p.m."),
           "SB90316628": ("Mill Lane", "delivery attempted, nobody was in", "redelivery on Wednesday"),
           "SX55120947": ("Station Road", "at the Leeds depot", "Thursday"),
           "SB72004489": ("Park Avenue", "delivered", "last Friday at 10:40 a.m., left in the porch"),
           "SC13579086": ("Kings Road", "in transit", "Tuesday"),
           "SB66280053": ("Orchard Close", "at the local depot", "Tuesday")}


def code_key(tracking_code: str) -> str:
    """'sb 4820-7315', 'S B 48207315' -> 'SB48207315'."""
    return "".join(ch for ch in str(tracking_code) if ch.isalnum()).upper()


def build(call_id: str = "") -> Agent:
    parcels = {k: list(v) for k, v in PARCELS.items()}   # each call starts from the same parcels

    def track_parcel(tracking_code: Annotated[str, identifier()]) -> dict[str, Any]:
        """Where a parcel is and when it will be delivered, by its tracking code: two letters then eight digits"""
        code = code_key(tracking_code)
        if code not in parcels:
            return {"tracking_code": tracking_code, "found": False,
                    "note": "no such parcel; a tracking code is two letters then eight digits"}
        street, status, when = parcels[code]
        return {"tracking_code": code, "status": status,
                "delivered" if status == "delivered" else "delivery": when}

    def _changeable(code: str, tracking_code: str) -> str:
        if code not in parcels:
            return f"There is no parcel {tracking_code}; the tracking code is two letters then eight digits."
        if parcels[code][1] == "delivered":
            return f"Parcel {code} has already been delivered, {parcels[code][2]}."
        return ""

    def rearrange_delivery(tracking_code: Annotated[str, identifier()], day: Weekday) -> str:
        """Move a parcel's delivery to another weekday"""
        code = code_key(tracking_code)
        if problem := _changeable(code, tracking_code):
            return problem
        if day.lower() not in DELIVERY_DAYS:
            return "We don't deliver on Sunday; deliveries are Monday to Saturday."
        parcels[code][1:] = ["redelivery booked", day.title()]
        return f"Done: parcel {code} will now be delivered on {day.title()}, between 8 a.m. and 6 p.m."

    def leave_with_neighbour(tracking_code: Annotated[str, identifier()],
                             house_number: Annotated[int, Field(ge=1, le=9999)]) -> str:
        """Have a parcel left with a neighbour on the same street, by the neighbour's house number"""
        code = code_key(tracking_code)
        if problem := _changeable(code, tracking_code):
            return problem
        street = parcels[code][0]
        parcels[code][1] = f"to be left with the neighbour at {house_number} {street}"
        return f"Done: if nobody is in, parcel {code} will be left with your neighbour at {house_number} {street}."

    prompt = (
        "You answer the phone for Swiftbox Couriers' parcel line. Be friendly and brief: one or two short sentences.\n"
        "Today is Monday, May 11, 2026. Only the tools know about parcels. Never make up a status, a day or a time.\n"
        "A tracking code is two letters then eight digits, like SB12345678: write it without spaces.\n"
        "- the caller asks where their parcel is or when it comes, and gives the tracking code -> track_parcel\n"
        "- the caller wants the parcel delivered on another weekday, and gives the tracking code and the day "
        "-> rearrange_delivery\n"
        "- the caller wants the parcel left with a neighbour, and gives the tracking code and the neighbour's house "
        "number -> leave_with_neighbour\n"
        "If the tracking code, the day or the house number is missing, ask for it. After a tool result, tell the "
        "caller what it says.\n"
        "You cannot help with anything else: no prices or quotes for sending parcels, no collections, no refunds "
        "or claims.")
    return Agent(model=ScriptedModel(["I can help with your parcel. What's the tracking code?"]),
                 config=LoopConfig.profile("voice"),
                 tools=[Tool(track_parcel),
                        Tool(rearrange_delivery, mutates=True,
                             confirm="deliver parcel {tracking_code} on {day} instead"),
                        Tool(leave_with_neighbour, mutates=True,
                             confirm="leave parcel {tracking_code} with your neighbour at number {house_number}")],
                 system_prompt=prompt, name="courier",
                 scope="Sorry, I can only track parcels, rearrange a delivery or have a parcel left with a neighbour.",
                 vocabulary=["Swiftbox", "Swiftbox Couriers", "parcel", "tracking code", "redelivery", "redeliver",
                             "neighbour", "house number", "depot", "double", "oh"])


build.greeting = "Swiftbox Couriers, parcel line. How can I help?"
