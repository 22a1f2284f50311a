"""What a tool argument holds, declared rather than guessed from its name.

The embedded model fills an argument only with what the caller said of its kind (`loop.grounding.arguments`): an
identifier with the digits they dictated, a name as they gave it, a day or a time, an amount. Without a declaration
the kind is read from the JSON schema and the argument's name (`account_number` is an identifier); a declaration
wins. In Python, annotate the parameter:

    def freeze_card(last_four: Annotated[str, identifier(digits=4)], reason: Literal["lost", "stolen"]) -> str: ...
    def book(pet: Annotated[str, person_name()], day: Annotated[str, when(date=True)]) -> str: ...

In an agent file, per tool: `tools: [{use: cards:freeze_card, kinds: {last_four: "id:4"}}]` (`KIND_NAMES` below;
"id:N" is an identifier of N digits, "id:L+N" one of L letters then N digits). The schema carries it as `x-kind`
(and `x-digits`, `x-letters`), which other models ignore.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

KIND_NAMES = ("id", "name", "item", "address", "when", "date", "time", "amount", "count", "free")


def _kind(kind: str, **extra: Any) -> Any:
    return Field(json_schema_extra={"x-kind": kind, **{f"x-{k}": v for k, v in extra.items() if v}})


def identifier(digits: int = 0, letters: int = 0) -> Any:
    """An identifier the caller dictates or a tool gave: an order number, a card's last four (`digits`: how many),
    a tracking code of two letters then eight digits (`letters=2, digits=8`)."""
    return _kind("id", digits=digits, letters=letters)


def person_name() -> Any:
    """A person's or a pet's name, however speech-to-text cases it."""
    return _kind("name")


def item() -> Any:
    """A thing the caller names (a dish, a book's title, a film): their words, never their own name."""
    return _kind("item")


def address() -> Any:
    """A street address."""
    return _kind("address")


def when(date: bool = False, time: bool = False) -> Any:
    """A day or a time in the caller's words ("Tuesday", "10 a.m."); `date` or `time` for one of them only."""
    return _kind("date" if date and not time else "time" if time and not date else "when")


def amount() -> Any:
    """An amount of money the caller said."""
    return _kind("amount")


def count() -> Any:
    """How many of something (seats, nights, months)."""
    return _kind("count")


def free_text() -> Any:
    """A reason, a note, a message: any of the caller's words."""
    return _kind("free")


def parse_kind(text: str) -> dict[str, Any]:
    """An agent file's kind ("id:4", "name", "item") as the schema keys it adds; ValueError naming the kinds."""
    kind, _, shape = text.partition(":")
    letters, _, digits = shape.rpartition("+")  # "id:2+8": two letters, then eight digits
    bad_shape = kind != "id" or not digits.isdigit() or (letters and not letters.isdigit())
    if kind not in KIND_NAMES or (shape and bad_shape):
        raise ValueError(f"unknown argument kind {text!r}: use one of {', '.join(KIND_NAMES)} (or id:N for N digits, "
                         "id:L+N for L letters then N digits)")
    return {"x-kind": kind, **({"x-digits": int(digits)} if digits else {}),
            **({"x-letters": int(letters)} if letters else {})}
