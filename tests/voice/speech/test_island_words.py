"""A digit dictated alone in a language whose digits Whisper writes as words (the pack's `DIGIT_ALONE_AS_WORD`) is
read by those words (voice/speech/_island_words.py): the reading of one island's text, then Whisper base on the
Spanish example's dictated reservation number."""

from __future__ import annotations

import pytest

from loop import locale
from tests.paths import ROOT
from voice.audio import load_audio
from voice.speech._island_words import IslandWords, digit_forms
from voice.speech.caller_digits import join_spoken_digits

ES = locale.get("es")


def _reader() -> IslandWords:
    reader = IslandWords.__new__(IslandWords)  # no model: only the reading of a decoded text
    reader.forms = digit_forms(ES)
    return reader


@pytest.mark.parametrize(("text", "digit"), [
    (" Siete", "7"), (" siete", "7"), (" DOS", "2"), (" 4", "4"),
    (" Seis Seis", "6"), (" 2 2 2 2", "2"), (" dos dos", "2"),  # a decoder looped over one word's audio
    (" Tero", ""), (" Siete Ciete", ""), (" dos tres", ""), ("", ""), (" C", ""),
])
def test_an_island_is_one_digit_written_as_a_word_or_a_digit(text: str, digit: str) -> None:
    assert _reader().digit_of(text) == digit


def test_english_digits_said_alone_are_still_read_as_digit_tokens() -> None:
    assert locale.get("en").DIGIT_ALONE_AS_WORD is False and ES.DIGIT_ALONE_AS_WORD is True


def test_a_spanish_id_dictated_with_pauses_comes_whole() -> None:
    """"siete ... dos ... cero ... cuatro ... seis" (espeak-ng, es): read as digit tokens it was "7, 2 0 1 5"."""
    from voice.speech.stt import WeightsMissingError, WhisperSTT

    try:
        stt = WhisperSTT("base", language="es")
    except WeightsMissingError:
        pytest.skip("Whisper base is not installed")
    pcm = load_audio(ROOT / "examples" / "farmacia" / "calls" / "audio" / "cancelar_72046.wav")
    heard = stt.transcribe(pcm, vocabulary=("reserva", "número de reserva"), id_digits=(5,))
    assert "72046" in join_spoken_digits(heard, words=ES)
