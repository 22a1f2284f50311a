"""Make the synthetic caller lines of the example agents' call scripts from their manifests (16 kHz mono WAVs).

    python examples/caller_lines.py [--all] [examples/hotel/calls/audio/manifest.tsv ...]

Each `examples/*/calls/audio/manifest.tsv` row (path, seconds, rate, transcript, source, licence) whose source
starts with `SYNTHETIC: piper` (the joe voice of voice/speech/tts.py) or `SYNTHETIC: espeak-ng -v VOICE -s WPM
[-g GAP]` is spoken from its transcript (any espeak-ng voice: the Spanish pharmacy's callers, whom Piper cannot
speak, are `es`, `es-419` and their variants such as `es-419+m2`); " ... " in a transcript is a pause of `GAP_S`
(an id dictated digit by digit). Piper's sentences are joined with `SENTENCE_GAP_S` of silence: its own pause
(~0.7 s after a question) is longer than a caller who goes on talking leaves. Files that exist are kept unless
`--all`; the seconds column is filled in. Real recordings (any other source) are never touched.
"""

from __future__ import annotations

import csv
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from voice.audio import SAMPLE_RATE, load_audio, write_wav

HERE = Path(__file__).resolve().parent
GAP_S = 0.35
SENTENCE_GAP_S = 0.3
MARGIN_S = 0.03  # kept around the loud part when trimming: soft onsets and endings
PIPER = "SYNTHETIC: piper"
ESPEAK = "SYNTHETIC: espeak-ng"
FIELDS = ("path", "seconds", "rate", "transcript", "source", "licence")


def espeak(text: str, voice: str = "en-us", wpm: int = 150, word_gap: int = 0) -> np.ndarray:
    """`word_gap`: espeak-ng's -g, extra pause between words in 10 ms units (Whisper hears its Spanish better)."""
    gap = ["-g", str(word_gap)] if word_gap else []
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "line.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(wpm), *gap, "-w", str(wav), text], check=True)
        return load_audio(wav)


def trim(audio: np.ndarray, floor: float = 150.0) -> np.ndarray:
    """Without leading and trailing silence (10 ms frames quieter than `floor` on average, breaths included), so
    parts join with the gap asked for."""
    step = SAMPLE_RATE // 100
    frames = np.abs(audio[: len(audio) // step * step].astype(np.float64)).reshape(-1, step).mean(axis=1)
    loud = np.flatnonzero(frames > floor)
    if not len(loud):
        return audio
    margin = int(MARGIN_S * SAMPLE_RATE)
    return audio[max(0, loud[0] * step - margin): (loud[-1] + 1) * step + margin]


def join(parts: list[np.ndarray], gap_s: float) -> np.ndarray:
    gap = np.zeros(int(gap_s * SAMPLE_RATE), np.int16)
    return np.concatenate([x for audio in parts for x in (trim(audio), gap)][:-1])


class Voices:
    """The engines, loaded when first needed."""

    def __init__(self) -> None:
        self._piper = None

    def speak(self, text: str, source: str) -> np.ndarray:
        if source.startswith(PIPER):
            if self._piper is None:
                from voice.speech.tts import PiperTTS

                self._piper = PiperTTS(threads=2)
            return join(list(self._piper.synthesize_sentences(text)), SENTENCE_GAP_S)
        args = source.removeprefix(ESPEAK).split(",")[0].split()  # "-v en-us -s 150", "-v es-419+m2 -s 140 -g 3"
        opts = dict(zip(args[::2], args[1::2], strict=False))
        return espeak(text, opts.get("-v", "en-us"), int(opts.get("-s", 150)), int(opts.get("-g", 0)))


def line_audio(voices: Voices, transcript: str, source: str) -> np.ndarray:
    parts = [p.strip() for p in transcript.split(" ... ") if p.strip()]
    pad = np.zeros(int(0.15 * SAMPLE_RATE), np.int16)
    return np.concatenate([pad, join([voices.speak(p, source) for p in parts], GAP_S), pad])


def make_manifest(manifest: Path, voices: Voices, every: bool = False) -> list[Path]:
    with manifest.open(newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    made = []
    for row in rows:
        wav = manifest.parent / row["path"]
        if not row["source"].startswith((PIPER, ESPEAK)):
            continue
        if every or not wav.exists():
            write_wav(wav, line_audio(voices, row["transcript"], row["source"]))
            made.append(wav)
        row["seconds"], row["rate"] = f"{len(load_audio(wav)) / SAMPLE_RATE:.3f}", str(SAMPLE_RATE)
    with manifest.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS, delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: row.get(k, "") for k in FIELDS} for row in rows)
    return made


def main(argv: list[str]) -> int:
    every = "--all" in argv
    manifests = [Path(a) for a in argv if a != "--all"] or sorted(HERE.glob("*/calls/audio/manifest.tsv"))
    voices = Voices()
    for manifest in manifests:
        for wav in make_manifest(manifest, voices, every):
            print(wav)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
