"""Numbers a caller dictated, put back together before the model reads the turn.

Whisper writes an id read digit by digit in pieces: "4 5 6 7", "12, 34", "45-67", or in words ("four five six
seven"). A small model given the pieces looks up "12" or asks for the number again; given "4567" it calls the
tool. Only runs of short digit groups are joined (each group 1-3 digits, 3 to 12 digits in all), never an amount
("$20 30", "20 30 dollars") or a time ("3 30 pm"), and never numbers in separate sentences.

The words read are the call's language's (`words`: its pack, `loop.locale`; `DEFAULT_WORDS` unless told): its
digit words, the words Whisper writes for a digit heard alone, the names of a number, a street's types.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType

from loop.grounding.speakable import join_digit_words
from loop.locale import DEFAULT_WORDS

_SEP = r"(?:,?\s+|\s*-\s*)"
_GROUPS = re.compile(rf"(?<![$\d.,])\b\d{{1,3}}(?:{_SEP}\d{{1,3}})+\b(?![.,]?\d)")
# A number Whisper wrote with three or more decimals is no amount: a dictated id ("four one eight double oh five"
# -> "418.005")
_DECIMAL_ID = re.compile(r"(?<![$\d.,])(\d{2,})\.(\d{3,})(?![.,]?\d)")
_ELLIPSIS = re.compile(r"\s*(?:\.{2,}|…)\s*")


@dataclass(frozen=True)
class _Readers:
    """One language's patterns of dictated numbers, built from its pack once (`readers_for`)."""

    words: ModuleType
    unit: re.Pattern[str]  # what makes the number before it an amount or a time, no id (the pack's UNITS_AFTER)
    dictated: re.Pattern[str]  # a run of digits and digit words, four or more
    lettered: re.Pattern[str]  # a reference spelt as capitals then digits
    repeated: re.Pattern[str]  # "double seven"
    digit_before: re.Pattern[str]
    digit_after: re.Pattern[str]
    asked_run: re.Pattern[str]  # digits with a digit's homophone between them
    compound: str  # a number word of two digits ("twenty-seven", "nineteen")
    pair_group: str
    paired: re.Pattern[str]
    numberish: re.Pattern[str]
    house_in_words: re.Pattern[str]
    numbered: re.Pattern[str]
    # Words Whisper writes for a digit heard alone ("two zero two zero" -> "to 0 to 0"); read as digits only inside
    # a run of four or more that holds at least two real digits and never two of these in a row
    sounds_like: dict[str, str]


def _alternatives(words: Iterable[str]) -> str:
    return "|".join(map(re.escape, words))


@functools.cache
def readers_for(words: ModuleType) -> _Readers:
    """The readers of one language's dictated numbers (cached per pack)."""
    digit_words, sounds_like = _alternatives(words.DIGIT_WORDS), _alternatives(words.DIGIT_HOMOPHONES)
    digitish = "(?:" + "|".join(p for p in (r"\d", digit_words, sounds_like) if p) + ")"
    digit = "(?:" + "|".join(p for p in (r"\d", digit_words) if p) + ")"
    unit_words = _alternatives(words.ONES[1:10])
    compound = rf"(?:{_alternatives(words.TENS[2:])})(?:[- ](?:{unit_words})\b)?|{_alternatives(words.ONES[10:])}"
    pair_group = rf"(?:{compound}|{digit_words}|\d{{1,3}})"
    # a reference spelt as capitals then digits ("LIS 48213", "K X 4729", "BT-1186", "JFK, 33460" where the
    # speaker paused after the letters; "KX for 729", where "for" can only be the digit it sounds like)
    lettered_digit = "|".join(p for p in (r"\d+", sounds_like) if p)
    return _Readers(
        words=words, unit=re.compile(rf"\s*(?:{words.UNITS_AFTER})", re.IGNORECASE),
        dictated=re.compile(rf"(?<![\w$.]){digitish}(?:[\s,-]+{digitish}){{3,}}(?![\w.]?\d)", re.IGNORECASE),
        lettered=re.compile(r"(?<![\w-])(?P<letters>[A-Z]{2,4}|[A-Z](?:[ -][A-Z]){1,3})(?P<sep>,\s*|[ -]+)"
                            rf"(?P<digits>(?:(?:{lettered_digit})[ -]+)*\d+)(?![\w.]?\d)"),
        repeated=re.compile(rf"\b(?:{_alternatives(words.REPEATED_DIGIT)})\s+{digit}\b", re.IGNORECASE),
        digit_before=re.compile(rf"\b{digit}[\s,-]+$", re.IGNORECASE),
        digit_after=re.compile(rf"[\s,-]+{digit}\b", re.IGNORECASE),
        asked_run=re.compile(rf"(?<![\w$.])\d+(?:[\s,-]+(?:{sounds_like or '(?!)'})[\s,-]+\d+|[\s,-]+\d+)+"
                             r"(?![\w.]?\d)", re.IGNORECASE),
        compound=compound, pair_group=pair_group,
        paired=re.compile(rf"\b{pair_group}(?:,?\s+{pair_group})+\b", re.IGNORECASE),
        numberish=re.compile(rf"(?:\d+|[A-Z]|{digit_words}|{compound})", re.IGNORECASE),
        # a house number said in words before its street ("twelve Rose Lane") is written as Whisper writes most
        house_in_words=re.compile(rf"\b(?i:({compound}|{unit_words}))(?=\s+(?:[A-Z][\w']*\s+){{1,3}}"
                                  rf"(?i:{_alternatives(words.STREET_TYPES)})\b)"),
        # "at number fourteen": one number announced by "number" is written in digits, as Whisper writes it
        numbered=re.compile(rf"\b(?i:{words.NUMBER_SAID})\s+(?i:({compound}|{unit_words}))\b"
                            rf"(?![\s,-]+(?i:{pair_group})\b)"),
        sounds_like=dict(words.DIGIT_HOMOPHONES),
    )


def _join_groups(m: re.Match[str], r: _Readers) -> str:
    text = m.group(0)
    if r.unit.match(m.string, m.end()):
        return text  # an amount, not an id
    digits = re.sub(r"\D", "", text)
    return digits if 3 <= len(digits) <= 12 else text


def _sounds_like_digits(m: re.Match[str], r: _Readers) -> str:
    """A dictated id with digits heard as words ("to 0 to 0"): only when the real digits are too few to be the id
    without them, and the run does not end on one ("2 to 3 for"). A run of digits and digit words alone ("6, 6,
    oh, oh") is one id."""
    sounds_like, digit_words = r.sounds_like, r.words.DIGIT_WORDS
    words = re.findall(r"[a-z]+|\d", m.group(0).lower())
    heard = [w for w in words if w not in sounds_like]
    if len(heard) == len(words):
        return m.group(0) if r.unit.match(m.string, m.end()) else "".join(digit_words.get(w, w) for w in words)
    # a digit said twice right after the number is named is one too ("the reference is for for one eight")
    twice = _announced(m.string[: m.start()], r.words)
    if not 2 <= len(heard) < 4 or words[-1] in sounds_like or any(
            a in sounds_like and b in sounds_like and not (twice and a == b) for a, b in itertools.pairwise(words)):
        return m.group(0)
    return "".join(sounds_like.get(w) or digit_words.get(w, w) for w in words)


def _announced(before: str, words: ModuleType) -> bool:
    """The words before a run name a number: "... the references", "... my account number is"."""
    last = re.findall(r"[a-z]+", before.lower())[-2:]
    if last and last[-1] in words.NUMBER_IS:
        last = last[:-1]
    return bool(last) and (last[-1] in words.NUMBER_NAMES or last[-1].removesuffix("s") in words.NUMBER_NAMES)


def _lettered(m: re.Match[str], r: _Readers) -> str:
    """Letters then digits, as one reference; never a word Whisper writes in capitals anyway (the pack's
    CAPITAL_WORDS: "ID 4821")."""
    letters = re.sub(r"[ -]", "", m["letters"])
    if letters in r.words.CAPITAL_WORDS or m["letters"] in r.words.CAPITAL_WORDS:
        return m.group(0)
    words = re.findall(r"\d+|[a-z]+", m["digits"])
    digits = "".join(r.sounds_like.get(w, w) for w in words)
    if "," in m["sep"] and len(digits) < 3:  # "BA, 3 times": a comma joins a reference's letters to 3+ digits only
        return m.group(0)
    return letters + digits


def _repeated(m: re.Match[str], r: _Readers) -> str:
    """"double seven" is two sevens: only beside another digit of the run ("7 double 8 1", "double 7 8 8")."""
    if not (r.digit_before.search(m.string[: m.start()]) or r.digit_after.match(m.string, m.end())):
        return m.group(0)
    times, digit = m.group(0).split()
    return " ".join([digit] * r.words.REPEATED_DIGIT[times.lower()])


def _asked_run(m: re.Match[str], r: _Readers) -> str:
    """An answer to "Could you tell me the card number?": a word that sounds like a digit, between digits, is one
    ("48 to 1" -> 4821); never at either end of the run ("It's for 4567")."""
    words = re.findall(r"\d+|[a-z]+", m.group(0).lower())
    digits = "".join(r.sounds_like.get(w, w) for w in words)
    real = sum(len(w) for w in words if w.isdigit())  # "9 to 5" is a span of time, "48 to 1" a number
    if r.unit.match(m.string, m.end()) or not 4 <= len(digits) <= 12 or real < 3 or all(w.isdigit() for w in words):
        return m.group(0)
    return digits


def _number_value(word: str, words: ModuleType) -> str:
    parts = re.split(r"[- ]", word.lower())
    if parts[0] in words.TENS:
        return str(words.TENS.index(parts[0]) * 10 + (words.ONES.index(parts[1]) if len(parts) > 1 else 0))
    return str(words.ONES.index(parts[0])) if parts[0] in words.ONES else words.DIGIT_WORDS.get(parts[0], parts[0])


def _said_in_pairs(m: re.Match[str], r: _Readers) -> str:
    """An id said in pairs of number words ("twenty-seven nineteen", "forty, twenty-one, seventy-seven,
    thirty-six", "seventy-seven one oh two"): each pair becomes its digits, then the groups join as Whisper's "27
    19" does. A run whose first number is 12 or less may be a time ("nine fifteen", "twelve thirty") and stays."""
    groups = re.findall(r.pair_group, m.group(0), re.IGNORECASE)
    values = [_number_value(g, r.words) for g in groups]
    if len(groups) < 2 or not re.search(r.compound, m.group(0), re.IGNORECASE) or int(values[0]) <= 12:
        return m.group(0)
    return " ".join(values)


def _pauses_in_numbers(text: str, r: _Readers) -> str:
    """"K X... four seven... two nine" -> "K X four seven two nine": a pause inside a dictated reference."""
    def joined(m: re.Match[str]) -> str:
        before, after = m.string[: m.start()].split(), m.string[m.end():].split()
        numberish = bool(before and after and r.numberish.fullmatch(before[-1].strip(",")) and
                         r.numberish.fullmatch(after[0].strip(",.?!")))
        return " " if numberish else m.group(0)
    return _ELLIPSIS.sub(joined, text)


def join_spoken_digits(text: str, asked_for_a_number: bool = False, words: ModuleType = DEFAULT_WORDS) -> str:
    """"It's 4 5 6 7." -> "It's 4567."; "order 12, 34" -> "order 1234"; "four five six seven" -> "4567";
    "order to 0 to 0" -> "order 2020"; "LIS 48213" -> "LIS48213"; "member 418.005" -> "member 418005";
    "7 double 8 1" -> "7881". `asked_for_a_number`: the words answer a question for one ("48 to 1" -> "4821").
    `words`: the call's language pack."""
    r = readers_for(words)
    text = r.paired.sub(lambda m: _said_in_pairs(m, r), _pauses_in_numbers(r.repeated.sub(
        lambda m: _repeated(m, r), text), r))
    text = r.house_in_words.sub(lambda m: _number_value(m.group(1), words), text)
    text = r.numbered.sub(lambda m: m.group(0)[: m.start(1) - m.start()] + _number_value(m.group(1), words), text)
    if asked_for_a_number:
        text = r.asked_run.sub(lambda m: _asked_run(m, r), join_digit_words(text, words))
    joined = _GROUPS.sub(lambda m: _join_groups(m, r), join_digit_words(
        r.dictated.sub(lambda m: _sounds_like_digits(m, r), text), words))
    return r.lettered.sub(lambda m: _lettered(m, r), _DECIMAL_ID.sub(r"\1\2", joined))
