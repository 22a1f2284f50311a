"""`voiceloop bench load --compare pipecat` (voice/bench/load_pipecat.py, scripts/pipecat_bot/bot.py): the pure
helpers, the clear refusal without the Pipecat venv, and, where `.venv-pipecat` exists, one real call."""

from __future__ import annotations

import importlib.util
import math
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.paths import ROOT
from voice.bench import load, load_pipecat
from voice.bench.load_caller import CallResult, TurnResult, Utterance
from voice.bench.load_report import ServerUsage, step_row


def _bot() -> ModuleType:
    """scripts/pipecat_bot/bot.py as a module: its helpers import nothing beyond the standard library."""
    spec = importlib.util.spec_from_file_location("pipecat_bot", load_pipecat.BOT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(n: int, v2v: list[float | None], cpu_s: float = 4.0, peak_mb: float = 500.0, model_calls: int | None = None):
    calls = [CallResult(i, [TurnResult(0, "u", False, ms)], seconds=10.0) for i, ms in enumerate(v2v)]
    usage = ServerUsage(cpu_s=cpu_s, wall_s=20.0, rss_idle_mb=100.0, rss_peak_mb=peak_mb, model_calls=model_calls)
    return step_row(n, calls, usage, 1500)


def test_the_bot_reads_the_stream_and_call_ids_from_twilios_start_message() -> None:
    bot = _bot()
    connected = {"event": "connected", "protocol": "Call", "version": "1.0.0"}
    start = {"event": "start", "streamSid": "MZ1", "start": {"streamSid": "MZ1", "callSid": "CA1"}}
    assert bot.twilio_ids([connected, start]) == ("MZ1", "CA1")
    with pytest.raises(ValueError, match="start"):
        bot.twilio_ids([connected])


def test_the_bot_refuses_to_start_without_its_model_files(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"model\.bin"):
        _bot().check_models(tmp_path, tmp_path)


def test_the_bot_is_started_with_voiceloops_own_model_files_and_no_hub_or_import_path(tmp_path: Path) -> None:
    cmd = load_pipecat.bot_command(tmp_path / "python", "http://127.0.0.1:9/v1", tmp_path / "w", tmp_path / "p")
    assert cmd[:2] == [str(tmp_path / "python"), str(load_pipecat.BOT)]
    assert cmd[cmd.index("--llm-url") + 1] == "http://127.0.0.1:9/v1" and cmd[cmd.index("--port") + 1] == "0"
    env = load_pipecat.bot_env({"PYTHONPATH": "/x", "OPENAI_API_KEY": "sk", "PATH": "/bin"})
    assert env == {"PATH": "/bin", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    whisper, piper = load_pipecat.speech_files()  # the files voiceloop serves with, so both run the same weights
    assert (whisper / "model.bin").is_file() and (piper / "en_US-joe-medium.onnx").is_file()
    assert "--stt-url" not in cmd and "--tts-url" not in cmd


def test_with_speech_off_the_box_the_bot_is_given_the_same_speech_server() -> None:
    cmd = load_pipecat.bot_command(Path("python"), "http://m/v1", Path("w"), Path("p"), "http://s/v1", "http://s/v1")
    assert cmd[cmd.index("--stt-url") + 1] == cmd[cmd.index("--tts-url") + 1] == "http://s/v1"


def test_without_the_pipecat_venv_it_names_the_install_script(tmp_path: Path) -> None:
    with pytest.raises(load_pipecat.PipecatMissing, match=r"scripts/pipecat_bot/install\.sh"):
        load_pipecat.pipecat_python(tmp_path / "nothing")
    run = subprocess.run([sys.executable, "-m", "voice.cli", "bench", "load", "--compare", "pipecat", "--steps", "1"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "VOICELOOP_PIPECAT_VENV": str(tmp_path / "nothing")})
    assert run.returncode == 2 and "scripts/pipecat_bot/install.sh" in run.stderr, run.stderr[-2000:]
    assert "server up" not in run.stderr  # refused before any server was started


def test_another_servers_files_are_labelled_and_voiceloops_keep_their_names(tmp_path: Path) -> None:
    paths = [tmp_path / "load.csv", tmp_path / "load_p95.svg"]
    assert load_pipecat.suffixed(paths, "voiceloop") == paths
    assert [p.name for p in load_pipecat.suffixed(paths, "pipecat")] == ["load_pipecat.csv", "load_p95_pipecat.svg"]
    assert load_pipecat.meta_for("pipecat", {"serve_args": "--x", "cores": 2}) == {
        "serve_args": "", "cores": 2, "server": "pipecat"}  # serve flags are voiceloop's, not the bot's


def test_the_side_by_side_table_gives_both_servers_per_n() -> None:
    rows = {"voiceloop": [_row(1, [700.0, 800.0], model_calls=3), _row(2, [900.0, 1000.0])],
            "pipecat": [_row(1, [1200.0, 1400.0], cpu_s=6.0, model_calls=2), _row(2, [1300.0, None], cpu_s=6.0)]}
    text = load_pipecat.format_comparison(rows, 1500)
    one = next(line for line in text.splitlines() if line.strip().startswith("1 "))
    assert "700/800" in one and "1200/1400" in one and "yes | yes" in one
    assert "1.50 | 1.00" in one  # model calls per answered turn: speculation's cost beside the other's
    two = next(line for line in text.splitlines() if line.strip().startswith("2 "))
    assert "unans." in two and "0 | 1" in two and "yes | no" in two  # an unanswered turn is infinitely late
    assert "voiceloop: largest N with p95 <= 1.5 s (nothing dropped or unanswered): 2" in text
    assert "pipecat: largest N with p95 <= 1.5 s (nothing dropped or unanswered): 1" in text


def test_cpu_per_answered_turn_leaves_out_turns_without_an_answer() -> None:
    assert load_pipecat.cpu_per_answer(_row(1, [700.0, 800.0], cpu_s=4.0)) == pytest.approx(2.0)
    assert load_pipecat.cpu_per_answer(_row(2, [700.0, None], cpu_s=4.0)) == pytest.approx(4.0)
    assert load_pipecat.cpu_per_answer(_row(1, [None], cpu_s=4.0)) is None
    assert math.isinf(_row(1, [None]).v2v_p95_ms or 0.0)


def _has_pipecat() -> bool:
    try:
        load_pipecat.pipecat_python()
    except load_pipecat.PipecatMissing:
        return False
    return True


@pytest.mark.skipif(not _has_pipecat(), reason="no .venv-pipecat: run scripts/pipecat_bot/install.sh")
def test_a_real_call_to_the_pipecat_bot_is_answered(tmp_path: Path) -> None:
    """N=1, one turn, against the Pipecat bot alone: the same caller, stand-in and recordings as voiceloop's step."""
    cfg = load.LoadConfig(steps=[1], turns=1, spread_s=0.0, out=tmp_path / "out", compare="pipecat")
    utterances = [Utterance.load(p) for p in sorted(cfg.recordings.glob("*.wav"))]
    standin, url = load.start_standin(cfg, tmp_path)
    lines: list[str] = []
    try:
        row, calls = load.run_step(cfg, 1, url, tmp_path, utterances, lines.append, "pipecat")
    finally:
        load._stop(standin, 5)
    log = (cfg.out / "pipecat_n1.log").read_text()
    assert any("pipecat server up" in line for line in lines), lines
    assert row.answered == 1 and row.unanswered == 0 and row.dropped == 0, (row, log[-3000:])
    assert calls[0].turns[0].voice_to_voice_ms is not None and calls[0].turns[0].voice_to_voice_ms > 0
    assert row.rss_peak_mb > row.rss_idle_mb > 0 and row.cpu_s_per_turn > 0
    assert "pipeline built in" in log and "Traceback" not in log


@pytest.mark.skipif(not _has_pipecat(), reason="no .venv-pipecat: run scripts/pipecat_bot/install.sh")
def test_with_speech_off_the_box_the_pipecat_bot_answers_through_the_speech_server(tmp_path: Path) -> None:
    """--stt openai --tts openai: the bot's OpenAI services on the canned speech stand-in (its 24 kHz pcm)."""
    cfg = load.LoadConfig(steps=[1], turns=1, spread_s=0.0, out=tmp_path / "out", compare="pipecat",
                          remote_stt=True, remote_tts=True, speech_latency_ms=50)
    utterances = [Utterance.load(p) for p in sorted(cfg.recordings.glob("*.wav"))]
    standin, url = load.start_standin(cfg, tmp_path)
    audio, audio_url = load.start_audio_standin(cfg, tmp_path)
    cfg.env.update(VOICELOOP_STT_URL=audio_url, VOICELOOP_TTS_URL=audio_url)
    try:
        row, _calls = load.run_step(cfg, 1, url, tmp_path, utterances, [].append, "pipecat")
    finally:
        load._stop(standin, 5)
        load._stop(audio, 5)
    log = (cfg.out / "pipecat_n1.log").read_text()
    assert row.answered == 1 and row.unanswered == 0 and row.dropped == 0, (row, log[-3000:])
    assert "WhisperSTTService" not in log and "Piper" not in log.replace("piper-dir", "")
