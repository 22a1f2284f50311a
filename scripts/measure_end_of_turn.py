"""How soon a finished turn ends, and how often a caller who only paused is cut off: the transcript rules alone
against the rules with Smart Turn (`voice.speech.end_of_turn`), through the real call core.

    python scripts/measure_end_of_turn.py [--setups words,smart,...] [--groups speech,paused,...] [--details]

Each utterance is played through `voice.call.core.CallCore` frame by frame with Silero's probabilities, Whisper
tiny.en transcribing (beam 3, as served) and, for the Smart Turn setups, the model scoring each pause. Groups:
`scripts/_vad_corpus.py`'s recordings (speech, telephone, mixes, phone: 8 kHz μ-law copies of clean speech),
`synthetic` (every espeak-ng/Piper line the fixtures and example agents' calls play), and `paused`: each clean and
telephone recording with a silence spliced into its quietest gap between 30 % and 70 % of its speech, so the caller
stops mid-sentence for `--pause-s` and goes on. Per group and setup:

- `ends`: median and p95 ms of silence that ended the last turn (what endpointing adds to every answer);
- `cut`: utterances heard as more than one turn (a caller cut off in a pause); on `paused` that is the
  false cut-off count the issue asks about, elsewhere a pause the recording itself has;
- `semantic`: the share of finished turns that ended on the model's word.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

from _vad_corpus import LEAD_FRAMES, Utterance, _placed, corpus, speech_mask
from measure_vad import CachedSTT, Probabilities, hear

from voice.audio import FRAME_SAMPLES, SAMPLE_RATE, load_audio
from voice.call.turns import TurnConfig

SETUPS = {"words": TurnConfig(semantic_silence_s=None)}  # before: the transcript rules alone


def setup(name: str) -> TurnConfig:
    """`words`, or `smart` with optional `-<silence s>`, `-p<threshold>`, `-e<early_stt_s>` (transcription starts),
    `-t<score_turn_s>` (the model is asked) and `-w<endpoint_silence_s>` (a finished sentence's silence): smart
    (0.2 s, p >= 0.5), smart-0.25, smart-p0.8, smart-e0.09-t0.15, smart-w0.42."""
    if name in SETUPS:
        return SETUPS[name]
    parts = name.split("-")
    if parts[0] != "smart":
        raise SystemExit(f"unknown setup {name!r}: words, smart, smart-0.25, smart-p0.8, ...")
    fields: dict[str, float] = {}
    named = {"p": "semantic_threshold", "e": "early_stt_s", "t": "score_turn_s", "w": "endpoint_silence_s"}
    for part in parts[1:]:
        fields[named.get(part[0], "semantic_silence_s")] = float(part.lstrip("petw"))
    return TurnConfig(**fields)


class CachedTurnModel:
    """Smart Turn, remembering its verdict on audio it has already scored (the same pause recurs across setups)."""

    def __init__(self) -> None:
        from voice.speech.end_of_turn import SmartTurn

        self.model, self.cache = SmartTurn(), {}  # type: ignore[var-annotated]

    def complete(self, audio: np.ndarray) -> float:
        key = hashlib.sha1(np.ascontiguousarray(audio).tobytes()).hexdigest()
        if key not in self.cache:
            self.cache[key] = self.model.complete(audio)
        return self.cache[key]


def with_pause(u: Utterance, pause_s: float) -> Utterance | None:
    """`u` with `pause_s` of silence spliced into its quietest 96 ms between 30 % and 70 % of its speech."""
    frames = np.flatnonzero(u.speech)
    if frames.size < 20:
        return None
    lo, hi = frames[0] + int(0.3 * (frames[-1] - frames[0])), frames[0] + int(0.7 * (frames[-1] - frames[0]))
    x = u.audio[: len(u.speech) * FRAME_SAMPLES].astype(np.float64)
    energy = np.pad(x, (0, -len(x) % FRAME_SAMPLES)).reshape(-1, FRAME_SAMPLES).std(axis=1)
    gap = lo + int(np.argmin([energy[i:i + 3].sum() for i in range(lo, hi)])) + 1  # the middle of 3 quiet frames
    body = np.trim_zeros(u.audio[LEAD_FRAMES * FRAME_SAMPLES:], "b")  # the recording without lead-in and tail
    cut = (gap - LEAD_FRAMES) * FRAME_SAMPLES
    spliced = np.concatenate([body[:cut], np.zeros(int(pause_s * SAMPLE_RATE), np.int16), body[cut:]])
    audio, mask = _placed(spliced, speech_mask(spliced))
    return Utterance(f"paused:{u.name}", "paused", audio, mask, u.text, u.narrowband)


def synthetic_lines() -> list[Utterance]:
    """Every synthetic caller line the fixtures and the example agents' calls play, each on its own."""
    paths = sorted((ROOT / "audio_fixtures" / "synthetic").glob("*.wav"))
    paths += sorted(ROOT.glob("examples/*/calls/audio/*.wav"))
    out = []
    for path in paths:
        samples = load_audio(path)
        audio, mask = _placed(samples, speech_mask(samples))
        out.append(Utterance(str(path.relative_to(ROOT)), "synthetic", audio, mask, None, False))
    return out


@dataclass
class Row:
    ends: list[float] = field(default_factory=list)
    cut: int = 0
    n: int = 0
    semantic: int = 0
    turns: int = 0

    def cells(self) -> str:
        if not self.n:
            return ""
        p50, p95 = (np.percentile(self.ends, q) if self.ends else float("nan") for q in (50, 95))
        share = self.semantic / self.turns * 100 if self.turns else 0.0
        return f"{self.n:>4} {p50:7.0f} {p95:7.0f} {self.cut:>4} {share:8.0f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--setups", default="words,smart", help="comma-separated: words, smart, smart-0.25-p0.8, ...")
    parser.add_argument("--groups", default="speech,telephone,mixes,phone,synthetic,paused")
    parser.add_argument("--pause-s", type=float, default=0.5, help="the pause spliced into the `paused` group")
    parser.add_argument("--details", action="store_true", help="a line per utterance and setup as well")
    args = parser.parse_args()
    groups = args.groups.split(",")
    utterances = corpus(groups={g for g in groups if g not in ("synthetic", "paused")} | {"speech", "telephone"})
    if "paused" in groups:
        clean = [u for u in utterances if u.group in ("speech", "telephone")]
        utterances += [p for u in clean if (p := with_pause(u, args.pause_s)) is not None]
    utterances = [u for u in utterances if u.group in groups]
    if "synthetic" in groups:
        utterances += synthetic_lines()
    from voice.speech.engines import STT_ENGINES

    stt, model, vad = CachedSTT(STT_ENGINES.load("tiny.en", threads=1)), CachedTurnModel(), Probabilities(None)
    rows = {(s, g): Row() for s in args.setups.split(",") for g in groups}
    for i, u in enumerate(utterances):
        print(f"\r[{i + 1}/{len(utterances)}] {u.name[:60]:60s}", end="", file=sys.stderr, flush=True)
        for name in args.setups.split(","):
            turns = setup(name)
            heard = hear(u.audio, vad.of(u, "v6"), turns, stt, model if turns.semantic_silence_s else None)
            row = rows[(name, u.group)]
            row.n += 1
            row.cut += len(heard.texts) > 1
            row.turns += len(heard.endpointing_ms)
            row.semantic += sum(ms < turns.endpoint_silence_s * 1000 for ms in heard.endpointing_ms)
            if heard.endpointing_ms:
                row.ends.append(heard.endpointing_ms[-1])
            if args.details:
                print(f"\n  {u.name:52s} {name:11s} ends {heard.endpointing_ms} | {' | '.join(heard.texts)[:70]}",
                      end="")
    print(file=sys.stderr)
    print(f"\n{'group':10s} {'setup':11s} {'n':>4} {'end p50':>7} {'end p95':>7} {'cut':>4} {'semantic':>9}")
    for g in groups:
        for name in args.setups.split(","):
            print(f"{g:10s} {name:11s} {rows[(name, g)].cells()}")
    print(f"\nends: ms of silence that ended the last turn; cut: utterances split into turns; pause {args.pause_s} s")


if __name__ == "__main__":
    main()
