"""A digit said alone, read again as its language's word for it.

Whisper base, told Spanish, writes a digit said alone as its word ("Siete", "DOS", "Seis Seis"); made to write one
digit token instead (`_dictated_digits.DigitReader`'s reading for English) it picks wrong ones: "siete ... dos ...
cero ... cuatro ... seis" read 4, 2, 0, 1, 5. So where the language's pack says so (`DIGIT_ALONE_AS_WORD`), each
island is decoded with only the tokens of its digit words and of the digits allowed (a few tokens, beam search),
and the likeliest reading that is one digit, as a word or a digit, said once or looped ("Siete Siete": a decoder
run on over one word's audio), is that island's digit.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

MAX_TOKENS = 4  # a digit word is one to three tokens; a reading this long may say it twice
HYPOTHESES = 5  # readings kept from the beam: the first that is one digit wins
NOT_READ = ("", -99.0)  # no digit: the island ends a run


def digit_forms(words: ModuleType) -> dict[str, str]:
    """Every way a digit is written in `words`' language, and the digit: "siete", "Siete", "7" -> "7"."""
    forms = {str(d): str(d) for d in range(10)}
    for word, digit in words.DIGIT_WORDS.items():
        if len(digit) == 1 and word.isalpha():
            forms |= {word: digit, word.capitalize(): digit, word.upper(): digit}
    return forms


class IslandWords:
    """Reads islands of audio as digits by the language's digit words, on a CTranslate2 Whisper."""

    def __init__(self, model: Any, tokenizer: Any, words: ModuleType,
                 all_but: Callable[[set[int]], list[int]]) -> None:
        """`all_but(tokens)`: every token of the model's vocabulary but those (what a decoding is to suppress)."""
        self.model, self.tokenizer = model, tokenizer
        self.forms = digit_forms(words)
        self.suppress = all_but({tokenizer.eot} | {t for form in self.forms for lead in ("", " ")
                                                   for t in tokenizer.encode(lead + form)})

    def digit_of(self, text: str) -> str:
        """The one digit `text` writes, once or repeated ("Siete", " 2 2", "dos dos"); "" for anything else."""
        parts = re.findall(r"\w+", text)
        digits = {self.forms.get(p) for p in parts}
        return str(digits.pop()) if parts and len(digits) == 1 and None not in digits else ""

    def decode(self, features: Any, prompt: list[int], count: int) -> list[tuple[str, float]]:
        """Each of `count` islands' digit (or "") and its reading's log probability per token, from their features
        (a CTranslate2 StorageView)."""
        results = self.model.generate(
            features, [prompt] * count, beam_size=HYPOTHESES, num_hypotheses=HYPOTHESES,
            max_length=len(prompt) + MAX_TOKENS, suppress_tokens=self.suppress, suppress_blank=False,
            return_scores=True)
        read = []
        for result in results:
            found = [(digit, float(score)) for ids, score in zip(result.sequences_ids, result.scores, strict=True)
                     if (digit := self.digit_of(self.tokenizer.decode(ids)))]
            read.append(max(found, key=lambda pair: pair[1]) if found else NOT_READ)
        return read
