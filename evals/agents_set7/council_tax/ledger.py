"""Northbrook Borough Council's council tax line: an account's balance and next instalment by its reference (two
letters and seven digits, NB4471023), a card payment (after a yes), a new direct debit date (after a yes), and a
move out reported (after a yes). Today is Monday, September 14, 2026. In memory, one copy per toolset.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from loop import Tool
from loop import kinds as k

TODAY = dt.date(2026, 9, 14)
Reference = Annotated[str, k.identifier(letters=2, digits=7)]
DebitDay = Literal["1st", "15th", "28th"]
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
             "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
             "eighteenth", "nineteenth")
_DAY_WORDS = {w: i + 1 for i, w in enumerate(_ORDINALS)} | {"twentieth": 20, "thirtieth": 30}


def parse_date(value: str) -> dt.date | None:
    """'September 30', 'the thirtieth of September', '30th', 'October 2' -> a date from today on; None if unclear."""
    text = str(value).lower().replace("-", " ")
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
    if day is None:
        return None
    try:
        found_date = dt.date(TODAY.year, month or TODAY.month, day)
    except ValueError:
        return None
    if month is None and found_date < TODAY:
        found_date = dt.date(TODAY.year, TODAY.month % 12 + 1, day)
    return found_date


def say(day: dt.date) -> str:
    return f"{day:%A}, {day:%B} {day.day}"


def pounds(value: float) -> str:
    return f"£{value:,.2f}".replace(".00", "")


class Account:
    def __init__(self, name: str, address: str, band: str, year_bill: float, paid: float, overdue: float,
                 debit_day: str | None, card: str) -> None:
        self.name, self.address, self.band = name, address, band
        self.year_bill, self.paid, self.overdue = year_bill, paid, overdue
        self.debit_day, self.card = debit_day, card
        self.moving: tuple[dt.date, str] | None = None


def seed() -> dict[str, Account]:
    return {
        "NB4471023": Account("Alan Price", "14 Orchard Way", "C", 1840, 1104, 0, "1st", "4417"),
        "NB4471188": Account("Sara Khan", "Flat 3, Mill Court", "B", 1610, 1610, 0, "15th", "0952"),
        "NB5520391": Account("Derek Holt", "9 Station Road", "D", 2070, 828, 414, None, "2291"),
    }


def reference_key(value: str) -> str:
    return re.sub(r"[^A-Z0-9]", "", str(value).upper())


class CouncilTax:
    """Owns the accounts; the tools are its methods."""

    def __init__(self) -> None:
        self.accounts = seed()
        self.payments: list[tuple[str, float]] = []
        self.next_receipt = 7730012

    def _account(self, account_reference: str) -> Account | None:
        return self.accounts.get(reference_key(account_reference))

    def account_balance(self, account_reference: Reference) -> dict[str, Any]:
        """An account's council tax band, what is left to pay this year and the next instalment, by the account
        reference: two letters and seven digits, like NB4471023"""
        acct = self._account(account_reference)
        if acct is None:
            return {"found": False, "note": f"no account {account_reference}; the reference is two letters and "
                                            f"seven digits, at the top of the bill"}
        left = acct.year_bill - acct.paid
        said: dict[str, Any] = {"name": acct.name, "band": acct.band, "left to pay this year": pounds(left)}
        if acct.overdue:
            said["overdue"] = f"{pounds(acct.overdue)}, a reminder was sent on September 2"
        if left and acct.debit_day:
            said["next instalment"] = f"{pounds(184)} by direct debit on October {acct.debit_day}"
        elif left:
            said["paying"] = "by card, no direct debit"
        else:
            said["note"] = "this year's bill is paid in full"
        return said

    def make_payment(self, account_reference: Reference,
                     amount: Annotated[float, k.amount(), Field(gt=0)]) -> str:
        """Pay an amount of council tax in pounds on an account, with the debit card registered on it"""
        acct = self._account(account_reference)
        if acct is None:
            return f"I can't find account {account_reference}; it's two letters and seven digits, on the bill."
        left = acct.year_bill - acct.paid
        if amount > left:
            return f"That's more than is left to pay this year, which is {pounds(left)}."
        acct.paid += amount
        acct.overdue = max(0.0, acct.overdue - amount)
        receipt = self.next_receipt
        self.next_receipt += 1
        self.payments.append((reference_key(account_reference), amount))
        return (f"Paid: {pounds(amount)} on account {reference_key(account_reference)} with the card ending "
                f"{acct.card}. {pounds(acct.year_bill - acct.paid)} is left to pay this year. Receipt number "
                f"{receipt}.")

    def change_debit_date(self, account_reference: Reference, day: DebitDay) -> str:
        """Move the monthly direct debit to the 1st, the 15th or the 28th of the month"""
        acct = self._account(account_reference)
        if acct is None:
            return f"I can't find account {account_reference}; it's two letters and seven digits, on the bill."
        if acct.debit_day is None:
            return "There's no direct debit on this account. You can set one up on the council's website."
        if acct.paid >= acct.year_bill:
            return "This year's bill is paid in full, so there are no more instalments to move."
        if acct.debit_day == day:
            return f"The direct debit is already taken on the {day} of the month."
        acct.debit_day = day
        return f"Changed: from October, the direct debit on account {reference_key(account_reference)} is taken " \
               f"on the {day} of each month."

    def report_move(self, account_reference: Reference, moving_date: Annotated[str, k.when(date=True)],
                    new_address: Annotated[str, k.address()]) -> str:
        """Tell the council the account holder is moving out: the date they move and their new address, for the
        final bill"""
        acct = self._account(account_reference)
        if acct is None:
            return f"I can't find account {account_reference}; it's two letters and seven digits, on the bill."
        day = parse_date(moving_date)
        if day is None:
            return f"I didn't catch the moving date {moving_date!r}; say the day and the month, like September 30."
        if day < TODAY - dt.timedelta(days=60):
            return "That's more than two months ago; please write to us with proof of the date you moved."
        acct.moving = (day, new_address)
        return (f"Noted: {acct.name} moves out of {acct.address} on {say(day)}. The final bill goes to "
                f"{new_address} within two weeks of the move.")

    def tools(self) -> list[Tool]:
        return [Tool(self.account_balance),
                Tool(self.make_payment, mutates=True, reversible=False,
                     confirm="pay {amount} pounds on account {account_reference} with the card on the account"),
                Tool(self.change_debit_date, mutates=True,
                     confirm="move the direct debit on account {account_reference} to the {day} of the month"),
                Tool(self.report_move, mutates=True,
                     confirm="record that you move out on {moving_date}, with the final bill sent to {new_address}")]


def open_ledger(data_dir: str | Path) -> CouncilTax:
    """The agent file's `toolset`: the council's accounts per server (or scripted call), kept in memory."""
    return CouncilTax()
