"""Ids dictated digit by digit reach the text whole (voice/speech/_dictated_digits.py): the island logic on its own,
then the real Whisper tiny.en on a handful of the dictated-id recordings, with and without a vocabulary."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pytest

from tests.paths import AUDIO_FIXTURES, RECORDINGS, ROOT
from voice.audio import load_audio
from voice.bench.wer import normalize_words
from voice.speech._dictated_digits import (
    FRAME,
    Word,
    digit_runs,
    merge_numbers,
    short_islands,
    speech_islands,
    splice,
)
from voice.speech.caller_digits import join_spoken_digits
from voice.speech.engines import STT_ENGINES
from voice.speech.stt import WhisperSTT

IDS = AUDIO_FIXTURES / "synthetic" / "ids"
VOCAB = IDS.parent / "vocab"
NOISE = RECORDINGS / "noise"
PIZZERIA = ("Margherita", "Quattro Formaggi", "Calzone", "Diavola", "Capricciosa", "Coldharbour Lane",
            "Wickham Road", "small", "medium", "large")


def probs_of(*pattern: tuple[int, float]) -> np.ndarray:
    """VAD probabilities: (frames, probability) pieces one after the other (a frame is 32 ms)."""
    return np.concatenate([np.full(n, p) for n, p in pattern])


def test_islands_part_at_pauses_and_hold_through_a_dip() -> None:
    probs = probs_of((6, 0.0), (12, 0.9), (9, 0.05), (9, 0.6), (3, 0.25), (9, 0.6), (3, 0.1), (6, 0.6), (9, 0.0))
    # 0.25 is above the stop threshold, and 3 frames (96 ms) of 0.1 are no pause; 9 frames of 0.05 are
    assert speech_islands(probs) == [(6 * FRAME, 18 * FRAME), (27 * FRAME, 57 * FRAME)]


def test_only_three_or_more_short_islands_in_a_row_can_be_digits() -> None:
    digit, pause, sentence = (11, 0.9), (9, 0.0), (47, 0.9)
    assert len(short_islands(probs_of(sentence, pause, digit, pause, digit, pause, digit, pause, digit))) == 4
    assert short_islands(probs_of(digit, pause, digit, pause, sentence, pause, digit)) == []


def test_a_run_is_three_confident_digits_and_a_word_ends_it() -> None:
    islands = [(i * 10, i * 10 + 5) for i in range(6)]
    read = [("7", -0.1), ("7", -0.2), ("8", -0.9), (",", -1.2), ("8", -0.1), ("8", -2.5)]
    assert digit_runs(islands, read) == [((0, 25), ["7", "7", "8"])]
    assert digit_runs(islands[:2], read[:2]) == []


def test_the_words_heard_in_a_run_give_way_to_its_digits() -> None:
    words = [Word(" My", 0.0, 0.4), Word(" job", 0.4, 0.7), Word(" is", 0.7, 1.7), Word(" 7", 1.7, 2.2),
             Word(" 8", 2.2, 3.8), Word(" 2", 3.9, 4.1), Word(" L", 4.1, 4.2), Word(" please", 4.5, 4.9)]
    # a run from 1.7 s to 3.8 s, the next speech at 4.4 s: "2 L" in the silence between is Whisper going on
    assert splice(words, [((1.7, 3.8, 4.4), ["7", "7", "8", "8"])]) == "My job is 7 7 8 8 please"


def test_a_prompted_decodes_numbers_come_from_the_plain_decode_and_its_names_stay() -> None:
    prompted = [Word(" Table", 0.0, 0.3), Word(" for", 0.3, 0.5), Word(" Quattro", 0.5, 0.9),
                Word(" at", 0.9, 1.0), Word(" 33000", 1.0, 1.9), Word(".", 1.9, 2.0)]
    plain = [Word(" Table", 0.0, 0.3), Word(" for", 0.3, 0.5), Word(" quatro", 0.5, 0.9),
             Word(" at", 0.9, 1.0), Word(" 3300", 1.0, 1.8), Word(".", 1.8, 2.0)]
    assert "".join(w.text for w in merge_numbers(prompted, plain)) == " Table for Quattro at 3300."


def test_what_a_prompt_put_in_the_time_of_an_id_the_plain_decode_heard_gives_way_but_its_own_words() -> None:
    # "six double oh eight eight" under a prompt of the shop's words, and without
    prompted = [Word(" the", 2.3, 2.34), Word(" Ticket", 2.34, 2.58), Word(" 6", 2.58, 3.0), Word(" AA", 3.0, 3.38),
                Word(" date", 3.38, 3.8), Word("?", 3.8, 3.88)]
    plain = [Word(" The", 2.3, 2.34), Word(" tickets", 2.34, 2.64), Word(" 6", 2.64, 3.04), Word(".088", 3.04, 3.88)]
    assert "".join(w.text for w in merge_numbers(prompted, plain)) == " the Ticket 6.088"
    # a word of the vocabulary heard in that time stays: the prompt is for it
    named = [*prompted[:3], Word(" Quattro", 3.0, 3.6), Word(" 8", 3.6, 3.8)]
    assert "Quattro" in "".join(w.text for w in merge_numbers(named, plain, frozenset({"quattro"})))
    # a word the plain decode heard there too stays: an id's letters, say
    lettered = [Word(" Booking", 0.0, 0.58), Word(" BT", 0.9, 1.1), Word("-1186", 1.1, 1.9)]
    heard = [Word(" Welcome", 0.0, 0.36), Word(" BT", 0.36, 0.96), Word(" 1186", 0.96, 1.88)]
    assert "".join(w.text for w in merge_numbers(lettered, heard)) == " Booking BT 1186"
    # and one heard in the time of a prompted word given way comes with the digits
    whole = [Word(" Booking", 0.0, 1.12), Word(" Bt1186", 1.12, 2.46)]
    apart = [Word(" Looking", 0.0, 0.9), Word(" BT", 0.9, 1.52), Word(" 1186", 1.52, 2.48)]
    assert "".join(w.text for w in merge_numbers(whole, apart)) == " Booking BT 1186"
    # a prompted id given way to digits the plain decode heard brings none of its other words along
    spelt = [Word(" is", 3.14, 3.38), Word(" free", 3.38, 3.66), Word(" of", 3.66, 4.06), Word(" 962", 4.06, 4.88)]
    plain_words = [Word(" is", 3.14, 3.4), Word(" free", 3.4, 3.66), Word(" or", 4.16, 4.16), Word(" high", 4.16, 4.42),
                   Word(" in", 4.42, 4.44), Word(" six", 4.44, 4.76), Word(",", 4.76, 4.88), Word(" two", 4.88, 5.18)]
    assert "".join(w.text for w in merge_numbers(spelt, plain_words)) == " is free of six, two"
    # a number the plain decode heard that is no id leaves the prompted words alone
    short = [Word(" at", 0.0, 0.3), Word(" 9", 0.3, 0.6), Word(" Park", 0.6, 0.9), Word(" Lane", 0.9, 1.2)]
    assert "".join(w.text for w in merge_numbers(short, [Word(" at", 0.0, 0.3), Word(" 9", 0.3, 1.0)])) == \
        " at 9 Park Lane"


@pytest.fixture(scope="module")
def stt() -> WhisperSTT:
    return WhisperSTT(**STT_ENGINES.spec("tiny.en").options, threads=1)  # the default engine, beam 3


def expected() -> dict[str, str]:
    with (IDS / "manifest.tsv").open(newline="", encoding="utf-8") as handle:
        return {Path(row["path"]).stem: row["expect"] for row in csv.DictReader(handle, delimiter="\t")}


def numbers(text: str) -> list[str]:
    return re.findall(r"\d+", join_spoken_digits(text))  # what the session hands the model


# digit by digit with pauses, doubled, "oh", six digits, in a sentence, Piper and espeak-ng, and the phone band
DICTATED = ["p_7788", "p_2o2o", "e_2020_gb", "p_job_7788", "p_501396", "e_612216", "t_p_7788"]


@pytest.mark.parametrize("name", DICTATED)
def test_a_dictated_id_reaches_the_text_whole(stt: WhisperSTT, name: str) -> None:
    text = stt.transcribe(load_audio(IDS / f"{name}.wav"))
    assert numbers(text) == [expected()[name]], text


def test_short_words_with_pauses_stay_words(stt: WhisperSTT) -> None:
    for name in ("p_no_id_words", "e_no_id_errand"):
        text = stt.transcribe(load_audio(IDS / f"{name}.wav"))
        assert text and numbers(text) == [], text


def test_ids_stay_whole_with_a_vocabulary_and_its_words_are_heard(stt: WhisperSTT) -> None:
    for name in ("p_job_7788", "p_2o2o", "p_3300"):
        text = stt.transcribe(load_audio(IDS / f"{name}.wav"), vocabulary=PIZZERIA)
        assert numbers(text) == [expected()[name]], text
    heard = " ".join(normalize_words(stt.transcribe(load_audio(VOCAB / "p_quattro_calzone.wav"),
                                                    vocabulary=PIZZERIA)))
    assert "quattro formaggi" in heard, heard


def test_a_vocabulary_puts_no_words_into_noise(stt: WhisperSTT) -> None:
    for name in ("office.wav", "dishes.wav", "bike.wav"):
        assert stt.transcribe(load_audio(NOISE / name), vocabulary=PIZZERIA) == "", name


def test_a_batch_with_different_vocabularies_gives_each_window_its_own_text(stt: WhisperSTT,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stt, "beam_size", 1)  # a batch decodes greedily: compare with greedy alone
    greedy = stt
    clips = [load_audio(VOCAB / "p_quattro_calzone.wav"), load_audio(VOCAB / "p_siobhan.wav"),
             load_audio(IDS / "p_job_7788.wav")]
    vocabularies = [PIZZERIA, ("Siobhan", "Niamh"), ()]
    alone = [greedy.transcribe_window(c, v) for c, v in zip(clips, vocabularies, strict=True)]
    assert greedy.transcribe_windows(clips, vocabularies) == alone and all(alone)


def test_everyday_words_are_left_out_of_the_prompt(stt: WhisperSTT) -> None:
    plain = stt.prompt_tokens(())
    assert stt.prompt_tokens(("monday", "tuesday", "small")) == plain  # words Whisper knows: no prompt at all
    prompted = stt.prompt_tokens(PIZZERIA)
    previous = stt._tokenizer.decode([t for t in prompted if t < stt._tokenizer.eot])
    assert "Margherita" in previous and "Coldharbour Lane" in previous and "Small" not in previous


RECORDINGS = NOISE.parent


def test_audio_without_the_vocabularys_words_is_heard_as_without_a_vocabulary(stt: WhisperSTT) -> None:
    for name in ("telephone/osr34_003.wav", "speech/goforward.wav", "mixes/arctic_aew_a0001+dishes_5dB.wav"):
        audio = load_audio(RECORDINGS / name)
        assert stt.transcribe(audio, vocabulary=PIZZERIA) == stt.transcribe(audio), name


def test_a_late_number_said_in_one_go_gets_its_dropped_digits_back(stt: WhisperSTT) -> None:
    """After two sentences Whisper hears "four zero two one three" as 4023; heard again from a second before it,
    whole. Only dropped digits come back: a number that is not the first one with digits added is never taken."""
    from voice.speech._number_again import _put_back

    line = ROOT / "examples" / "outage_line" / "calls" / "audio" / "report_40213.wav"
    text = stt.transcribe(load_audio(line))
    assert numbers(text) == ["40213"], text
    assert text.endswith(".")  # the sentence still ends where it ended: the turn is not held open for more
    assert _put_back("4023", "40213") and _put_back("778", "7788") and _put_back("4023", "400213")
    assert not _put_back("4023", "4023") and not _put_back("4023", "5023") and not _put_back("4023", "4021")
    assert not _put_back("4023", "4000123")  # three more: another number, not this one heard better


CINEMA = ("Regent Cinema", "showtimes", "tickets", "seats", "box office", "tonight", "The Long Tide", "Paper Moons",
          "Starfall", "Maggie's Garden", "Iron Harbour", "The Quiet Hour", "5 p.m.", "5:30 p.m.", "6 p.m.",
          "6:15 p.m.", "7 p.m.", "7:30 p.m.", "8 p.m.", "8:30 p.m.", "8:45 p.m.", "9:15 p.m.", "9:30 p.m.")


def test_a_vocabulary_never_takes_the_place_of_what_was_said(stt: WhisperSTT) -> None:
    # An outside caller (espeak-ng, dish noise at 10 dB) booking seats, with a cinema's vocabulary of showtimes:
    # the prompted decoding alone was "4 seats, 4-ion car, 915" (in a call, "5 p.m.,"): a sentence lost to the prompt.
    pcm = load_audio(RECORDINGS / "mixes"
                     / "espeak_gb_m4_cinema_booking+dishes_10dB.wav")
    plain = stt.transcribe(pcm)
    heard = stt.transcribe(pcm, vocabulary=CINEMA)
    assert len(heard.split()) >= 0.6 * len(plain.split()) >= 6, (plain, heard)
    assert "915" in heard or "9:15" in heard, heard
