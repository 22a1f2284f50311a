"""Word error rate for judging speech-to-text against reference transcripts.

Normalisation is deliberately light: lowercase, curly apostrophes made straight, hyphens and dashes
turned into spaces, other punctuation dropped, apostrophes inside words kept ("I'm", "'em").
Whole numbers and ordinals below a million are spelled out in the language's words (`words`: its pack, `loop.locale`;
"10" -> "ten", "20th" -> "twentieth"):
Whisper writes digits, which a voice agent wants ("order 4567"), while references spell them.
Contractions and abbreviations are not expanded, so "I'm" against "I am" still counts as errors.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType

from loop.locale import DEFAULT_WORDS

_DASHES = re.compile(r"[-\u2010-\u2015\u2212]")
_NOT_WORD = re.compile(r"[^\w\s']")
_LONE_APOSTROPHES = re.compile(r"(?<!\w)'+(?!\w)")
_THOUSANDS_SEPARATOR = re.compile(r"(?<=\d),(?=\d{3}\b)")


@functools.cache
def _number(words: ModuleType) -> re.Pattern[str]:
    """A whole number below a million, and the language's ending of an ordinal written in digits ("20th")."""
    return re.compile(rf"\b(\d{{1,6}})({words.DIGIT_ORDINAL})?\b")


def spell_number(number: int, words: ModuleType = DEFAULT_WORDS) -> str:
    """0 <= number < 1,000,000 in words, without "and" or hyphens: 4567 -> "four thousand five hundred sixty seven"
    (`words`: the language's pack, whose `cardinal` says it)."""
    return words.cardinal(number).replace("-", " ")


def _spell_match(match: re.Match[str], words: ModuleType) -> str:
    said = words.ordinal if match.group(2) else words.cardinal
    return said(int(match.group(1))).replace("-", " ")


def normalize_words(text: str, spell_numbers: bool = True, words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """Text -> the list of words that WER compares (`words`: the language's pack, its numbers spelt out)."""
    text = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'").replace("\u2018", "'")
    if spell_numbers:
        text = _number(words).sub(lambda m: _spell_match(m, words), _THOUSANDS_SEPARATOR.sub("", text))
    text = _DASHES.sub(" ", text)
    text = _NOT_WORD.sub(" ", text).replace("_", " ")
    text = _LONE_APOSTROPHES.sub(" ", text)
    return text.split()


@dataclass(frozen=True)
class WordErrors:
    """Edit counts of one or more hypothesis/reference pairs; add them up to pool a corpus."""

    substitutions: int = 0
    deletions: int = 0
    insertions: int = 0
    reference_words: int = 0

    @property
    def errors(self) -> int:
        return self.substitutions + self.deletions + self.insertions

    @property
    def wer(self) -> float:
        """errors / reference words; with an empty reference, 0.0 if nothing was said else 1.0."""
        if self.reference_words == 0:
            return 0.0 if self.errors == 0 else 1.0
        return self.errors / self.reference_words

    def __add__(self, other: WordErrors) -> WordErrors:
        return WordErrors(
            self.substitutions + other.substitutions,
            self.deletions + other.deletions,
            self.insertions + other.insertions,
            self.reference_words + other.reference_words,
        )


def word_errors(reference: str, hypothesis: str, words: ModuleType = DEFAULT_WORDS) -> WordErrors:
    """Minimum-edit alignment of the normalised words (Levenshtein over words; `words`: the language's pack)."""
    ref, hyp = normalize_words(reference, words=words), normalize_words(hypothesis, words=words)
    # Each cell holds (total edits, substitutions, deletions, insertions) for ref[:i] vs hyp[:j].
    previous = [(j, 0, 0, j) for j in range(len(hyp) + 1)]
    for i in range(1, len(ref) + 1):
        current = [(i, 0, i, 0)]
        for j in range(1, len(hyp) + 1):
            if ref[i - 1] == hyp[j - 1]:
                current.append(previous[j - 1])
                continue
            sub, dele, ins = previous[j - 1], previous[j], current[j - 1]
            current.append(
                min(
                    (sub[0] + 1, sub[1] + 1, sub[2], sub[3]),
                    (dele[0] + 1, dele[1], dele[2] + 1, dele[3]),
                    (ins[0] + 1, ins[1], ins[2], ins[3] + 1),
                )
            )
        previous = current
    _, substitutions, deletions, insertions = previous[-1]
    return WordErrors(substitutions, deletions, insertions, len(ref))


def wer(reference: str, hypothesis: str) -> float:
    """Word error rate of one hypothesis against one reference."""
    return word_errors(reference, hypothesis).wer


def corpus_wer(pairs: Iterable[tuple[str, str]]) -> float:
    """Pooled WER over (reference, hypothesis) pairs: total errors / total reference words."""
    total = WordErrors()
    for reference, hypothesis in pairs:
        total = total + word_errors(reference, hypothesis)
    return total.wer
