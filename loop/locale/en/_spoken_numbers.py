"""English number words, written for the ear (US style: "one hundred five", no "and").

Pure functions over ints and digit strings; the spoken form (`loop.locale.en._spoken`) decides which reading a
number gets. The words are the pack's own (`ONES`, `MONTHS`, `cardinal`, `ordinal`), read when the spoken form is
first asked for (the pack has loaded by then).
"""

from __future__ import annotations

from loop import locale

WORDS = locale.get("en")  # its pack (by name, not an import: the pack imports this module when it is asked for)

# Past this a number is not a quantity anyone says aloud; it is read digit by digit instead.
MAX_CARDINAL = 10**15 - 1

MONTHS = tuple(m.title() for m in WORDS.MONTHS)


def cardinal(n: int) -> str:
    """1250 -> "one thousand two hundred fifty"; -3 -> "minus three"."""
    if n < 0:
        return "minus " + cardinal(-n)
    return digits(str(n)) if n > MAX_CARDINAL else str(WORDS.cardinal(n))


def ordinal(n: int) -> str:
    """1 -> "first", 22 -> "twenty-second", 100 -> "one hundredth"."""
    return str(WORDS.ordinal(n))


def digits(text: str) -> str:
    """"0134" -> "zero one three four": ids and phone numbers, one digit at a time."""
    return " ".join(WORDS.ONES[int(ch)] for ch in text if ch.isdigit())


def year(n: int) -> str:
    """2026 -> "twenty twenty-six", 1905 -> "nineteen oh five", 2005 -> "two thousand five"."""
    if not 1000 <= n <= 9999 or (n % 1000 < 10 and n // 100 % 10 == 0):
        return cardinal(n)
    century, rest = divmod(n, 100)
    if rest == 0:
        return f"{cardinal(century)} {WORDS.HUNDRED}"
    return f"{cardinal(century)} {'oh ' if rest < 10 else ''}{cardinal(rest)}"


def clock(hour: int, minute: int, has_meridiem: bool) -> str:
    """(10, 5) -> "ten oh five", (3, 30) -> "three thirty", (10, 0) -> "ten o'clock"."""
    if minute == 0:
        if has_meridiem:
            return cardinal(hour)
        return f"{cardinal(hour)} {WORDS.HUNDRED}" if hour > 12 else f"{cardinal(hour)} o'clock"
    return f"{cardinal(hour)} {'oh ' if minute < 10 else ''}{cardinal(minute)}"
