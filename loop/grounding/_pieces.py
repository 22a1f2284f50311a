"""An identifier Whisper wrote in pieces, joined by the length its argument declares ("account 5 5038 810" for an
eight-digit account, "48 to 1" for a four-digit one). Labelled: tests/loop/grounding/test_unclaimed.py."""

from __future__ import annotations

import re
from types import ModuleType

from loop.grounding._heard import spoken, stem
from loop.locale import DEFAULT_WORDS, unaccented


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


def example_shape(text: str, own: set[str], words: ModuleType = DEFAULT_WORDS) -> str:
    """The shape of the identifier a description gives by example, right after words of its own name (`own`, word
    stems: "registration: the car's registration plate, like LK19 RXT" -> "AA99 AAA"): letters as A, digits as 9,
    its spaces and hyphens kept; "" when it gives none. An example mixes capitals and digits (a plain number says
    its length in words, `digits_named`). The words that lead into an example: the pack's EXAMPLE_LEAD."""
    for m in re.finditer(rf"\b(?:{words.EXAMPLE_LEAD})\s+([A-Z0-9]+(?:[ -][A-Z0-9]+)*)", text):
        lead = unaccented(text[max(0, m.start() - 50): m.start()].lower())  # "matrícula" is one word
        before = {stem(w) for w in re.findall(r"[a-z]+", lead)[-6:]}
        token = m.group(1)
        if own & before and re.search(r"[A-Z]", token) and re.search(r"\d", token):
            return re.sub(r"\d", "9", re.sub(r"[A-Z]", "A", token))
    return ""


def ids_of_shape(text: str, shape: str, words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """The identifiers of `shape` (`example_shape`) in the caller's words, however spelled out: "W F seven two, M Z
    K" and "WF72 MZK" -> "WF72 MZK" (letters said one by one, digits in words or figures, pauses between), written
    as the example is."""
    bare = shape.replace(" ", "").replace("-", "")
    pattern = re.compile("".join("[A-Z]" if c == "A" else r"\d" for c in bare))
    digit_words = spoken(words).digits
    found = []
    for sentence in re.split(r"[.!?;]+(?:\s|$)", text):
        tokens = [t.strip(",:()'\"") for t in sentence.split()]
        # letters are capitals, said alone ("W F") or in a run with digits ("WF72"); digits as said
        pieces = [t if re.fullmatch(r"[A-Z0-9]+", t)
                  else digit_words.get(t.lower(), "") for t in tokens]
        for start in range(len(pieces)):
            joined = ""
            for piece in pieces[start:]:
                if not piece or len(joined) >= len(bare):
                    break
                joined += piece
            if (m := pattern.match(joined)) and len(joined) == len(bare):
                found.append(_as_shaped(m.group(), shape))
    return list(dict.fromkeys(found))


def _as_shaped(value: str, shape: str) -> str:
    """`value` with the example's spaces and hyphens where it has them."""
    out, chars = [], iter(value)
    for c in shape:
        out.append(c if c in " -" else next(chars))
    return "".join(out)
