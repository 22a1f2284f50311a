"""An identifier heard a digit long or short, read again at the length the agent declares, and kept only when the
audio says so.

Whisper tiny.en drops or doubles a digit of an id said in one go ("two oh four one seven seven three five" ->
"240417735", "nine nine nine nine" -> "99999"). A call knows how many digits its identifiers have where the agent
declares it (`identifier(digits=8)`, a `pattern` of `^\\d{8}$`, "the eight-digit card number"). So a run of
digits one off every declared length is decoded again from the same audio, the words before it forced as
they were heard and only single-digit tokens allowed, at each declared length near it. Then the window's whole
text is scored both ways by the model (the log-likelihood of every token and of the end, teacher-forced) and the
likelier text is kept: the declared length proposes, the audio decides. A caller who said five digits where four
are declared keeps five when that is what the model heard best, and the agent's questions go on from there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from voice.speech._dictated_digits import digit_tokens, suppressed_but

MAX_OFF = 1  # a reading a digit off a declared length is read again at it (each length tried costs a decoding)
MIN_DIGITS = 3  # a run shorter than this is a count or a house number, not an identifier
CANDIDATES = 2  # readings kept from the digit-only beam at each length
# digits with at most one separator between them ("681-3390", "455 0127"); not a price, a time, a decimal
_ONE_BY_ONE = re.compile(r"\d(?: \d)+")
_RUN = re.compile(r"(?<![\d$£€:.,])\d(?:[ .,-]?\d)+(?![\d%:])")


def digit_runs(text: str) -> list[re.Match[str]]:
    """The runs of digits in `text` long enough to be an identifier and written in one piece or a few: digits
    written one by one ("7 7 8 8", as the island reading of `_dictated_digits` writes them) were each heard alone,
    and their count is what was said."""
    return [m for m in _RUN.finditer(text) if len(re.sub(r"\D", "", m.group())) >= MIN_DIGITS
            and not _ONE_BY_ONE.fullmatch(m.group())]


def lengths_to_try(heard: int, declared: Sequence[int]) -> list[int]:
    """The declared lengths a run of `heard` digits may have been meant as: none when it has one of them."""
    if heard in declared:
        return []
    return sorted(n for n in declared if 0 < abs(n - heard) <= MAX_OFF)


def needs_fitting(text: str, declared: Sequence[int]) -> bool:
    """Some run of digits in `text` is off every declared length by a digit."""
    return any(lengths_to_try(len(re.sub(r"\D", "", m.group())), declared) for m in digit_runs(text))


class LengthFitter:
    """Reads a window's mismatched digit runs again on a CTranslate2 Whisper, its tokenizer and its prompt."""

    def __init__(self, model: Any, tokenizer: Any, prompt: Sequence[int]) -> None:
        self.model, self.tokenizer, self.prompt = model, tokenizer, list(prompt)
        single = {token for token, digits in digit_tokens(tokenizer).items() if len(digits) == 1}
        self.only_digits = suppressed_but(model, tokenizer, single)  # a reading is one token a digit

    def fit(self, text: str, encoded: Any, declared: Sequence[int]) -> str:
        """`text` (the window's, from its encoder output `encoded`) with each run of digits a digit off the
        `declared` lengths replaced by a reading at one of them, where the model finds that text likelier."""
        for run in reversed(digit_runs(text)):  # from the end: an earlier run's offsets stay valid
            heard = re.sub(r"\D", "", run.group())
            lengths = lengths_to_try(len(heard), declared)
            if not lengths:
                continue
            before, after = text[: run.start()], text[run.end():]
            readings = {digits for n in lengths for digits in self._read_at(encoded, before, n)} - {heard}
            if not readings:
                continue
            options = [heard, *sorted(readings)]
            scores = self._likelihoods(encoded, [f"{before}{digits}{after}" for digits in options])
            best = options[int(np.argmax(scores))]
            if best != heard:
                text = f"{before}{best}{after}"
        return text

    def _tokens(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(" " + text.strip())) if text.strip() else []

    def _read_at(self, encoded: Any, before: str, n: int) -> list[str]:
        """The likeliest `n`-digit readings of what follows `before` in the window."""
        forced = self._tokens(before)
        results = self.model.generate(
            encoded, [self.prompt + forced], beam_size=max(4, CANDIDATES), num_hypotheses=CANDIDATES,
            # CTranslate2's Whisper returns max_length // 2 tokens after the prompt's start sequence, the forced
            # ones included: exactly `n` new ones, each a single digit
            max_length=2 * (len(forced) + n), suppress_tokens=self.only_digits,
            suppress_blank=False, return_scores=True)[0]
        readings = []
        for ids in results.sequences_ids:
            digits = re.sub(r"\D", "", self.tokenizer.decode(ids[len(forced):]))
            if len(digits) == n:
                readings.append(digits)
        return readings

    def _likelihoods(self, encoded: Any, texts: list[str]) -> list[float]:
        """Each text's log-likelihood given the audio: every token's, then the end's (one batch for all)."""
        import ctranslate2

        tokens = [self._tokens(text) for text in texts]
        batch = ctranslate2.StorageView.from_array(np.ascontiguousarray(np.repeat(np.asarray(encoded), len(texts), 0)))
        results = self.model.generate(  # at least one new token each: the logits at the end's position
            batch, [self.prompt + t for t in tokens], beam_size=1, max_length=2 * (max(map(len, tokens)) + 1),
            suppress_tokens=[], suppress_blank=False, return_logits_vocab=True)
        scores = []
        for said, result in zip(tokens, results, strict=True):
            steps = result.logits[0]  # one vocabulary's logits per position after the start sequence
            if len(steps) < len(said) + 1:
                return [0.0] * len(texts)  # not scored: the first text, as heard, stays
            logits = np.stack([np.asarray(steps[i], dtype=np.float64) for i in range(len(said) + 1)])
            top = logits.max(axis=1, keepdims=True)
            logprobs = logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))
            scores.append(float(logprobs[np.arange(len(said) + 1), [*said, self.tokenizer.eot]].sum()))
        return scores
