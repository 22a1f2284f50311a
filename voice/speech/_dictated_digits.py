"""Ids dictated digit by digit with pauses, heard digit by digit.

Whisper tiny.en hears "seven, seven, eight, eight" said with pauses as "7 7 8" (a repeated digit dropped), "two
oh two oh" as "2 L 2 L", "eight" as "A" and "five" as "Bye". A digit said alone it hears well, and when it may
only write digits it writes the right one. So when a window holds a run of short stretches of speech (Silero VAD)
with pauses between them, and the first pass heard a digit in that run, each stretch is decoded again on its own
(a 2 s window, one token, digit tokens only), and the words the first pass put in the run's time (word times from
CTranslate2's `align()`) are replaced by those digits. A stretch whose best digit is unlikely (a word, not a digit)
ends the run: "yes ... no ... okay" is never turned into digits, and three digits at least make a run.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from loop import locale
from loop.locale import DEFAULT_WORDS
from voice.audio import SAMPLE_RATE
from voice.speech._island_words import IslandWords
from voice.speech._whisper_text import _said
from voice.speech.caller_digits import join_spoken_digits

FRAME = 512  # samples per VAD frame (32 ms)
ISLAND_ON, ISLAND_OFF = 0.3, 0.2  # speech starts at ISLAND_ON and goes on until below ISLAND_OFF (hysteresis)
MIN_PAUSE_S = 0.15  # a quieter stretch this long parts two islands
MAX_DIGIT_S = 1.0  # an island longer than this is words, not a digit ("seventy-seven" is ~0.7 s)
MIN_RUN = 3  # digits in a row before they are read as an id
ISLAND_WINDOW_S = 2.0  # the window one island is decoded in: shorter is cheaper, and one token cannot loop
ISLAND_MARGIN = SAMPLE_RATE // 10  # audio kept either side of an island
READ_CACHE = 512  # islands whose reading is kept (a dictated id has a handful; calls share the reader)
SAME_WORD_S = 0.5  # a word both decodes heard within this of each other is one they agree on
MIN_DIGIT_LOGPROB = -1.6  # below this the island's best digit is a guess (measured: words score -1.1 to -2 on ",")
_SEPARATOR = re.compile(r"[,.-]")
_AN_ID = re.compile(r"\d{3,}")  # an id, once dictated pieces are joined (not "20th", "2 pizzas", "12 Oak Lane")


@dataclass(frozen=True)
class NumberWords:
    """What stands for a digit in one language's transcript (`numberish`) and a word that may stand for part of a
    number (`digitlike`: digits, a number word, a lone letter, "L" for "oh", "A" for "eight"), from its pack."""

    numberish: re.Pattern[str]
    digitlike: re.Pattern[str]
    zero_words: tuple[str, ...]  # what Whisper writes for a zero said as a word ("oh", "O"), as tokens


@functools.cache
def number_words(words: ModuleType) -> NumberWords:
    """The pack's number words as the readers of dictated digits match them (cached per pack): every number word
    (`NUMBER_WORD`: "oh" and the ordinals, "twentieth", with them)."""
    said = locale.number_words(words)
    zeros = tuple(w for w, digit in said.digits.items() if digit == "0" and said.units.get(w) != 0)  # "oh"
    numberish = re.compile(r"\d|\b(?:" + "|".join(said.digits) + r")\b", re.IGNORECASE)
    digitlike = re.compile(rf"[\d,.-]*(?:{words.DIGIT_ORDINAL})?[,.]?|[a-z][,.]?|(?:{words.NUMBER_WORD}[-,.]?)+",
                           re.IGNORECASE)
    zero_words = tuple(f for z in zeros for f in (f" {z}", f" {z.title()}", f" {z[0].upper()}", z[0].upper(), z,
                                                   z.title()))
    return NumberWords(numberish, digitlike, zero_words)


def speech_islands(probs: np.ndarray) -> list[tuple[int, int]]:
    """Sample spans of speech in a window, from its VAD probabilities (one per 512-sample frame)."""
    spans: list[tuple[int, int]] = []
    start, quiet = None, 0
    pause_frames = int(np.ceil(MIN_PAUSE_S * SAMPLE_RATE / FRAME))
    for i, p in enumerate(probs):
        if start is None:
            if p >= ISLAND_ON:
                start, quiet = i, 0
        elif p < ISLAND_OFF:
            quiet += 1
            if quiet >= pause_frames:
                spans.append((start * FRAME, (i - quiet + 1) * FRAME))
                start = None
        else:
            quiet = 0
    if start is not None:
        spans.append((start * FRAME, (len(probs) - quiet) * FRAME))
    return spans


def short_islands(probs: np.ndarray) -> list[tuple[int, int]]:
    """The islands short enough to be one digit (or a pair), when at least MIN_RUN of them come in a row."""
    runs: list[list[tuple[int, int]]] = [[]]
    for span in speech_islands(probs):
        if span[1] - span[0] <= MAX_DIGIT_S * SAMPLE_RATE:
            runs[-1].append(span)
        elif runs[-1]:
            runs.append([])
    return [span for run in runs if len(run) >= MIN_RUN for span in run]


def _ids(text: str, language: ModuleType = DEFAULT_WORDS) -> list[str]:
    """The ids in `text` once dictated pieces are joined (`language`: the call's pack)."""
    return _AN_ID.findall(join_spoken_digits(text, words=language))


@dataclass(frozen=True)
class Word:
    text: str
    start_s: float
    end_s: float

    @property
    def middle_s(self) -> float:
        return (self.start_s + self.end_s) / 2


def splice(words: list[Word], runs: list[tuple[tuple[float, float, float], list[str]]],
           language: ModuleType = DEFAULT_WORDS) -> str:
    """The words, with those the first pass put in a run's time (by their middle) replaced by its digits. A run is
    (start, end, next speech), in seconds: digit-like words between its end and the next speech are dropped too
    (Whisper repeats the last digits into the silence after them: "2 L 2 L 2 L" for "two oh two oh").
    `language`: the call's pack."""
    digitlike = number_words(language).digitlike

    def replaced(w: Word) -> bool:
        return any(a <= w.middle_s <= b or (b < w.middle_s < after and digitlike.fullmatch(w.text.strip()))
                   for (a, b, after), _ in runs)

    kept = [(w.middle_s, w.text) for w in words if not replaced(w)]
    read = [((a + b) / 2, " " + " ".join(digits)) for (a, b, _), digits in runs]
    return "".join(text for _, text in sorted(kept + read, key=lambda piece: piece[0])).strip()


Run = tuple[tuple[int, int], list[str]]  # a run's sample span and its digits


def join_words(words: list[Word]) -> str:
    return "".join(w.text for w in words).strip()


def _number_runs(words: list[Word], language: ModuleType = DEFAULT_WORDS) -> list[list[Word]]:
    """Runs of number words ("4", "five", "oh", with "," "-" "." between), each starting and ending on one
    (`language`: the call's pack)."""
    numberish = number_words(language).numberish
    runs: list[list[Word]] = []
    current: list[Word] = []
    for word in [*words, Word("|", 1e9, 1e9)]:
        if numberish.search(word.text) or (current and _SEPARATOR.fullmatch(word.text.strip())):
            current.append(word)
            continue
        while current and not numberish.search(current[-1].text):
            current.pop()
        if current:
            runs.append(current)
        current = []
    return runs


def merge_numbers(prompted: list[Word], plain: list[Word], terms: frozenset[str] = frozenset(),
                  language: ModuleType = DEFAULT_WORDS) -> list[Word]:
    """The prompted decode's words with its numbers taken from the plain decode: digit-like words of the prompted
    one in the time of a number of the plain one give way to it (names and other words stay the prompted ones).
    In the time of an id the plain decode heard, every other prompted word gives way too, but the vocabulary's
    (`terms`, its words lower-cased) and those the plain decode also heard there ("BT" of "BT 1186"): a prompt
    holds words, not digits, so what it alone put where the plain decode heard an id is its sway ("six double oh
    eight eight" heard "6 AA date" under a prompt of a shop's words, "6.088" without). `language`: the call's pack."""
    runs, digitlike = _number_runs(plain, language), number_words(language).digitlike
    spans = [(run[0].start_s, run[-1].end_s, _AN_ID.search(re.sub(r"\D", "", join_words(run))) is not None)
             for run in runs]

    def gives_way(w: Word) -> bool:
        inside = [an_id for a, b, an_id in spans if a <= w.middle_s <= b]
        if not inside or digitlike.fullmatch(w.text.strip()):
            return bool(inside)
        return any(inside) and _said(w.text) not in terms and not _heard_near(w, plain)

    kept = [w for w in prompted if not gives_way(w)]
    # words, not digits, given way in an id's time: the plain decode's other words in their time come with its
    # digits ("BT" where the prompted decode wrote "Bt1186"), unless a kept word is one of them
    gone = [w for w in prompted if w not in kept and not digitlike.fullmatch(w.text.strip())]
    ran = [w for run in runs for w in run]
    along = [w for w in plain if w not in ran and re.search(r"\w", w.text)
             and any(g.start_s <= w.middle_s <= g.end_s for g in gone) and not _heard_near(w, kept)]
    return sorted([*kept, *ran, *along], key=lambda w: w.middle_s)


def _heard_near(word: Word, others: list[Word]) -> bool:
    """One of `others` is the same word as `word`, within SAME_WORD_S of it: the two decodes agree on it."""
    said = _said(word.text)
    return any(_said(o.text) == said and abs(o.middle_s - word.middle_s) <= SAME_WORD_S for o in others)


def digit_runs(islands: list[tuple[int, int]], read: list[tuple[str, float]]) -> list[Run]:
    """Consecutive islands read as digits (MIN_RUN at least): each run's sample span and its digits."""
    runs: list[Run] = []
    current: list[tuple[tuple[int, int], str]] = []
    for span, (token, logprob) in [*zip(islands, read, strict=True), ((0, 0), ("", -99.0))]:
        if token.isdigit() and logprob >= MIN_DIGIT_LOGPROB:
            current.append((span, token))
            continue
        if len(current) >= MIN_RUN:
            runs.append(((current[0][0][0], current[-1][0][1]), [digit for _, digit in current]))
        current = []
    return runs


def _a_word_there(heard: list[Word], span: tuple[int, int], said: NumberWords) -> bool:
    """The first pass put a word in this island's time, and no digit or anything that may stand for one."""
    there = [w.text.strip() for w in heard if span[0] / SAMPLE_RATE <= w.middle_s <= span[1] / SAMPLE_RATE]
    return bool(there) and not any(said.numberish.search(t) or said.digitlike.fullmatch(t) for t in there)


@functools.cache
def digit_tokens(tokenizer: Any) -> dict[int, str]:
    """Every token of `tokenizer` that is digits alone, written with or without one space before ("7", " 42"):
    token -> its digits. One pass over the vocabulary (~0.1 s for Whisper's), made once per tokenizer for every
    reader of dictated digits (this module's islands, `voice/speech/_id_length.py`)."""
    found = {}
    for token in range(tokenizer.eot):
        text = tokenizer.decode([token])
        if text.strip().isascii() and text.strip().isdigit() and text in (text.strip(), " " + text.strip()):
            found[token] = text.strip()
    return found


def suppressed_but(model: Any, tokenizer: Any, allowed: set[int]) -> list[int]:
    """Every token of the model's vocabulary but `allowed`: what `generate(suppress_tokens=...)` leaves it."""
    vocabulary = int(getattr(model, "vocab_size", 0) or tokenizer.eot + 1)
    return [t for t in range(max(vocabulary, tokenizer.eot + 1)) if t not in allowed]


class DigitReader:
    """Decodes islands of audio as one digit token each, on a CTranslate2 Whisper and its tokenizer."""

    def __init__(self, model: Any, tokenizer: Any, features: Any, words: ModuleType = DEFAULT_WORDS) -> None:
        self.model, self.tokenizer, self.features = model, tokenizer, features
        self.language, self.said = words, number_words(words)  # the callers' pack and its number words
        allowed = {tokenizer.eot, *tokenizer.encode(","), *tokenizer.encode("."), *tokenizer.encode(" ,"),
                   *digit_tokens(tokenizer)}
        # "oh" for zero: Whisper writes the letter or the word for it more readily than "0"
        self.zeros = {t[0] for word in self.said.zero_words if len(t := tokenizer.encode(word)) == 1}
        allowed |= self.zeros
        self.suppress = suppressed_but(model, tokenizer, allowed)
        self.prompt = [*tokenizer.sot_sequence, tokenizer.no_timestamps]
        self._read: dict[bytes, tuple[str, float]] = {}  # islands read lately, by their samples' hash
        # a language whose digits said alone Whisper writes as words has them read by its words (_island_words.py)
        self._by_words = IslandWords(model, tokenizer, words, functools.partial(suppressed_but, model, tokenizer)) \
            if words.DIGIT_ALONE_AS_WORD else None

    def read(self, islands: list[np.ndarray]) -> list[tuple[str, float]]:
        """Each island's best digit token (or "," / "" when it is not a digit) and its log probability. A turn's
        partial transcripts hold the same islands again and again: those already read are not decoded twice."""
        keys = [hashlib.blake2b(island.tobytes(), digest_size=16).digest() for island in islands]
        missing = {key: island for key, island in zip(keys, islands, strict=True) if key not in self._read}
        if missing:
            self._read.update(zip(missing, self._decode(list(missing.values())), strict=True))
            while len(self._read) > READ_CACHE:
                self._read.pop(next(iter(self._read)))
        return [self._read[key] for key in keys]

    def _decode(self, islands: list[np.ndarray]) -> list[tuple[str, float]]:
        import ctranslate2

        size = int(ISLAND_WINDOW_S * SAMPLE_RATE)
        batch = []
        for island in islands:
            audio = np.zeros(size, dtype=np.float32)
            audio[: min(size, len(island))] = island[:size].astype(np.float32) / 32768.0
            batch.append(self.features(audio, padding=0))
        features = ctranslate2.StorageView.from_array(np.ascontiguousarray(np.stack(batch)))
        if self._by_words is not None:
            return self._by_words.decode(features, self.prompt, len(batch))
        results = self.model.generate(
            features, [self.prompt] * len(batch),
            beam_size=1, max_length=len(self.prompt) + 1, suppress_blank=True, suppress_tokens=self.suppress,
            return_scores=True)
        return [("0" if r.sequences_ids[0][:1] and r.sequences_ids[0][0] in self.zeros
                 else self.tokenizer.decode(r.sequences_ids[0][:1]).strip(), float(r.scores[0])) for r in results]

    def words(self, encoded: Any, tokens: list[int], samples: int) -> list[Word]:
        """The first pass's words with their times (CTranslate2's cross-attention alignment, as faster-whisper's
        word timestamps)."""
        result = self.model.align(encoded, list(self.tokenizer.sot_sequence), [tokens], [samples // 160])[0]
        text_index = np.array([pair[0] for pair in result.alignments])
        time_index = np.array([pair[1] for pair in result.alignments])
        jumps = np.pad(np.diff(text_index), (1, 0), constant_values=1).astype(bool)
        jump_s = time_index[jumps] / 50.0  # 50 audio positions per second in Whisper's encoder output
        texts, word_tokens = self.tokenizer.split_to_word_tokens([*tokens, self.tokenizer.eot])
        bounds = np.pad(np.cumsum([len(t) for t in word_tokens[:-1]]), (1, 0))
        if len(jump_s) < bounds[-1] + 1:
            return []
        return [Word(text, float(jump_s[a]), float(jump_s[b]))
                for text, a, b in zip(texts[:-1], bounds[:-1], bounds[1:], strict=True)]

    def with_plain_numbers(self, window: np.ndarray, text: str, tokens: list[int], encoded: Any,
                           plain: Callable[[], list[int]] | None = None,
                           terms: Sequence[str] = ()) -> tuple[str, Callable[[], list[Word]]]:
        """`text` (the first pass on `window`, `tokens`) and its timed words, with its numbers taken from `plain()`,
        the window decoded without the vocabulary prompt of `terms`, when either holds an id (a prompt of names
        makes Whisper write "33000" for "three three zero zero", or "6 AA date" for "six double oh eight eight")."""
        words: Callable[[], list[Word]] = lambda: self.words(encoded, tokens, len(window))  # noqa: E731
        if plain is not None and ((ids := _ids(text, self.language)) or
                                   _ids(self.tokenizer.decode(plain()), self.language) not in ([], ids)):
            said = frozenset(word for term in terms for word in term.split())  # `terms` as `hint_terms` writes them
            merged = merge_numbers(words(), self.words(encoded, plain(), len(window)), said, self.language)
            return join_words(merged), lambda: merged
        return text, words

    def by_islands(self, window: np.ndarray, probs: np.ndarray, text: str, words: Callable[[], list[Word]]) -> str:
        """`text` with a run of digits dictated with pauses replaced by the digits its islands read as alone."""
        islands = short_islands(probs) if self.said.numberish.search(text) else []
        if not islands:
            return text
        read = self.read([window[max(0, a - ISLAND_MARGIN): b + ISLAND_MARGIN] for a, b in islands])
        heard = words()
        # an island the first pass heard as a plain word is no digit, however the digit-only decoding reads it
        # ("How is it going?" after "three three nine zero" read as a fifth digit, "0" for "how")
        read = [("", -99.0) if _a_word_there(heard, span, self.said) else r
                for span, r in zip(islands, read, strict=True)]
        runs = digit_runs(islands, read)
        if not runs:
            return text
        starts = [a / SAMPLE_RATE for a, _ in speech_islands(probs)]
        spans = [((a / SAMPLE_RATE, b / SAMPLE_RATE, min([s for s in starts if s > b / SAMPLE_RATE], default=1e9)),
                  digits) for (a, b), digits in runs]
        # only where the first pass heard a digit: a run of short words it heard as words stays words
        spans = [(span, digits) for span, digits in spans
                 if any(span[0] <= w.middle_s <= span[1] and self.said.numberish.search(w.text) for w in heard)]
        return splice(heard, spans, self.language) if spans else text
