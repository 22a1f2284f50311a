"""Northgate Library's phone desk: loans and holds by an 8-digit library card number, renewals (in memory)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Literal

from loop import Tool

TODAY = dt.date(2026, 5, 11)  # a Monday
RENEWAL_WEEKS, MAX_RENEWALS = 3, 2
Title = Literal["The Midnight Library", "Atomic Habits", "Educated", "Where the Crawdads Sing",
                "The Thursday Murder Club", "Project Hail Mary", "Lessons in Chemistry", "The Salt Path"]
# card number: (reader, {title: (due date, renewals so far)}, holds waiting to be collected)
CARDS: dict[str, tuple[str, dict[str, tuple[str, int]], list[str]]] = {
    "20417735": ("Helen Marsh", {"The Midnight Library": ("2026-05-14", 0), "Atomic Habits": ("2026-05-12", 2)},
                 ["Project Hail Mary", "Lessons in Chemistry"]),
    "31908264": ("David Kim", {"Educated": ("2026-05-18", 0)}, []),
    "45500127": ("Rosa Alvarez", {"Where the Crawdads Sing": ("2026-05-20", 1),
                                  "The Thursday Murder Club": ("2026-05-13", 0)}, ["The Salt Path"]),
    "68213390": ("Tom Becker", {"Project Hail Mary": ("2026-05-15", 0)},
                 ["Educated", "Atomic Habits", "The Thursday Murder Club"]),
    "77046158": ("Grace Liu", {}, ["Where the Crawdads Sing"])}
RESERVED_BY_OTHERS = {"Educated"}  # another reader is waiting for the copy on loan: it can't be renewed


def _say(day: dt.date) -> str:
    return f"{day:%A}, {day:%B} {day.day}"


class LibraryDesk:
    """The loans of each card; the tools are its methods."""

    def __init__(self) -> None:
        self.loans = {card: dict(loans) for card, (_, loans, _) in CARDS.items()}

    def _card(self, card_number: str) -> str:
        return "".join(ch for ch in card_number if ch.isdigit())

    def holds_waiting(self, card_number: str) -> dict[str, Any]:
        """How many reserved books are waiting to be collected, by the 8-digit library card number"""
        card = self._card(card_number)
        if card not in CARDS:
            return {"card": card_number, "found": False, "note": "no such card; card numbers have eight digits"}
        holds = CARDS[card][2]
        return {"card": card, "holds waiting": len(holds), "titles": holds, "collect by": _say(TODAY + dt.timedelta(7))}

    def books_on_loan(self, card_number: str) -> dict[str, Any]:
        """The books on loan on a library card and when each is due back, by the 8-digit card number"""
        card = self._card(card_number)
        if card not in CARDS:
            return {"card": card_number, "found": False, "note": "no such card; card numbers have eight digits"}
        due = {title: _say(dt.date.fromisoformat(d)) for title, (d, _) in self.loans[card].items()}
        return {"card": card, "books on loan": due or "none"}

    def renew_book(self, card_number: str, title: Title) -> str:
        """Renew a book on loan for three more weeks, by the library card number and the book's title"""
        card = self._card(card_number)
        if card not in CARDS:
            return f"There is no library card {card_number}; card numbers have eight digits."
        if title not in self.loans[card]:
            return f"{title} is not on loan on card {card}."
        due, renewals = self.loans[card][title]
        if title in RESERVED_BY_OTHERS:
            back = _say(dt.date.fromisoformat(due))
            return f"{title} can't be renewed: another reader has reserved it. It is due back {back}."
        if renewals >= MAX_RENEWALS:
            return f"{title} has already been renewed {MAX_RENEWALS} times, the most allowed; please bring it back."
        new_due = dt.date.fromisoformat(due) + dt.timedelta(weeks=RENEWAL_WEEKS)
        self.loans[card][title] = (new_due.isoformat(), renewals + 1)
        return f"Done: {title} is renewed and now due back on {_say(new_due)}."

    def tools(self) -> list[Tool]:
        return [Tool(self.holds_waiting), Tool(self.books_on_loan),
                Tool(self.renew_book, mutates=True, confirm="renew {title} on card {card_number}")]


def open_desk(data_dir: str | Path) -> LibraryDesk:
    """The agent file's `toolset` (the desk lives in memory)."""
    return LibraryDesk()
