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

from loop.locale import plain, stemmer

_MAX_PHRASE = 6


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
    pronouns: frozenset[str]  # frame words that are an object of a verb ("cancel it")
    interjections: frozenset[str]  # digit words that alone are no number ("oh")
    digits: re.Pattern[str]  # a number in digits, with the language's ordinal endings ("31st")
    stem: Callable[[str], str]
    enclitics: tuple[str, ...]  # pronouns written onto a verb ("resérvala"), longest first
    noun_markers: frozenset[str]  # words after which a courtesy is a noun ("mi señora")
    contractions: tuple[str, ...]  # a verb written onto a word ("three's": APPROVE_CONTRACTIONS)

    @classmethod
    def of(cls, words: ModuleType) -> YesGrammar:
        numbers = {*words.ONES, *filter(None, words.TENS), *words.ORDINAL_WORDS, *words.NUMBER_SCALE_WORDS,
                   *words.DIGIT_WORDS, *words.CLOCK_WORDS}
        return cls(_phrases(words.APPROVE_AFFIRM), _phrases(words.APPROVE_COURTESY), _phrases(words.APPROVE_LEAD),
                   _phrases(words.APPROVE_FRAME), _phrases(words.APPROVE_VERBS),
                   frozenset(plain(w) for w in words.APPROVE_GOES_ON), frozenset(map(plain, numbers)),
                   frozenset(map(plain, words.OBJECT_PRONOUNS)), frozenset(words.INTERJECTION_DIGITS),
                   re.compile(rf"\d+(?:[.:]\d+)?(?:{words.DIGIT_ORDINAL})?"), stemmer(words),
                   tuple(sorted(words.ENCLITICS, key=len, reverse=True)), frozenset(words.NOUN_MARKERS),
                   tuple(words.APPROVE_CONTRACTIONS))

    def verb_of(self, word: str) -> str:
        """`word` without a pronoun written onto it, when what is left is a verb of the grammar's ("mándaselo" ->
        "manda"); else `word`. The pending action's own verbs are compared by stem, so "resérvala" restates
        "reservar" by the stem of "reserva"."""
        for clitic in self.enclitics:
            if word.endswith(clitic) and len(word) - len(clitic) >= 3:
                return word[: -len(clitic)]
        return word

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
            if kind == "courtesy" and i and toks[i - 1] in self.noun_markers:
                kind = None  # "my love", "el auto de mi señora": a noun here, not a form of address
            if kind == "affirm" and not set(range(i, i + n)) <= heard_back:
                affirms.append(" ".join(toks[i:i + n]))
            elif kind is None:
                word = toks[i]
                if (root := self.stem(word)) in own.actions and i not in heard_back and self._has_object(toks, i, root):
                    affirms.append(word)  # the action's own verb, said of it: "cancel it", "freeze the card"
                elif not (word in own.exact or root in own.stems or self._verb_with_pronoun(word, own, affirms)
                          or self._contracted(words[i], own)):
                    left.append(words[i])
            i += n
        if last is not None and last[0] == 1 and (toks[-1] in self.goes_on or (toks[-1],) in self.lead):
            left.append(words[-1])  # trails off on a word of its own ("yes, and", "okay, so"): it goes on
        return affirms, left

    def _contracted(self, word: str, own: Own) -> bool:
        """A word with a verb written onto it ("three's", "tuesday's"), whose word alone is a value of the pending
        call's (a number that names one of its values) or one of its words: "yes, three's good" restates the 3."""
        for ending in self.contractions:
            base = word[: -len(ending)] if word.lower().endswith(ending) else ""
            if base and (own.number_ok(base) if self._is_number(plain(base)) else
                         plain(base) in own.exact or self.stem(plain(base)) in own.stems):
                return True
        return False

    def _verb_with_pronoun(self, word: str, own: Own, affirms: list[str]) -> bool:
        """A verb with its object written onto it: the action's own ("resérvala" for a booking) is a yes to it, as
        "book it" is; a generic one ("mándaselo") or an affirmative ("hazlo") is accounted for as itself alone."""
        bare = self.verb_of(word)
        if bare == word:
            return False
        if self.stem(bare) in own.actions or (bare,) in self.affirm:
            affirms.append(word)
            return True
        return (bare,) in self.verbs

    def _has_object(self, toks: list[str], i: int, verb: str) -> bool:
        """A word after the verb, and not the verb's own noun ("cancel the cancellation" undoes it)."""
        rest = [t for t in toks[i + 1:] if (t,) not in self.frame or t in self.pronouns]
        return bool(rest) and self.stem(rest[0]) != verb

    def _number_run(self, toks: list[str], i: int) -> int:
        n = 0
        while i + n < len(toks) and self._is_number(toks[i + n]):
            n += 1
        return 0 if set(toks[i:i + n]) <= self.interjections else n  # "oh" alone is an interjection

    def _is_number(self, word: str) -> bool:
        """A number said in digits ("30", "7:30", "31st") or words ("thirty", "eleventh")."""
        return bool(self.digits.fullmatch(word)) or word in self.numbers

    def _longest(self, toks: list[str], i: int) -> tuple[int, str | None]:
        for n in range(min(_MAX_PHRASE, len(toks) - i), 0, -1):
            seq = tuple(toks[i:i + n])
            for kind, phrases in (("affirm", self.affirm), ("courtesy", self.courtesy), ("lead", self.lead),
                                  ("frame", self.frame), ("verb", self.verbs)):
                if seq in phrases:
                    return n, kind
        return 1, None

