"""Regenerate the espeak-ng caller lines of the conversation scripts (16 kHz mono int16 WAVs).

    PYTHONPATH=. python audio_fixtures/synthetic/make_synthetic.py [NAME ...]

Each line is `espeak-ng -v en-us -s 150` (or the voice and rate given with it) resampled from 22,050 Hz to
16 kHz. A line given as a list of parts is spoken part by part with `GAP_S` of silence between them (an id
dictated digit by digit, with pauses).
These are synthetic stand-ins: no fitting real recording of these words exists among `recordings/`.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from voice.audio import load_audio, write_wav

HERE = Path(__file__).resolve().parent

LINES: dict[str, str | list[str] | tuple[str, str, int]] = {
    # (text, espeak voice, words per minute) where the default voice came out garbled through Whisper tiny.en
    "check_1234": "Can you check on order twelve thirty-four for me?",
    "delivered_7788": ("Has order seventy-seven, eighty-eight been delivered?", "en-us", 135),
    "total_2020": ("How much did I pay for order twenty twenty?", "en-us+m3", 150),
    "late_2020": ("Why is my order two zero two zero running late?", "en-us+m3", 150),  # "two" heard as "to"
    "deliveries_denver": "Are there any deliveries going to Denver?",
    "deliveries_paris": "Is anything being delivered to Paris?",
    "refund_15_1234": "I would like a refund of fifteen dollars for order twelve thirty-four.",
    "yes_please": "Yes, please.",
    "refund_10_2020": "Can I get ten dollars back on order twenty twenty?",
    "no_leave_it": "No, leave it as it is.",
    "refund_600_7788": "I want a refund of six hundred dollars for order seventy-seven eighty-eight.",
    "address_1234": "Please send order twelve thirty-four to twenty Oxford Street, London.",
    "where_is_my_order": "Where is my order?",
    "its_4567": "It's four five six seven.",
    "refund_no_amount": "I'd like a refund for order four five six seven.",
    "weather": "What will the weather be like in Lisbon tomorrow?",
    "thanks_bye": "Thank you, that's all. Goodbye.",
    "unknown_5151": "Can you check order fifty-one fifty-one for me?",
    "correction": "Where is order twelve thirty-four, sorry, no, I mean forty-five sixty-seven?",
    "dictated_7788": ["My order number is", "seven", "seven", "eight", "eight."],  # digit by digit, with pauses
    "leeds": "Any deliveries going to Leeds?",
    # answers to "Just to confirm: refund $20 on order 4567?" that are not a clear yes
    "how_much_refund": "How much is the refund?",
    "yes_but_thirty": "Yes, but make it thirty dollars.",
    "um_weather_tomorrow": "Um, what will the weather be like tomorrow?",
    "which_order": ("Which order is that?", "en-gb", 150),
    "fine_by_me": ("Fine by me.", "en-us+f3", 140),
}
GAP_S = 0.3


def speak(text: str, voice: str = "en-us", wpm: int = 150) -> np.ndarray:
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "line.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(wpm), "-w", str(wav), text], check=True)
        return load_audio(wav)  # 22,050 Hz -> 16 kHz mono int16


def trim(audio: np.ndarray, floor: int = 200) -> np.ndarray:
    """Cut espeak's leading and trailing silence, so parts join with exactly the gap asked for."""
    loud = np.flatnonzero(np.abs(audio.astype(np.int32)) > floor)
    return audio[loud[0]: loud[-1] + 1] if len(loud) else audio


def make(name: str) -> Path:
    line = LINES[name]
    if isinstance(line, str):
        audio = speak(line)
    elif isinstance(line, tuple):
        audio = speak(*line)
    else:
        gap = np.zeros(int(GAP_S * 16000), np.int16)
        pad = np.zeros(int(0.1 * 16000), np.int16)
        parts = [trim(speak(p)) for p in line]
        audio = np.concatenate([pad, *[x for p in parts for x in (p, gap)][:-1], pad])
    path = HERE / f"{name}.wav"
    write_wav(path, audio)
    return path


if __name__ == "__main__":
    for name in sys.argv[1:] or LINES:
        print(make(name))
