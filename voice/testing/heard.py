"""What a caller was heard to say, compared by key words: a call script's `user_text` checks
(`voice.testing.scripted_call`) and the tests' `assert_heard`.

Numbers are read in the call's language (`words`: its pack, `loop.locale`; `DEFAULT_WORDS` unless told): the pack
writes its own number words in digits first (`numbers_in_digits`), then a run of the number words left ("twenty
five", "four thousand five hundred") becomes its digits, and dictated pieces are joined as a call joins them.
"""

from __future__ import annotations

import re
import unicodedata
from types import ModuleType

from loop.grounding.arguments import words_to_number
from loop.locale import DEFAULT_WORDS, NumberWords, number_words, unaccented
from voice.speech.caller_digits import join_spoken_digits

_WORD = r"(?:[^\W\d_]|')+"  # a word's letters (any language's, accents folded) and its apostrophes


def heard_words(text: str, words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """A transcript as comparable words: lowercase, no punctuation or accents, every number in digits whether
    Whisper wrote it in words or digits, whole or in pieces ("twenty" -> "20", "four five six seven", "4 5 6 7" and
    "45-67" -> "4567", "$20.00" -> "20"). `words`: the call's language pack."""
    text = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'").replace("\u2018", "'")
    text = unaccented(words.numbers_in_digits(text))
    said = re.findall(rf"{_WORD}|\d+(?:[.,]\d+)*|[,-]", text.replace("$", " "))
    joined = join_spoken_digits(" ".join(_digits_for_number_words(said, words))
                                .replace(" ,", ",").replace(" - ", "-"), words=words)
    joined = re.sub(r"(?<=\d),(?=\d{3}\b)|(?<=\d)\.0+\b", "", joined)  # "1,000" -> "1000", "20.00" -> "20"
    return re.findall(rf"{_WORD}|\d+(?:\.\d+)?", joined)


def _digits_for_number_words(said: list[str], words: ModuleType) -> list[str]:
    """Each spoken number as digits: "twenty five" -> "25", "four thousand five hundred" -> "4500", and
    "twenty twenty" or "four five" as two numbers each ("20", "20"; "4", "5"), for `join_spoken_digits` to join;
    number words of the pack `words`."""
    numbers = number_words(words)
    every = {*numbers.units, *numbers.tens, *numbers.scales}
    out: list[str] = []
    run: list[str] = []
    for word in [*said, ""]:
        if word in every and (not run or _extends(run[-1], word, numbers)):
            run.append(word)
            continue
        if run:
            out.append(str(int(words_to_number(" ".join(run), words) or 0)))
            run = [word] if word in every else []
        if word and word not in every:
            out.append(word)
    return out


def _extends(previous: str, word: str, numbers: NumberWords) -> bool:
    """Whether `word` continues the spoken number that `previous` ends ("twenty" "five", "five" "hundred")."""
    if word in numbers.scales:
        return previous not in numbers.scales or (previous, word) == numbers.scales
    if 0 < numbers.units.get(word, 10) < 10:  # "one" .. "nine"
        return previous in numbers.tens or previous in numbers.scales
    return previous in numbers.scales and numbers.units.get(word) != 0


def mentions(text: str, wanted: str | list[str] | tuple[str, ...], words: ModuleType = DEFAULT_WORDS) -> bool:
    """Whether `text` (a transcript) holds the key word or phrase `wanted`, or one of several alternatives: the
    words of `heard_words` in a row, numbers equal, the last word also as the start of a longer one ("refund" in
    "refunded", "deliver" in "delivered"). `words`: the call's language pack."""
    if not isinstance(wanted, str):
        return any(mentions(text, option, words) for option in wanted)
    got, want = heard_words(text, words), heard_words(wanted, words)
    if not want:
        return False
    *head, last = want
    for start in range(len(got) - len(want) + 1):
        word = got[start + len(head)]
        if got[start:start + len(head)] == head and (word == last or (last[0].isalpha() and word.startswith(last))):
            return True
    return False
