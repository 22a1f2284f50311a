"""The utterances `scripts/measure_vad.py` measures the VAD on: `audio_fixtures/recordings` (the shared recordings) as
it is, and synthetic quiet, band-limited and 8 kHz μ-law versions of its clean speech, each with where its speech is.

Where the speech is (the reference) comes from the clean source, not from a model: the 32 ms frames whose energy
is within 30 dB of the source's loud frames (and above -60 dBFS). A degraded copy keeps its source's reference,
so a word the VAD no longer hears in the copy still counts as speech that the turn should hold.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voice.audio import FRAME_SAMPLES, SAMPLE_RATE, load_audio, read_wav, to_int16, ulaw_decode, ulaw_encode
from voice.transports.twilio.codec import HalfbandStream

AUDIO = Path(__file__).resolve().parents[1] / "audio_fixtures" / "recordings"  # the project's copy
LEAD_FRAMES = 16  # 0.512 s of silence before each utterance: a caller's line is open before they speak
TAIL_S = 2.5  # silence after it: long enough for any endpointing rule to end the turn
QUIET_DBFS = -30.0  # the active speech level of the quiet copies


@dataclass
class Utterance:
    name: str
    group: str  # speech, telephone, mixes, overlap, quiet, band, phone, noise, noise-phone
    audio: np.ndarray  # 16 kHz int16, lead-in and tail silence included
    speech: np.ndarray  # bool per 32 ms frame of `audio`: where the reference has speech
    text: str | None  # the reference transcript; None: no single one (overlapping speakers, noise)
    narrowband: bool  # the caller's audio was 8 kHz: what a phone line delivers


def speech_mask(samples: np.ndarray) -> np.ndarray:
    """Frames within 30 dB of the loud frames (95th percentile) and above -60 dBFS: where the speech is."""
    x = np.pad(samples.astype(np.float64), (0, -len(samples) % FRAME_SAMPLES)).reshape(-1, FRAME_SAMPLES)
    level = 20 * np.log10(np.sqrt(np.mean(x * x, axis=1)) / 32768 + 1e-12)
    return level >= max(np.percentile(level, 95) - 30.0, -60.0)


def band_limit(samples: np.ndarray, low_hz: float = 300.0, high_hz: float = 3400.0) -> np.ndarray:
    """The telephone band: everything outside `low_hz`..`high_hz` removed (FFT, whole signal)."""
    spectrum = np.fft.rfft(samples.astype(np.float64))
    freqs = np.fft.rfftfreq(len(samples), 1 / SAMPLE_RATE)
    spectrum[(freqs < low_hz) | (freqs > high_hz)] = 0
    return to_int16(np.fft.irfft(spectrum, len(samples)))


def at_level(samples: np.ndarray, dbfs: float) -> np.ndarray:
    """Scaled so the speech frames (the reference) have an RMS of `dbfs`."""
    x = samples.astype(np.float64)
    frames = np.pad(x, (0, -len(x) % FRAME_SAMPLES)).reshape(-1, FRAME_SAMPLES)[speech_mask(samples)]
    current = 20 * np.log10(np.sqrt(np.mean(frames * frames)) / 32768)
    return to_int16(x * 10 ** ((dbfs - current) / 20))


def phone_line(samples: np.ndarray) -> np.ndarray:
    """16 kHz -> 8 kHz μ-law -> 16 kHz, as a Twilio call carries it (`voice.transports.twilio.codec`)."""
    narrow = HalfbandStream(up=False)(samples)
    return HalfbandStream(up=True)(ulaw_decode(ulaw_encode(narrow).tobytes()))


def from_8k(samples8: np.ndarray) -> np.ndarray:
    """An 8 kHz recording as a phone call hands it to the session (the Twilio transport's up-sampler)."""
    return HalfbandStream(up=True)(samples8)


def _placed(samples: np.ndarray, speech: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    tail = int(TAIL_S * SAMPLE_RATE)
    audio = np.concatenate([np.zeros(LEAD_FRAMES * FRAME_SAMPLES, np.int16), samples, np.zeros(tail, np.int16)])
    mask = np.zeros(-(-len(audio) // FRAME_SAMPLES), bool)
    mask[LEAD_FRAMES:LEAD_FRAMES + len(speech)] = speech
    return audio, mask


def _utterance(name: str, group: str, samples: np.ndarray, reference: np.ndarray, text: str | None,
               narrowband: bool = False) -> Utterance:
    speech = speech_mask(reference) if group not in ("noise", "noise-phone") else np.zeros(0, bool)
    audio, mask = _placed(samples, speech[: -(-len(samples) // FRAME_SAMPLES)])
    return Utterance(name, group, audio, mask, text, narrowband)


def _transcripts(root: Path) -> dict[str, str]:
    with (root / "manifest.tsv").open(newline="") as f:
        return {row["path"]: row["transcript"] for row in csv.DictReader(f, delimiter="\t")}


def _load(root: Path, rel: str) -> tuple[np.ndarray, bool]:
    """16 kHz as the session gets it; an 8 kHz file through the phone transport's up-sampler."""
    samples, rate, _ = read_wav(root / rel)
    return (from_8k(samples), True) if rate == 8000 else (load_audio(root / rel), False)


_MIX_SOURCES = {"mixes/arctic_aew_a0001+dishes_5dB.wav": "speech/cmu_arctic_us_aew_a0001.wav",
                "mixes/librivox_0880+bike_5dB.wav": "speech/librivox_0880.wav",
                "mixes/osr34_002+office_10dB_8k.wav": "telephone/osr34_002.wav"}


def corpus(root: Path = AUDIO, groups: set[str] | None = None) -> list[Utterance]:
    """Every utterance of the groups asked for (all by default), in a fixed order."""
    texts, out = _transcripts(root), []

    def want(group: str) -> bool:
        return groups is None or group in groups

    speech = sorted(p.relative_to(root).as_posix() for p in (root / "speech").glob("*.wav"))
    for rel in speech + sorted(p.relative_to(root).as_posix() for p in (root / "telephone").glob("*.wav")):
        group = rel.split("/")[0]
        samples, narrow = _load(root, rel)
        if want(group):
            out.append(_utterance(rel, group, samples, samples, texts[rel], narrow))
        if group != "speech":
            continue
        quiet = at_level(samples, QUIET_DBFS)
        for synthetic, copy, narrowband in (("quiet", quiet, False), ("band", band_limit(samples), False),
                                            ("phone", phone_line(at_level(band_limit(samples), QUIET_DBFS)), True)):
            if want(synthetic):
                out.append(_utterance(f"{synthetic}:{rel}", synthetic, copy, samples, texts[rel], narrowband))
    if want("mixes"):
        for rel, source in _MIX_SOURCES.items():
            samples, narrow = _load(root, rel)
            out.append(_utterance(rel, "mixes", samples, _load(root, source)[0], texts[rel], narrow))
    if want("overlap"):
        a, b = (_load(root, f"overlap/speaker_{s}.wav")[0] for s in "ab")
        for rel in ("overlap/speaker_a.wav", "overlap/speaker_b.wav"):
            samples = _load(root, rel)[0]
            out.append(_utterance(rel, "overlap", samples, samples, texts[rel]))
        mixed = _load(root, "overlap/two_speakers_mixed.wav")[0]
        both = _utterance("overlap/two_speakers_mixed.wav", "overlap", mixed, mixed, None)
        n = len(both.speech)
        both.speech = _placed(mixed, (speech_mask(a) | speech_mask(b)))[1][:n]
        out.append(both)
    for rel in sorted(p.relative_to(root).as_posix() for p in (root / "noise").glob("*.wav")):
        samples = _load(root, rel)[0]
        if want("noise"):
            out.append(_utterance(rel, "noise", samples, samples, None))
        if want("noise-phone"):
            out.append(_utterance(f"phone:{rel}", "noise-phone", phone_line(samples), samples, None, True))
    return out

