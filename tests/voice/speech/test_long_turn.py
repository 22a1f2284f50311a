"""Issue 11, item 5: a caller turn has a bounded length, and is transcribed window by window, so the speech-to-text
work per second of caller audio stays flat however long they speak — and the reply comes right after they stop.

The monologues are real recordings (audio_fixtures/recordings) joined with short breaths, heard by the real
Silero VAD, on the virtual clock. Speech-to-text is a counting stand-in: what is measured is how many calls the
session makes and how much audio it sends, per second of speech."""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest

from loop import Agent, LoopConfig, ScriptedTurn
from tests.fakes import ToneTTS, WordChunker
from voice.audio import SAMPLE_RATE, read_wav
from voice.call.turns import TurnConfig, max_turn_seconds
from voice.hosting.registry import LoopingScript
from voice.runtime.session import CallSession, SessionConfig
from voice.speech.incremental_stt import TurnTranscriber, quiet_cuts
from voice.speech.vad import SileroVAD
from voice.testing.scripted_call import FIXTURES

SPEECH = FIXTURES / "recordings" / "speech"
CLIPS = ["cmu_arctic_us_aew_a0001", "cmu_arctic_us_aew_a0002", "cmu_arctic_us_aew_a0003", "cmu_arctic_us_axb_a0004",
         "cmu_arctic_us_axb_a0005", "cmu_arctic_us_axb_a0006", "arctic_a0010", "cards_001", "cards_002", "cards_003"]
BREATH_S = 0.25


@cache
def trimmed(name: str) -> np.ndarray:
    """One recording without its leading and trailing silence."""
    audio, rate, _ = read_wav(SPEECH / f"{name}.wav")
    assert rate == SAMPLE_RATE
    loud = np.flatnonzero(np.abs(audio.astype(np.int32)) > 600)
    return audio[loud[0]: loud[-1] + 1]


def monologue(seconds: float) -> tuple[np.ndarray, float]:
    """Recordings one after another with a breath between them, until `seconds` of speech; then 3 s of silence."""
    parts, total, i = [], 0.0, 0
    while total < seconds:
        clip = trimmed(CLIPS[i % len(CLIPS)])
        parts += [clip, np.zeros(int(BREATH_S * SAMPLE_RATE), np.int16)]
        total += len(clip) / SAMPLE_RATE + BREATH_S
        i += 1
    parts.append(np.zeros(3 * SAMPLE_RATE, np.int16))
    return np.concatenate(parts), total


@dataclass
class CountingSTT:
    """Two words a second of audio sent, never a finished sentence (so breaths do not end the turn); counts
    calls and audio seconds."""

    calls: int = 0
    audio_s: float = 0.0
    longest_s: float = 0.0

    def transcribe(self, audio: np.ndarray) -> str:
        seconds = len(audio) / SAMPLE_RATE
        self.calls, self.audio_s, self.longest_s = self.calls + 1, self.audio_s + seconds, max(self.longest_s, seconds)
        return " ".join(["word"] * max(1, round(seconds * 2))) + ","  # unfinished: only 1.2 s of silence ends it


def talk(seconds: float, turns: TurnConfig) -> tuple[CountingSTT, CallSession, float]:
    audio, speech_s = monologue(seconds)
    stt = CountingSTT()
    model = LoopingScript([ScriptedTurn(text="I heard all of that. How can I help?")])
    agent = Agent(model=model, config=LoopConfig.profile("voice"))
    session = CallSession(agent, SileroVAD(), stt, ToneTTS(), WordChunker, SessionConfig(turns=turns, preempt=False))
    asyncio.run(session.run_file(audio))
    return stt, session, speech_s


def test_stt_work_per_second_of_speech_stays_flat_however_long_the_caller_talks() -> None:
    bounded = TurnConfig(max_turn_s=30.0, stt_window_s=10.0)
    short, _, short_s = talk(20, bounded)
    long, session, long_s = talk(90, bounded)
    print(f"\n{short_s:.0f} s: {short.calls} calls, {short.audio_s:.0f} s of audio; "
          f"{long_s:.0f} s: {long.calls} calls, {long.audio_s:.0f} s of audio (longest {long.longest_s:.1f} s)")
    assert long.calls / long_s <= 1.3 * short.calls / short_s  # calls per second of speech: flat
    assert long.audio_s / long_s <= 1.3 * short.audio_s / short_s  # audio transcribed per second of speech: flat
    assert long.longest_s <= 10.0 + 1e-6  # no request is ever longer than one window
    capped = [e for e in session.trace if e["kind"] == "caller_turn_capped"]
    assert len(capped) >= 2  # 90 s of speech is at least three turns of at most 30 s
    frame = 0.032
    assert all(e["speech_s"] <= 30.0 + frame + 1e-6 for e in capped)
    assert all(t["speech_s"] <= 30.0 + frame + 1e-6 for t in session.trace if t["kind"] == "caller_turn_ended")


def test_without_windows_and_a_length_limit_the_same_measure_grows_with_the_turn() -> None:
    """The control: the measure above does see quadratic work (the whole turn sent again for each partial)."""
    unbounded = TurnConfig(max_turn_s=1e6, stt_window_s=1e6)
    short, _, short_s = talk(20, unbounded)
    long, _, long_s = talk(90, unbounded)
    assert long.audio_s / long_s >= 2.5 * short.audio_s / short_s


def test_the_reply_comes_promptly_after_a_long_monologue_ends() -> None:
    _, session, speech_s = talk(75, TurnConfig(max_turn_s=30.0))
    last = session.turns[-1]
    assert last.first_audio_s is not None and last.speech_end_s >= speech_s - 1.0
    # on call time: the silence that ends unfinished words, and a frame or two; no transcription backlog
    assert last.first_audio_s - last.speech_end_s <= TurnConfig().hold_silence_s + 0.1
    assert last.outcome == "COMPLETED"
    assert sum(len(t.user_text.split()) for t in session.turns) >= 2 * (speech_s - 2 * 30)  # nothing was lost


def test_windows_of_a_growing_turn_never_move_so_only_the_newest_is_transcribed_again() -> None:
    audio, _ = monologue(40)
    spans = quiet_cuts(audio, 10.0)
    assert all(end - start <= 10 * SAMPLE_RATE for start, end in spans) and spans[-1][1] == len(audio)
    for length in range(5 * SAMPLE_RATE, len(audio), SAMPLE_RATE // 2):
        finished = quiet_cuts(audio[:length], 10.0)[:-1]
        assert finished == spans[: len(finished)]  # a cut depends only on the audio before it
    stt, heard = CountingSTT(), TurnTranscriber(10.0)
    heard.transcribe(stt, audio[: 35 * SAMPLE_RATE])
    calls, sent = stt.calls, stt.audio_s
    assert calls == len(quiet_cuts(audio[: 35 * SAMPLE_RATE], 10.0))
    heard.transcribe(stt, audio[: 36 * SAMPLE_RATE])
    # the open window again — and, when it was just cut, its final span once: never the finished windows
    assert stt.calls - calls <= 2 and stt.audio_s - sent <= 2 * 10.0


def test_a_turn_length_must_be_sensible() -> None:
    assert max_turn_seconds("45") == 45.0
    for bad in ("0.5", "soon", "inf"):
        with pytest.raises(argparse.ArgumentTypeError):
            max_turn_seconds(bad)
    with pytest.raises(ValueError):
        TurnConfig(max_turn_s=0.5)
    with pytest.raises(ValueError):
        TurnConfig(stt_window_s=1.0)
