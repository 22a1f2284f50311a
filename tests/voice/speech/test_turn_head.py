"""A caller who goes on after a finished sentence and a pause: the sentence is transcribed once, and only what follows
the pause again (`TurnTranscriber.head`, `TurnConfig.keep_sentences_after_s`), so a turn of several sentences is back in
the time its last sentence takes. Unit tests with a counting stand-in, then real Whisper on a real caller line."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from tests.paths import ROOT
from voice.audio import SAMPLE_RATE, load_audio
from voice.call.turns import sentence_done
from voice.runtime.drivers import transcript_of
from voice.speech.engines import STT_ENGINES
from voice.speech.incremental_stt import TurnTranscriber

S = SAMPLE_RATE


@dataclass
class Sentences:
    """Says each whole second of audio it is sent as one finished sentence, or what `said` tells it to."""

    said: str | None = None
    sent: list[float] = field(default_factory=list)

    def transcribe(self, audio: np.ndarray) -> str:
        self.sent.append(len(audio) / S)
        return self.said if self.said is not None else " ".join(["I am fine now."] * round(len(audio) / S))


def test_words_after_a_finished_sentence_and_a_long_pause_are_all_that_is_transcribed_again() -> None:
    stt, heard = Sentences(), TurnTranscriber(10.0, sentence_done)
    audio = np.ones(4 * S, np.int16)
    two = "I am fine now. I am fine now."
    assert heard.transcribe(stt, audio[: 2 * S], pause_key=2.0) == two
    assert heard.head is None  # a pause, but the caller has not gone on from it
    heard.went_on(2.0)
    assert heard.head == (2 * S, two)
    assert heard.transcribe(stt, audio, pause_key=4.0) == f"{two} {two}"
    assert stt.sent == [2.0, 2.0]  # the two seconds after the pause, not all four


def test_a_pause_gone_on_from_before_its_transcript_is_back_still_makes_the_head() -> None:
    stt, heard = Sentences(said="I want to check my booking."), TurnTranscriber(10.0, sentence_done)
    heard.went_on(2.0)  # the caller spoke again while Whisper was still on the pause's audio
    heard.transcribe(stt, np.ones(2 * S, np.int16), pause_key=2.0)
    assert heard.head == (2 * S, "I want to check my booking.")


def test_a_short_sentence_after_the_head_does_not_move_it() -> None:
    stt, heard = Sentences(said="I want to check my booking."), TurnTranscriber(10.0, sentence_done)
    heard.transcribe(stt, np.ones(2 * S, np.int16), pause_key=2.0)
    heard.went_on(2.0)
    stt.said = "Thanks."  # the audio after the head says one word: the whole of it is transcribed next time
    assert heard.transcribe(stt, np.ones(3 * S, np.int16), pause_key=3.0) == "I want to check my booking. Thanks."
    heard.went_on(3.0)
    assert heard.head == (2 * S, "I want to check my booking.")


@pytest.mark.parametrize("words", ["My order number is 45.", "I'd like to book the.", "My job number is.",
                                   "I'd like to book a table", "Can you check?", "I want the references.",
                                   "The reference is four, one.", "Could you give me the reference?"])
def test_words_that_go_on_past_the_pause_keep_the_whole_turn_transcribed(words: str) -> None:
    stt, heard = Sentences(said=words), TurnTranscriber(10.0, sentence_done)
    heard.transcribe(stt, np.ones(2 * S, np.int16), pause_key=2.0)
    heard.went_on(2.0)
    # digits being dictated (in figures or words), a trailing word, a number announced, no full stop, a stub
    assert heard.head is None


def test_only_a_transcription_in_a_pause_can_make_a_head_and_the_setting_turns_it_off() -> None:
    stt = Sentences()
    mid_word = TurnTranscriber(10.0, sentence_done)
    mid_word.transcribe(stt, np.ones(2 * S, np.int16))  # a barge-in check while the caller speaks
    mid_word.went_on(2.0)
    assert mid_word.head is None
    off = TurnTranscriber(10.0, None)  # TurnConfig(keep_sentences_after_s=None)
    off.transcribe(stt, np.ones(2 * S, np.int16), pause_key=2.0)
    off.went_on(2.0)
    off.transcribe(stt, np.ones(3 * S, np.int16), pause_key=3.0)
    assert off.head is None and stt.sent[-1] == 3.0


@pytest.mark.parametrize(("gap", "complete", "kept"), [
    (9, 0.9, True),  # 0.29 s, and the end-of-turn model heard a finished sentence
    (5, 0.9, False),  # 0.16 s: a breath
    (9, 0.2, False),  # the model heard the caller mid-sentence: Whisper's full stop is not enough
])
def test_the_call_core_keeps_a_sentence_when_the_caller_went_on_after_a_long_pause_that_ended_it(
        gap: int, complete: float, kept: bool) -> None:
    """Through `CallCore`: speech, a pause of `gap` frames, speech again; the stand-in closes every sentence."""
    from voice.audio import FRAME_S
    from voice.call import events as ce
    from voice.call.core import CallCore
    from voice.call.turns import TurnConfig
    from voice.runtime.session import SessionConfig
    from voice.speech.tts import ClauseChunker

    core = CallCore(SessionConfig(turns=TurnConfig(), speculate=False, preempt=False), ClauseChunker)
    stt = Sentences(said="I want to check my booking.")
    probs = [0.9] * 30 + [0.0] * gap + [0.9] * 20 + [0.0] * 5
    for i, p in enumerate(probs):
        for command in core.handle(ce.CallerFrame(np.ones(512, np.int16), i * FRAME_S, p, 0.0, False)):
            if isinstance(command, ce.Transcribe):
                core.handle(ce.TranscriptReady(command.key, transcript_of(command, stt, ())[0], 0.0))
            elif isinstance(command, ce.ScoreTurnEnd):
                core.handle(ce.TurnEndScored(command.key, complete, 0.0))
    assert (core.turn.heard.head is not None) is kept


@pytest.fixture(scope="module")
def whisper() -> object:
    return STT_ENGINES.load("tiny.en", threads=1)


class Counting:
    def __init__(self, stt: object) -> None:
        self.stt, self.sent = stt, []  # type: ignore[var-annotated]

    def transcribe(self, audio: np.ndarray) -> str:
        self.sent.append(len(audio) / S)
        return self.stt.transcribe(audio)  # type: ignore[attr-defined]


def test_a_real_caller_line_of_two_sentences_is_heard_whole_with_its_second_sentence_transcribed_alone(
        whisper: object) -> None:
    line = load_audio(ROOT / "examples/garage/calls/audio/collect_4712.wav")  # "... on Saturday at 9am? It's Job 4712."
    level = np.abs(line.astype(np.int32))
    frames = level[: len(level) // 512 * 512].reshape(-1, 512).max(axis=1)
    loud = np.flatnonzero(frames > 600)
    gaps = np.flatnonzero(np.diff(loud) >= 4)  # the pause between the sentences: 4 or more quiet frames
    assert len(gaps) >= 1
    pause = (loud[gaps[0]] + 4) * 512  # three quiet frames into it, as the call asks for a transcript
    stt, heard = Counting(whisper), TurnTranscriber(10.0, sentence_done)
    first = heard.transcribe(stt, line[:pause], pause_key=1.0)
    heard.went_on(1.0)
    assert "saturday" in first.lower() and first.rstrip().endswith("?") and heard.head is not None
    whole = heard.transcribe(stt, line, pause_key=2.0)
    assert whole.startswith(first) and "4712" in whole.replace(" ", "")
    assert stt.sent[-1] < len(line) / S - 1.5  # only the audio after the pause was transcribed again
