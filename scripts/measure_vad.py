"""How much of each utterance the caller's turn holds, on real and degraded recordings: before and after the VAD
hysteresis and pre-roll (`voice.call.turns.TurnConfig`), with Silero at 16 kHz or in its native 8 kHz mode.

    python scripts/measure_vad.py [--stt tiny.en|none] [--configs before,after,...] [--groups speech,phone,...]

Each utterance (`scripts/_vad_corpus.py`: `audio_fixtures/recordings` as it is, and quiet, band-limited and
8 kHz μ-law copies of its clean speech) is played through the real call core (`voice.call.core.CallCore`) frame by
frame with Silero's probabilities; the agent never answers. Per group:

- `covered`: the share of the reference's speech frames inside the audio of a finished turn (words cut out lower
  it), mean over the utterances; `whole`: utterances with at least 95 % covered;
- `lag`: median ms from the reference's last speech frame to where the VAD put the end of the last turn's speech
  (endpointing waits its silence after that, so a later end is a slower reply);
- `turns`: caller turns per utterance (a sentence split by a pause counts 2); `split`: utterances in more than one;
- `starts`: speech starts on the noise-only files (false starts), per minute of noise;
- `WER`: word error rate of the turns' transcripts joined, against the reference (Whisper tiny.en, beam 3, as
  served). With `--stt none` every turn is heard as "Done." (turns end after 0.45 s of silence: the rule that
  splits most), and there is no WER.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _vad_corpus import Utterance, corpus

from voice.audio import FRAME_S, FRAME_SAMPLES, SAMPLE_RATE, frames
from voice.bench.wer import WordErrors, word_errors
from voice.call import events as ce
from voice.call.core import CallCore
from voice.call.state import SessionConfig
from voice.call.turns import TurnConfig
from voice.runtime.drivers import transcript_of
from voice.speech.tts import ClauseChunker
from voice.speech.vad import SileroVAD, silero_full_model_path
from voice.trace import TraceKind

FASTER_WHISPER, OWN_EXPORT, OWN_EXPORT_8K = "v6", "v6.2", "v6.2-8k"  # which Silero file, and its mode


@dataclass(frozen=True)
class Setup:
    turns: TurnConfig
    vad: str = FASTER_WHISPER  # v6.2-8k: Silero's own export in its 8 kHz mode for 8 kHz callers, 16 kHz for others


CONFIGS = {
    "before": Setup(TurnConfig(stop_threshold=0.5, preroll_s=0.0)),  # one threshold, the onset frame only
    "hysteresis": Setup(TurnConfig(preroll_s=0.0)),
    "preroll": Setup(TurnConfig(stop_threshold=0.5)),  # the pre-roll alone
    "after": Setup(TurnConfig()),
    "after-v6.2": Setup(TurnConfig(), OWN_EXPORT),
    "after-v6.2-8k": Setup(TurnConfig(), OWN_EXPORT_8K),
}


@dataclass
class Heard:
    """What the call core made of one utterance."""

    spans: list[tuple[float, float]] = field(default_factory=list)  # each finished turn's audio, call time
    texts: list[str] = field(default_factory=list)
    starts: int = 0
    speech_end: float | None = None  # the end of the last turn's last speech frame
    endpointing_ms: list[float] = field(default_factory=list)  # per finished turn: the silence that ended it


class CachedSTT:
    """Whisper, remembering the text of audio it has already heard (the same turn recurs across setups)."""

    def __init__(self, stt: object | None) -> None:
        self.stt, self.cache = stt, {}  # type: ignore[var-annotated]

    def transcribe(self, samples: np.ndarray) -> str:
        if self.stt is None:
            return "Done."
        key = hashlib.sha1(np.ascontiguousarray(samples).tobytes()).hexdigest()
        if key not in self.cache:
            self.cache[key] = self.stt.transcribe(samples)  # type: ignore[attr-defined]
        return self.cache[key]


def setup(name: str) -> Setup:
    """A named setup, or one spelled out: `stop0.3-pre0.2` (stop threshold, pre-roll seconds), then `-v6.2` or
    `-v6.2-8k` for Silero's own export (at 16 kHz, or in the 8 kHz mode for 8 kHz callers)."""
    if name in CONFIGS:
        return CONFIGS[name]
    head, _, vad = name.partition("-v")
    parts = {p.rstrip("0123456789."): p[len(p.rstrip("0123456789.")):] for p in head.split("-")}
    turns = TurnConfig(stop_threshold=float(parts.get("stop", 0.35)), preroll_s=float(parts.get("pre", 0.1)))
    return Setup(turns, f"v{vad}" if vad else FASTER_WHISPER)


def hear(audio: np.ndarray, probs: np.ndarray, turns: TurnConfig, stt: CachedSTT,
         turn_model: object | None = None) -> Heard:
    """Play `audio` through a call core with these VAD probabilities; the agent never answers. `turn_model`: an
    end-of-turn model (`voice.speech.engines.EndOfTurn`) for the core's `ScoreTurnEnd`; None: the words alone."""
    core = CallCore(SessionConfig(turns=turns, speculate=False, preempt=False), ClauseChunker)
    heard, asked = Heard(), {}  # asked: transcript key -> (start, end) of the audio transcribed for it

    def carry_out(commands: list[ce.CallCommand]) -> None:
        for command in commands:
            if isinstance(command, ce.Transcribe):
                end = core.now + FRAME_S
                asked[command.key] = (end - len(command.audio) / SAMPLE_RATE, end)
                carry_out(core.handle(ce.TranscriptReady(command.key, transcript_of(command, stt, ())[0], 0.0)))
            elif isinstance(command, ce.ScoreTurnEnd) and turn_model is not None:
                complete = turn_model.complete(command.audio)  # type: ignore[attr-defined]
                carry_out(core.handle(ce.TurnEndScored(command.key, complete, 0.0)))
            elif isinstance(command, ce.StartRun):
                carry_out(core.handle(ce.RunEnded(None)))
            elif isinstance(command, ce.Traced):
                entry = command.entry
                if entry["kind"] == TraceKind.CALLER_SPEECH_STARTED:
                    heard.starts += 1
                elif entry["kind"] == TraceKind.CALLER_TURN_ENDED and entry["text"]:
                    key = min(asked, key=lambda k: abs(k - entry["speech_end_s"]))
                    heard.spans.append(asked[key])
                    heard.texts.append(entry["text"])
                    heard.speech_end = entry["speech_end_s"]
                    heard.endpointing_ms.append(entry["latency_ms"]["endpointing"])

    for i, frame in enumerate(frames(audio)):
        carry_out(core.handle(ce.CallerFrame(frame, i * FRAME_S, float(probs[i]), 0.0)))
    return heard


def covered(utterance: Utterance, heard: Heard) -> float:
    centres = (np.flatnonzero(utterance.speech) + 0.5) * FRAME_S
    if centres.size == 0:
        return 1.0
    inside = np.zeros(centres.size, bool)
    for start, end in heard.spans:
        inside |= (centres >= start) & (centres < end)
    return float(inside.mean())


class Probabilities:
    """Silero's per-frame probabilities for each utterance and VAD, computed once (a fresh stream each)."""

    def __init__(self, own_export: str | None) -> None:
        self.own_export, self.vads, self.cache = own_export, {}, {}  # type: ignore[var-annotated]

    def _vad(self, kind: str) -> SileroVAD:
        if kind not in self.vads:
            path = None if kind == FASTER_WHISPER else (self.own_export or silero_full_model_path())
            self.vads[kind] = SileroVAD(model_path=path, sample_rate=8000 if kind == OWN_EXPORT_8K else 16000)
        return self.vads[kind]

    def of(self, utterance: Utterance, vad: str) -> np.ndarray:
        if vad == OWN_EXPORT_8K and not utterance.narrowband:
            vad = OWN_EXPORT  # the 8 kHz mode is for callers on an 8 kHz line
        if (utterance.name, vad) not in self.cache:
            model = self._vad(vad)
            model.reset()
            self.cache[(utterance.name, vad)] = model.probs(utterance.audio)
        return self.cache[(utterance.name, vad)]


@dataclass
class Row:
    covered: list[float] = field(default_factory=list)
    turns: list[int] = field(default_factory=list)
    lags: list[float] = field(default_factory=list)
    starts: int = 0
    noise_s: float = 0.0
    errors: WordErrors | None = None

    def add(self, utterance: Utterance, heard: Heard) -> None:
        if utterance.group.startswith("noise"):
            self.starts += heard.starts
            self.noise_s += len(utterance.audio) / SAMPLE_RATE
            return
        self.covered.append(covered(utterance, heard))
        self.turns.append(len(heard.texts))
        if heard.speech_end is not None and utterance.speech.any():
            self.lags.append(heard.speech_end - (np.flatnonzero(utterance.speech)[-1] + 1) * FRAME_S)
        if utterance.text is not None:
            found = word_errors(utterance.text, " ".join(heard.texts))
            self.errors = found if self.errors is None else self.errors + found

    def cells(self, with_wer: bool) -> str:
        if not self.covered:
            blank = f"{'':>7} {'':>5} {'':>5} {'':>5} {'':>5}"
            return f"{blank} {self.starts / self.noise_s * 60:>6.2f}" + (" " * 7 if with_wer else "")
        n, turns = len(self.covered), np.array(self.turns)
        whole = sum(c >= 0.95 for c in self.covered)
        wer = "" if not with_wer or self.errors is None else f"{self.errors.wer * 100:6.1f}%"
        split = int((turns > 1).sum())
        lag = f"{np.median(self.lags) * 1000:5.0f}" if self.lags else f"{'':>5}"
        share = f"{np.mean(self.covered) * 100:6.1f}%"
        return f"{share} {whole:>2}/{n:<2} {turns.mean():5.2f} {split:>5} {lag} {'':>6} {wer}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stt", default="tiny.en", help="tiny.en (default), base, or none (no WER; fast)")
    parser.add_argument("--configs", default=",".join(CONFIGS),
                        help=f"comma-separated: {', '.join(CONFIGS)}, or spelled out as stop0.3-pre0.2[-8k]")
    parser.add_argument("--groups", default=None, help="comma-separated groups (default: all)")
    parser.add_argument("--silero-export", default=None,
                        help="Silero's own silero_vad.onnx for the v6.2 setups (default: livekit-plugins-silero's)")
    parser.add_argument("--details", action="store_true", help="a line per utterance and setup as well")
    args = parser.parse_args()
    setups = {name: setup(name) for name in args.configs.split(",")}
    utterances = corpus(groups=set(args.groups.split(",")) if args.groups else None)
    whisper = None
    if args.stt != "none":
        from voice.speech.engines import STT_ENGINES
        whisper = STT_ENGINES.load(args.stt, threads=1)
    stt = CachedSTT(whisper)
    probabilities = Probabilities(args.silero_export)
    groups = list(dict.fromkeys(u.group for u in utterances))
    rows = {(name, g): Row() for name in setups for g in groups}
    for utterance in utterances:
        for name, chosen in setups.items():
            heard = hear(utterance.audio, probabilities.of(utterance, chosen.vad), chosen.turns, stt)
            rows[(name, utterance.group)].add(utterance, heard)
            if args.details and not utterance.group.startswith("noise"):
                print(f"  {utterance.name:48s} {name:14s} covered {covered(utterance, heard) * 100:5.1f}%"
                      f" turns {len(heard.texts)} {' | '.join(heard.texts)[:80]}", flush=True)
    with_wer = whisper is not None
    print(f"{'group':12s} {'setup':14s} {'covered':>7} {'whole':>5} {'turns':>5} {'split':>5} {'lag':>5} {'starts':>6}"
          + (f" {'WER':>6}" if with_wer else ""))
    for g in groups:
        for name in setups:
            print(f"{g:12s} {name:14s} {rows[(name, g)].cells(with_wer)}")
    print(f"\n{len(utterances)} utterances; frames of {FRAME_SAMPLES} samples; starts per minute of noise;"
          f" stt={args.stt}")


if __name__ == "__main__":
    main()
