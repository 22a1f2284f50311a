"""Numbers a caller dictated, put back together before the model reads the turn.

Whisper writes an id read digit by digit in pieces: "4 5 6 7", "12, 34", "45-67", or in words ("four five six
seven"). A small model given the pieces looks up "12" or asks for the number again; given "4567" it calls the
tool. Only runs of short digit groups are joined (each group 1-3 digits, 3 to 12 digits in all), never an amount
("$20 30", "20 30 dollars") or a time ("3 30 pm"), and never numbers in separate sentences.
"""

from __future__ import annotations

import itertools
import re

from loop.grounding.speakable import join_digit_words
from loop.locale import en

DIGIT_WORDS = en.DIGIT_WORDS  # "four" -> "4", "oh" -> "0": English's (this reader is English's)

# Words Whisper writes for a digit heard alone ("two zero two zero" -> "to 0 to 0"); read as digits only inside a
# run of four or more that holds at least two real digits and never two of these in a row
_SOUNDS_LIKE = en.DIGIT_HOMOPHONES
_DIGITISH = "(?:" + "|".join([r"\d", *DIGIT_WORDS, *_SOUNDS_LIKE]) + ")"
_DICTATED = re.compile(rf"(?<![\w$.]){_DIGITISH}(?:[\s,-]+{_DIGITISH}){{3,}}(?![\w.]?\d)", re.IGNORECASE)

_SEP = r"(?:,?\s+|\s*-\s*)"
_GROUPS = re.compile(rf"(?<![$\d.,])\b\d{{1,3}}(?:{_SEP}\d{{1,3}})+\b(?![.,]?\d)")
_UNIT = re.compile(r"\s*(?:dollars?|bucks|cents?|percent|%|pounds?|euros?|[ap]\.?m\b|o'clock|minutes?|hours?|days?"
                   r"|weeks?|months?|years?)", re.IGNORECASE)


def _join_groups(m: re.Match[str]) -> str:
    text = m.group(0)
    if _UNIT.match(m.string, m.end()):
        return text  # an amount, not an id
    digits = re.sub(r"\D", "", text)
    return digits if 3 <= len(digits) <= 12 else text


def _sounds_like_digits(m: re.Match[str]) -> str:
    """A dictated id with digits heard as words ("to 0 to 0"): only when the real digits are too few to be the id
    without them, and the run does not end on one ("2 to 3 for"). A run of digits and digit words alone ("6, 6,
    oh, oh") is one id."""
    words = re.findall(r"[a-z]+|\d", m.group(0).lower())
    heard = [w for w in words if w not in _SOUNDS_LIKE]
    if len(heard) == len(words):
        return m.group(0) if _UNIT.match(m.string, m.end()) else "".join(DIGIT_WORDS.get(w, w) for w in words)
    # a digit said twice right after the number is named is one too ("the reference is for for one eight")
    twice = _announced(m.string[: m.start()])
    if not 2 <= len(heard) < 4 or words[-1] in _SOUNDS_LIKE or any(
            a in _SOUNDS_LIKE and b in _SOUNDS_LIKE and not (twice and a == b) for a, b in itertools.pairwise(words)):
        return m.group(0)
    return "".join(_SOUNDS_LIKE.get(w) or DIGIT_WORDS.get(w, w) for w in words)


def _announced(before: str) -> bool:
    """The words before a run name a number: "... the references", "... my account number is"."""
    last = re.findall(r"[a-z]+", before.lower())[-2:]
    if last and last[-1] == "is":
        last = last[:-1]
    return bool(last) and (last[-1] in en.NUMBER_NAMES or last[-1].removesuffix("s") in en.NUMBER_NAMES)


# A reference spelt as capitals then digits ("LIS 48213", "K X 4729", "BT-1186", "JFK, 33460" where the speaker
# paused after the letters; "KX for 729", where "for" can only be the digit it sounds like); never a word Whisper
# writes in capitals anyway (`en.CAPITAL_WORDS`: "ID 4821")
_LETTERED = re.compile(r"(?<![\w-])(?P<letters>[A-Z]{2,4}|[A-Z](?:[ -][A-Z]){1,3})(?P<sep>,\s*|[ -]+)"
                       r"(?P<digits>(?:(?:\d+|" + "|".join(_SOUNDS_LIKE) + r")[ -]+)*\d+)(?![\w.]?\d)")
# A number Whisper wrote with three or more decimals is no amount: a dictated id ("four one eight double oh five"
# -> "418.005")
_DECIMAL_ID = re.compile(r"(?<![$\d.,])(\d{2,})\.(\d{3,})(?![.,]?\d)")


def _lettered(m: re.Match[str]) -> str:
    letters = re.sub(r"[ -]", "", m["letters"])
    if letters in en.CAPITAL_WORDS or m["letters"] in en.CAPITAL_WORDS:
        return m.group(0)
    words = re.findall(r"\d+|[a-z]+", m["digits"])
    digits = "".join(_SOUNDS_LIKE.get(w, w) for w in words)
    if "," in m["sep"] and len(digits) < 3:  # "BA, 3 times": a comma joins a reference's letters to 3+ digits only
        return m.group(0)
    return letters + digits


# "double seven" is two sevens: only beside another digit of the run ("7 double 8 1", "double 7 8 8")
_DIGIT = "(?:" + "|".join([r"\d", *DIGIT_WORDS]) + ")"
_REPEATED = re.compile(rf"\b(?:{'|'.join(en.REPEATED_DIGIT)})\s+{_DIGIT}\b", re.IGNORECASE)
_DIGIT_BEFORE = re.compile(rf"\b{_DIGIT}[\s,-]+$", re.IGNORECASE)
_DIGIT_AFTER = re.compile(rf"[\s,-]+{_DIGIT}\b", re.IGNORECASE)
# An answer to "Could you tell me the card number?": a word that sounds like a digit, between digits, is one
# ("48 to 1" -> 4821); never at either end of the run ("It's for 4567")
_BETWEEN = "|".join(_SOUNDS_LIKE)
_ASKED_RUN = re.compile(rf"(?<![\w$.])\d+(?:[\s,-]+(?:{_BETWEEN})[\s,-]+\d+|[\s,-]+\d+)+(?![\w.]?\d)", re.IGNORECASE)


def _repeated(m: re.Match[str]) -> str:
    if not (_DIGIT_BEFORE.search(m.string[: m.start()]) or _DIGIT_AFTER.match(m.string, m.end())):
        return m.group(0)
    times, digit = m.group(0).split()
    return " ".join([digit] * en.REPEATED_DIGIT[times.lower()])


def _asked_run(m: re.Match[str]) -> str:
    words = re.findall(r"\d+|[a-z]+", m.group(0).lower())
    digits = "".join(_SOUNDS_LIKE.get(w, w) for w in words)
    real = sum(len(w) for w in words if w.isdigit())  # "9 to 5" is a span of time, "48 to 1" a number
    if _UNIT.match(m.string, m.end()) or not 4 <= len(digits) <= 12 or real < 3 or all(w.isdigit() for w in words):
        return m.group(0)
    return digits


# An id said in pairs of number words ("twenty-seven nineteen", "forty, twenty-one, seventy-seven, thirty-six",
# "seventy-seven one oh two"): each pair becomes its digits, then the groups join as Whisper's "27 19" does. A run
# whose first number is 12 or less may be a time ("nine fifteen", "twelve thirty") and stays as said.
_UNIT_WORDS = "|".join(en.ONES[1:10])
_COMPOUND = rf"(?:{'|'.join(en.TENS[2:])})(?:[- ](?:{_UNIT_WORDS})\b)?|{'|'.join(en.ONES[10:])}"
_PAIR_GROUP = rf"(?:{_COMPOUND}|{'|'.join(DIGIT_WORDS)}|\d{{1,3}})"
_PAIRED = re.compile(rf"\b{_PAIR_GROUP}(?:,?\s+{_PAIR_GROUP})+\b", re.IGNORECASE)
_ELLIPSIS = re.compile(r"\s*(?:\.{2,}|…)\s*")
_NUMBERISH = re.compile(rf"(?:\d+|[A-Z]|{'|'.join(DIGIT_WORDS)}|{_COMPOUND})", re.IGNORECASE)


# A house number said in words before its street ("twelve Rose Lane", "twenty two Baker Street") is written as
# Whisper writes most of them, in digits: the street address a tool gets is "12 Rose Lane" (en.STREET_TYPES)
_HOUSE_IN_WORDS = re.compile(rf"\b(?i:({_COMPOUND}|{_UNIT_WORDS}))(?=\s+(?:[A-Z][\w']*\s+){{1,3}}"
                             rf"(?i:{'|'.join(en.STREET_TYPES)})\b)")


# "at number fourteen", "job number twenty-seven": one number announced by "number" is written in digits, as
# Whisper writes it ("number 14"); a run of digits after it is the pairs' and the digit runs' to join
_NUMBERED = re.compile(rf"\b(?i:number|no\.?)\s+(?i:({_COMPOUND}|{_UNIT_WORDS}))\b(?![\s,-]+(?i:{_PAIR_GROUP})\b)")


def _number_value(word: str) -> str:
    parts = re.split(r"[- ]", word.lower())
    if parts[0] in en.TENS:
        return str(en.TENS.index(parts[0]) * 10 + (en.ONES.index(parts[1]) if len(parts) > 1 else 0))
    return str(en.ONES.index(parts[0])) if parts[0] in en.ONES else DIGIT_WORDS.get(parts[0], parts[0])


def _said_in_pairs(m: re.Match[str]) -> str:
    groups = re.findall(_PAIR_GROUP, m.group(0), re.IGNORECASE)
    values = [_number_value(g) for g in groups]
    if len(groups) < 2 or not re.search(_COMPOUND, m.group(0), re.IGNORECASE) or int(values[0]) <= 12:
        return m.group(0)
    return " ".join(values)


def _pauses_in_numbers(text: str) -> str:
    """"K X... four seven... two nine" -> "K X four seven two nine": a pause inside a dictated reference."""
    def joined(m: re.Match[str]) -> str:
        before, after = m.string[: m.start()].split(), m.string[m.end():].split()
        numberish = bool(before and after and _NUMBERISH.fullmatch(before[-1].strip(",")) and
                         _NUMBERISH.fullmatch(after[0].strip(",.?!")))
        return " " if numberish else m.group(0)
    return _ELLIPSIS.sub(joined, text)


def join_spoken_digits(text: str, asked_for_a_number: bool = False) -> str:
    """"It's 4 5 6 7." -> "It's 4567."; "order 12, 34" -> "order 1234"; "four five six seven" -> "4567";
    "order to 0 to 0" -> "order 2020"; "LIS 48213" -> "LIS48213"; "member 418.005" -> "member 418005";
    "7 double 8 1" -> "7881". `asked_for_a_number`: the words answer a question for one ("48 to 1" -> "4821")."""
    text = _PAIRED.sub(_said_in_pairs, _pauses_in_numbers(_REPEATED.sub(_repeated, text)))
    text = _HOUSE_IN_WORDS.sub(lambda m: _number_value(m.group(1)), text)
    text = _NUMBERED.sub(lambda m: m.group(0)[: m.start(1) - m.start()] + _number_value(m.group(1)), text)
    if asked_for_a_number:
        text = _ASKED_RUN.sub(_asked_run, join_digit_words(text))
    joined = _GROUPS.sub(_join_groups, join_digit_words(_DICTATED.sub(_sounds_like_digits, text)))
    return _LETTERED.sub(_lettered, _DECIMAL_ID.sub(r"\1\2", joined))
