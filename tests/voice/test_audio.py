"""voice.audio: WAV I/O with clear errors, downmix, resampling (soxr and the numpy fallback), μ-law, framing."""

from __future__ import annotations

import struct
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from tests.paths import RECORDINGS
from voice import audio
from voice.audio import (
    FRAME_SAMPLES,
    SAMPLE_RATE,
    AudioFormatError,
    AudioFrame,
    FrameAssembler,
    frames,
    read_wav,
    resample,
    to_internal,
    ulaw_decode,
    ulaw_encode,
    wav_bytes,
    write_wav,
)


def sine(rate: int, seconds: float = 1.0, freq: float = 1000.0, amplitude: float = 10000.0) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return np.rint(amplitude * np.sin(2 * np.pi * freq * t)).astype(np.int16)


def peak_frequency(samples: np.ndarray, rate: int) -> float:
    middle = samples[200:-200].astype(np.float64)
    spectrum = np.abs(np.fft.rfft(middle * np.hanning(len(middle))))
    return float(np.argmax(spectrum) * rate / len(middle))


def rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(samples.astype(np.float64) ** 2)))


def riff(fmt_body: bytes, data: bytes, data_size: int | None = None) -> bytes:
    fmt_chunk = b"fmt " + struct.pack("<I", len(fmt_body)) + fmt_body
    data_chunk = b"data" + struct.pack("<I", len(data) if data_size is None else data_size) + data
    body = b"WAVE" + fmt_chunk + data_chunk
    return b"RIFF" + struct.pack("<I", len(body)) + body


def pcm_fmt(tag: int = 1, channels: int = 1, rate: int = 16000, bits: int = 16) -> bytes:
    block = channels * bits // 8
    return struct.pack("<HHIIHH", tag, channels, rate, rate * block, block, bits)


# --- reading and writing ---------------------------------------------------------------------------


def test_read_real_recordings_match_manifest() -> None:
    samples, rate, channels = read_wav(RECORDINGS / "speech" / "jfk.wav")
    assert (rate, channels, samples.dtype) == (16000, 1, np.int16)
    assert abs(len(samples) / rate - 11.0) < 0.01
    phone, phone_rate, _ = read_wav(RECORDINGS / "telephone" / "osr34_001.wav")
    assert phone_rate == 8000 and abs(len(phone) / phone_rate - 3.132) < 0.01


def test_write_then_read_round_trips_mono_and_stereo(tmp_path: Path) -> None:
    mono = sine(16000, 0.1)
    write_wav(tmp_path / "mono.wav", mono)
    back, rate, channels = read_wav(tmp_path / "mono.wav")
    assert (rate, channels) == (16000, 1) and np.array_equal(back, mono)
    stereo = np.stack([mono, -mono], axis=1)
    write_wav(tmp_path / "stereo.wav", stereo, sample_rate=44100, channels=2)
    back, rate, channels = read_wav(tmp_path / "stereo.wav")
    assert (rate, channels) == (44100, 2) and np.array_equal(back, stereo.reshape(-1))


def test_write_wav_saturates_float_input_instead_of_wrapping(tmp_path: Path) -> None:
    write_wav(tmp_path / "loud.wav", np.array([40000.0, -40000.0, 1.4]))
    back, _, _ = read_wav(tmp_path / "loud.wav")
    assert back.tolist() == [32767, -32768, 1]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (b"this is not audio at all, just text" * 3, "not a RIFF/WAVE"),
        (b"RIFF\x10\x00\x00\x00WAVEfmt ", "no fmt chunk"),
        (riff(pcm_fmt(tag=3, bits=32), b"\x00" * 16), "not integer PCM"),
        (riff(pcm_fmt(bits=8), b"\x80" * 16), "8-bit PCM is not supported"),
        (riff(pcm_fmt(bits=24), b"\x00" * 18), "24-bit PCM is not supported"),
        (riff(pcm_fmt(), b""), "no audio samples"),
        (riff(pcm_fmt(), b"\x01"), "no audio samples"),
        (b"RIFF\x24\x00\x00\x00WAVE" + b"data" + struct.pack("<I", 4) + b"\x00" * 4, "before the fmt chunk"),
        (b"RIFF\x24\x00\x00\x00WAVE" + b"fmt " + struct.pack("<I", 16) + pcm_fmt(), "no data chunk"),
    ],
)
def test_bad_wav_files_raise_clear_audio_format_errors(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.wav"
    path.write_bytes(content)
    with pytest.raises(AudioFormatError, match=message) as raised:
        read_wav(path)
    assert str(path) in str(raised.value)  # the message names the file


def test_missing_file_is_an_audio_format_error(tmp_path: Path) -> None:
    with pytest.raises(AudioFormatError, match="cannot read"):
        read_wav(tmp_path / "nowhere.wav")


def test_extensible_pcm_and_streaming_sizes_are_accepted() -> None:
    samples = sine(16000, 0.01)
    extensible = pcm_fmt(tag=0xFFFE) + struct.pack("<HHI", 22, 16, 4) + struct.pack("<H", 1) + b"\x00" * 14
    decoded, rate, _ = audio.parse_wav_bytes(riff(extensible, samples.tobytes()))
    assert rate == 16000 and np.array_equal(decoded, samples)
    # espeak-ng --stdout and live recorders leave 0xFFFFFFFF as the data size: read what is there.
    decoded, _, _ = audio.parse_wav_bytes(riff(pcm_fmt(), samples.tobytes(), data_size=0xFFFFFFFF))
    assert np.array_equal(decoded, samples)


# --- conversion ------------------------------------------------------------------------------------


def test_to_internal_downmixes_stereo_and_resamples() -> None:
    left, right = sine(44100, 0.5), sine(44100, 0.5, amplitude=2000)
    interleaved = np.stack([left, right], axis=1).reshape(-1)
    converted = to_internal(interleaved, 44100, channels=2)
    assert converted.dtype == np.int16 and abs(len(converted) - 8000) <= 1
    assert abs(rms(converted) - rms((left.astype(float) + right) / 2)) / rms(left) < 0.02
    assert abs(peak_frequency(converted, SAMPLE_RATE) - 1000) < 3


def test_to_internal_converts_telephone_recording() -> None:
    samples, rate, channels = read_wav(RECORDINGS / "telephone" / "osr34_002.wav")
    converted = to_internal(samples, rate, channels)
    assert abs(len(converted) - 2 * len(samples)) <= 1


def test_downmix_rejects_samples_that_do_not_divide_into_channels() -> None:
    with pytest.raises(AudioFormatError, match="channels"):
        to_internal(np.zeros(5, dtype=np.int16), 16000, channels=2)


def resample_fallback(samples: np.ndarray, src: int, dst: int) -> np.ndarray:
    return audio.to_int16(audio._kaiser_sinc_resample(samples.astype(np.float64), src, dst))


@pytest.mark.parametrize("source_rate", [8000, 22050, 44100, 48000])
@pytest.mark.parametrize("resampler", [resample, resample_fallback], ids=["default", "numpy-fallback"])
def test_resampled_sine_keeps_frequency_amplitude_and_length(source_rate: int, resampler) -> None:
    tone = sine(source_rate, seconds=1.0, amplitude=10000)
    out = resampler(tone, source_rate, SAMPLE_RATE)
    assert abs(len(out) - round(len(tone) * SAMPLE_RATE / source_rate)) <= 1
    assert abs(peak_frequency(out, SAMPLE_RATE) - 1000.0) < 2.0
    assert abs(rms(out[100:-100]) - 10000 / np.sqrt(2)) < 0.01 * 10000
    ideal = 10000 * np.sin(2 * np.pi * 1000 * np.arange(len(out)) / SAMPLE_RATE)
    assert np.max(np.abs(out[200:-200] - ideal[200:-200])) < 20  # ~-60 dB error away from the edges


def test_resample_uses_numpy_fallback_when_soxr_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "soxr", None)  # makes `import soxr` raise ImportError
    out = resample(sine(8000), 8000, SAMPLE_RATE)
    assert abs(peak_frequency(out, SAMPLE_RATE) - 1000.0) < 2.0 and len(out) == 16000


def test_resampling_clipped_audio_saturates_instead_of_wrapping() -> None:
    overdriven = 4 * 32767 * np.sin(2 * np.pi * 1000 * np.arange(8000) / 8000)
    clipped = np.clip(np.rint(overdriven), -32768, 32767).astype(np.int16)  # a square-ish clipped tone
    for resampler in (resample, resample_fallback):
        out = resampler(clipped, 8000, SAMPLE_RATE).astype(np.int32)
        # Ringing overshoots full scale; a wrap-around would flip the sign of a whole plateau.
        upsampled_sign = np.sign(np.sin(2 * np.pi * 1000 * np.arange(len(out)) / SAMPLE_RATE))
        plateau = np.abs(np.sin(2 * np.pi * 1000 * np.arange(len(out)) / SAMPLE_RATE)) > 0.5
        assert np.all(np.sign(out[plateau][20:-20]) == upsampled_sign[plateau][20:-20])


def test_empty_audio_passes_through_conversion() -> None:
    empty = np.zeros(0, dtype=np.int16)
    assert len(to_internal(empty, 8000)) == 0
    assert len(resample(empty, 48000, 16000)) == 0
    assert list(frames(empty)) == []


def test_resample_rejects_nonpositive_rates() -> None:
    with pytest.raises(ValueError, match="positive"):
        resample(np.ones(10, dtype=np.int16), 0, 16000)


# --- μ-law -----------------------------------------------------------------------------------------


def test_ulaw_known_values() -> None:
    codes = ulaw_encode(np.array([0, -1, 32767, -32768, 1000, -1000, 8, -9], dtype=np.int16))
    assert codes.tolist() == [0xFF, 0x7E, 0x80, 0x00, 0xCE, 0x4E, 0xFE, 0x7D]
    decoded = ulaw_decode(np.array([0xFF, 0x7F, 0x80, 0x00, 0xCE, 0x4E, 0xF0, 0x70], dtype=np.uint8))
    assert decoded.tolist() == [0, 0, 32124, -32124, 988, -988, 120, -120]
    assert ulaw_decode(bytes([0xFF, 0x80])).tolist() == [0, 32124]


def test_ulaw_matches_the_reference_g711_over_every_input() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        audioop = pytest.importorskip("audioop", reason="audioop (reference G.711) was removed in Python 3.13")
    every_sample = np.arange(-32768, 32768, dtype=np.int16)
    reference = np.frombuffer(audioop.lin2ulaw(every_sample.tobytes(), 2), dtype=np.uint8)
    assert np.array_equal(ulaw_encode(every_sample), reference)
    every_code = np.arange(256, dtype=np.uint8)
    reference_pcm = np.frombuffer(audioop.ulaw2lin(every_code.tobytes(), 2), dtype=np.int16)
    assert np.array_equal(ulaw_decode(every_code), reference_pcm)


def test_ulaw_round_trip_error_is_bounded() -> None:
    every_sample = np.arange(-32768, 32768, dtype=np.int16)
    magnitude = np.abs(every_sample.astype(np.int64))
    error = np.abs(ulaw_decode(ulaw_encode(every_sample)).astype(np.int64) - every_sample)
    in_range = magnitude <= 32124
    # Logarithmic quantisation: error grows with level, about 3 % of it at most.
    assert np.all(error[in_range] <= 8 + magnitude[in_range] * 0.04)
    assert np.all(error[~in_range] <= 32768 - 32124)  # beyond the top code the signal is clipped
    codes = np.arange(256, dtype=np.uint8)
    assert np.array_equal(ulaw_encode(ulaw_decode(codes)) & 0xFF, np.where(codes == 0x7F, 0xFF, codes))


# --- framing ---------------------------------------------------------------------------------------


def test_frames_are_512_samples_with_zero_padded_tail() -> None:
    samples = np.arange(1300, dtype=np.int16)
    chunks = list(frames(samples))
    assert [len(c) for c in chunks] == [512, 512, 512] and FRAME_SAMPLES == 512
    assert np.array_equal(chunks[2][: 1300 - 1024], samples[1024:]) and not chunks[2][1300 - 1024 :].any()
    assert len(list(frames(samples, pad_last=False))) == 2
    assert len(next(frames(samples, frame_ms=20))) == 320


def test_frame_assembler_recuts_transport_packets() -> None:
    samples = np.arange(5000, dtype=np.int16)
    assembler = FrameAssembler()
    out = [frame for start in range(0, 5000, 320) for frame in assembler.push(samples[start : start + 320])]
    assert len(out) == 9 and assembler.pending_samples == 5000 - 9 * 512
    assert np.array_equal(np.concatenate(out), samples[: 9 * 512])


def test_audio_frame_is_frozen_and_round_trips_pcm_bytes() -> None:
    frame = AudioFrame.from_pcm(sine(16000, 0.032).tobytes(), timestamp_s=1.5)
    assert len(frame.samples) == 512 and frame.duration_s == pytest.approx(0.032)
    assert AudioFrame.from_pcm(frame.pcm).samples.tolist() == frame.samples.tolist()
    with pytest.raises(ValueError):
        frame.samples[0] = 1
    with pytest.raises(AudioFormatError, match="odd"):
        AudioFrame.from_pcm(b"\x00\x01\x02")


def test_wav_bytes_parse_back() -> None:
    samples = sine(8000, 0.05)
    decoded, rate, channels = audio.parse_wav_bytes(wav_bytes(samples, 8000))
    assert (rate, channels) == (8000, 1) and np.array_equal(decoded, samples)
