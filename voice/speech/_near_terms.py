"""A word heard a letter or two off one of the call's words, read as that word when the audio says so.

Whisper base, prompted with a Spanish pharmacy's medicines, still writes "Loratamíra" for "loratadina" and
"Paracetamola" for "paracetamol" now and then; the tool's listed value is then never named and the agent asks for
it again. So a word of the transcript that is not one of the call's words (`hint_terms`) but is within a letter or
two of exactly one long one, with the same first letter, proposes it; the window's text is scored both ways by the
model (teacher-forced, as `_id_length` scores an id's lengths) and the likelier is kept: the vocabulary proposes,
the audio decides.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from loop.locale import unaccented

MIN_LETTERS = 7  # a shorter word is too near too many others ("caja", "cada")
LETTERS_PER_EDIT = 5  # one letter off in five at most ("loratamira" is two off "loratadina")


def edits(a: str, b: str) -> int:
    """Levenshtein distance: letters put in, taken out or changed."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]


def near_term(word: str, terms: Sequence[str]) -> str | None:
    """The one long term of `terms` (single words, lower case) that `word` is a letter or two off, if one is."""
    said = unaccented(word.lower())
    if said in terms:
        return None
    near = [t for t in terms if " " not in t and len(t) >= MIN_LETTERS and t[0] == said[:1]
            and 0 < edits(said, unaccented(t)) <= len(t) // LETTERS_PER_EDIT]
    return near[0] if len(near) == 1 else None


def fit_terms(text: str, terms: Sequence[str], likelihoods: Callable[[list[str]], list[float]]) -> str:
    """`text` with each word near one of `terms` replaced by it where `likelihoods` (each text's log-likelihood given
    the window's audio) finds the replaced text likelier."""
    for m in reversed(list(re.finditer(r"\w+", text))):
        term = near_term(m.group(), terms)
        if term is None:
            continue
        written = term.capitalize() if m.group()[:1].isupper() else term
        other = f"{text[: m.start()]}{written}{text[m.end():]}"
        kept, proposed = likelihoods([text, other])
        if proposed > kept:
            text = other
    return text
