"""Speech start and end with hysteresis (`voice.call.turns.TurnDetector`) and the turn's pre-roll (`voice.call.core`):
scripted VAD probabilities, then a real band-limited, quiet recording through a phone line that stays one turn."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from tests.paths import RECORDINGS
from voice.audio import FRAME_S, FRAME_SAMPLES, SAMPLE_RATE, frames, load_audio, to_int16, ulaw_decode, ulaw_encode
from voice.call import events as ce
from voice.call.core import CallCore
from voice.call.state import SessionConfig
from voice.call.turns import TurnConfig, TurnDetector
from voice.speech.tts import ClauseChunker
from voice.speech.vad import SileroVAD
from voice.trace import TraceKind
from voice.transports.twilio.codec import HalfbandStream


def feed(detector: TurnDetector, probs: list[float], start: int = 0) -> list[int]:
    """Frames (by index) at which speech started."""
    return [i for i, p in enumerate(probs, start) if detector.update(p, i * FRAME_S, FRAME_S)]


def test_speech_starts_only_at_the_start_threshold() -> None:
    detector = TurnDetector(TurnConfig())
    assert feed(detector, [0.45] * 20) == [] and not detector.in_turn  # above the stop threshold is not enough
    assert feed(detector, [0.1, 0.5, 0.45, 0.6, 0.7, 0.2], start=20) == [24]  # two frames at 0.5 or more in a row
    assert detector.onset_s == pytest.approx(23 * FRAME_S)


def test_speech_goes_on_through_frames_between_the_thresholds() -> None:
    detector = TurnDetector(TurnConfig())
    feed(detector, [0.9, 0.9] + [0.4] * 10 + [0.3] * 5)
    assert detector.in_turn
    assert detector.last_speech_s == pytest.approx(12 * FRAME_S)  # the 0.4 frames were speech, the 0.3 ones not
    assert detector.silence_s(17 * FRAME_S) == pytest.approx(5 * FRAME_S)


def test_a_stop_threshold_equal_to_the_start_is_a_single_threshold() -> None:
    detector = TurnDetector(TurnConfig(stop_threshold=0.5))
    feed(detector, [0.9, 0.9] + [0.4] * 10)
    assert detector.last_speech_s == pytest.approx(2 * FRAME_S)


def test_a_new_turn_needs_the_start_threshold_again() -> None:
    detector = TurnDetector(TurnConfig())
    feed(detector, [0.9, 0.9, 0.4])
    detector.end_turn()
    assert feed(detector, [0.4] * 10, start=3) == [] and not detector.in_turn


def test_the_stop_threshold_defaults_to_0_15_below_the_start_and_is_never_above_it() -> None:
    assert TurnConfig().speech_stop == pytest.approx(0.35)
    assert TurnConfig(threshold=0.7).speech_stop == pytest.approx(0.55)
    assert TurnConfig(threshold=0.2).speech_stop == pytest.approx(0.1)  # never 0: silence must be possible
    assert TurnConfig(stop_threshold=0.2).speech_stop == 0.2
    with pytest.raises(ValidationError, match="stop_threshold"):
        TurnConfig(threshold=0.4, stop_threshold=0.5)


# ---- the call core: what audio a turn holds ------------------------------------------------------------------


def play(frames_pcm: list[np.ndarray], probs: list[float], turns: TurnConfig) -> tuple[list[np.ndarray], list[dict]]:
    """Run a call core over scripted frames (every turn heard as "Done."): the audio of every transcription it
    asked for, and its trace."""
    core = CallCore(SessionConfig(turns=turns, speculate=False, preempt=False), ClauseChunker)
    asked: list[np.ndarray] = []
    trace: list[dict] = []

    def carry_out(commands: list[ce.CallCommand]) -> None:
        for command in commands:
            if isinstance(command, ce.Transcribe):
                asked.append(command.audio)
                carry_out(core.handle(ce.TranscriptReady(command.key, "Done.", 0.0)))
            elif isinstance(command, ce.StartRun):
                carry_out(core.handle(ce.RunEnded(None)))
            elif isinstance(command, ce.Traced):
                trace.append(command.entry)

    for i, (pcm, prob) in enumerate(zip(frames_pcm, probs, strict=True)):
        carry_out(core.handle(ce.CallerFrame(pcm, i * FRAME_S, prob, 0.0)))
    return asked, trace


def numbered(count: int) -> list[np.ndarray]:
    """Frames whose samples all hold the frame's index: where a turn's audio starts is readable from it."""
    return [np.full(FRAME_SAMPLES, i, np.int16) for i in range(count)]


@pytest.mark.parametrize(("preroll_s", "first_frame"), [(0.0, 20), (0.3, 10), (0.1, 16), (2.0, 0)])
def test_a_turn_keeps_the_pre_roll_before_its_onset(preroll_s: float, first_frame: int) -> None:
    probs = [0.0] * 20 + [0.9] * 20 + [0.0] * 40  # onset at frame 20; 0.3 s of pre-roll is 10 frames (9.4 rounded up)
    asked, _ = play(numbered(80), probs, TurnConfig(preroll_s=preroll_s))
    assert asked and all(int(audio[0]) == first_frame for audio in asked)  # 2 s reaches back to the call's start


def test_a_turn_capped_mid_speech_does_not_give_its_last_words_to_the_next() -> None:
    probs = [0.0] * 5 + [0.9] * 100 + [0.0] * 60
    asked, trace = play(numbered(165), probs, TurnConfig(max_turn_s=2.0))
    assert any(e["kind"] == TraceKind.CALLER_TURN_CAPPED for e in trace)
    first, second = asked[0], asked[-1]
    assert int(second[0]) > int(first[-1]), "the next turn starts after the capped one's audio ends"


# ---- real audio ------------------------------------------------------------------------------------------------


def phone_copy(samples: np.ndarray, dbfs: float = -30.0) -> np.ndarray:
    """Band-limited to 300-3400 Hz, at `dbfs` while speaking, then over an 8 kHz μ-law line and back to 16 kHz."""
    spectrum = np.fft.rfft(samples.astype(np.float64))
    freqs = np.fft.rfftfreq(len(samples), 1 / SAMPLE_RATE)
    spectrum[(freqs < 300) | (freqs > 3400)] = 0
    narrow = np.fft.irfft(spectrum, len(samples))
    loud = speech_frames(samples)
    level = np.sqrt(np.mean(np.square(framed(narrow)[loud]))) / 32768
    narrow = to_int16(narrow * 10 ** (dbfs / 20) / level)
    down = HalfbandStream(up=False)(narrow)
    return HalfbandStream(up=True)(ulaw_decode(ulaw_encode(down).tobytes()))


def framed(samples: np.ndarray) -> np.ndarray:
    return np.pad(samples.astype(np.float64), (0, -len(samples) % FRAME_SAMPLES)).reshape(-1, FRAME_SAMPLES)


def speech_frames(samples: np.ndarray) -> np.ndarray:
    """Where the clean recording has speech: frames within 30 dB of its loud ones."""
    level = 20 * np.log10(np.sqrt(np.mean(np.square(framed(samples)), axis=1)) / 32768 + 1e-12)
    return level >= max(np.percentile(level, 95) - 30.0, -60.0)


def turn_coverage(audio: np.ndarray, speech: np.ndarray, turns: TurnConfig) -> tuple[float, int]:
    """Share of the speech frames inside the audio the call core transcribed, and how many turns it heard. The
    frames carry their index in the last sample (inaudible), so where each transcribed span began is readable."""
    pcm = [frame.copy() for frame in frames(audio)]
    for i, frame in enumerate(pcm):
        frame[-1] = i
    probs = [float(p) for p in SileroVAD().probs(audio)]  # of the true audio
    asked, trace = play(pcm, probs, turns)
    inside = np.zeros(len(pcm), bool)
    for span in asked:
        first = int(span[FRAME_SAMPLES - 1])
        inside[first:first + len(span) // FRAME_SAMPLES] = True
    reference = np.zeros(len(pcm), bool)
    reference[LEAD:LEAD + len(speech)] = speech
    return float(inside[reference].mean()), sum(e["kind"] == TraceKind.CALLER_TURN_ENDED for e in trace)


LEAD = 16  # frames of silence before the caller speaks


def test_quiet_band_limited_speech_over_a_phone_line_stays_one_whole_turn() -> None:
    clean = load_audio(RECORDINGS / "speech" / "cmu_arctic_us_aew_a0001.wav")  # "Author of the danger trail, ..."
    silence = np.zeros(LEAD * FRAME_SAMPLES, np.int16)
    audio = np.concatenate([silence, phone_copy(clean), np.zeros(2 * SAMPLE_RATE, np.int16)])
    covered, turns = turn_coverage(audio, speech_frames(clean), TurnConfig())
    assert turns == 1 and covered >= 0.95, (covered, turns)
    single_threshold = TurnConfig(stop_threshold=0.5, preroll_s=0.0)  # what the detector did before
    assert turn_coverage(audio, speech_frames(clean), single_threshold)[0] < 0.9
