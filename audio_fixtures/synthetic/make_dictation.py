"""Regenerate the dictated-id and agent-vocabulary recordings (`ids/`, `vocab/`) and their manifests.

    PYTHONPATH=. python audio_fixtures/synthetic/make_dictation.py [NAME ...]

Each line is spoken by Piper (en_US joe medium, `voice.speech.tts.PiperTTS`, at a `length_scale`) or espeak-ng (a voice
and a rate); a line given as parts is spoken part by part with `gap` seconds of silence between them (an id
dictated digit by digit, with pauses). `phone` lines are then put through a telephone channel: 8 kHz, 300-3400 Hz
band-pass, G.711 mu-law, and stored at 8 kHz. `expect` is what must come through speech-to-text: the id's digits
(`ids/`; empty: no number may be heard), or the declared words the line holds (`vocab/`, `|`-separated). Synthetic stand-ins: no real
recording of these words exists among `recordings/`. `scripts/bench_stt_hints.py` measures them.
"""

from __future__ import annotations

import csv
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from voice.audio import SAMPLE_RATE, resample, ulaw_decode, ulaw_encode, write_wav

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from make_synthetic import speak, trim  # noqa: E402  # the espeak-ng lines are made as the other fixtures are

PHONE_RATE = 8000
PIPER_LICENCE = "Piper en_US-joe-medium output (voice trained on CC0 data), no restriction"
ESPEAK_LICENCE = "espeak-ng output, no restriction"
FIELDS = ("path", "seconds", "rate", "transcript", "source", "licence", "expect")


@dataclass(frozen=True)
class Line:
    parts: tuple[str, ...]  # one part: said in one go; several: with `gap` s of silence between them
    expect: str
    voice: str = "piper"  # "piper" or an espeak-ng voice ("en-us", "en-gb+f3", ...)
    speed: float = 1.0  # Piper's length_scale (above 1 is slower), or espeak-ng's words per minute
    gap: float = 0.4
    phone: bool = False

    @property
    def text(self) -> str:
        return " ".join(self.parts)


def _say(*parts: str) -> tuple[str, ...]:
    return parts


def _digits(words: str) -> tuple[str, ...]:
    return tuple(words.split())


IDS: dict[str, Line] = {
    # digit by digit with pauses, doubled digits, "oh" for zero (Piper joe)
    "p_7788": Line(_digits("seven seven eight eight"), "7788"),
    "p_2020": Line(_digits("two zero two zero"), "2020"),
    "p_2o2o": Line(_digits("two oh two oh"), "2020"),
    "p_job_7788": Line(("My job number is", *_digits("seven seven eight eight.")), "7788"),
    "p_1007": Line(_digits("one oh oh seven"), "1007"),
    "p_501396": Line(_digits("five oh one three nine six"), "501396"),
    "p_88213_slow": Line(_digits("eight eight two one three"), "88213", speed=1.3, gap=0.6),
    "p_order_2020": Line(("It's order", *_digits("two zero two zero")), "2020", gap=0.3),
    # in one go, in a sentence, and as pairs
    "p_pairs_7788": Line(_say("My order is seventy-seven eighty-eight."), "7788"),
    "p_pairs_2020": Line(_say("Job number twenty twenty, please."), "2020"),
    "p_ref_45167": Line(_say("The reference is four five one six seven."), "45167"),
    "p_3300": Line(_say("It's three three zero zero."), "3300"),
    "p_account_9944": Line(_say("My account number is nine nine four four."), "9944"),
    "p_644102": Line(_say("six four four one zero two"), "644102"),
    # espeak-ng, several voices and speeds
    "e_7788": Line(_digits("seven seven eight eight"), "7788", "en-us", 150),
    "e_2020_gb": Line(_digits("two zero two zero"), "2020", "en-gb", 140),
    "e_2o2o_f3": Line(_digits("two oh two oh"), "2020", "en-us+f3", 150),
    "e_job_55190": Line(_say("My job number is five five one nine oh."), "55190", "en-gb-scotland", 145),
    "e_pairs_4567": Line(_say("It's forty-five sixty-seven."), "4567", "en-us+m3", 150),
    "e_3141_fast": Line(_digits("three one four one"), "3141", "en-us", 175, gap=0.3),
    "e_0042": Line(_say("zero zero four two"), "0042", "en-us+f3", 140),
    "e_8800_slow": Line(_say("It's eight eight zero zero."), "8800", "en-us", 130),
    "e_612216": Line(_digits("six one two two one six"), "612216", "en-gb", 150, gap=0.35),
    "e_pairs_1919": Line(_say("Order nineteen nineteen."), "1919", "en-gb", 150),
    # the telephone band
    "t_p_7788": Line(_digits("seven seven eight eight"), "7788", phone=True),
    "t_p_order_2020": Line(_say("My order is two zero two zero."), "2020", phone=True),
    "t_p_job_44921": Line(_say("The job number is four four nine two one."), "44921", phone=True),
    "t_e_30518": Line(_digits("three oh five one eight"), "30518", "en-us", 150, phone=True),
    "t_e_pairs_7788": Line(_say("seventy-seven eighty-eight"), "7788", "en-gb", 145, phone=True),
    "t_e_6600": Line(_digits("six six oh oh"), "6600", "en-us+m3", 150, phone=True),
    # no id at all: short words with pauses stay words
    "p_no_id_words": Line(_say("Yes.", "No.", "Okay.", "Sure."), "", gap=0.5),
    "e_no_id_errand": Line(_say("I went", "to", "the shop", "for", "eggs."), "", "en-us", 150),
}

VOCAB: dict[str, Line] = {
    # a pizzeria's menu
    "p_quattro_calzone": Line(_say("I'd like a Quattro Formaggi and a Calzone."), "Quattro Formaggi|Calzone"),
    "p_margherita_nduja": Line(_say("Can I get a Margherita with extra nduja?"), "Margherita|nduja"),
    "e_diavola": Line(_say("One Diavola and a Capricciosa, please."), "Diavola|Capricciosa", "en-us", 150),
    "p_tiramisu": Line(_say("Do you have tiramisu or panna cotta tonight?"), "tiramisu|panna cotta"),
    "t_p_funghi": Line(_say("A large Prosciutto e Funghi for delivery."), "Prosciutto e Funghi", phone=True),
    # street names
    "p_wickham": Line(_say("I live on Wickham Road."), "Wickham Road"),
    "e_coldharbour": Line(_say("Deliver it to twelve Coldharbour Lane."), "Coldharbour Lane", "en-gb", 150),
    "p_abbeville": Line(_say("It's on Abbeville Road, by the park."), "Abbeville Road"),
    "t_e_lavender": Line(_say("The flat is on Lavender Hill."), "Lavender Hill", "en-us", 150, phone=True),
    "p_acre_lane": Line(_say("Send it to Acre Lane in Brixton."), "Acre Lane|Brixton"),
    # staff names
    "p_siobhan": Line(_say("Can I talk to Siobhan?"), "Siobhan"),
    "e_niamh": Line(_say("Is Niamh working today?"), "Niamh", "en-gb", 145),
    "p_padraig": Line(_say("Padraig helped me yesterday."), "Padraig"),
    "t_p_okonkwo": Line(_say("Put me through to Doctor Okonkwo."), "Okonkwo", phone=True),
    "e_nakamura": Line(_say("I'd like to see Doctor Nakamura on Tuesday."), "Nakamura|Tuesday", "en-us+m3", 150),
    # a garage's and a hotel's words
    "p_corsa": Line(_say("It's about my Vauxhall Corsa, the MOT is due."), "Vauxhall Corsa|MOT"),
    "p_harbour_suite": Line(_say("Is the Harbour Suite free on Friday?"), "Harbour Suite|Friday"),
}

SETS = {"ids": IDS, "vocab": VOCAB}


@cache
def _piper(length_scale: float):  # noqa: ANN202  # voice.speech.tts.PiperTTS, loaded once per speed
    from voice.speech.tts import PiperTTS

    return PiperTTS(length_scale=length_scale)


def _part_audio(line: Line, text: str) -> np.ndarray:
    if line.voice == "piper":
        return trim(_piper(line.speed).synthesize(text))
    return trim(speak(text, line.voice, int(line.speed)))


def band_pass(samples: np.ndarray, rate: int, low: float = 300.0, high: float = 3400.0, taps: int = 255) -> np.ndarray:
    """A linear-phase windowed-sinc band-pass (numpy only)."""
    n = np.arange(taps) - (taps - 1) / 2
    kernel = (2 * high / rate) * np.sinc(2 * high / rate * n) - (2 * low / rate) * np.sinc(2 * low / rate * n)
    filtered = np.convolve(samples.astype(np.float64), kernel * np.hamming(taps), mode="same")
    return np.clip(np.round(filtered), -32768, 32767).astype(np.int16)


def telephone(audio: np.ndarray) -> np.ndarray:
    """16 kHz speech as a phone line carries it: 8 kHz, 300-3400 Hz, mu-law."""
    narrow = band_pass(resample(audio, SAMPLE_RATE, PHONE_RATE), PHONE_RATE)
    return ulaw_decode(ulaw_encode(narrow))


def render(line: Line) -> tuple[np.ndarray, int]:
    gap = np.zeros(int(line.gap * SAMPLE_RATE), np.int16)
    pad = np.zeros(int(0.2 * SAMPLE_RATE), np.int16)
    parts = [_part_audio(line, p) for p in line.parts]
    audio = np.concatenate([pad, *[x for p in parts for x in (p, gap)][:-1], pad])
    return (telephone(audio), PHONE_RATE) if line.phone else (audio, SAMPLE_RATE)


def source(line: Line) -> str:
    engine = (f"piper joe medium, length_scale {line.speed}" if line.voice == "piper"
              else f"espeak-ng -v {line.voice} -s {int(line.speed)}")
    how = [engine, *([f"part by part with {line.gap:.2f} s pauses"] if len(line.parts) > 1 else []),
           *(["8 kHz, 300-3400 Hz band-pass, mu-law"] if line.phone else [])]
    return f"SYNTHETIC: {', '.join(how)} (audio_fixtures/synthetic/make_dictation.py; no fitting recording exists)"


def manifest_row(folder: str, name: str, line: Line, audio: np.ndarray, rate: int) -> dict[str, str]:
    return {"path": f"synthetic/{folder}/{name}.wav", "seconds": f"{len(audio) / rate:.3f}", "rate": str(rate),
            "transcript": line.text, "source": source(line),
            "licence": PIPER_LICENCE if line.voice == "piper" else ESPEAK_LICENCE, "expect": line.expect}


def read_manifest(folder: str) -> dict[str, dict[str, str]]:
    path = HERE / folder / "manifest.tsv"
    if not path.is_file():
        return {}
    with path.open(newline="", encoding="utf-8") as handle:
        return {row["path"]: row for row in csv.DictReader(handle, delimiter="\t")}


def make(folder: str, names: list[str]) -> None:
    lines = SETS[folder]
    rows = read_manifest(folder)
    (HERE / folder).mkdir(exist_ok=True)
    for name in names:
        audio, rate = render(lines[name])
        write_wav(HERE / folder / f"{name}.wav", audio, rate)
        row = manifest_row(folder, name, lines[name], audio, rate)
        rows[row["path"]] = row
        print(row["path"], row["seconds"])
    known = {f"synthetic/{folder}/{n}.wav" for n in lines}
    with (HERE / folder / "manifest.tsv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, FIELDS, delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(row for path, row in sorted(rows.items()) if path in known)


if __name__ == "__main__":
    wanted = sys.argv[1:]
    for folder, lines in SETS.items():
        names = [n for n in lines if not wanted or n in wanted]
        if names:
            make(folder, names)
