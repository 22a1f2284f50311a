"""English number words, written for the ear (US style: "one hundred five", no "and").

Pure functions over ints and digit strings; `voice.speech.spoken_en` decides which reading a number gets.
"""

from __future__ import annotations

from loop.locale import en

_ONES, _TENS, _SCALES, _IRREGULAR_ORDINALS = en.ONES, en.TENS, en.SCALES, en.IRREGULAR_ORDINALS
# Past this a number is not a quantity anyone says aloud; it is read digit by digit instead.
MAX_CARDINAL = 10**15 - 1

MONTHS = tuple(m.title() for m in en.MONTHS)


def cardinal(n: int) -> str:
    """1250 -> "one thousand two hundred fifty"; -3 -> "minus three"."""
    if n < 0:
        return "minus " + cardinal(-n)
    if n > MAX_CARDINAL:
        return digits(str(n))
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens] + (f"-{_ONES[ones]}" if ones else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{_ONES[hundreds]} hundred" + (f" {cardinal(rest)}" if rest else "")
    for scale, name in _SCALES:
        if n >= scale:
            head, rest = divmod(n, scale)
            return f"{cardinal(head)} {name}" + (f" {cardinal(rest)}" if rest else "")
    raise AssertionError("unreachable")  # pragma: no cover


def ordinal(n: int) -> str:
    """1 -> "first", 22 -> "twenty-second", 100 -> "one hundredth"."""
    words = cardinal(n)
    cut = max(words.rfind(" "), words.rfind("-")) + 1
    head, last = words[:cut], words[cut:]
    if last in _IRREGULAR_ORDINALS:
        return head + _IRREGULAR_ORDINALS[last]
    if last.endswith("y"):
        return head + last[:-1] + "ieth"
    return head + last + "th"


def digits(text: str) -> str:
    """"0134" -> "zero one three four": ids and phone numbers, one digit at a time."""
    return " ".join(_ONES[int(ch)] for ch in text if ch.isdigit())


def year(n: int) -> str:
    """2026 -> "twenty twenty-six", 1905 -> "nineteen oh five", 2005 -> "two thousand five"."""
    if not 1000 <= n <= 9999 or (n % 1000 < 10 and n // 100 % 10 == 0):
        return cardinal(n)
    century, rest = divmod(n, 100)
    if rest == 0:
        return f"{cardinal(century)} hundred"
    return f"{cardinal(century)} {'oh ' if rest < 10 else ''}{cardinal(rest)}"


def clock(hour: int, minute: int, has_meridiem: bool) -> str:
    """(10, 5) -> "ten oh five", (3, 30) -> "three thirty", (10, 0) -> "ten o'clock"."""
    if minute == 0:
        if has_meridiem:
            return cardinal(hour)
        return f"{cardinal(hour)} hundred" if hour > 12 else f"{cardinal(hour)} o'clock"
    return f"{cardinal(hour)} {'oh ' if minute < 10 else ''}{cardinal(minute)}"
