"""Ashgrove Surgery's repeat prescription line: a patient's repeat list by their ten-digit NHS number, a repeat
ordered for collection at a pharmacy (after a yes), an order's progress by its six-digit order number, and an order
cancelled (after a yes). Today is Monday, September 14, 2026. Everything lives in memory, one copy per toolset.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Any, Literal

from loop import Tool
from loop.kinds import identifier, item

TODAY = dt.date(2026, 9, 14)
READY = dt.date(2026, 9, 16)   # two working days
Pharmacy = Literal["Ashgrove Pharmacy", "Boots", "Lloyds"]
NhsNumber = Annotated[str, identifier(digits=10)]
OrderNumber = Annotated[str, identifier(digits=6)]

# NHS number: patient, medicines on their repeat list
PATIENTS = {
    "4857773456": ("Joan Fairley", ["amlodipine 5 mg tablets", "simvastatin 20 mg tablets"]),
    "9434765919": ("Peter Okafor", ["salbutamol inhaler", "beclometasone inhaler"]),
    "4010232137": ("Emma Lund", ["levothyroxine 50 microgram tablets"]),
}
# what callers call a medicine -> the medicine
NICKNAMES = {"blue inhaler": "salbutamol inhaler", "ventolin": "salbutamol inhaler", "reliever": "salbutamol inhaler",
             "brown inhaler": "beclometasone inhaler", "preventer": "beclometasone inhaler",
             "blood pressure": "amlodipine 5 mg tablets", "statin": "simvastatin 20 mg tablets",
             "cholesterol": "simvastatin 20 mg tablets", "thyroid": "levothyroxine 50 microgram tablets"}
# order number: NHS number, medicine, pharmacy, status
ORDERS = {
    "204117": ("4857773456", "amlodipine 5 mg tablets", "Ashgrove Pharmacy", "ready to collect"),
    "204125": ("9434765919", "salbutamol inhaler", "Boots",
               "waiting for the doctor to sign it, ready at the pharmacy on Thursday"),
    "204130": ("4010232137", "levothyroxine 50 microgram tablets", "Lloyds",
               "sent to the pharmacy, ready tomorrow after 2 p.m."),
}
FIRST_NEW_ORDER = 204201


def digits(value: str) -> str:
    return "".join(ch for ch in str(value) if ch.isdigit())


def find_medicine(asked: str, medicines: list[str]) -> str | None:
    """'amlodipine', 'my blue inhaler', 'the statin' -> the medicine on the list; None when not on it."""
    text = str(asked).lower()
    for nickname, medicine in NICKNAMES.items():
        if nickname in text and medicine in medicines:
            return medicine
    for medicine in medicines:
        if medicine.split()[0] in text:
            return medicine
    return None


class RepeatPrescriptions:
    """Owns the patients and orders; the tools are its methods."""

    def __init__(self) -> None:
        self.orders = dict(ORDERS)
        self.cancelled: list[str] = []
        self.next_order = FIRST_NEW_ORDER

    def repeat_list(self, nhs_number: NhsNumber) -> dict[str, Any]:
        """The medicines on a patient's repeat list, by their ten-digit NHS number"""
        patient = PATIENTS.get(digits(nhs_number))
        if patient is None:
            return {"found": False, "note": f"no patient with NHS number {nhs_number}; it has ten digits"}
        name, medicines = patient
        return {"patient": name, "repeat medicines": ", ".join(medicines)}

    def order_status(self, order_number: OrderNumber) -> dict[str, Any]:
        """Whether a repeat prescription order is ready, by its six-digit order number"""
        number = digits(order_number)
        if number not in self.orders or number in self.cancelled:
            return {"found": False, "note": f"no order {order_number}; order numbers have six digits"}
        _, medicine, pharmacy, status = self.orders[number]
        return {"order": number, "medicine": medicine, "pharmacy": pharmacy, "status": status}

    def order_repeat(self, nhs_number: NhsNumber, medicine: Annotated[str, item()], pharmacy: Pharmacy) -> str:
        """Order a repeat prescription of a medicine on the patient's repeat list, by their ten-digit NHS number,
        to collect from a pharmacy: Ashgrove Pharmacy, Boots or Lloyds"""
        patient = PATIENTS.get(digits(nhs_number))
        if patient is None:
            return f"I can't find NHS number {nhs_number}. It's the ten-digit number on your prescription slip."
        name, medicines = patient
        found = find_medicine(medicine, medicines)
        if found is None:
            return (f"{medicine} isn't on {name}'s repeat list, so it needs an appointment with a doctor first. "
                    f"The repeat list has {', '.join(medicines)}.")
        for number, (nhs, ordered, _, status) in self.orders.items():
            if nhs == digits(nhs_number) and ordered == found and number not in self.cancelled \
                    and status != "collected":
                return f"There's already an order of {found} for {name}: order {number}, {status}."
        number = str(self.next_order)
        self.next_order += 1
        self.orders[number] = (digits(nhs_number), found, pharmacy, f"ordered, ready at {pharmacy} on Wednesday")
        return (f"Ordered: {found} for {name}, to collect from {pharmacy} from Wednesday, September 16. "
                f"Your order number is {number}.")

    def cancel_order(self, order_number: OrderNumber) -> str:
        """Cancel a repeat prescription order by its six-digit order number"""
        number = digits(order_number)
        if number not in self.orders or number in self.cancelled:
            return f"I can't find an order {order_number}; order numbers have six digits."
        _, medicine, pharmacy, _ = self.orders[number]
        self.cancelled.append(number)
        return f"Cancelled: order {number}, the {medicine} for collection at {pharmacy}."

    def tools(self) -> list[Tool]:
        return [Tool(self.repeat_list), Tool(self.order_status),
                Tool(self.order_repeat, mutates=True,
                     confirm="order your {medicine} for NHS number {nhs_number}, to collect from {pharmacy}"),
                Tool(self.cancel_order, mutates=True, reversible=False, confirm="cancel order {order_number}")]


def open_repeats(data_dir: str | Path) -> RepeatPrescriptions:
    """The agent file's `toolset`: one surgery's orders per server (or scripted call), kept in memory."""
    return RepeatPrescriptions()
