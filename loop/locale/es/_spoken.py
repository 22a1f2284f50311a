"""Spanish's spoken form (part of the pack `loop.locale.es`, found through its `spoken_form()`): espeak-ng's
Spanish voice reads numbers in digits itself ("4567" as "cuatro mil quinientos sesenta y siete"); what it would
read wrongly or not at all is the written symbols: the currency before or after an amount, percent, the degree
sign."""

from __future__ import annotations

import re

_AMOUNT = r"\d+(?:[.,]\d+)*"  # "1.250,50": not the full stop after it ("Cuesta $15.")
_SYMBOLS = [
    (re.compile(rf"(?:US)?\$\s?({_AMOUNT})"), r"\1 dólares"),
    (re.compile(rf"€\s?({_AMOUNT})|({_AMOUNT})\s?€"), lambda m: f"{m[1] or m[2]} euros"),
    (re.compile(r"(\d)\s?%"), r"\1 por ciento"),
    (re.compile(r"(\d)\s?°"), r"\1 grados"),
]


class SpanishES:
    """Currency, percent and degrees as said; the rest as written."""

    def speak(self, text: str) -> str:
        for pattern, replacement in _SYMBOLS:
            text = pattern.sub(replacement, text)
        return text
