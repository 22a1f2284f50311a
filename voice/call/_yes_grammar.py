"""The approval grammar: a caller's answer is a yes only when every word of it is accounted for.

A word is accounted for when it belongs to a closed set of the language's (an affirmative, a courtesy, a
hesitation before the yes, a word that frames a restatement, a generic verb for "do it") or restates the pending
action with that call's own words: its action phrase, argument names and values, compared by stem ("booking"
for "book"). At least one affirmative must be the caller's, and the answer may not end on a word that goes on
("yes, and", "okay, so"). One word left over, and it is not a yes: "yes, I believe so", "yes, the other order",
"yes, I can hear you" and "nobody said yes" all leave words over. The reader in `voice.call.answers` checks values
(a number or a day the question did not hold is a change) before this grammar is asked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType

_MAX_PHRASE = 6
_DIGITS = re.compile(r"\d+(?:[.:]\d+)?(?:st|nd|rd|th)?")


def plain(word: str) -> str:
    """A word as the grammar compares it: lower case, no apostrophes ("That's" -> "thats")."""
    return word.lower().replace("'", "")


def stem(word: str) -> str:
    """A crude stem, the same on both sides of a comparison: "booking", "booked", "books" -> "book";
    "cancellation", "cancelled" -> "cancel"."""
    w = plain(word)
    for suffix in ("ations", "ation", "ments", "ment", "ings", "ing", "ed", "es", "s", "e"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if suffix not in ("e", "s", "es") and len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiou":
                w = w[:-1]  # "cancell" -> "cancel", "transferr" -> "transfer"
            break
    return w


def _phrases(items: Iterable[str]) -> frozenset[tuple[str, ...]]:
    return frozenset(tuple(plain(w) for w in item.split()) for item in items)


@dataclass(frozen=True)
class Own:
    """The pending call's own words, which a yes may restate: `exact`, its values' words ("daniel", "okafor"),
    compared whole; `stems`, the rest of its action phrase, argument names and verbs ("booking" for "book");
    `actions`, stems of its verbs; `number_ok`, whether a run of number words names one of its values."""

    exact: frozenset[str]
    stems: frozenset[str]
    actions: frozenset[str]
    number_ok: Callable[[str], bool]


@dataclass(frozen=True)
class YesGrammar:
    """The closed sets of one language (`loop.locale.<lang>.APPROVE_*`)."""

    affirm: frozenset[tuple[str, ...]]
    courtesy: frozenset[tuple[str, ...]]
    lead: frozenset[tuple[str, ...]]
    frame: frozenset[tuple[str, ...]]
    verbs: frozenset[tuple[str, ...]]
    goes_on: frozenset[str]
    numbers: frozenset[str]  # number words, ordinals included ("thirty", "first", "eleventh")

    @classmethod
    def of(cls, words: ModuleType) -> YesGrammar:
        ones, tens = [w for w in words.ONES], [w for w in words.TENS if w]
        ordinals = {*words.IRREGULAR_ORDINALS.values(), *(w + "th" for w in ones if w not in
                    words.IRREGULAR_ORDINALS), *(t[:-1] + "ieth" for t in tens)}
        numbers = {*ones, *tens, *ordinals, words.HUNDRED, words.THOUSAND, *words.DIGIT_WORDS, "point",
                   *words.CLOCK_WORDS}
        return cls(_phrases(words.APPROVE_AFFIRM), _phrases(words.APPROVE_COURTESY), _phrases(words.APPROVE_LEAD),
                   _phrases(words.APPROVE_FRAME), _phrases(words.APPROVE_VERBS),
                   frozenset(plain(w) for w in words.APPROVE_GOES_ON), frozenset(numbers))

    def affirms(self, word: str) -> bool:
        """`word` alone is a yes ("yes", "okay")."""
        return (plain(word),) in self.affirm

    def account(self, words: list[str], own: Own, heard_back: set[int] = frozenset()) -> tuple[list[str], list[str]]:
        """(the affirmatives found, the words left over) in the answer's `words`, given the pending call's `own`
        words (see `Own`). An affirmative all of whose words are `heard_back` (the agent's own words in the
        agent's order: "to confirm") accounts for its words but is not the caller's yes."""
        toks = [plain(w) for w in words]
        affirms: list[str] = []
        left: list[str] = []
        i, last = 0, None
        while i < len(toks):
            if n := self._number_run(toks, i):  # "thirty first", "250", "seven thirty": a value, or a change
                if not own.number_ok(" ".join(words[i:i + n])):
                    left += words[i:i + n]
                i += n
                continue
            n, kind = last = self._longest(toks, i)
            if kind == "affirm" and not set(range(i, i + n)) <= heard_back:
                affirms.append(" ".join(toks[i:i + n]))
            elif kind is None:
                word = toks[i]
                if stem(word) in own.actions and i not in heard_back and self._has_object(toks, i, stem(word)):
                    affirms.append(word)  # the action's own verb, said of it: "cancel it", "freeze the card"
                elif not (word in own.exact or stem(word) in own.stems):
                    left.append(words[i])
            i += n
        if last is not None and last[0] == 1 and (toks[-1] in self.goes_on or (toks[-1],) in self.lead):
            left.append(words[-1])  # trails off on a word of its own ("yes, and", "okay, so"): it goes on
        return affirms, left

    def _has_object(self, toks: list[str], i: int, verb: str) -> bool:
        """A word after the verb, and not the verb's own noun ("cancel the cancellation" undoes it)."""
        rest = [t for t in toks[i + 1:] if (t,) not in self.frame or t in ("it", "that", "them", "this")]
        return bool(rest) and stem(rest[0]) != verb

    def _number_run(self, toks: list[str], i: int) -> int:
        n = 0
        while i + n < len(toks) and self._is_number(toks[i + n]):
            n += 1
        return 0 if set(toks[i:i + n]) <= {"oh"} else n  # "oh" alone is an interjection

    def _is_number(self, word: str) -> bool:
        """A number said in digits ("30", "7:30", "31st") or words ("thirty", "eleventh")."""
        return bool(_DIGITS.fullmatch(word)) or word in self.numbers

    def _longest(self, toks: list[str], i: int) -> tuple[int, str | None]:
        for n in range(min(_MAX_PHRASE, len(toks) - i), 0, -1):
            seq = tuple(toks[i:i + n])
            for kind, phrases in (("affirm", self.affirm), ("courtesy", self.courtesy), ("lead", self.lead),
                                  ("frame", self.frame), ("verb", self.verbs)):
                if seq in phrases:
                    return n, kind
        return 1, None

