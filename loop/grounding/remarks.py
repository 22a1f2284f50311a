"""What a caller says that no tool answers and nothing needs generating for: thanks and goodbye ("Great, thanks,
that's all. Bye!") and a bare acknowledgement of an answer ("Brilliant."). Each is a set of cue words, one of
which must be there, inside a set of words allowed around them: the language pack's (`loop.locale`; labelled:
tests/data/remarks.tsv, remarks_es.tsv)."""

from __future__ import annotations

import re
from types import ModuleType

from loop.locale import DEFAULT_WORDS, unaccented


def _said(text: str) -> list[str]:
    return re.findall(r"(?:[^\W\d_]|['-])+|\d", unaccented(text.lower()))


def _only(text: str, cues: frozenset[str], allowed: frozenset[str], max_words: int | None = None) -> bool:
    """`text` holds one of `cues` and no word outside `allowed` (and at most `max_words` words)."""
    said = _said(text)
    return bool(said) and (max_words is None or len(said) <= max_words) and bool(cues & set(said)) \
        and all(w in allowed or w in cues for w in said)


def closing_remark(text: str, words: ModuleType = DEFAULT_WORDS) -> bool:
    """"Great, thanks, that's all. Bye!": thanks or a goodbye and nothing else, which no tool answers (in the
    language `words`: its CLOSING_CUES among its CLOSING_WORDS)."""
    return _only(text, words.CLOSING_CUES, words.CLOSING_WORDS)


def acknowledgement(text: str, words: ModuleType = DEFAULT_WORDS) -> bool:
    """"Brilliant." / "Oh, great." / "Okay, perfect.": the caller took in an answer and says nothing more, which
    no tool answers (and the agent is not for anything they asked)."""
    return _only(text, words.ACK_CUES, words.ACK_WORDS, max_words=4)


def affirmation(text: str, words: ModuleType = DEFAULT_WORDS) -> bool:
    """"Yes, please." / "Yeah." / "Yes, that's right.": a yes and nothing more. Said after an answer (nothing was
    asked, nothing waits for a yes) it asks for nothing either: never a new request, never out of scope."""
    return _only(text, words.YES_CUES, words.YES_WORDS, max_words=5)


def closing_reply(text: str, words: ModuleType = DEFAULT_WORDS) -> str:
    """What is said to a closing remark ("Thank you, goodbye." -> "You're welcome. Goodbye!"): fixed words, said at
    once; a small model only took a second to say much the same."""
    if set(_said(text)) & words.FAREWELLS:
        return words.YOURE_WELCOME_BYE
    return words.YOURE_WELCOME
