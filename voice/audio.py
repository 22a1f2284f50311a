"""Audio format helpers: the pipeline's internal format is 16 kHz mono int16.

Conversion (downmix, resampling, G.711 μ-law) happens once, at the transport edge; everything
inside `voice/` can then assume `SAMPLE_RATE` mono int16 frames of `FRAME_SAMPLES`.
"""

from __future__ import annotations

import io
import math
import struct
import wave
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# The one definition of the internal frame: import these, never write 512 / 16000 / 0.032 again.
SAMPLE_RATE = 16000
FRAME_MS = 32
FRAME_SAMPLES = SAMPLE_RATE * FRAME_MS // 1000  # 512: the frame size Silero VAD v6 expects
FRAME_S = FRAME_SAMPLES / SAMPLE_RATE  # 0.032: one frame on the session's clock

_WAVE_FORMAT_PCM = 0x0001
_WAVE_FORMAT_EXTENSIBLE = 0xFFFE
_INT16_MIN, _INT16_MAX = -32768, 32767


class AudioFormatError(ValueError):
    """A file or buffer is not audio this pipeline can read; the message says what is wrong."""


@dataclass(frozen=True, eq=False)
class AudioFrame:
    """A chunk of mono int16 audio with the time (seconds since stream start) of its first sample."""

    samples: np.ndarray
    sample_rate: int = SAMPLE_RATE
    timestamp_s: float = 0.0

    def __post_init__(self) -> None:
        samples = np.ascontiguousarray(self.samples, dtype=np.int16).reshape(-1)
        samples.setflags(write=False)  # frozen means the audio too, not just the attribute
        object.__setattr__(self, "samples", samples)

    @classmethod
    def from_pcm(cls, pcm: bytes, sample_rate: int = SAMPLE_RATE, timestamp_s: float = 0.0) -> AudioFrame:
        """Wrap little-endian 16-bit PCM bytes (as transports deliver them)."""
        if len(pcm) % 2:
            raise AudioFormatError(f"PCM16 buffer has an odd byte count ({len(pcm)})")
        return cls(np.frombuffer(pcm, dtype="<i2"), sample_rate, timestamp_s)

    @property
    def pcm(self) -> bytes:
        return self.samples.astype("<i2").tobytes()

    @property
    def duration_s(self) -> float:
        return len(self.samples) / self.sample_rate


def _parse_fmt_chunk(body: bytes, where: str) -> tuple[int, int, int]:
    """Return (channels, rate, bits) from a fmt chunk, rejecting anything that is not PCM16."""
    if len(body) < 16:
        raise AudioFormatError(f"{where}: fmt chunk is truncated ({len(body)} bytes)")
    audio_format, channels, rate, _, _, bits = struct.unpack("<HHIIHH", body[:16])
    if audio_format == _WAVE_FORMAT_EXTENSIBLE and len(body) >= 26:
        audio_format = struct.unpack("<H", body[24:26])[0]  # first two bytes of the subformat GUID
    if audio_format != _WAVE_FORMAT_PCM:
        raise AudioFormatError(f"{where}: WAV format tag {audio_format:#06x} is not integer PCM")
    if bits != 16:
        raise AudioFormatError(f"{where}: {bits}-bit PCM is not supported; only 16-bit PCM")
    if channels < 1 or rate < 1:
        raise AudioFormatError(f"{where}: invalid header (channels={channels}, rate={rate})")
    return channels, rate, bits


def parse_wav_bytes(data: bytes, where: str = "WAV data") -> tuple[np.ndarray, int, int]:
    """Decode a RIFF/WAVE PCM16 buffer; see `read_wav`."""
    if not data:
        raise AudioFormatError(f"{where}: empty (0 bytes)")
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise AudioFormatError(f"{where}: not a RIFF/WAVE file (starts with {data[:12]!r})")
    fmt: tuple[int, int, int] | None = None
    offset = 12
    while offset + 8 <= len(data):
        chunk_id, size = data[offset : offset + 4], struct.unpack("<I", data[offset + 4 : offset + 8])[0]
        body_start = offset + 8
        if chunk_id == b"fmt ":
            fmt = _parse_fmt_chunk(data[body_start : body_start + size], where)
        elif chunk_id == b"data":
            if fmt is None:
                raise AudioFormatError(f"{where}: data chunk comes before the fmt chunk")
            channels, rate, _ = fmt
            # Streaming writers (espeak-ng --stdout, live recorders) leave the size too big: take what is there.
            body = data[body_start : body_start + size]
            usable = len(body) - len(body) % (2 * channels)
            if usable == 0:
                raise AudioFormatError(f"{where}: contains no audio samples")
            return np.frombuffer(body[:usable], dtype="<i2").astype(np.int16), rate, channels
        offset = body_start + size + (size & 1)  # chunks are word-aligned
    if fmt is None:
        raise AudioFormatError(f"{where}: no fmt chunk (corrupt or truncated header)")
    raise AudioFormatError(f"{where}: no data chunk (corrupt or truncated file)")


def read_wav(path: str | Path) -> tuple[np.ndarray, int, int]:
    """Read a PCM16 WAV file: (interleaved int16 samples, sample rate, channel count).

    Raises AudioFormatError for empty, corrupt, or non-16-bit-PCM files.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise AudioFormatError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    return parse_wav_bytes(data, where=str(path))


def wav_bytes(samples: np.ndarray, sample_rate: int = SAMPLE_RATE, channels: int = 1) -> bytes:
    """Encode int16 samples (interleaved or shaped (n, channels)) as a PCM16 WAV file in memory."""
    pcm = as_int16(samples).astype("<i2").tobytes()
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(channels)
        writer.setsampwidth(2)
        writer.setframerate(sample_rate)
        writer.writeframes(pcm)
    return buffer.getvalue()


def write_wav(path: str | Path, samples: np.ndarray, sample_rate: int = SAMPLE_RATE, channels: int = 1) -> None:
    """Write int16 samples as a PCM16 WAV file."""
    Path(path).write_bytes(wav_bytes(samples, sample_rate, channels))


def to_int16(samples: np.ndarray) -> np.ndarray:
    """Round and saturate to int16: out-of-range values clip instead of wrapping around."""
    return np.clip(np.rint(samples), _INT16_MIN, _INT16_MAX).astype(np.int16)


def as_int16(samples: np.ndarray) -> np.ndarray:
    """Flat int16 view of PCM; other numeric types are taken at int16 scale and saturated."""
    array = np.asarray(samples)
    if array.dtype == np.int16:
        return array.reshape(-1)
    return to_int16(array.astype(np.float64)).reshape(-1)


def downmix(samples: np.ndarray, channels: int) -> np.ndarray:
    """Average interleaved (or (n, channels)) int16 audio down to mono int16."""
    array = np.asarray(samples)
    if channels == 1:
        return as_int16(array)
    if array.size % channels:
        raise AudioFormatError(f"{array.size} samples do not divide into {channels} channels")
    return to_int16(array.reshape(-1, channels).astype(np.float64).mean(axis=1))


def _kaiser_sinc_resample(signal: np.ndarray, src_rate: int, dst_rate: int) -> np.ndarray:
    """Windowed-sinc polyphase resampler (numpy only), used when soxr is not installed."""
    ratio_gcd = math.gcd(src_rate, dst_rate)
    up, down = dst_rate // ratio_gcd, src_rate // ratio_gcd
    cutoff = min(1.0, dst_rate / src_rate) * 0.95  # leave a transition band below the new Nyquist
    half_taps = math.ceil(16 / cutoff)
    taps = np.arange(-half_taps + 1, half_taps + 1)
    phases = np.arange(up) / up
    offsets = taps[None, :] - phases[:, None]  # distance from each output instant to input samples
    window = np.i0(8.0 * np.sqrt(np.clip(1 - (offsets / half_taps) ** 2, 0, None))) / np.i0(8.0)
    bank = cutoff * np.sinc(cutoff * offsets) * window
    out_length = (len(signal) * up + down // 2) // down  # rounded, like soxr
    padded = np.concatenate([np.zeros(half_taps), signal, np.zeros(half_taps + 1)])
    output = np.empty(out_length)
    block = 16384  # bounds memory: block x taps floats at a time
    for start in range(0, out_length, block):
        positions = np.arange(start, min(start + block, out_length)) * down
        base, phase = positions // up, positions % up
        gathered = padded[base[:, None] + taps[None, :] + half_taps]
        output[start : start + len(positions)] = np.einsum("ij,ij->i", gathered, bank[phase])
    return output


def resample(samples: np.ndarray, src_rate: int, dst_rate: int) -> np.ndarray:
    """Resample mono int16 audio; uses soxr (high quality) when installed, else a numpy fallback."""
    mono = as_int16(samples)
    if src_rate <= 0 or dst_rate <= 0:
        raise ValueError(f"sample rates must be positive (got {src_rate} -> {dst_rate})")
    if src_rate == dst_rate or mono.size == 0:
        return mono.copy()
    try:
        import soxr
    except ImportError:
        return to_int16(_kaiser_sinc_resample(mono.astype(np.float64), src_rate, dst_rate))
    return to_int16(soxr.resample(mono.astype(np.float32), src_rate, dst_rate, quality="HQ"))


def to_internal(samples: np.ndarray, sample_rate: int, channels: int = 1) -> np.ndarray:
    """Convert any PCM16 audio to the internal format: mono, `SAMPLE_RATE`, int16."""
    return resample(downmix(samples, channels), sample_rate, SAMPLE_RATE)


def load_audio(path: str | Path) -> np.ndarray:
    """Read a WAV file and convert it to the internal format."""
    samples, rate, channels = read_wav(path)
    return to_internal(samples, rate, channels)


def ulaw_encode(samples: np.ndarray) -> np.ndarray:
    """G.711 μ-law encode int16 PCM to uint8 codes (the reference 14-bit algorithm, as in audioop)."""
    pcm14 = as_int16(samples).astype(np.int32) >> 2
    negative = pcm14 < 0
    magnitude = np.minimum(np.where(negative, -pcm14, pcm14), 8159) + 33  # 33 = bias 0x84 >> 2
    segment = np.floor(np.log2(magnitude)).astype(np.int32) - 5  # magnitude >= 33, so segment >= 0
    mantissa = (magnitude >> (segment + 1)) & 0x0F
    code = np.where(segment >= 8, 0x7F, (np.minimum(segment, 7) << 4) | mantissa)
    return (code ^ np.where(negative, 0x7F, 0xFF)).astype(np.uint8)


def ulaw_decode(codes: np.ndarray | bytes) -> np.ndarray:
    """G.711 μ-law decode uint8 codes (or raw bytes) to int16 PCM."""
    raw = np.frombuffer(codes, dtype=np.uint8) if isinstance(codes, bytes | bytearray) else codes
    inverted = ~np.asarray(raw, dtype=np.uint8).astype(np.int32) & 0xFF
    magnitude = (((inverted & 0x0F) << 3) + 0x84) << ((inverted & 0x70) >> 4)
    return np.where(inverted & 0x80, 0x84 - magnitude, magnitude - 0x84).astype(np.int16)


def frames(
    samples: np.ndarray, frame_ms: int = FRAME_MS, sample_rate: int = SAMPLE_RATE, pad_last: bool = True
) -> Iterator[np.ndarray]:
    """Split mono audio into fixed-size frames (512 samples by default); the tail is zero-padded
    (or dropped with pad_last=False) so every frame has the exact length a VAD expects."""
    frame_length = sample_rate * frame_ms // 1000
    mono = as_int16(samples)
    for start in range(0, len(mono), frame_length):
        frame = mono[start : start + frame_length]
        if len(frame) < frame_length:
            if not pad_last:
                return
            frame = np.concatenate([frame, np.zeros(frame_length - len(frame), dtype=np.int16)])
        yield frame


class FrameAssembler:
    """Re-cuts arbitrarily sized chunks (e.g. 20 ms transport packets) into fixed-size frames."""

    def __init__(self, frame_samples: int = FRAME_SAMPLES) -> None:
        self.frame_samples = frame_samples
        self._pending = np.zeros(0, dtype=np.int16)

    def push(self, chunk: np.ndarray) -> list[np.ndarray]:
        """Add samples; return every complete frame now available, oldest first."""
        self._pending = np.concatenate([self._pending, as_int16(chunk)])
        complete = len(self._pending) // self.frame_samples * self.frame_samples
        ready = [self._pending[i : i + self.frame_samples] for i in range(0, complete, self.frame_samples)]
        self._pending = self._pending[complete:]
        return ready

    @property
    def pending_samples(self) -> int:
        return len(self._pending)
