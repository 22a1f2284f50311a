"""Values a caller said, read out of their words: amounts, identifiers, names, times and plain spans of words.

What `loop.grounding.arguments` narrows a tool's arguments to (and `loop.policy.guardrails` checks writes against);
split out of `loop/grounding/arguments.py`, which re-exports these, so each file stays readable.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType

from loop.locale import DEFAULT_WORDS, number_words, unaccented

_ID_RE = re.compile(r"[A-Za-z0-9-]*\d[A-Za-z0-9-]*")  # a whole token with a digit: not "$600", not "35.50"
_CLOCK = re.compile(r"\d{1,2}(?::\d\d)?(?:am|pm)|\d{1,2}:\d\d|\d+(?:st|nd|rd|th)", re.IGNORECASE)  # 7pm, 10:30, 12th
# letters spelled one by one, then digits: "E 70346", "H. G. 318840"
_SPELLED_ID = re.compile(r"(?<![\w'])(?P<letters>(?:[A-Z][.,]?\s+){1,3})(?P<digits>\d{3,}\b)")
MAX_SPAN_WORDS = 8
_PRONOUNS = {"I", "I'm", "I'd", "I've", "I'll"}
_VOCATIVE = re.compile(r",\s*[A-Z][\w'-]*\s*$")  # a name after the last comma, closing the sentence


def _address_re(number_words: Iterable[str], words: ModuleType) -> re.Pattern[str]:
    """A street address: a house number (in digits or number words), up to three words of its street's name and a
    word that closes a street's name (the pack's STREET_TYPES), maybe after a flat ("flat 2, ...": ADDRESS_STARTS)."""
    number_word = "|".join(number_words)
    street_types, starts = words.STREET_TYPES, words.ADDRESS_STARTS
    house_number = rf"(?:\d+[a-z]?|(?:(?:{number_word})[\s-]+)*(?:{number_word}))"
    not_names = "|".join(sorted(words.SPAN_JOINERS | words.REQUEST_WORDS, key=len, reverse=True))
    name_word = rf"(?!(?:{not_names})\b)[A-Za-z][\w'-]*"
    flat = r"(?:(?:{})\.?\s+\w+,?\s+)?".format("|".join(starts))
    return re.compile(rf"\b{flat}{house_number}\s+(?:{name_word}\s+){{0,3}}(?:{'|'.join(street_types)})s?\b",
                      re.IGNORECASE)


@dataclass(frozen=True)
class Spoken:
    """One language's words the value readers read (`loop.locale`), worked out once per pack (`spoken`)."""

    units: dict[str, int]  # "seven" -> 7: the pack's ONES
    tens: dict[str, int]  # "forty" -> 40: the pack's TENS
    numbers: dict[str, int]  # every number from 0 to 99 as said (`loop.locale.said_numbers`): "forty two" -> 42
    digits: dict[str, str]  # a digit said alone, as an id is dictated (DIGIT_WORDS)
    scale: frozenset[str]  # the words inside a spoken amount besides its numbers ("hundred", "dollars", "and")
    joins: tuple[str, ...]  # of those, the ones an amount does not end on ("and", "a")
    when_core: frozenset[str]  # a word that says when on its own ("tuesday", "ten", "noon")
    time_words: frozenset[str]  # and the words around it ("half", "past", "p.m.")
    days: frozenset[str]  # a word that names a day (weekdays, months, "tomorrow")
    clock_words: frozenset[str]  # a time of day said as a word ("noon")
    address_starts: tuple[str, ...]
    address: re.Pattern[str]  # a street address: a house number, its street's name and a street type
    digit_of: dict[str, str]  # a number word written in digits ("eleven" -> "11")
    request: frozenset[str]  # the words of a request, not a value (REQUEST_WORDS)
    joiners: frozenset[str]  # what a value's span does not start or end on (SPAN_JOINERS)
    not_names: frozenset[str]  # the words of a request and of a day, none a name
    correction: re.Pattern[str]  # a speaker taking back what they said (CORRECTION)
    amount: re.Pattern[str]  # an amount in digits: "$15", "35.50", "600 dollars" (AMOUNT_AFTER)
    currency: frozenset[str]  # what an amount in words is counted in (CURRENCY)
    cents: frozenset[str]  # and its hundredths (CURRENCY_CENTS)


@functools.cache
def spoken(words: ModuleType = DEFAULT_WORDS) -> Spoken:
    """The value readers' words of the pack `words`, read once."""
    said = number_words(words)  # the same for every reader of number words (voice.speech, voice.testing)
    units, tens, numbers = dict(said.units), dict(said.tens), dict(said.said)
    single = {w: n for w, n in numbers.items() if " " not in w}
    joins = (words.AND.strip(), words.ONE_ARTICLES[0]) if words.ONE_ARTICLES else (words.AND.strip(),)
    clock_words = frozenset(words.CLOCK_WORDS)
    when_core = frozenset({*words.WEEKDAYS, *words.MONTHS, *(w for w, n in single.items() if n),
                           *clock_words, *(w for w in words.TIME_WORDS if " " not in w), *words.DAYS_SAID})
    in_numbers = sorted({*(w for s, n in numbers.items() if n for w in s.split()), words.HUNDRED,
                         words.AND.strip()}, key=lambda w: (-len(w), w))
    days = frozenset({*words.WEEKDAYS, *words.MONTHS, *words.DAYS_SAID})
    money = frozenset({*words.CURRENCY, *words.CURRENCY_CENTS})
    amount = re.compile(rf"(\$)?(?<![\w.])(\d+(?:,\d{{3}})*(\.\d+)?)(?!\w)( ?(?:{words.AMOUNT_AFTER}))?", re.IGNORECASE)
    return Spoken(units, tens, numbers, dict(said.digits), frozenset({words.HUNDRED, words.THOUSAND, *joins,
                  *money}), joins, when_core, when_core | frozenset(words.CLOCK_SAID), days, clock_words,
                  tuple(words.ADDRESS_STARTS), _address_re(in_numbers, words),
                  {w: str(n) for w, n in single.items() if n}, frozenset(words.REQUEST_WORDS),
                  frozenset(words.SPAN_JOINERS), frozenset(words.REQUEST_WORDS) | days,
                  re.compile(words.CORRECTION, re.IGNORECASE), amount, frozenset(words.CURRENCY),
                  frozenset(words.CURRENCY_CENTS))


def words_to_number(text: str, words: ModuleType = DEFAULT_WORDS) -> float | None:
    """'twenty' -> 20, 'one hundred' -> 100, 'twelve dollars and fifty cents' -> 12.5, '$35.50' -> 35.5; number
    words of the pack `words`. None for words that are not one spoken number: "seven thirty" is a time, 730 or
    7 and 30, never 37 (`cardinal_runs` splits them)."""
    said = spoken(words)
    cleaned = unaccented(text.lower()).replace(",", "").replace("$", "").strip()  # "céntimos": as the pack writes it
    try:
        return float(cleaned)
    except ValueError:
        pass
    tokens = re.findall(r"[a-z]+|\d+(?:\.\d+)?", cleaned.replace("-", " "))
    if len(cardinal_runs(tokens, words)) > 1:
        return None
    dollars, cents, current, seen = 0.0, 0.0, 0.0, False
    for word in tokens:
        if word in said.units or word in said.tens:
            current += said.units.get(word, 0) + said.tens.get(word, 0)
        elif re.fullmatch(r"\d+(?:\.\d+)?", word):
            current += float(word)
        elif word == words.HUNDRED:
            current = (current or 1) * 100
        elif word == words.THOUSAND:
            dollars, current = (dollars + (current or 1)) * 1000, 0
        elif word in said.cents:
            cents, current = current, 0
        elif word in said.currency:
            dollars, current = dollars + current, 0
        else:
            continue
        seen = True
    return dollars + current + cents / 100 if seen else None


def cardinal_runs(tokens: list[str], words: ModuleType = DEFAULT_WORDS) -> list[list[str]]:
    """`tokens` split where one spoken number ends and the next begins, by the order a number's words come in: a
    unit after a tens word or a scale ("twenty five", "hundred and five", "treinta y cinco"), anything after a scale,
    a scale after any number, cents after a money word; "seven thirty" -> [seven] [thirty], "four five six" ->
    three numbers. Joins ("and") and money words ("dollars") stay inside the number they are said in."""
    said = spoken(words)
    scales = (words.HUNDRED, words.THOUSAND)
    runs: list[list[str]] = []
    money = said.currency | said.cents
    previous = ""  # the last number word, scale or money word of the run ("" at its start)
    for token in tokens:
        value = said.units.get(token, said.tens.get(token)) if not token[0].isdigit() else None
        if token in scales:
            fits = previous not in scales or (previous, token) == scales
        elif value is not None or token[0].isdigit():
            number = value if value is not None else float(token)
            before = said.units.get(previous, said.tens.get(previous))
            fits = not previous or ((previous in scales or previous in money) and number != 0) or (
                before is not None and before >= 20 and before % 10 == 0 and 0 < number < 10)
        else:  # a join or a money word: the cents of "twelve dollars and fifty cents" are the same amount
            if runs:
                runs[-1].append(token)
                previous = token if token in money else previous
            continue
        if fits and runs and previous:
            runs[-1].append(token)
        else:
            runs.append([token])
        previous = token
    return runs


def stem(word: str) -> str:
    """A word's stem, roughly: "bookings" / "booking's" / "booked" -> "book", "deliveries" -> "deliv", "opening" ->
    "open". A plural stems as its singular does ("sailings" as "sailing", "fines" as "fine", "boxes" as "box")."""
    word = word.lower().strip("'").removesuffix("'s")
    for suffix in ("ies", "ing", "ed", "es", "s"):
        if suffix == "es" and not re.search(r"(?:s|x|z|ch|sh)es$", word):
            continue  # "fines", "prices": the singular's own "e" stays
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            if suffix == "s" and (ending := next((e for e in ("ing", "ed") if word.endswith(e)), "")) \
                    and len(word) - len(ending) >= 3:
                word = word[: -len(ending)]  # the singular's own ending ("booking") still to go
            break
    return word[:5]


def written_words(text: str) -> dict[str, str]:
    """Each word of `text` folded, to it as written, lower case: a pack's `word_root` reads a verb's accent
    ("cancélela": a pronoun written onto an imperative)."""
    return {unaccented(w): w for w in re.findall(r"[^\W\d_]+", text.lower().replace("_", " "))}


def word_stem(word: str, words: ModuleType = DEFAULT_WORDS) -> str:
    """A word's stem as every reader of topics compares it: its language's root of it (the pack's `word_root`:
    Spanish "anúleme", "anular", "cancelar" -> "cancel"), cut by `stem`. English: `stem` of the word as said."""
    return stem(words.word_root(word))


def lower_words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", unaccented(text.lower()).replace("-", " "))


def number_candidates(text: str, words: ModuleType = DEFAULT_WORDS) -> list[float]:
    """Every amount in `text`: digits ("$15", "35.50", "600 dollars", "12"), and runs of spoken number words."""
    # a bare 4+ digit number ("order 4567") names something; an amount has a unit, decimals or few digits
    said = spoken(words)
    found = [float(m.group(2).replace(",", "")) for m in said.amount.finditer(text)
             if m.group(1) or m.group(3) or m.group(4) or len(m.group(2)) < 4]
    run: list[str] = []
    for word in [*lower_words(text), "."]:
        if word in said.units or word in said.tens or word in (words.HUNDRED, words.THOUSAND) or (
                run and word in said.scale):
            run.append(word)
            continue
        if run and run[-1] in said.tens and word in words.ORDINAL_WORDS:
            run.pop()  # "the twenty-fifth of September": the twenty is the ordinal's, no count of miles
        for number in cardinal_runs(run, words):
            while number and number[-1] in said.joins:
                number.pop()
            if number and (value := words_to_number(" ".join(number), words)) is not None:
                found.append(value)
        run = []
    return list(dict.fromkeys(found))


def id_candidates(text: str, words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """Identifiers in `text`: tokens with a digit, and runs of 3+ spoken digits ("four five six seven")."""
    tokens = (t.strip(".,!?;:()#\"'") for t in text.split())
    found = [t for t in tokens if _ID_RE.fullmatch(t)]
    # Whisper often writes a number read digit by digit as "4 5 6 7": that is one identifier
    found += [m.replace(" ", "") for m in re.findall(r"\b\d(?: \d\b){2,}", text)]
    digits = spoken(words).digits
    run: list[str] = []
    for word in [*lower_words(text), "."]:
        if word in digits:
            run.append(digits[word])
            continue
        if len(run) >= 3:
            found.append("".join(run))
        run = []
    return list(dict.fromkeys(f for f in found if f))


def identifier_candidates(text: str, words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """`id_candidates` less what reads as a time or an ordinal ("7pm", "10:30", "12th"), plus two neighbouring
    tokens with digits as one ("SW1A 1AA", a postcode): what an identifier argument may be filled with."""
    found = [c for c in id_candidates(text, words) if not _CLOCK.fullmatch(c)]
    tokens = [t.strip(".,!?;:()#\"'") for t in text.split()]
    for a, b in itertools.pairwise(tokens):
        if _ID_RE.fullmatch(a) and _ID_RE.fullmatch(b) and not (_CLOCK.fullmatch(a) or _CLOCK.fullmatch(b)):
            found += [f"{a} {b}", f"{a}{b}"]
    # letters spelled one by one before the digits ("Staff ID E 70346", "It's E, 62090", "H G 318840"): one id
    for m in _SPELLED_ID.finditer(text):
        if not _CLOCK.fullmatch(m["digits"]) and m["letters"].strip() not in _PRONOUNS:
            found.append(re.sub(r"[\s,.]", "", m["letters"]) + m["digits"])
    return list(dict.fromkeys(found))


def retracted_ids(text: str, words: ModuleType = DEFAULT_WORDS) -> set[str]:
    """Identifiers the speaker took back: "order 1234, sorry, no, I mean 7788" retracts 1234 (an id said only
    before the last correction, when another id follows it)."""
    marks = list(spoken(words).correction.finditer(text))
    if not marks:
        return set()
    before, after = text[: marks[-1].start()], text[marks[-1].end():]
    later = set(id_candidates(after, words))
    return set(id_candidates(before, words)) - later if later else set()


def span_words(text: str) -> list[str]:
    """Words with the characters a span may hold; a trailing comma is kept (it may join two words)."""
    return [w for w in (re.sub(r"[^\w'&/#,-]", "", w) for w in text.split()) if w.strip(",")]


def _alternatives(runs: Iterable[list[str]], max_words: int, start_ok: object = None, min_words: int = 1,
                  end_ok: Callable[[str], bool] | None = None, says: Callable[[str], bool] | None = None
                  ) -> list[str]:
    """Regex alternatives, one per start word of each run: that word, then optionally each next one in turn
    (a comma kept between two words: "12 High Street, Leeds"); the first `min_words` words are not optional, nor
    the word after one that is not `end_ok` (a span never ends on it), nor those up to the first that `says`
    something (a span holds one)."""
    starts = []
    for words in runs:
        for i, first in enumerate(words):
            if (callable(start_ok) and not start_ok(first)) or len(words) - i < min_words:
                continue
            tail = words[i: i + max_words]
            while end_ok is not None and tail and not end_ok(tail[-1]):
                tail = tail[:-1]
            least = next((j + 1 for j, w in enumerate(tail) if says(w)), None) if says else min_words
            if not tail or least is None:
                continue
            least = max(least, min_words)
            pattern = ""
            for n, (before, w) in reversed(list(enumerate(itertools.pairwise(tail), 2))):
                comma = "(,)?" if before.endswith(",") else ""
                optional = n > least and (end_ok is None or end_ok(before))
                pattern = f"({comma} {w.rstrip(',')}{pattern})" + ("?" if optional else "")
            starts.append(first.strip(",") + pattern)
    return list(dict.fromkeys(starts))


def span_pattern(text: str, max_words: int = MAX_SPAN_WORDS, words: ModuleType = DEFAULT_WORDS) -> str | None:
    """A regex matching any run of up to `max_words` consecutive words of a line of `text`: no other punctuation
    than a comma between two words ("12 High Street, Leeds"); a line break (a turn's end, a value another argument
    took) ends a run. A run starts and ends on no joiner ("to", "at": the pack's SPAN_JOINERS) and holds a word
    that says something (not only "I'm", "my": its request words), so "I'm at" is no note."""
    said = spoken(words)
    runs = [run for line in text.splitlines() if (run := span_words(line))]
    alts = _alternatives(runs, max_words, lambda w: _bare(w) not in said.joiners,
                         end_ok=lambda w: _bare(w) not in said.joiners,
                         says=lambda w: _bare(w) not in said.request | said.joiners)
    return "^(" + "|".join(alts) + ")$" if alts else None


def _bare(word: str) -> str:
    """A word as the request's words are compared: lower case, accent-folded, without the comma after it."""
    return unaccented(word.strip(",").lower())


def _content_runs(text: str, said: Spoken, leave_out: frozenset[str] = frozenset()) -> list[list[str]]:
    """Runs of the words of `text` that are not the request around them, each trimmed of joining words at its
    ends: "I want to check on my repair" -> [["repair"]]; "do you have any red helmets?" -> [["red", "helmets"]]."""
    runs: list[list[str]] = []
    for sentence in re.split(r"[!?\n]+|\.(?=\s|$)", text):
        run: list[str] = []
        for word in [*span_words(sentence), None]:  # None: the sentence's end
            if word is None or _bare(word) in said.request or word.strip(",").lower() in leave_out:
                while run and _bare(run[-1]) in said.joiners:
                    run.pop()
                if run:
                    runs.append(run)
                run = []
            elif run or _bare(word) not in said.joiners:
                run.append(word)
    return runs


def value_pattern(text: str, max_words: int = 6, address: bool = False,
                  leave_out: frozenset[str] = frozenset(), words: ModuleType = DEFAULT_WORDS) -> str | None:
    """A regex for the words a value may be copied from: spans of `text` without the request's own words ("I want
    to ... my") nor the words in `leave_out` (the caller's own name); for an `address`, only spans that start on a
    house number ("12 High Street", "flat 2, ..."), in the words of the pack `words`."""
    said = spoken(words)

    def starts_address(word: str) -> bool:  # on its house number: "Pizza", "Just one" or "22nd of July" is no address
        w = word.strip(",").lower()
        if re.fullmatch(rf"\d+(?:{words.DIGIT_ORDINAL})", w):
            return False
        return bool(re.match(r"\d", w)) or w in said.units or w in said.tens or w in said.address_starts

    if address and (streets := street_pattern(text, words)):  # a whole one, when the caller said its street
        return streets
    alts = _alternatives(_content_runs(text, said, leave_out), max_words, starts_address if address else None,
                         min_words=2 if address else 1)  # a house number and its street
    return "^(" + "|".join(alts) + ")$" if alts else None


def street_pattern(text: str, words: ModuleType = DEFAULT_WORDS) -> str | None:
    """A regex for the whole street addresses `text` says ("56 Queens Road"), None when it says none: an address
    given a turn before the one that completes a booking."""
    streets = _street_runs(text, spoken(words))
    return "^(" + "|".join(streets) + ")$" if streets else None


def _street_runs(text: str, said: Spoken, max_words: int = 10) -> list[str]:
    """Regex alternatives for each street address in `text` ("twenty two Baker Street", "flat 2, 10 Mill Lane": a
    house number, up to three words of its street's name, a word that closes a street's name, the pack's
    STREET_TYPES: `said.address`), whole, with the words after it in its sentence ("12 High Street, Leeds"), up to a
    request word ("please") or a joiner ("From 8 Poplar Close to 40 Hill Street": two addresses, not one)."""
    alts, stops = [], said.request | said.joiners
    for m in said.address.finditer(text):
        sentence = re.split(r"[!?\n]|\.(?=\s|$)", text[m.start():])[0]
        first, spans = len(span_words(m.group(0))), span_words(sentence)
        words = spans[:first] + list(itertools.takewhile(lambda w: _bare(w) not in stops, spans[first:]))
        alts += _alternatives([words], max(max_words, first), lambda w, head=words[0]: w is head, min_words=first)
    return alts


def street_addresses(text: str, words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """Each street address in `text` as said: a house number, its street's name and type ("16 Birch Avenue")."""
    return [" ".join(m.group(0).split()).strip(" ,") for m in spoken(words).address.finditer(text)]


def without_addresses(text: str, words: ModuleType = DEFAULT_WORDS) -> str:
    """`text` with its street addresses blanked out: their numbers are no count."""
    return spoken(words).address.sub(lambda m: " " * len(m.group(0)), text)
