"""What Whisper's tokens become as text: a decoding loop cut, a looped sentence kept once, and the prompt a call's
vocabulary is given as.

A vocabulary prompt makes Whisper write a sentence twice now and then ("Go forward 10 meters. Go forward 10
meters."): `voice.speech.stt` keeps it once when the words are more than the speech holds, or when the same window
decoded without the prompt says it once. A prompted text is kept only when it `mentions` one of the call's words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any


def trim_repetition_loop(tokens: list[int]) -> list[int]:
    """Cut a decoding loop ("10 of clubs 10 of clubs 10 of") down to its first copy.

    Only called when generation ran into the token cap, which an utterance that ended does not.
    The tail that repeats with some period the longest (two copies at least) is kept once.
    """
    best_end, best_length = len(tokens), 0
    for period in range(1, len(tokens) // 2 + 1):
        index = len(tokens) - 1
        while index - period >= 0 and tokens[index] == tokens[index - period]:
            index -= 1
        repeated_length = len(tokens) - index - 1 + period  # periodic tail, first copy included
        if repeated_length >= 2 * period and repeated_length > best_length:
            best_end, best_length = index + 1, repeated_length
    return tokens[:best_end]


_SENTENCE = re.compile(r"[^.?!]+[.?!]*")
_MIN_REPEATED_WORDS = 4  # "No. No." and "Yes, yes." are said; a long sentence twice in a row may be Whisper looping
MAX_WORDS_PER_S = 3.5  # ... when the words are more than the window can hold (speech runs at 2-3 words a second)


def _sentences(text: str) -> list[tuple[str, list[str]]]:
    return [(sentence, re.findall(r"[\w']+", sentence.lower())) for sentence in _SENTENCE.findall(text)]


def drop_repeated_sentence(text: str) -> str:
    """"Can I get a Calzone? Can I get a Calzone" -> "Can I get a Calzone?": a sentence of four words or more that
    comes again at once (the copy ending early or not) is kept once; and a decoder that starts over from an earlier
    sentence ("Pick up on Friday at 10 am. The job is 6021 Pick up on Friday at am The job is") is cut where it
    does (`_cut_restart`)."""
    kept: list[tuple[str, list[str]]] = []
    for sentence, words in _sentences(text):
        if not (len(words) >= _MIN_REPEATED_WORDS and kept and kept[-1][1][: len(words)] == words):
            kept.append((sentence, words))
    return _cut_restart("".join(sentence for sentence, _ in kept).strip())


_RESTART_WORDS = 5  # the opening words of an earlier sentence that, said again, mark the decoder starting over


def _cut_restart(text: str) -> str:
    """`text` up to where the opening `_RESTART_WORDS` words of one of its sentences come again after the sentence
    that follows it: Whisper looping over a window that holds several sentences, the copy often garbled (numbers
    dropped), which the rule above, comparing neighbouring sentences whole, misses."""
    words: list[tuple[str, int]] = []  # (word, where it starts in text)
    starts: list[int] = []  # indices in `words` of each sentence's first word, sentences as `_SENTENCE` cuts them
    for sentence in _SENTENCE.finditer(text):
        found = [(w.group().lower(), sentence.start() + w.start()) for w in re.finditer(r"[\w']+", sentence.group())]
        if found:
            starts.append(len(words))
            words += found
    said = [tuple(w for w, _ in words[k:k + _RESTART_WORDS]) for k in range(len(words))]
    for n, first in enumerate(starts[:-1]):
        if first + _RESTART_WORDS > len(words):
            break
        for k in range(starts[n + 1], len(words) - _RESTART_WORDS + 1):
            if said[k] == said[first]:
                return text[: words[k][1]].rstrip()
    return text


def repeats_a_sentence(text: str) -> bool:
    return drop_repeated_sentence(text) != text.strip()


def too_fast(text: str, seconds: float) -> bool:
    """More words than `seconds` of audio can hold: the decoder ran on (a loop), nobody said them."""
    return len(text.split()) > MAX_WORDS_PER_S * seconds


def vocabulary_prompt(vocabulary: Sequence[str], frame: str = "{words}.", capitals: bool = True) -> str:
    """The previous text that biases Whisper towards a call's words: "Margherita, Quattro Formaggi, Monday."

    Whisper writes in the style of its prompt. In English each word starts with a capital: a lowercase list
    ("monday, tuesday") made it write whole sentences in lowercase without punctuation, and mishear more of them.
    A language's pack may put the words in a sentence of its own, capitalised or as their author wrote them
    (`frame`, `capitals`: its VOCABULARY_PROMPT and VOCABULARY_CAPITALS): Spanish callers under a bare capitalised
    list came out as one ("Hola, Quemilla, Reserva, Cajas, Lombre de Lucia").
    """
    words = list(dict.fromkeys(w.strip() for w in vocabulary if w and w.strip()))
    return frame.format(words=", ".join(capitalized(w) if capitals else w for w in words)) if words else ""


def capitalized(word: str) -> str:
    word = word.strip()
    return word[:1].upper() + word[1:]


def _said(text: str) -> str:
    return " ".join(re.findall(r"[\w']+", text.lower()))


def hint_terms(vocabulary: Sequence[str], is_rare: Callable[[str], bool]) -> tuple[str, ...]:
    """What shows a transcript holds one of the vocabulary: a whole entry ("harbour suite"), or one of its words
    that is not an everyday one ("okonkwo" of "Doctor Okonkwo")."""
    terms = [_said(entry) for entry in vocabulary]
    terms += [word for entry in vocabulary for word in _said(entry).split() if len(word) > 3 and is_rare(word)]
    return tuple(dict.fromkeys(t for t in terms if t))


def mentions(text: str, terms: Sequence[str]) -> bool:
    said = f" {_said(text)} "
    return any(f" {term} " in said for term in terms)


class VocabularyPrompts:
    """Decoder prompts for calls' vocabularies, made once per vocabulary: the words as previous text, then the
    start of a transcript (`base`).

    A word Whisper writes as one token ("Monday", "small", "Paris": an enum's values, often) is one it knows
    already: it is left out, since every word of a prompt also sways how the rest is heard."""

    def __init__(self, tokenizer: Any, base: list[int], max_tokens: int, frame: str = "{words}.",
                 capitals: bool = True) -> None:
        self.tokenizer, self.base, self.max_tokens = tokenizer, tuple(base), max_tokens
        self.frame, self.capitals = frame, capitals  # how the callers' language puts the words (`vocabulary_prompt`)
        self._made: dict[tuple[str, ...], tuple[int, ...]] = {}
        self.terms: dict[tuple[int, ...], tuple[str, ...]] = {}  # a prompt -> what shows a transcript heard its words

    def tokens(self, vocabulary: Sequence[str]) -> tuple[int, ...]:
        key = tuple(vocabulary)
        if key not in self._made:
            rare = [w for w in key if self.is_rare(w)]
            previous = vocabulary_prompt(rare, self.frame, self.capitals)
            tokens = self.tokenizer.encode(" " + previous)[: self.max_tokens] if previous else []
            prompt = (self.tokenizer.sot_prev, *tokens, *self.base) if tokens else self.base
            self._made[key] = prompt
            if tokens:
                self.terms[prompt] = hint_terms(rare, self.is_rare)
        return self._made[key]

    def is_rare(self, word: str) -> bool:
        return len(self.tokenizer.encode(" " + capitalized(word))) > 1
