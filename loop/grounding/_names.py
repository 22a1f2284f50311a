"""Names a caller said, read out of their words: runs of capitalised words, a name given right after an argument's
own words ("the surname's Hughes"), the answer to "What's the name?" however speech-to-text cased it, and the
caller's own name (which no item or address is filled with). In the call's language (`words`: its pack).

Split out of `loop/grounding/_heard.py` (the other values: amounts, identifiers, times, spans of words).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from loop.grounding._arg_kinds import NAME_PART_WORDS, name_part
from loop.grounding._heard import _PRONOUNS, _VOCATIVE, spoken
from loop.locale import DEFAULT_WORDS, unaccented


@functools.cache
def _introduction(words: ModuleType) -> re.Pattern[str]:
    return re.compile(words.SELF_INTRODUCTION, re.IGNORECASE)


def _introduced(sentence: str, words: ModuleType) -> tuple[str, bool]:
    """The sentence less the words that open it to introduce a name ("Soy Pablo Serrano" -> "Pablo Serrano", in
    the language `words`), and whether there were any. Matched without accents ("está a nombre de")."""
    m = _introduction(words).match(unaccented(sentence).lstrip())
    if m is None:
        return sentence, False
    return sentence.lstrip()[m.end():], True  # unaccented keeps each letter in its place: the same offsets


def proper_names(text: str, initial: bool = False, words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """Runs of capitalised words that do not open a sentence ("deliveries to New York" -> "New York"); with
    `initial`, or after words that introduce a name ("I'm", "soy": `words.SELF_INTRODUCTION`), a sentence's first
    word too (the answer to "What name is it under?" is "Sam Lee.")."""
    names: list[str] = []
    for sentence in re.split(r"[.!?\n]+", text):
        sentence = _VOCATIVE.sub("", sentence)  # "glad to see you again, Phil": whom they talk to, not a place
        sentence, introduced = _introduced(sentence, words)
        run: list[str] = []
        raws = sentence.split()
        for i, raw in enumerate(raws):
            word = re.sub(r"[^\w'&-]", "", raw)
            # a sentence's first word is a name only when asked for one, or when a capitalised word follows it
            # ("From August the fifth": a word no name is made of opens no name, asked for one or not)
            # nor one that leads into a day ("Starting Monday.", "Arriving Friday the 5th.")
            function_word = i == 0 and len(raws) > 1 and not raw.endswith(",") and (
                word.lower() in _not_a_name(words) or _says_a_day(raws[1:], words))
            opens = not function_word and (initial or introduced or (
                len(raws) > 1 and raws[1][:1].isupper() and not raw.endswith(",")))
            bare = _POSSESSIVE.sub("", word)  # "Friday's no good": a day's, not a name
            capital = (bool(word) and word[0].isupper() and (i > 0 or opens) and bare not in _PRONOUNS
                       and bare.lower() not in spoken(words).not_names)
            if capital:
                run.append(word)
            if run and (not capital or raw.endswith(",") or _POSSESSIVE.search(word)):
                names.append(_POSSESSIVE.sub("", " ".join(run)))  # "Biscuit's jabs": Biscuit
                run = []
        if run:
            names.append(_POSSESSIVE.sub("", " ".join(run)))
    return list(dict.fromkeys(names))


def _says_a_day(raws: Sequence[str], words: ModuleType) -> bool:
    """The words name a day and nothing else ("Monday", "Friday the 5th", "July 16")."""
    said = spoken(words)
    plain = [unaccented(re.sub(r"[^\w]", "", w).lower()) for w in raws]
    return bool(plain) and plain[0] in said.days and all(
        w in said.days or w in said.joiners or w in said.numbers or re.fullmatch(r"\d{1,2}(?:st|nd|rd|th)?", w)
        or w in words.DATE_JOINERS for w in plain if w)


_POSSESSIVE = re.compile(r"(?<=\w)['’]s$")


def labelled_names(text: str, labels: Sequence[str], language: ModuleType = DEFAULT_WORDS) -> list[str]:
    """The names `text` gives right after one of an argument's own words ("The surname's Hughes", "my surname is
    Patel", "pet's name is Luna", "last name Bennett" for `owner_surname`, `pet_name`, `last_name`): a value the
    caller said is that argument's, whoever else could take a name. Words of the pack `language`."""
    if not labels:
        return []
    label = "|".join(re.escape(w) for w in labels)
    found = re.finditer(rf"\b(?:{label})(?P<s>['’]s)?(?P<named>\s+name)?(?P<is>['’]s\b|\s+is\b|\s+was\b|:)?[\s,]+"
                        rf"(?:(?:um|uh|er|erm)[\s,]+)?([A-Za-z][\w'’-]*(?:\s+[A-Z][\w'’-]*)?)", text, re.IGNORECASE)
    said, names = spoken(language), []
    for m in found:
        words = [_POSSESSIVE.sub("", w) for w in m.group(m.lastindex or 0).split()]
        if words[1:] and (words[1].lower() in said.not_names or not words[1][:1].isupper()):
            words = words[:1]
        low = words[0].lower()
        # "my pet's vaccinations": after a possessive, only a capitalised word is a name
        plain = bool(m["is"] or m["named"]) or not m["s"]
        not_one = said.request | _not_a_name(language) | said.joiners | {"name"}
        if (plain or words[0][:1].isupper()) and low not in not_one:
            names.append(" ".join(w[:1].upper() + w[1:] for w in words))
    return list(dict.fromkeys(names))


@functools.cache
def _name_lead(words: ModuleType) -> re.Pattern[str]:
    return re.compile(words.NAME_LEAD, re.IGNORECASE)


@functools.cache
def _not_a_name(words: ModuleType) -> frozenset[str]:
    """Words no answer to "What's the name?" is made of, in the language `words`: joining words, backchannels,
    fillers, numbers, question words."""
    return frozenset(unaccented(w.lower()) for w in (*words.TRAILING, *words.BACKCHANNELS, *words.FILLERS,
                                                     *words.ONES, *words.TENS, *words.WH, *words.NOT_A_NAME) if w)


def answered_name(text: str, words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """The name in an answer to "What's the name?" however speech-to-text cased it ("it's biscuit" -> "Biscuit",
    "um, sam lee" -> "Sam Lee"): the answer's first sentence less the words that introduce a name, when one to
    three plain words are left."""
    first = re.split(r"[.!?\n]+", text.strip())[0].strip()
    lead = _name_lead(words).match(unaccented(first))
    said = [re.sub(r"[^\w'-]", "", w) for w in first[lead.end() if lead else 0:].split()]
    said = [w for w in said if w]
    if not 1 <= len(said) <= 3 or any(w.lower() in spoken(words).request or unaccented(w.lower()) in _not_a_name(words)
                                      or any(c.isdigit() for c in w) for w in said):
        return []
    if _says_a_day(said, words) or _says_a_day(said[1:], words):
        return []  # "Monday.", "Starting Monday.": the date they were asked for too
    return [" ".join(w[:1].upper() + w[1:] for w in said)]


def own_name_words(text: str, words: ModuleType = DEFAULT_WORDS) -> set[str]:
    """The words of the name a caller gave as their own ("my name is marita" -> {"marita"}, "This is Sam Lee, I
    want..." -> {"sam", "lee"}; "soy Pablo Serrano" in Spanish): what no item, title or address is ever filled
    with."""
    return {word.lower() for run in _introduced_runs(text, words) for word in run}


def introduced_names(text: str, words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """The names a caller introduced by their lead words, however speech-to-text cased them ("a nombre de lucia
    fernandez" -> "Lucia Fernandez"; Whisper base writes a Spanish name in lower case as often as not)."""
    return [" ".join(w[:1].upper() + w[1:] for w in run) for run in _introduced_runs(text, words) if run]


def _introduced_runs(text: str, words: ModuleType) -> list[list[str]]:
    """The words after each of the language's leads into a name (its SELF_INTRODUCTION), up to three, to a pause
    or a word no name is made of; after a lead that may open anything else ("this is urgent", "soy yo": its
    CASED_LEADS) capitalised words only."""
    runs: list[list[str]] = []
    for m in _introduction(words).finditer(unaccented(text)):  # the same offsets in `text`
        cased = m.group(0).strip().lower() in words.CASED_LEADS
        run: list[str] = []
        for raw in text[m.end():].split()[:3]:
            word = re.sub(r"[^\w'-]", "", raw)
            low = word.lower()
            if (not word or any(c.isdigit() for c in word) or low in spoken(words).request or unaccented(low) in
                    _not_a_name(words) or low in spoken(words).joiners or (cased and not word[0].isupper())):
                break
            run.append(word)
            if raw[-1:] in ",.!?":
                break
        runs.append(run)
    return runs


def one_name_for_two(props: dict[str, Any], names: list[str], named_as: dict[str, list[str]]) -> list[str]:
    """Name arguments of one call left holding the same one name that nothing labelled ("I'd like to book Biscuit
    in" for `pet_name` and `last_name`): it is one of them only. The one kept is the first that is not a part of a
    name; the others go without it, to be asked for ("Could you tell me the last name?")."""
    alike = [n for n in names if len((props.get(n) or {}).get("enum") or []) == 1 and n not in named_as]
    if len(alike) < 2 or len({str(props[n]["enum"][0]) for n in alike}) != 1:
        return []
    keep = next((n for n in alike if name_part(n) is None), alike[0])
    return [n for n in alike if n != keep]


def without_part_word(name: str) -> str:
    """"Surname Doyle" (a sentence that opens on the word for the part of the name) is "Doyle"."""
    words = name.split()
    while words and words[0].lower() in NAME_PART_WORDS:
        words = words[1:]
    return " ".join(words)
