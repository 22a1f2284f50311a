"""Languages: one package per language holds its word lists and fixed sentences (`en`, the default, and `es`).

    from loop import locale
    words = locale.get("en")          # an agent file's `language:`, `Agent(language=...)`
    words.HAND_OVER, words.DIGIT_WORDS

Adding a language is one folder here with the names `en` has (its `__init__` exports them all), plus its
labelled examples and tests; `LANGUAGES` lists them. No module
outside this package imports a language by name (tests/project/test_layering.py): each takes the call's pack, or
`DEFAULT_WORDS`.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from types import ModuleType

from loop.locale._text import SpokenRules, plain, stem, stemmer, unaccented, without_enclitic

__all__ = ["DEFAULT", "DEFAULT_WORDS", "LANGUAGES", "NumberWords", "SpokenRules", "argument_names", "get",
           "number_words", "plain", "said_numbers", "stem", "stemmer", "unaccented", "without_enclitic"]

LANGUAGES = ("en", "es")
DEFAULT = "en"


def get(language: str = DEFAULT) -> ModuleType:
    """The module of one language; a clear error naming the ones there are for any other."""
    if language not in LANGUAGES:
        raise ValueError(f"no language {language!r}: voiceloop speaks {', '.join(LANGUAGES)}")
    return importlib.import_module(f"loop.locale.{language}")


@functools.cache
def said_numbers(words: ModuleType) -> dict[str, int]:
    """Every whole number from 0 to 99 as a transcript says it in the pack's language, to its value: the pack's
    `cardinal` with hyphens as spaces and accents folded ("forty two" -> 42, "dieciseis" -> 16), what the
    grounding's readers of number words look up (labelled: tests/data/said_numbers.tsv)."""
    return {unaccented(words.cardinal(n).replace("-", " ")): n for n in range(100)}


@dataclass(frozen=True)
class NumberWords:
    """One language's number words as every reader of them takes them (`number_words`): the value readers
    (`loop.grounding._heard`), the dictated-digit reader (`voice.speech._dictated_digits`) and the tests' transcript
    matching (`voice.testing.heard`)."""

    units: dict[str, int]  # "zero" .. "nineteen" -> 0 .. 19: the pack's ONES
    tens: dict[str, int]  # "twenty" .. "ninety" -> 20 .. 90: its TENS
    scales: tuple[str, str]  # "hundred", "thousand"
    digits: dict[str, str]  # a digit said alone, as an id is dictated ("oh" -> "0"): its DIGIT_WORDS
    said: dict[str, int]  # every number from 0 to 99 as a transcript says it (`said_numbers`)


@functools.cache
def number_words(words: ModuleType) -> NumberWords:
    """The number words of the pack `words`, read once for every reader of them."""
    return NumberWords({w: i for i, w in enumerate(words.ONES)}, {w: 10 * i for i, w in enumerate(words.TENS) if w},
                       (words.HUNDRED, words.THOUSAND), dict(words.DIGIT_WORDS), said_numbers(words))


DEFAULT_WORDS: ModuleType = get(DEFAULT)
"""The default language's pack: what a reader of words uses when no call's language is passed in. Modules outside
`loop/locale/` name no language: they take a pack, defaulting to this (tests/project/test_layering.py)."""


@functools.cache
def argument_names(words: ModuleType) -> dict[str, frozenset[str]]:
    """The words of a tool argument's name that say what it holds, by kind ("id": `order_number`, "person":
    `guest_name`, ...): code is written in English whatever the agent speaks, so the default pack's words hold for
    every language, and the pack `words` adds its own (Spanish `numero_reserva`, `fecha`). Labelled:
    tests/data/topics.tsv."""
    base = DEFAULT_WORDS.ARGUMENT_NAMES
    return {kind: frozenset(base[kind]) | frozenset(words.ARGUMENT_NAMES.get(kind, ())) for kind in base}
