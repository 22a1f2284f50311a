"""Northfield Bank's card line: card balances by the last four digits, and freezing a card.

Plain functions with type hints over a small in-memory table (fresh each time the module is imported).
"""

from __future__ import annotations

from typing import Literal

# last four digits -> card holder, card type, balance, available credit (None for a debit card), status
_ROWS = [("4821", "Maria Santos", "Visa debit card", "$1,240.50", None, "active"),
         ("0077", "James Okafor", "Mastercard credit card", "$312.80", "$2,687.20", "active"),
         ("3309", "Ruth Lindqvist", "Visa credit card", "$45.00", "$4,955.00", "active"),
         ("5562", "Daniel Cho", "Visa debit card", "$88.15", None, "active"),
         ("7714", "Aisha Rahman", "Mastercard credit card", "$1,905.00", "$95.00", "frozen (lost)"),
         ("9180", "Peter Novak", "Visa debit card", "$620.00", None, "active")]
CARDS: dict[str, dict[str, object]] = {
    row[0]: dict(zip(("holder", "card", "balance", "credit", "status"), row[1:], strict=True)) for row in _ROWS}
Reason = Literal["lost", "stolen", "damaged"]
_WORDS = {"zero": "0", "oh": "0", "o": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
          "six": "6", "seven": "7", "eight": "8", "nine": "9"}


def four_digits(value: str) -> str:
    """'4821', 'ending 48-21', 'oh oh seven seven' -> '4821' / '0077'."""
    text = str(value).lower().replace("double ", "double_")
    out = ""
    for word in text.replace("-", " ").split():
        if word.startswith("double_"):
            out += _WORDS.get(word[7:], "") * 2
        else:
            out += _WORDS.get(word, "".join(ch for ch in word if ch.isdigit()))
    return out[-4:]


def card_balance(last_four: str) -> dict[str, object]:
    """A card's balance (and available credit on a credit card), by the last four digits of the card number"""
    key = four_digits(last_four)
    card = CARDS.get(key)
    if card is None:
        return {"last_four": last_four, "found": False, "note": "no card ending in those four digits"}
    info = {"last_four": key, "card": card["card"], "balance": card["balance"], "status": card["status"]}
    return info if card["credit"] is None else {**info, "available credit": card["credit"]}


def freeze_card(last_four: str, reason: Reason) -> str:
    """Freeze a card so nobody can pay with it, by the last four digits, because it is lost, stolen or damaged"""
    key = four_digits(last_four)
    card = CARDS.get(key)
    if card is None:
        return f"There is no card ending in {last_four}; the last four digits are on the front of the card."
    card["status"] = f"frozen ({reason})"
    replacement = "" if reason == "damaged" else " and a new card with a new number"
    return (f"Done: the card ending in {key} is frozen as {reason}. "
            f"A replacement{replacement} will arrive in 5 working days.")
