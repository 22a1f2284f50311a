"""An identifier Whisper wrote in pieces, joined by the length its argument declares ("account 5 5038 810" for an
eight-digit account, "48 to 1" for a four-digit one). Labelled: tests/loop/grounding/test_unclaimed.py."""

from __future__ import annotations

import re
from types import ModuleType

from loop.grounding._heard import spoken
from loop.locale import DEFAULT_WORDS


def joined_to_length(text: str, digits: int, words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """Neighbouring pieces of digits in one sentence that make an identifier of exactly `digits` digits: "account 5
    5038 810" -> 55038810, "6, 1 to 0457" -> 61200457 (a digit's homophone between two pieces is that digit: the
    pack's DIGIT_HOMOPHONES and digit words). The declared length says where the number starts and ends."""
    sounds = {**words.DIGIT_HOMOPHONES, **spoken(words).digits}
    found = []
    for sentence in re.split(r"[.!?;]+(?:\s|$)", text):
        tokens = [t.strip(",:()'\"").lower() for t in sentence.split()]
        pieces = [t if t.isdigit() else sounds.get(t, "") for t in tokens]
        for start in range(len(pieces)):
            joined = ""
            for end in range(start, len(pieces)):
                piece = pieces[end]
                # a homophone counts only between real digits ("6, 1 to 0457"), never at either end
                if not piece or (not tokens[end].isdigit() and (end == start or end + 1 >= len(pieces)
                                                                or not tokens[end + 1].isdigit())):
                    break
                joined += piece
                if len(joined) >= digits:
                    break
            real = sum(len(t) for t in tokens[start:end + 1] if t.isdigit())
            homophones = end - start + 1 - sum(1 for t in tokens[start:end + 1] if t.isdigit())
            if len(joined) == digits and end > start and (not homophones or real >= 3):  # "2 for 3 people": no id
                found.append(joined)
    return list(dict.fromkeys(found))
