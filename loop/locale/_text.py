"""Text helpers every language pack and every reader of a caller's words share."""

from __future__ import annotations

import unicodedata


def unaccented(text: str) -> str:
    """`text` without accents ("sí" -> "si", "sábado" -> "sabado"): speech-to-text writes them one time and not
    the next, so answers and the pending call's values are compared without them."""
    decomposed = unicodedata.normalize("NFD", text)
    kept = [ch for i, ch in enumerate(decomposed) if not unicodedata.combining(ch)
            or (ch == "\u0303" and decomposed[i - 1] in "nN")]  # "ñ" is a letter of its own, not an accent
    return unicodedata.normalize("NFC", "".join(kept))
