"""Clearbrook Water's customer line as plain functions: bill balance, payment plan, meter reading, leak report.

The accounts live in memory (module level); what a call writes is kept in lists beside them.
"""

from __future__ import annotations

import math
from typing import Any, Literal

LeakPlace = Literal["in the street", "at the meter", "inside the home", "in the garden"]

# account number: (holder, balance in dollars, due or overdue, last meter reading in cubic metres)
ACCOUNTS = {
    "40172395": ("Helen Brooks", 84.20, "due on June 30", 4102),
    "55038810": ("Marcus Reid", 0.00, "nothing to pay", 1288),
    "61200457": ("Priya Das", 132.75, "overdue since May 31", 9870),
}
PLANS: list[tuple[str, float]] = []
READINGS: list[tuple[str, int]] = []
LEAKS: list[tuple[str, str]] = []
FIRST_LEAK_REFERENCE = 8801


def _account(account_number: str) -> str:
    return "".join(ch for ch in str(account_number) if ch.isdigit())


def bill_balance(account_number: str) -> dict[str, Any]:
    """What is owed on a water account, by its eight-digit account number"""
    number = _account(account_number)
    if number not in ACCOUNTS:
        return {"account": account_number, "found": False, "note": "no such account; account numbers have eight "
                                                                     "digits and are at the top of the bill"}
    holder, balance, due, _ = ACCOUNTS[number]
    return {"account": number, "name": holder, "balance": f"${balance:.2f}", "status": due}


def payment_plan(account_number: str, monthly_amount: float) -> str:
    """Pay what is owed on an account in equal monthly payments of an amount in dollars"""
    number = _account(account_number)
    if number not in ACCOUNTS:
        return f"There is no account {account_number}; account numbers have eight digits."
    _, balance, _, _ = ACCOUNTS[number]
    if balance <= 0:
        return f"Account {number} has nothing to pay, so no payment plan is needed."
    if monthly_amount < 10:
        return "A payment plan needs at least $10 a month."
    months = math.ceil(balance / monthly_amount)
    PLANS.append((number, monthly_amount))
    return (f"Done: ${balance:.2f} on account {number} will be paid at ${monthly_amount:.2f} a month for "
            f"{months} months, starting July 1.")


def submit_reading(account_number: str, reading: int) -> str:
    """Record a water meter reading (the black digits, in cubic metres) for an account"""
    number = _account(account_number)
    if number not in ACCOUNTS:
        return f"There is no account {account_number}; account numbers have eight digits."
    last = ACCOUNTS[number][3]
    if reading < last:
        return (f"That reading, {reading}, is lower than the last one we have, {last}. Please check the meter and "
                "read only the black digits.")
    READINGS.append((number, reading))
    return f"Thank you: reading {reading} is recorded for account {number}. Your next bill will use it."


def report_leak(address: str, location: LeakPlace) -> str:
    """Report a water leak at a street address: in the street, at the meter, inside the home or in the garden"""
    LEAKS.append((address, location))
    reference = FIRST_LEAK_REFERENCE + len(LEAKS) - 1
    when = "within 4 hours" if location in ("in the street", "at the meter") else "within 24 hours"
    inside = " Turn off your stopcock if you can." if location == "inside the home" else ""
    return f"Logged: leak report {reference} for {address}, {location}. A team will come {when}.{inside}"
