"""Bad caller audio through `voiceloop call` and `voiceloop transcribe`: clear errors or correct handling."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from voice.audio import load_audio, resample, write_wav
from voice.cli import main
from voice.testing.scripted_call import FIXTURES

SPEECH = FIXTURES / "recordings/speech/goforward.wav"  # "go forward ten meters"


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_empty_wav_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    code, _, err = run_cli(["call", str(empty), "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and "empty" in err
    code, _, err = run_cli(["transcribe", str(empty)], capsys)
    assert code == 2 and "empty" in err


def test_corrupt_wav_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"RIFF\x10\x00\x00\x00WAVEjunkjunkjunk")
    code, _, err = run_cli(["call", str(bad)], capsys)
    assert code == 2 and "bad.wav" in err
    missing = tmp_path / "nope.wav"
    code, _, err = run_cli(["transcribe", str(missing)], capsys)
    assert code == 2


def test_wrong_rate_and_stereo_are_converted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mono = load_audio(SPEECH)
    at_44k = resample(mono, 16000, 44100)
    stereo = np.stack([at_44k, at_44k], axis=1).reshape(-1)
    path = tmp_path / "stereo44k.wav"
    write_wav(path, stereo, sample_rate=44100, channels=2)
    code, out, _ = run_cli(["transcribe", str(path), "--json"], capsys)
    assert code == 0 and "forward" in json.loads(out)["text"].lower()


def test_clipped_audio_still_transcribes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loud = np.clip(load_audio(SPEECH).astype(np.int32) * 12, -32768, 32767).astype(np.int16)
    path = tmp_path / "clipped.wav"
    write_wav(path, loud)
    code, out, _ = run_cli(["transcribe", str(path), "--json"], capsys)
    assert code == 0 and "forward" in json.loads(out)["text"].lower()


def test_ten_minutes_of_silence_is_a_call_with_no_turns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "silence.wav"
    write_wav(path, np.zeros(16000 * 600, np.int16))
    started = time.monotonic()
    code, out, _ = run_cli(["call", str(path), "--json", "--out", str(tmp_path / "o")], capsys)
    assert code == 1  # the WAV's default expectation (a reply) is not met, and it says so
    assert json.loads(out) == {"outcome": "NO_TURN", "turns": []}
    assert time.monotonic() - started < 120  # no hang: 10 virtual minutes run much faster than real time
    code, out, _ = run_cli(["transcribe", str(path), "--json"], capsys)
    assert code == 0 and json.loads(out) == {"text": ""}


def test_a_caller_wav_runs_a_whole_call(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["call", str(SPEECH), "--json", "--out", str(tmp_path / "o")], capsys)
    summary = json.loads(out)
    assert code == 0 and summary["outcome"] == "COMPLETED"
    assert "forward" in summary["turns"][0]["user_text"].lower()
    assert (tmp_path / "o" / "agent.wav").stat().st_size > 16000
    for name in ("transcript.txt", "trace.jsonl", "summary.json"):
        assert (tmp_path / "o" / name).exists()
