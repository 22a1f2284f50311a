"""Spoken form: rewrite a reply for the ear just before TTS, in the call's language.

Piper speaks through espeak-ng's phonemizer, which reads "4567" as "four thousand five hundred and
sixty-seven" and "$20.00" as "dollar twenty point zero zero". `SpokenForm(language).speak(text)` turns
written text into what a person would say ("order four five six seven", "twenty dollars"). Only the
audio path uses it: transcripts, history and the trace keep the written form.

Markup (markdown, HTML tags, emoji, braces) is dropped here, the same for every language; numbers,
symbols and abbreviations are the language's, found in its pack (`loop.locale`: `spoken_form()`, English's in
loop/locale/en/_spoken.py), the one place a language's words live: no registry of locales here.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import numpy as np

from loop import locale as languages
from loop.locale import DEFAULT, SpokenRules
from voice.speech._first_clause import is_cut_phrase, trim_pause
from voice.speech.clause_memo import memo_for, recurs

log = logging.getLogger(__name__)

# (gate, pattern, replacement): a rule runs only if one of its gate strings is in the text; plain prose
# passes through a few substring checks. Emoji are gated on the text not being ASCII.
_NON_ASCII = ("",)
_MARKUP: list[tuple[tuple[str, ...], re.Pattern[str], str]] = [
    (("```",), re.compile(r"```[\w+-]*"), " "),
    (("](",), re.compile(r"\[([^\]\n]+)\]\((?:[^)\s]+)\)"), r"\1"),  # [text](url) -> text
    (("<",), re.compile(r"</?[A-Za-z][^<>\n]{0,60}>"), " "),  # HTML tags
    (("#", ">", "-", "*", "+", "•"), re.compile(r"^[ \t]*(?:#{1,6}|>|[-*+•])[ \t]+", re.MULTILINE), ""),  # line markers
    (("_",), re.compile(r"(?<=[A-Za-z0-9])_(?=[A-Za-z0-9])"), " "),  # issue_refund -> issue refund
    (("*", "_", "`"), re.compile(r"\*+|(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])|`+"), ""),  # emphasis, code
    (_NON_ASCII, re.compile("[\U0001f000-\U0001faff\U00002600-\U000027bf\U00002b00-\U00002bff"
                            "\U00002190-\U000021ff\ufe0f\u200d\u20e3]"), " "),  # emoji, arrows
    (("{", "}", "[", "]", "<", ">", "\\", "^", "~"), re.compile(r"[{}\[\]<>\\^]|~(?!\s?\d)"), " "),
    (("|",), re.compile(r"\s*\|\s*"), ", "),  # table cells
    ((" -", " –", "—"), re.compile(r"\s+[-–]\s+|\s*—\s*"), ", "),  # a dash between words is a pause; "3–5" stays
]
_TIDY: list[tuple[tuple[str, ...], re.Pattern[str], str]] = [
    (("  ", "\n", "\t", "\r"), re.compile(r"\s+"), " "),
    ((" ,", " .", " ;", " :", " !", " ?"), re.compile(r"\s+([,.;:!?])"), r"\1"),
    ((",,", ", ,"), re.compile(r",(?:\s*,)+"), ","),
]


def _apply(rules: list[tuple[tuple[str, ...], re.Pattern[str], str]], text: str) -> str:
    for gate, pattern, replacement in rules:
        if any(key in text for key in gate) if gate is not _NON_ASCII else not text.isascii():
            text = pattern.sub(replacement, text)
    return text


def strip_markup(text: str) -> str:
    """Drop what a listener cannot hear: markdown, HTML tags, emoji, braces, stray symbols."""
    return tidy(_apply(_MARKUP, text))


def tidy(text: str) -> str:
    """One space between words, none before punctuation, no doubled commas or leading comma."""
    text = _apply(_TIDY, text).strip()
    return text.lstrip(",").lstrip() if text.startswith(",") else text


class SpokenForm:
    """`SpokenForm("en").speak("Order 4567: $20.00")` -> "Order four five six seven: twenty dollars"."""

    def __init__(self, language: str = DEFAULT) -> None:
        self.language = language_of(language)
        self.rules: SpokenRules = languages.get(self.language).spoken_form()

    def speak(self, text: str) -> str:
        """Deterministic and idempotent: spoken text comes back unchanged."""
        if not text:
            return text
        return tidy(self.rules.speak(strip_markup(text)))


def language_of(locale: str) -> str:
    """The language of a locale as an agent or a voice names it ("en-US", "en_gb", "es" -> "en", "en", "es"); a
    language voiceloop does not speak is an error naming the ones it does (`loop.locale.get`)."""
    language = locale.replace("_", "-").split("-")[0].lower()
    languages.get(language)
    return language


class SpokenTTS:
    """Any TTS engine, fed the spoken form of each clause; every other attribute is the engine's."""

    def __init__(self, engine: Any, form: SpokenForm | None = None) -> None:
        # Wrapping twice would normalise twice: harmless (idempotent) but wasted work.
        self.engine = engine.engine if isinstance(engine, SpokenTTS) else engine
        self.form = form or SpokenForm()

    def synthesize(self, text: str, fixed: bool = False) -> np.ndarray:
        """The clause's audio. One that recurs (short, no digits: "Just to confirm:", "Okay,") or that every call
        says (`fixed`: the greeting) comes from the voice's memo after its first time (`voice.speech.clause_memo`)."""
        cut = is_cut_phrase(text)  # the first part of a clause cut for the voice: said as a phrase that goes on
        spoken = self._spoken(text) + ("," if cut else "")
        memo = memo_for(self.engine)
        if memo is None:
            audio = self.engine.synthesize(spoken)
        else:
            audio = memo.synthesize(spoken, self.engine.synthesize, keep=fixed or recurs(text))
        return trim_pause(audio) if cut else audio

    def remembers(self, text: str) -> bool:
        """The voice's memo holds this clause's audio (saying it costs no synthesis)."""
        memo = memo_for(self.engine)
        return memo is not None and self._spoken(text) + ("," if is_cut_phrase(text) else "") in memo

    def _spoken(self, text: str) -> str:
        try:
            return self.form.speak(text)
        except Exception:  # a normaliser bug must not silence the call: say the written text instead
            log.exception("spoken form failed for %r; speaking it as written", text)
            return text

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)
