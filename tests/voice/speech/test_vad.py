"""voice.speech.vad: Silero VAD v6 streaming on real recordings, state carrying, bad input, long silence."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.paths import RECORDINGS
from voice.audio import FRAME_SAMPLES, SAMPLE_RATE, frames, load_audio
from voice.speech.vad import SileroVAD, silero_model_path


@pytest.fixture(scope="module")
def vad() -> Iterator[SileroVAD]:
    detector = SileroVAD(threshold=0.5)
    yield detector


@pytest.fixture(autouse=True)
def fresh_stream(vad: SileroVAD) -> None:
    vad.reset()


def stream_probs(vad: SileroVAD, samples: np.ndarray) -> np.ndarray:
    return np.array([vad.prob(frame) for frame in frames(samples)])


def test_model_file_comes_from_faster_whisper() -> None:
    path = silero_model_path()
    assert path.name == "silero_vad_v6.onnx" and path.parent.parent.name == "faster_whisper"


def test_speech_region_scores_high_and_leading_silence_low(vad: SileroVAD) -> None:
    probs = stream_probs(vad, load_audio(RECORDINGS / "speech" / "jfk.wav"))
    # jfk.wav: ~0.3 s of room tone, then "And so my fellow Americans" from ~0.35 s to ~2.2 s.
    assert probs[:8].max() < 0.3
    assert probs[12:60].mean() > 0.7 and probs.max() > 0.9


@pytest.mark.parametrize(
    "name", ["speech/goforward.wav", "speech/librivox_0880.wav", "telephone/osr34_001.wav", "overlap/speaker_b.wav"]
)
def test_speech_files_contain_speech(vad: SileroVAD, name: str) -> None:
    probs = vad.probs(load_audio(RECORDINGS / name))
    assert (probs >= vad.threshold).mean() > 0.3 and probs.max() > 0.9


@pytest.mark.parametrize("name", ["noise/bike.wav", "noise/dishes.wav", "noise/office.wav"])
def test_noise_only_files_are_not_speech(vad: SileroVAD, name: str) -> None:
    probs = vad.probs(load_audio(RECORDINGS / name))
    assert (probs >= vad.threshold).mean() < 0.02
    assert np.median(probs) < 0.1


def test_frame_by_frame_equals_one_batched_run_and_is_repeatable(vad: SileroVAD) -> None:
    speech = load_audio(RECORDINGS / "speech" / "forever.wav")
    streamed = stream_probs(vad, speech)
    vad.reset()
    again = stream_probs(vad, speech)
    vad.reset()
    batched = vad.probs(speech)
    assert np.array_equal(streamed, again)
    np.testing.assert_allclose(streamed, batched, atol=1e-6)


def test_state_and_context_are_carried_between_frames(vad: SileroVAD) -> None:
    speech = load_audio(RECORDINGS / "speech" / "forever.wav")
    carried = stream_probs(vad, speech)
    forgetful = []
    for frame in frames(speech):
        vad.reset()  # drop the LSTM state and the 64-sample context before every frame
        forgetful.append(vad.prob(frame))
    assert np.abs(carried - np.array(forgetful)).max() > 0.1


def test_batched_calls_continue_the_stream(vad: SileroVAD) -> None:
    speech = load_audio(RECORDINGS / "speech" / "goforward.wav")[: 40 * FRAME_SAMPLES]
    whole = vad.probs(speech)
    vad.reset()
    halves = np.concatenate([vad.probs(speech[: 17 * FRAME_SAMPLES]), vad.probs(speech[17 * FRAME_SAMPLES :])])
    np.testing.assert_allclose(whole, halves, atol=1e-6)


def test_int16_and_float_frames_agree(vad: SileroVAD) -> None:
    frame = next(frames(load_audio(RECORDINGS / "speech" / "goforward.wav")[8000:]))
    as_int = vad.prob(frame)
    vad.reset()
    assert vad.prob(frame.astype(np.float32) / 32768.0) == pytest.approx(as_int, abs=1e-6)


@pytest.mark.parametrize("length", [0, 160, 320, 511, 513, 1024])
def test_wrong_frame_length_is_a_clear_value_error(vad: SileroVAD, length: int) -> None:
    with pytest.raises(ValueError, match=r"exactly 512 samples .*got " + str(length)):
        vad.prob(np.zeros(length, dtype=np.int16))


def test_threshold_must_be_a_probability() -> None:
    with pytest.raises(ValueError, match="threshold"):
        SileroVAD(threshold=1.5)


def test_ten_minutes_of_silence_is_fast_and_has_no_speech(vad: SileroVAD) -> None:
    silence = np.zeros(10 * 60 * SAMPLE_RATE, dtype=np.int16)
    started = time.perf_counter()
    probs = vad.probs(silence)
    elapsed = time.perf_counter() - started
    assert len(probs) == 10 * 60 * SAMPLE_RATE // FRAME_SAMPLES
    assert probs.max() < 0.1
    assert elapsed < 10.0, f"10 min of silence took {elapsed:.1f} s"


def test_clipped_and_quiet_speech_are_still_speech(vad: SileroVAD) -> None:
    speech = load_audio(RECORDINGS / "speech" / "librivox_0880.wav").astype(np.float64)
    clipped = np.clip(speech * 8, -32768, 32767).astype(np.int16)
    assert (vad.probs(clipped) >= vad.threshold).mean() > 0.3
    vad.reset()
    quiet = (speech / 10).astype(np.int16)  # -20 dB
    assert (vad.probs(quiet) >= vad.threshold).mean() > 0.3


def test_speech_ratio_leaves_the_stream_state_alone(vad: SileroVAD) -> None:
    speech = load_audio(RECORDINGS / "speech" / "goforward.wav")
    first = stream_probs(vad, speech[: 10 * FRAME_SAMPLES])
    assert vad.speech_ratio(speech) > 0.3
    rest = stream_probs(vad, speech[10 * FRAME_SAMPLES :])
    vad.reset()
    np.testing.assert_allclose(np.concatenate([first, rest]), stream_probs(vad, speech), atol=1e-6)


def test_per_frame_cost(vad: SileroVAD, capsys: pytest.CaptureFixture[str]) -> None:
    speech_frames = list(frames(load_audio(RECORDINGS / "speech" / "jfk.wav")))
    started = time.perf_counter()
    for frame in speech_frames:
        vad.prob(frame)
    per_frame_ms = (time.perf_counter() - started) / len(speech_frames) * 1000
    with capsys.disabled():
        print(f"\n[vad] Silero v6 streaming: {per_frame_ms:.3f} ms per 32 ms frame (1 thread)")
    assert per_frame_ms < 5.0


def test_how_long_a_silence_ends_the_turn_depends_on_how_the_words_end() -> None:
    from voice.call.turns import TurnConfig, needed_silence

    cfg = TurnConfig()
    assert needed_silence("Where is my order?", cfg) == cfg.endpoint_silence_s
    assert needed_silence("My order number is 4567", cfg) == cfg.open_silence_s
    for unfinished in ["so what i wanted", "God bless him,", "I want to", "refund it for", "um", "I'd like the..."]:
        assert needed_silence(unfinished, cfg) == cfg.hold_silence_s, unfinished


# ---- Silero's own export and its 8 kHz mode (scripts/measure_vad.py measures them) -------------------------------


def own_export() -> Path:
    from voice.speech.vad import silero_full_model_path

    try:
        return silero_full_model_path()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))


def test_the_8khz_mode_needs_silero_own_export_and_says_so() -> None:
    with pytest.raises(ValueError, match=r"16 kHz only.*livekit-plugins-silero"):
        SileroVAD(model_path=silero_model_path(), sample_rate=8000)
    with pytest.raises(ValueError, match="16000 or 8000"):
        SileroVAD(sample_rate=44100)


def test_the_rate_halver_keeps_the_telephone_band_and_drops_what_8khz_cannot_hold() -> None:
    from voice.speech.vad import _Halver

    t = np.arange(40 * FRAME_SAMPLES) / SAMPLE_RATE
    halver = _Halver()
    for hz, kept in ((1000, True), (3000, True), (6000, False)):
        halver.reset()
        tone = (0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32)
        out = np.concatenate([halver(f) for f in tone.reshape(-1, FRAME_SAMPLES)])
        assert len(out) == len(tone) // 2
        rms = float(np.sqrt(np.mean(out[FRAME_SAMPLES:] ** 2)))  # past the filter's start-up
        assert (rms > 0.3) if kept else (rms < 0.01), (hz, rms)


@pytest.mark.parametrize("rate", [16000, 8000])
def test_silero_own_export_streams_and_tells_speech_from_noise(rate: int) -> None:
    vad = SileroVAD(model_path=own_export(), sample_rate=rate)
    speech = load_audio(RECORDINGS / "telephone" / "osr34_001.wav")
    probs = vad.probs(speech)
    vad.reset()
    np.testing.assert_allclose(probs, [vad.prob(f) for f in frames(speech)], atol=1e-6)  # probs == prob per frame
    assert (probs >= 0.5).mean() > 0.5
    vad.reset()
    assert (vad.probs(load_audio(RECORDINGS / "noise" / "office.wav")) >= 0.5).mean() < 0.02
