"""Ids and names heard as said: dictated ids, declared vocabulary, and what the hints cost elsewhere.

    nice -n 5 .venv/bin/python scripts/bench_stt_hints.py [--stt tiny.en] [--parts ids,vocab,recordings,noise]

- ids: `audio_fixtures/synthetic/ids` (Piper and espeak-ng saying ids digit by digit, with pauses, "oh", pairs, at
  8 kHz...): an id is right when the transcript, joined as the session joins it (`voice/speech/caller_digits.py`), holds
  that one number. Without and with the digit-by-digit reading (`voice/speech/_dictated_digits.py`), and with it under a
  vocabulary. Then at declared lengths (`voice/speech/_id_length.py`): each id heard with its own length declared
  (ids right), and with only a length one off declared (a right reading must stay right).
- vocab: `audio_fixtures/synthetic/vocab` (dish, street, staff, car and room names): WER of the sentences and the
  declared words heard, without and with the vocabulary of the agent that would take such a call.
- recordings: WER of audio_fixtures/recordings (or --recordings DIR with the same manifest: clean, telephone,
  noisy sets) with no vocabulary, with each example agent's (declared words + enum values,
  `voice.speech.vocabulary.agent_vocabulary`) and with each of the agents above; and how many transcripts hold a
  vocabulary word that the reference does not (a word heard that was never said).
- noise: its noise/ under each vocabulary: every transcript must be empty.
"""

from __future__ import annotations

import argparse
import csv
import inspect
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from voice.audio import load_audio  # noqa: E402
from voice.bench.wer import WordErrors, normalize_words, word_errors  # noqa: E402
from voice.speech.caller_digits import join_spoken_digits  # noqa: E402
from voice.speech.stt import WhisperSTT  # noqa: E402

FIXTURES = ROOT / "audio_fixtures"
RECORDINGS = FIXTURES / "recordings"  # real recordings: clean, telephone, noisy, noise only (its manifest.tsv)
SETS = ("speech", "telephone", "mixes")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# what agents taking such calls would declare (`vocabulary:`), enum values included
AGENTS: dict[str, tuple[str, ...]] = {
    "pizzeria": ("Margherita", "Quattro Formaggi", "Calzone", "Diavola", "Capricciosa", "nduja", "tiramisu",
                 "panna cotta", "Prosciutto e Funghi", "Wickham Road", "Coldharbour Lane", "Abbeville Road",
                 "Lavender Hill", "Acre Lane", "Brixton", "small", "medium", "large"),
    "clinic": ("Siobhan", "Niamh", "Padraig", "Doctor Okonkwo", "Doctor Nakamura", *WEEKDAYS),
    "garage_hotel": ("Vauxhall Corsa", "MOT", "Ford Fiesta", "brake pads", "Harbour Suite", "Garden Room",
                     "Sea View Double", *WEEKDAYS),
}


def manifest(folder: Path) -> list[dict[str, str]]:
    with (folder / "manifest.tsv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def load_stt(name: str, read_digits: bool) -> WhisperSTT:
    from voice.speech.engines import STT_ENGINES

    options = dict(STT_ENGINES.spec(name).options)
    if "read_digits" in inspect.signature(WhisperSTT).parameters:  # absent before the digit reading existed
        options["read_digits"] = read_digits
    return WhisperSTT(**options)


def hear(stt: WhisperSTT, audio: object, vocabulary: tuple[str, ...] = ()) -> str:
    return stt.transcribe(audio, vocabulary=vocabulary) if vocabulary else stt.transcribe(audio)  # type: ignore[arg-type]


def example_agents() -> dict[str, tuple[str, ...]]:
    """Every example agent's vocabulary (examples/*/*.yaml agent files)."""
    from voice.agents.source import load_agent
    from voice.speech.vocabulary import agent_vocabulary

    found: dict[str, tuple[str, ...]] = {}
    data = Path(tempfile.mkdtemp(prefix="bench_stt_hints_"))
    for path in sorted(ROOT.glob("examples/*/*.yaml")):
        try:
            source = load_agent(str(path))
            maker = source.maker(data / source.name)
            found[f"example:{source.name}"] = agent_vocabulary(maker("bench"))
        except Exception as exc:  # a file that is not an agent (a call script) or cannot load here
            print(f"  (skipped {path.relative_to(ROOT)}: {type(exc).__name__})", file=sys.stderr)
    return found


def id_right(text: str, expect: str) -> bool:
    """The one number said, whole, and nothing else; no number at all for a line without one (expect "")."""
    return re.findall(r"\d+", join_spoken_digits(text)) == ([expect] if expect else [])


def bench_ids(plain: WhisperSTT, reading: WhisperSTT) -> None:
    rows = manifest(FIXTURES / "synthetic" / "ids")
    for label, stt, vocabulary in (("first pass only", plain, ()), ("digit by digit", reading, ()),
                                   ("digit by digit + pizzeria vocabulary", reading, AGENTS["pizzeria"])):
        wrong = []
        for row in rows:
            text = hear(stt, load_audio(FIXTURES / row["path"]), vocabulary)
            if not id_right(text, row["expect"]):
                wrong.append(f"{Path(row['path']).stem}: {text!r}")
        ids = sum(1 for row in rows if row["expect"])
        missed = sum(1 for row in rows if row["expect"] and Path(row["path"]).stem in {w.split(":")[0] for w in wrong})
        print(f"ids  {label:38s} ids right {ids - missed}/{ids}, lines without an id heard without one "
              f"{len(rows) - ids - (len(wrong) - missed)}/{len(rows) - ids}")
        for line in wrong:
            print(f"       wrong {line}")


def bench_id_lengths(stt: WhisperSTT) -> None:
    """Ids heard with their length declared, and with only a wrong one (one more, one fewer) declared."""
    rows = [row for row in manifest(FIXTURES / "synthetic" / "ids") if row["expect"]]
    for label, off in (("its own length declared", (0,)), ("a length one off declared", (-1, 1))):
        right = tried = 0
        wrong = []
        for row in rows:
            audio = load_audio(FIXTURES / row["path"])
            for delta in off:
                text = stt.transcribe(audio, id_digits=(len(row["expect"]) + delta,))  # type: ignore[arg-type]
                tried += 1
                if id_right(text, row["expect"]):
                    right += 1
                else:
                    wrong.append(f"{Path(row['path']).stem} ({len(row['expect']) + delta} declared): {text!r}")
        print(f"ids  {label:38s} ids right {right}/{tried}")
        for line in wrong:
            print(f"       wrong {line}")


def agent_for(expect: str) -> str:
    words = [w.lower() for w in expect.split("|")]
    return next(name for name, vocab in AGENTS.items() if all(any(w in v.lower() for v in vocab) for w in words))


def declared_heard(expect: str, text: str) -> tuple[int, int]:
    heard = " ".join(normalize_words(text, spell_numbers=False))
    words = expect.split("|")
    return sum(" ".join(normalize_words(w, spell_numbers=False)) in heard for w in words), len(words)


def bench_vocab(stt: WhisperSTT) -> None:
    rows = manifest(FIXTURES / "synthetic" / "vocab")
    for label, with_vocabulary in (("no vocabulary", False), ("the agent's vocabulary", True)):
        errors, heard, declared, lines = WordErrors(), 0, 0, []
        for row in rows:
            vocabulary = AGENTS[agent_for(row["expect"])] if with_vocabulary else ()
            text = hear(stt, load_audio(FIXTURES / row["path"]), vocabulary)
            errors = errors + word_errors(row["transcript"], text)
            got, of = declared_heard(row["expect"], text)
            heard, declared = heard + got, declared + of
            lines.append(f"{Path(row['path']).stem}: {text!r}")
        print(f"vocab {label:24s} WER {errors.wer:6.1%} ({errors.errors}/{errors.reference_words} words), "
              f"declared words heard {heard}/{declared}")
        for line in lines:
            print(f"       {line}")


def bench_recordings(stt: WhisperSTT, vocabularies: dict[str, tuple[str, ...]], folder: Path) -> None:
    rows = [r for r in manifest(folder) if r["path"].split("/")[0] in SETS and not r["transcript"].startswith("(")]
    audio = {r["path"]: load_audio(folder / r["path"]) for r in rows}
    for label, vocabulary in {"no vocabulary": (), **vocabularies}.items():
        totals = {s: WordErrors() for s in SETS}
        intruders = []
        for row in rows:
            text = hear(stt, audio[row["path"]], vocabulary)
            totals[row["path"].split("/")[0]] += word_errors(row["transcript"], text)
            reference = " ".join(normalize_words(row["transcript"]))
            hypothesis = " ".join(normalize_words(text))
            intruders += [f"{w!r} in {row['path']}" for w in vocabulary
                          if (n := " ".join(normalize_words(w))) and f" {n} " in f" {hypothesis} "
                          and f" {n} " not in f" {reference} "]
        figures = ", ".join(f"{s} {t.wer:5.1%} ({t.errors}/{t.reference_words})" for s, t in totals.items())
        print(f"recordings {label:24s} {figures}; vocabulary words not said: {len(intruders)} {intruders[:3]}")


def bench_noise(stt: WhisperSTT, vocabularies: dict[str, tuple[str, ...]], folder: Path) -> None:
    clips = {p.name: load_audio(p) for p in sorted((folder / "noise").glob("*.wav"))}
    for label, vocabulary in {"no vocabulary": (), **vocabularies}.items():
        heard = {name: text for name, clip in clips.items() if (text := hear(stt, clip, vocabulary))}
        print(f"noise {label:28s} transcripts not empty: {len(heard)}/{len(clips)} {heard}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stt", default="tiny.en", help="an --stt engine name (default tiny.en)")
    parser.add_argument("--parts", default="ids,vocab,recordings,noise")
    parser.add_argument("--recordings", type=Path, default=RECORDINGS,
                        help="a folder of recordings with a manifest.tsv like audio_fixtures/recordings'")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    reading = load_stt(args.stt, read_digits=True)
    vocabularies = {**example_agents(), **AGENTS}
    if "ids" in parts:
        bench_ids(load_stt(args.stt, read_digits=False), reading)
        bench_id_lengths(reading)
    if "vocab" in parts:
        bench_vocab(reading)
    if "recordings" in parts:
        bench_recordings(reading, vocabularies, args.recordings)
    if "noise" in parts:
        bench_noise(reading, vocabularies, args.recordings)


if __name__ == "__main__":
    main()
