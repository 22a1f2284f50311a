"""What a caller's words name of a tool's own words: the values an argument lists (an enum, a Literal), said as
written, without accents, or for a value of several words by its words' stems; and the numbers said with a count
argument's own noun ("three passengers", "2 seats"). Split out of `loop.grounding.arguments`, which uses these."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from loop.grounding._arg_kinds import arg_kind, name_words
from loop.grounding._heard import spoken
from loop.locale import DEFAULT_WORDS, argument_names, plain, said_numbers, stemmer, unaccented, without_enclitic


@functools.cache
def _number(words: ModuleType) -> str:
    """A number before a count's noun, in digits or said in the pack's words from 1 to 99 ("forty two", "forty-two",
    "cuarenta y dos": `loop.locale.said_numbers`)."""
    said = sorted((w for w, n in said_numbers(words).items() if n), key=lambda w: (-len(w), w))
    return rf"(?:\d+|{'|'.join(re.escape(w).replace(chr(92) + ' ', '[- ]') for w in said)})"


def _count_nouns(name: str, schema: dict[str, Any], described: str,
                 words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """A count argument's own nouns as patterns for the singular or the plural (`passengers`: "passengers?"), or
    [] for an argument that counts nothing (its name's words but those that name the count: `num_seats`)."""
    return [_noun_pattern(w) for w in _count_words(name, schema, described, words)]


def _count_words(name: str, schema: dict[str, Any], described: str, words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """A count argument's own nouns as its name writes them (`cajas`), or [] for one that counts nothing."""
    kind = arg_kind(name, schema, described, words)
    if kind is None or kind.kind not in ("number", "integer"):
        return []
    counted = argument_names(words)["counted"]
    return [w for w in name_words(name) if len(w) > 2 and w not in counted]


def counting_articles(props: dict[str, Any], described: str, language: ModuleType) -> list[tuple[re.Pattern[str], str]]:
    """Articles that count a count argument's own noun, each as (the article before the noun, the number it
    stands for): "a box" for `boxes`, "una caja" for `cajas` is 1 (the pack's ONE_ARTICLES); an article the plural
    noun cannot take is the number it sounds like ("los cajas": `cajas` takes "las", and "los" is heard for "dos":
    MISHEARD_ARTICLES). Labelled: tests/data/one_counted.tsv."""
    found: list[tuple[re.Pattern[str], str]] = []
    for noun in (w for name, schema in props.items() for w in _count_words(name, schema, described)):
        if language.ONE_ARTICLES:
            found.append((_before(language.ONE_ARTICLES, _noun_pattern(noun)), "1"))
        own = language.the(noun).split(" ", 1)[0].lower()
        for article, n in language.MISHEARD_ARTICLES.items():
            if article != own and noun.endswith("s"):
                plural = "".join(_ACCENTED.get(c, re.escape(c)) for c in noun)
                found.append((_before((article,), plural), str(n)))
    return found


def _before(articles: Sequence[str], noun: str) -> re.Pattern[str]:
    return re.compile(rf"\b(?:{'|'.join(map(re.escape, articles))})\s+(?={noun}\b)", re.IGNORECASE)


_ACCENTED = {"a": "[aá]", "e": "[eé]", "i": "[ií]", "o": "[oó]", "u": "[uúü]"}


def _noun_pattern(word: str) -> str:
    """`boxes` -> box, boxe, boxes; `noches` -> noche(s); `passengers` -> passenger(s): the singular or the plural,
    its vowels written with or without an accent ("blíster" for `blisters`)."""
    forms = {word, word[:-1] if word.endswith("s") else word, word[:-2] if word.endswith("es") else word}
    return "(?:" + "|".join(sorted(("".join(_ACCENTED.get(c, re.escape(c)) for c in f) for f in forms),
                                   key=len, reverse=True)) + ")s?"


def counted_spans(props: dict[str, Any], text: str, described: str = "", words: ModuleType = DEFAULT_WORDS
                  ) -> dict[str, list[str]]:
    """Per count argument, the numbers said with its own noun ("three passengers" for `passengers`, "2 seats" for
    `seat_count`), in digits or the pack's number words: those words are that argument's, not another's."""
    found: dict[str, list[str]] = {}
    for name, schema in props.items():
        if not (noun := "|".join(_count_nouns(name, schema, described, words))):
            continue
        if spans := [m.group(0) for m in re.finditer(rf"\b{_number(words)}\s+(?:{noun})\b", text, re.IGNORECASE)]:
            found[name] = spans
    return found


def _named(values: Sequence[str], text: str, words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """The enum values `text` names ("a large one" -> "large"; "repairs" -> "repair"; "check_in" as "check in"),
    accents or none ("miercoles" for "miércoles"); a value of several words also by the stems of its own words
    ("cambiarles la cadena" names "cambio de cadena", `_stems_said`)."""
    low = unaccented(text.lower())
    stem = stemmer(words)
    stems = _stems_said(text, stem, words)

    def said(value: str) -> bool:
        v = re.escape(unaccented(value.lower().replace("_", " ").strip()))
        return bool(v) and re.search(rf"(?<![\w]){v}(?:s|es)?(?![\w])", low) is not None

    digit_of = spoken(words).digit_of  # "three" -> "3": a number said either way
    digits_said = set(re.findall(r"\d+", low)) | {digit_of[w] for w in re.findall(r"[^\W\d_]+", low) if w in digit_of}

    def by_stems(value: str) -> bool:  # every word of it but its joiners: "three bedroom" is no "two bedroom"
        own = [w for w in re.findall(r"[^\W_]+", value.replace("_", " "))
               if unaccented(w.lower()) not in spoken(words).joiners]
        return len(value.split()) > 1 and any(not w.isdigit() for w in own) and all(
            w in digits_said if w.isdigit() else stem(w) in stems or digit_of.get(w.lower()) in digits_said
            for w in own)  # "3 bedroom" for "three bedroom", "stage 3" for "stage three"; "5 GB" only with its 5

    def spelt(value: str) -> bool:  # "6B" said "six B" or "6 B": a short code of digits and letters, a word each
        code = value.lower()
        if not (re.fullmatch(r"[a-z0-9]{2,6}", code) and re.search(r"\d", code) and re.search("[a-z]", code)):
            return False
        chars = [f"(?:{c}|{'|'.join(w for w, d in words.DIGIT_WORDS.items() if d == c)})" if c.isdigit() else c
                 for c in code]
        return re.search(r"(?<![\w])" + r"[\s-]*".join(chars) + r"(?![\w])", low) is not None

    def ordinal(value: str) -> bool:  # "15th" said "the fifteenth" ("the twenty-first", "el primero"), never
        # without the day's article ("first of all", "twenty first" for the 1st)
        m = re.fullmatch(rf"(\d{{1,2}})(?:{words.DIGIT_ORDINAL})", value.lower().strip())
        said_as = m and re.escape(unaccented(words.ordinal(int(m[1])).lower())).replace(r"\-", "[\\s-]")
        return bool(said_as) and re.search(rf"(?<![\w]){words.DAY_ARTICLE}\s+{said_as}(?![\w])", low) is not None

    return [v for v in values if said(v) or (v.lower().endswith("s") and said(v[:-1])) or spelt(str(v))
            or by_stems(str(v)) or ordinal(str(v))]


def _stems_said(text: str, stem: Callable[[str], str], words: ModuleType) -> set[str]:
    """The stems of the words in `text`, each also without a pronoun written onto it (`without_enclitic`)."""
    said = re.findall(r"[^\W\d_]+", text)
    return {stem(w) for w in said} | {stem(without_enclitic(plain(w), words)) for w in said}
