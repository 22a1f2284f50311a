"""What a caller says that no tool answers and nothing needs generating for: thanks and goodbye ("Great, thanks,
that's all. Bye!") and a bare acknowledgement of an answer ("Brilliant."). Each is a set of cue words, one of
which must be there, inside a set of words allowed around them."""

from __future__ import annotations

import re
from types import ModuleType

from loop.locale import en

_CLOSING_CUES = {"thanks", "thank", "bye", "goodbye", "cheers"}
_CLOSING_WORDS = _CLOSING_CUES | {
    "you", "so", "much", "very", "that's", "thats", "that", "is", "was", "all", "it", "good", "great", "ok", "okay",
    "perfect", "brilliant", "lovely", "wonderful", "awesome", "excellent", "have", "a", "nice", "day", "for", "now",
    "your", "help", "the", "alright", "fine", "no", "nothing", "else", "i'm", "im", "done", "then", "see", "ya",
    "later", "take", "care", "appreciate", "really", "and", "oh", "right", "yes", "yeah", "many", "again", "bye-bye",
    "lot", "lots", "loads", "heaps", "bunch", "ton", "tons", "kind", "helpful", "goodnight", "night", "cool", "sweet",
    "fantastic", "amazing", "superb", "sorted", "cheerio", "all's", "much,",
}
_ACK_CUES = {"brilliant", "great", "perfect", "lovely", "wonderful", "awesome", "excellent", "good", "ok", "okay",
             "alright", "cool", "sweet", "fantastic", "amazing", "superb", "sorted", "nice"}
_ACK_WORDS = _ACK_CUES | {"oh", "that's", "thats", "very", "so", "sounds", "right", "fine", "really", "all"}
_FAREWELLS = {"bye", "goodbye", "bye-bye", "cheerio", "goodnight", "later", "ya"}
# a yes to something that asked nothing ("Yes, that's right." after a result was read out): labelled with the
# acknowledgements in tests/data/remarks.tsv
_YES_CUES = {"yes", "yeah", "yep", "yup", "yes,", "correct"}
_YES_WORDS = _YES_CUES | {"please", "that's", "thats", "right", "oh", "um", "uh", "it", "is", "sure", "great", "ok",
                          "okay"}


def _only(text: str, cues: set[str], allowed: set[str], max_words: int | None = None) -> bool:
    """`text` holds one of `cues` and no word outside `allowed` (and at most `max_words` words)."""
    words = re.findall(r"[a-z'-]+|\d", text.lower())
    return bool(words) and (max_words is None or len(words) <= max_words) and bool(cues & set(words)) \
        and all(w in allowed for w in words)


def closing_remark(text: str) -> bool:
    """"Great, thanks, that's all. Bye!": thanks or a goodbye and nothing else, which no tool answers."""
    return _only(text, _CLOSING_CUES, _CLOSING_WORDS)


def acknowledgement(text: str) -> bool:
    """"Brilliant." / "Oh, great." / "Okay, perfect.": the caller took in an answer and says nothing more, which
    no tool answers (and the agent is not for anything they asked)."""
    return _only(text, _ACK_CUES, _ACK_WORDS, max_words=4)


def affirmation(text: str) -> bool:
    """"Yes, please." / "Yeah." / "Yes, that's right.": a yes and nothing more. Said after an answer (nothing was
    asked, nothing waits for a yes) it asks for nothing either: never a new request, never out of scope."""
    return _only(text, _YES_CUES, _YES_WORDS, max_words=5)


def closing_reply(text: str, words: ModuleType = en) -> str:
    """What is said to a closing remark ("Thank you, goodbye." -> "You're welcome. Goodbye!"): fixed words, said at
    once; a small model only took a second to say much the same."""
    if set(re.findall(r"[a-z'-]+", text.lower())) & _FAREWELLS:
        return words.YOURE_WELCOME_BYE
    return words.YOURE_WELCOME
