"""Times of day as a caller says them and as a tool lists them, read as clock values so one meets the other:
"five o'clock" is the "5 p.m." of an enum of showtimes, "seven thirty" and "7.30" its "7:30 p.m.", "quarter to
nine" its "8:45 p.m.". Labelled examples: tests/data/clock_times.tsv."""

from __future__ import annotations

import functools
import re
from types import ModuleType

from loop.grounding._heard import Spoken, spoken
from loop.locale import DEFAULT_WORDS, unaccented

Clock = tuple[int, int, str]  # hour 1-12, minute, "am" / "pm" / "" (not said)

@functools.cache
def _digits(words: ModuleType) -> re.Pattern[str]:
    """An hour in digits, its minutes, and what may follow it: a.m., p.m., the pack's OCLOCK ("o'clock")."""
    oclock = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in words.OCLOCK)
    return re.compile(r"(?<![$£€.,\d])\b(\d{1,2})(?:[:.](\d{2})|\s+(\d{2})(?!\d))?"
                      rf"\s*(a\.?\s?m\b\.?|p\.?\s?m\b\.?|{oclock})?", re.IGNORECASE)


@functools.cache
def _cued(words: ModuleType) -> tuple[re.Pattern[str], frozenset[str], int]:
    """What says a bare number before it is an hour (the pack's CLOCK_CUES: "at 7", "a las 7"), how far back to look
    for it, and the words after a number that make it an amount (MONEY_WORDS, AMOUNT_UNITS: "7.30 dollars")."""
    cues = sorted(words.CLOCK_CUES, key=lambda c: (-len(c), c))
    before = re.compile(rf"(?<![a-z])(?:{'|'.join(cues)})[^a-z]*$")
    return before, frozenset({*words.MONEY_WORDS, *words.AMOUNT_UNITS}), max(12, max(map(len, cues), default=0) + 6)


def _number(word: str, said: Spoken) -> int | None:
    """A number from 0 to 99 in digits or as said ("forty two", "forty-two", "cuarenta y dos")."""
    word = word.lower().replace("-", " ")
    return int(word) if word.isdigit() else said.numbers.get(" ".join(word.split()))


def _clock(hour: int | None, minute: int | None, meridiem: str = "") -> Clock | None:
    if hour is None or minute is None or not 0 <= minute < 60 or not 0 < hour < 24:
        return None
    if hour > 12:
        return hour - 12, minute, "pm"
    return hour, minute, meridiem


def _meridiem(text: str | None) -> str:
    low = (text or "").lower().replace(".", "").replace(" ", "")  # "a.m.", "p. m." (both languages write them)
    return low if low in ("am", "pm") else ""


Span = tuple[Clock, int, int]  # a time and where it is in the text (character offsets)
_TOKEN = re.compile(r"[a-z]\.\s?[a-z]\b\.?|[a-z']+|\d+", re.IGNORECASE)


def _tokens(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    plain = unaccented(text)  # "mediodía" as the pack writes it; the same offsets when accents are one character
    found = [(m.group().lower().replace(".", "").replace(" ", ""), m.span())
             for m in _TOKEN.finditer(plain if len(plain) == len(text) else text)]
    return [w for w, _ in found], [span for _, span in found]


def _spoken(words: list[str], said: Spoken, oclock: tuple[tuple[str, ...], ...]) -> list[tuple[Clock, int, int]]:
    """'seven thirty', 'nine fifteen p.m.', "five o'clock" (`oclock`: the pack's OCLOCK as tokens), 'nine oh five'
    (an hour word, then minutes; "oh": a digit word for 0 that is no number word): each with the first and last
    word it spans."""
    units, tens = said.units, said.tens
    zero = {w for w, d in said.digits.items() if d == "0" and w not in units}
    found = []
    for i, word in enumerate(words):
        hour = units.get(word) if word in units and 0 < units[word] <= 12 else None
        if hour is None:
            continue
        rest = words[i + 1: i + 4]
        if whole := next((len(o) for o in oclock if tuple(rest[: len(o)]) == o), 0):
            half = _meridiem(rest[whole] if len(rest) > whole else "")
            found.append(((hour, 0, half), i, i + whole + bool(half)))
            continue
        minute_words = next((rest[:n] for n in (3, 2) if len(rest) >= n and " ".join(rest[:n]) in said.numbers),
                            rest[:1])
        if len(minute_words) == 1 and rest[0] in tens and rest[1:2] and rest[1] in units:
            minute_words = rest[:2]  # a ten, then a number it does not compose with ("twenty twelve"): no minutes
        minute = said.numbers.get(" ".join(minute_words))
        minute = minute if minute is not None and minute >= 10 else None
        if minute is None and rest[:1] and rest[0] in zero and rest[1:2] and rest[1] in units:  # "nine oh five"
            minute_words, minute = rest[:2], units[rest[1]]
        half = _meridiem(rest[len(minute_words)] if len(rest) > len(minute_words) else "")
        if minute is not None and (clock := _clock(hour, minute, half)):
            found.append((clock, i, i + len(minute_words) + bool(half)))
        elif rest[:1] in (["am"], ["pm"]):
            found.append(((hour, 0, rest[0]), i, i + 1))
    return found


def _hour_named(tokens: list[str], said: Spoken, words: ModuleType) -> list[tuple[Clock, int, int]]:
    """An hour said before the word that names it ("twelve noon", "12 midnight"; the pack's CLOCK_WORDS): one time,
    so its number is no count of anything."""
    found = []
    for i, word in enumerate(tokens[1:], 1):
        named = words.CLOCK_WORDS.get(word)
        if named is None:
            continue
        hour, half = named.split()[0], _meridiem(named.split()[-1])
        if _number(tokens[i - 1], said) == int(hour):
            found.append(((int(hour), 0, half), i - 1, i))
    return found


def _past_or_to(tokens: list[str], said: Spoken, words: ModuleType) -> list[tuple[Clock, int, int]]:
    """'half past eight', 'quarter to nine', 'twenty five past six' (minutes in words, a multiple of five; never
    'from nine to five'); in a language that says the hour first ("las ocho y media", CLOCK_HOUR_FIRST), 'ocho y
    media', 'nueve menos cuarto'. The pack's CLOCK_PAST, CLOCK_TO, CLOCK_PARTS and CLOCK_RANGE."""
    found = []
    for i, word in enumerate(tokens[1:-1], 1):
        if word not in words.CLOCK_PAST and word not in words.CLOCK_TO:
            continue
        minutes = tokens[i + 1:] if words.CLOCK_HOUR_FIRST else tokens[max(0, i - 2): i]
        amount, used = _minutes(minutes, said, words, last=not words.CLOCK_HOUR_FIRST)
        hour = _number(tokens[i - 1] if words.CLOCK_HOUR_FIRST else tokens[i + 1], said)
        past = word in words.CLOCK_PAST
        if amount is None or hour is None or amount % 5 or not 0 < amount < 60 or (not past and amount > 30):
            continue
        start, end = (i - 1, i + used) if words.CLOCK_HOUR_FIRST else (i - used, i + 1)
        if start > 0 and tokens[start - 1] in words.CLOCK_RANGE:
            continue
        clock = _clock(hour, amount) if past else _clock(hour - 1 if hour > 1 else 12, 60 - amount)
        if clock:
            found.append((clock, start, end))
    return found


def _minutes(tokens: list[str], said: Spoken, words: ModuleType, last: bool) -> tuple[int | None, int]:
    """The minutes said in words at the end of `tokens` (`last`: "twenty five" of "... twenty five past", "half")
    or at their start ("veinticinco", "media" after "y"), and how many words say them."""
    if not tokens:
        return None, 0
    near = tokens[-1] if last else tokens[0]
    wide = len(tokens) >= 2 and (tokens[-2] if last else tokens[0]) in said.tens
    two = " ".join(tokens[-2:] if last else tokens[:2]) if wide else ""
    pair = _number(two, said) if two else None
    amount = words.CLOCK_PARTS.get(near) or pair or (_number(near, said) if not near.isdigit() else None)
    return amount, 2 if wide and (last or pair is not None) else 1


def time_spans_in(text: str, words: ModuleType = DEFAULT_WORDS) -> list[Span]:
    """Every time of day `text` says, in digits or words (of the pack `words`), with its place in the text; of two
    readings of the same words, the longer ("half past seven pm", not "seven pm" as well)."""
    cue, money, back = _cued(words)
    found: list[Span] = []
    for m in _digits(words).finditer(text):
        hour, minute = int(m.group(1)), m.group(2) or m.group(3)
        said = m.group(4) or ""
        cued = cue.search(unaccented(text[max(0, m.start() - back): m.start()].lower()))
        after = re.findall(r"[a-z]+", unaccented(text[m.end(): m.end() + 12].lower()))[:1]
        if (minute is None and not said and not cued) or set(after) & money:
            continue  # "4 seats", "7.30 dollars" are no times
        if clock := _clock(hour, int(minute or 0), _meridiem(said)):
            found.append((clock, m.start(), m.end()))
    tokens, spans = _tokens(text)
    oclock = tuple(tuple(o.split()) for o in words.OCLOCK)
    said = spoken(words)
    for clock, first, last in [*_past_or_to(tokens, said, words), *_spoken(tokens, said, oclock),
                               *_hour_named(tokens, said, words)]:
        found.append((clock, spans[first][0], spans[last][1]))
    folded = unaccented(text.lower())  # as the packs write their words; the same offsets when accents are one letter
    folded = folded if len(folded) == len(text) else text.lower()
    found += _cued_hours(folded, tokens, spans, words)
    return [_half_from_sentence(span, folded, words)
            for span in _longest([_with_half_of_day(span, folded, words) for span in found])]


@functools.cache
def _half_of_day(words: ModuleType) -> re.Pattern[str]:
    """What may follow a time and say its half of the day: a.m. or p.m. (`half`), or a part of the day (`part`: the
    pack's PARTS_OF_DAY, "in the morning", "de la tarde")."""
    parts = "|".join(re.escape(p) for p in sorted(words.PARTS_OF_DAY, key=len, reverse=True)) or "(?!)"
    return re.compile(rf"\s*(?:(?P<half>[ap])\.?\s?m\b\.?|(?P<part>{parts})\b)")


def _cued_hours(folded: str, tokens: list[str], spans: list[tuple[int, int]], words: ModuleType) -> list[Span]:
    """An hour word after a cue ("at seven?", "a las siete de la tarde"), as "at 7" is, where the time ends the
    phrase (a comma or a stop, the text's end, a half or part of the day, a day): "at one of them" is no time; and
    one before a part of the day ("four in the afternoon"). `folded`: the text in lower case, accents folded."""
    cue, _, back = _cued(words)
    said, found = spoken(words), []
    ends = {"am", "pm", *said.days, *(p.split()[0] for p in words.PARTS_OF_DAY)}
    for i, token in enumerate(tokens):
        hour = said.units.get(token)
        if hour is None or not 0 < hour <= 12:
            continue
        after = folded[spans[i][1]:]
        parted = (m := _half_of_day(words).match(after)) is not None and m["part"] is not None
        cued = cue.search(folded[max(0, spans[i][0] - back): spans[i][0]])
        ended = re.match(r"\s*(?:[,.;:?!]|$)", after) or (i + 1 < len(tokens) and tokens[i + 1] in ends)
        if parted or (cued and ended):
            found.append(((hour, 0, ""), *spans[i]))
    return found


def _with_half_of_day(span: Span, folded: str, words: ModuleType) -> Span:
    """A time with a.m., p.m. or the part of the day said after it ("half past seven pm", "ten in the morning",
    "siete de la tarde") in its half of the day."""
    (hour, minute, half), start, end = span
    if half or (m := _half_of_day(words).match(folded[end:])) is None:
        return span
    return (hour, minute, f"{m['half']}m" if m["half"] else words.PARTS_OF_DAY[m["part"]]), start, end + m.end()


_SENTENCE_END = re.compile(r"[?!;]|(?<![ap]\.m)(?<!\d)\.(?=\s|$)")


@functools.cache
def _day_parts(words: ModuleType) -> list[tuple[re.Pattern[str], str, frozenset[int]]]:
    """The pack's DAY_PARTS as patterns, each with its half of the day and the hours (1-12) it holds."""
    def hours(first: int, last: int) -> frozenset[int]:
        return frozenset(range(first, last + 1) if first <= last else [*range(first, 13), *range(1, last + 1)])
    return [(re.compile(rf"(?<![a-z]){re.escape(part)}(?![a-z])"), half, hours(first, last))
            for part, (half, first, last) in words.DAY_PARTS.items()]


def _half_from_sentence(span: Span, folded: str, words: ModuleType) -> Span:
    """A bare hour in the half of the day that a part of the day said in its sentence gives it, when every part
    said there agrees and holds that hour: "Thursday evening, at seven" is 7 p.m.; "this morning ..., at three"
    stays 3."""
    (hour, minute, half), start, end = span
    if half:
        return span
    begin = max((m.end() for m in _SENTENCE_END.finditer(folded, 0, start)), default=0)
    stop = m.start() if (m := _SENTENCE_END.search(folded, end)) else len(folded)
    sentence = folded[begin:stop]
    said = [(half_, held) for pattern, half_, held in _day_parts(words) if pattern.search(sentence)]
    halves = {h for h, _ in said}
    if len(halves) == 1 and all(hour in held for _, held in said):
        return (hour, minute, halves.pop()), start, end
    return span


def _longest(found: list[Span]) -> list[Span]:
    kept: list[Span] = []
    for span in sorted(found, key=lambda s: (s[1] - s[2], s[1])):
        if all(span[2] <= other[1] or span[1] >= other[2] for other in kept):
            kept.append(span)
    return sorted(kept, key=lambda s: s[1])


def clock_times(text: str, words: ModuleType = DEFAULT_WORDS) -> list[Clock]:
    """Every time of day `text` says, in digits or words."""
    return list(dict.fromkeys(clock for clock, _, _ in time_spans_in(text, words)))


def without_times(text: str, words: ModuleType = DEFAULT_WORDS) -> str:
    """`text` with its times of day blanked out: the "five" of "five o'clock" is no count of seats."""
    for _, start, end in sorted(time_spans_in(text, words), key=lambda s: -s[1]):
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def same_time(said: Clock, listed: Clock) -> bool:
    """A time the caller said is a listed one: the same hour and minute, and the same half of the day when both
    say it."""
    return said[:2] == listed[:2] and (not said[2] or not listed[2] or said[2] == listed[2])


def times_named(values: list[str], text: str, words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """The values of an enum of times ("5 p.m.", "7:30 p.m.") that `text` says, however it says them; [] when
    the enum's values are not all times."""
    listed = [clock_times(v, words) for v in values]
    if not values or not all(len(c) == 1 for c in listed):
        return []
    said = clock_times(text, words)
    return [v for v, (clock,) in zip(values, listed, strict=True) if any(same_time(s, clock) for s in said)]
