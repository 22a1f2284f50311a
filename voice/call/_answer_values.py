"""The values in a caller's answer, compared with the pending call's: numbers, ids, days, times and street
addresses ("It's 21 Church Lane, not Road" to "... at 21 Church Road?" is a change, not a no).

`values(text)` is what `voice.call.answers` checks a change against ("yes, $30" says 30 where the question held
20). `readings(span)` is every way a run of spoken number words can be meant: "seven thirty" is 7:30 or 730 or
7 and 30, "seven forty two" 742 or 7 and 42: a yes that restates a value in any of its readings restates it.
A day with its month and a clock time with its half of the day are values of their own, so the same number in
another role ("June 12" beside "12 PM") is another value.
"""

from __future__ import annotations

import re
from types import ModuleType

from loop.grounding.arguments import id_candidates, number_candidates, street_addresses, words_to_number
from loop.locale import DEFAULT_WORDS, unaccented


def _number(n: float) -> str:
    return str(int(n)) if n == int(n) else f"{n:g}"


class AnswerValues:
    """The value readers of one language (`loop.locale.<lang>`)."""

    def __init__(self, words: ModuleType = DEFAULT_WORDS) -> None:
        self.words = words
        ones, tens = list(words.ONES), [t for t in words.TENS if t]
        self.cardinal = {**words.ORDINAL_WORDS, **words.CLOCK_WORDS}
        self.in_digits = words.numbers_in_digits  # "veinte" -> "20" where the language's words need it
        self.digit_ordinal = re.compile(rf"\b(\d+)(?:{words.DIGIT_ORDINAL})\b")
        self.small = {w: i for i, w in enumerate(ones)} | {w: 10 * (i + 2) for i, w in enumerate(tens)}
        self.small |= {w: int(d) for w, d in words.DIGIT_WORDS.items()}
        self.tens = set(tens)
        months = "|".join(words.MONTHS)
        self.date = re.compile(rf"\b(?:(?P<month>{months}) (?:the )?(?P<day>\d{{1,2}})"
                               rf"|(?P<day2>\d{{1,2}}) (?:of )?(?P<month2>{months}))\b")
        self.clock = re.compile(r"\b(?P<h>\d{1,2})(?::(?P<m>\d\d))? ?(?P<half>[ap])\.? ?m\b\.?")
        self.not_a_number = re.compile(words.NOT_A_NUMBER)
        self.time_words = re.compile(r"\b(?:" + "|".join(
            [*words.WEEKDAYS, *(m for m in words.MONTHS if m not in words.AMBIGUOUS_MONTHS), *words.TIME_WORDS])
            + r")\b")

    def cardinals(self, text: str) -> str:
        """Ordinals as cardinals and clock words as times: "31st" -> "31", "the first of March" -> "the one of
        march", "noon" -> "12 pm"."""
        text = self.digit_ordinal.sub(r"\1", self.in_digits(unaccented(text.lower()))).replace("-", " ")
        return re.sub(r"[^\W\d_]+", lambda m: self.cardinal.get(m.group(), m.group()), text)

    def values(self, text: str) -> set[str]:
        """Numbers, ids, days, times and street addresses in `text`, normalised so "twenty dollars" and "$20"
        compare equal."""
        streets = {self._street(a) for a in street_addresses(text, self.words)}
        cleaned = self.cardinals(self.not_a_number.sub(" ", text.lower()))
        found = {_number(n) for n in number_candidates(cleaned, self.words)}
        found |= {i.lower() for i in id_candidates(cleaned, self.words)}
        found |= {_number(float(m)) for m in re.findall(r"\d+(?:\.\d+)?", cleaned)}
        found |= self.typed(cleaned)
        return found | streets | {m.group() for m in self.time_words.finditer(cleaned)}

    def _street(self, address: str) -> str:
        """A street address as compared: its house number in digits, then its street's words ("flat 2, twenty two
        Baker Street" -> "22 baker street"), however it was said."""
        toks = re.findall(r"[^\W_]+", unaccented(address.lower()))
        numbers = [i for i, t in enumerate(toks) if t.isdigit() or t in self.small]
        if not numbers:
            return " ".join(toks)
        last = start = max(numbers)
        while start - 1 in numbers and not toks[start].isdigit():
            start -= 1
        said = " ".join(toks[start:last + 1])
        house = said if said.isdigit() else words_to_number(said, self.words)
        return f"{_number(house) if isinstance(house, float) else house} {' '.join(toks[last + 1:])}"

    def typed(self, cleaned: str) -> set[str]:
        """Days with their month ("june 12") and times with their half of the day ("7:30 pm")."""
        found = {f"{m['month'] or m['month2']} {m['day'] or m['day2']}" for m in self.date.finditer(cleaned)}
        return found | {f"{m['h']}:{m['m'] or '00'} {m['half']}m" for m in self.clock.finditer(cleaned)}

    def readings(self, span: str) -> list[set[str]]:
        """Each way the number words of `span` can be meant, as the set of values it names."""
        toks = self.cardinals(span).split()
        if all(re.fullmatch(r"\d+(?:[.:]\d+)?", t) for t in toks):
            return [{_number(float(t)) if ":" not in t else t for t in toks}, {"".join(toks)}]
        groups = self._groups(toks)
        out = [{_number(n) for n in number_candidates(" ".join(toks), self.words)}]
        for split in groups:
            parts = [str(g) for g in split]
            out += [set(parts), {"".join(parts)}, {"".join(p.zfill(2) if i else p for i, p in enumerate(parts))}]
            if len(parts) == 2 and int(parts[1]) < 60:
                out.append({parts[0], parts[1]} | {f"{parts[0]}:{parts[1].zfill(2)}"})
        return [r for r in out if r]

    def _groups(self, toks: list[str]) -> list[list[int]]:
        """Splits of number words into numbers under 100 ("seven forty two" -> [7, 42] or [7, 40, 2])."""
        options: list[list[int]] = []
        for t in toks:
            if t.isdigit():
                options.append([int(t)])
            elif t in self.small:
                options.append([self.small[t]])
            else:
                return []
        splits: list[list[int]] = [[]]
        for (value,) in options:
            grown: list[list[int]] = []
            for split in splits:
                grown.append([*split, value])
                if split and split[-1] % 10 == 0 and 20 <= split[-1] < 100 and value < 10:
                    grown.append([*split[:-1], split[-1] + value])  # "forty two" -> 42
            splits = grown
        return [s for s in splits if s][:16] if splits else []


def restates(span: str, pending: set[str], reader: AnswerValues) -> bool:
    """The run of number words `span` names only pending values, in one of its readings."""
    if reader.not_a_number.search(span.lower()):
        return False  # "one second", "that one"
    return any(r <= pending for r in reader.readings(span))
