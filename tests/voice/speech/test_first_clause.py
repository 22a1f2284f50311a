"""The first clause of an answer, cut before a phrase when it is long (voice/speech/_first_clause.py), so the caller
hears its first words sooner; the voice says the cut part as a phrase that goes on, with a short pause after it."""

from __future__ import annotations

import numpy as np
import pytest

from voice.speech._first_clause import CUT_PAUSE_S, head_cut, is_cut_phrase, spoken_words, trim_pause
from voice.speech.spoken import SpokenTTS
from voice.speech.tts import ClauseChunker

HOURS = "We're open Monday to Friday from 8 in the morning to 6 in the evening, and Saturday from 9 to 1."


def clauses(text: str, step: int = 0, **options: object) -> list[str]:
    chunker = ClauseChunker(**options)  # type: ignore[arg-type]
    if not step:
        return [*chunker.push(text), *chunker.flush()]
    out = []
    for i in range(0, len(text), step):  # as a model streams it
        out += chunker.push(text[i:i + step])
    return [*out, *chunker.flush()]


def test_a_long_first_clause_is_cut_before_a_phrase_and_only_the_first() -> None:
    assert clauses(HOURS) == ["We're open Monday to Friday", "from 8 in the morning to 6 in the evening,",
                              "and Saturday from 9 to 1."]
    assert clauses("Check-in is from 3 p.m. and check-out is by 11 a.m.")[0] == "Check-in is from 3 p.m."
    assert clauses("Booking 3091 for Tom Hale on June 20 is cancelled.") == \
        ["Booking 3091", "for Tom Hale on June 20 is cancelled."]  # a number is a word per digit said


@pytest.mark.parametrize("step", [1, 2, 3, 7])
def test_a_streamed_answer_is_cut_where_the_whole_text_is(step: int) -> None:
    for text in (HOURS, "Could you tell me when you would like to come in?", "Order 4567 has shipped, and more."):
        assert clauses(text, step) == clauses(text)


@pytest.mark.parametrize("text", [
    "Let me get a person to help you with that.",  # the phrase would be two words: said whole
    "There are no deliveries going to Paris.",  # no phrase starts in it
    "Sure, I can help with that.",  # a short first clause
    "The power cut at 12 Mill Road is reported, reference 1001.",  # "at" comes too early
])
def test_a_clause_is_said_whole_when_no_part_would_be_a_stub(text: str) -> None:
    assert clauses(text) == clauses(text, first_phrase=False)


def test_the_cut_can_be_turned_off_and_waits_for_the_phrase_to_be_long_enough() -> None:
    whole = "We're open Monday to Friday from 8 in the morning to 6 in the evening,"
    assert clauses(HOURS, first_phrase=False)[0] == whole
    assert head_cut("We're open Monday to Friday from 8 in", closed=False) is None  # "from" + 2 words so far
    assert head_cut("We're open Monday to Friday from 8 in the ", closed=False) == len("We're open Monday to Friday ")
    assert spoken_words("4567") == 4 and spoken_words("open") == 1


class Voice:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def synthesize(self, text: str) -> np.ndarray:
        self.asked.append(text)
        return np.concatenate([np.full(8000, 3000, np.int16), np.zeros(8000, np.int16)])  # 0.5 s said, 0.5 s quiet


def test_the_voice_says_a_cut_phrase_as_going_on_and_keeps_a_short_pause_after_it() -> None:
    voice = Voice()
    tts = SpokenTTS(voice)
    cut = tts.synthesize("We're open Monday to Friday")
    whole = tts.synthesize("and Saturday from 9 to 1.")
    assert voice.asked == ["We're open Monday to Friday,", "and Saturday from nine to one."]
    assert len(cut) == 8000 + int(CUT_PAUSE_S * 16000) and len(whole) == 16000
    assert is_cut_phrase("We're open Monday to Friday") and not is_cut_phrase("to 6 in the evening,")
    assert len(trim_pause(np.zeros(100, np.int16))) == 100  # nothing said: nothing to trim


def test_real_piper_says_the_cut_clause_so_whisper_hears_every_word() -> None:
    from voice.speech.engines import STT_ENGINES, TTS_ENGINES

    tts = SpokenTTS(TTS_ENGINES.load("piper", threads=1))
    parts = clauses(HOURS)[:2]
    audio = np.concatenate([tts.synthesize(p) for p in parts])
    heard = STT_ENGINES.load("tiny.en", threads=1).transcribe(audio).lower()
    assert all(word in heard for word in ("open", "monday", "friday", "morning", "evening"))
