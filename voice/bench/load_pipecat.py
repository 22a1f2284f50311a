"""`voiceloop bench load --compare pipecat`: the same simulated Twilio callers against a Pipecat bot, side by side.

Each step N runs first against `voiceloop serve`, then against `scripts/pipecat_bot/bot.py` (Pipecat 1.14 built
as its docs build a Twilio bot: FastAPIWebsocketTransport, TwilioFrameSerializer, Silero VAD + Smart Turn v3,
faster-whisper tiny.en int8 on CPU, the OpenAI service on the same model stand-in, Piper en_US joe medium), with the
same callers, the same seed and the same recordings. The bot runs in its own venv (`.venv-pipecat`, made by
`scripts/pipecat_bot/install.sh`; `$VOICELOOP_PIPECAT_VENV` names another) and is given the speech model files that
voiceloop itself loads, so both servers run the same weights. Its step's figures come from the callers and /proc,
as voiceloop's do; it keeps no journal and logs no per-part latencies, so those columns stay empty for it.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from voice.bench.load_report import StepRow, largest_holding

# The bot and its venv live in a checkout (an installed wheel has no scripts/): run `bench load` from its root
REPO = Path(os.environ.get("VOICELOOP_CHECKOUT", ".")).resolve()
BOT = REPO / "scripts" / "pipecat_bot" / "bot.py"
INSTALL = "scripts/pipecat_bot/install.sh"
DEFAULT_VENV = REPO / ".venv-pipecat"
SERVERS = ("voiceloop", "pipecat")

Launch = Callable[[list[str], dict[str, str], str, Path], tuple[subprocess.Popen[str], re.Match[str]]]


class PipecatMissing(RuntimeError):
    """The Pipecat bot's venv (or the bot itself) is not there: nothing to compare against."""


def pipecat_python(venv: Path | None = None) -> Path:
    """The Pipecat venv's interpreter, or PipecatMissing saying how to make it."""
    venv = venv or Path(os.environ.get("VOICELOOP_PIPECAT_VENV") or DEFAULT_VENV)
    python = venv / "bin" / "python"
    if not BOT.is_file():
        raise PipecatMissing(f"--compare pipecat needs {BOT}, which this installation does not have (a checkout does)")
    if not python.exists():
        install = INSTALL if venv == DEFAULT_VENV else f"{INSTALL} {venv}"
        raise PipecatMissing(f"--compare pipecat needs the Pipecat bot's venv at {venv}: run {install} first")
    return python


def speech_files() -> tuple[Path, Path]:
    """(Whisper tiny.en's CTranslate2 folder, the folder of Piper's en_US-joe-medium.onnx): voiceloop's own files."""
    from voice.speech.stt import locate_model
    from voice.speech.tts import joe_voice_files

    return locate_model("tiny.en"), joe_voice_files()[0].parent


def bot_command(python: Path, llm_url: str, whisper_dir: Path, piper_dir: Path, stt_url: str | None = None,
                tts_url: str | None = None) -> list[str]:
    remote = [*(["--stt-url", stt_url] if stt_url else []), *(["--tts-url", tts_url] if tts_url else [])]
    return [str(python), str(BOT), "--port", "0", "--llm-url", llm_url, "--whisper-dir", str(whisper_dir),
            "--piper-dir", str(piper_dir), *remote]


def bot_env(base: Mapping[str, str]) -> dict[str, str]:
    """The bot's environment: no PYTHONPATH (voiceloop's import path must not leak into the other venv), no model
    hub, no real OpenAI key or Twilio credentials."""
    drop = {"PYTHONPATH", "VIRTUAL_ENV", "OPENAI_API_KEY", "OPENAI_BASE_URL", "TWILIO_AUTH_TOKEN"}
    return {**{k: v for k, v in base.items() if k not in drop}, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def start_pipecat(launch: Launch, llm_url: str, log: Path, stt_url: str | None = None,
                  tts_url: str | None = None, agent: tuple[Path, str] | None = None
                  ) -> tuple[subprocess.Popen[str], int]:
    """Start the Pipecat bot on a free port against the model stand-in at `llm_url` (and the speech stand-in at
    `stt_url` / `tts_url`, as `--stt/--tts openai` give voiceloop); with `agent` (the spec file and the tool
    endpoint of `voice.bench._pipecat_agent`), the same prompt and tools as voiceloop's agent; (process, port)."""
    whisper_dir, piper_dir = speech_files()
    cmd = bot_command(pipecat_python(), llm_url, whisper_dir, piper_dir, stt_url, tts_url)
    if agent is not None:
        cmd += ["--agent-spec", str(agent[0]), "--tool-url", agent[1]]
    proc, m = launch(cmd, bot_env(os.environ), r"listening on http://127\.0\.0\.1:(\d+)/", log)
    return proc, int(m.group(1))


def _ms_pair(row: StepRow | None) -> str:
    if row is None:
        return "-"
    return "/".join("-" if v is None else "unans." if v == float("inf") else f"{v:.0f}"
                    for v in (row.v2v_p50_ms, row.v2v_p95_ms))


def _pair(rows: Sequence[StepRow | None], fmt: Callable[[StepRow], str]) -> str:
    return " | ".join("-" if r is None else fmt(r) for r in rows)


def format_comparison(results: Mapping[str, Sequence[StepRow]], target_ms: float) -> str:
    """Per N, each server's voice-to-voice p50/p95, unanswered turns, CPU seconds per answered turn, MB per call and
    whether it holds the target, then the largest N each holds."""
    servers = [s for s in SERVERS if s in results] + [s for s in results if s not in SERVERS]
    by_n: dict[int, dict[str, StepRow]] = {}
    for server in servers:
        for row in results[server]:
            by_n.setdefault(row.calls, {})[server] = row
    names = " | ".join(servers)
    out = [f"side by side ({names}): same callers, seed, recordings and model stand-in; cpu s and model calls per "
           "answered turn",
           f"{'calls':>5}  {'v2v p50/p95 ms (' + names + ')':<34} {'unanswered':<12} {'cpu s/ans. turn':<16} "
           f"{'llm/ans. turn':<14} {'MB/call':<14} holds"]
    for n in sorted(by_n):
        rows = [by_n[n].get(s) for s in servers]
        out.append(f"{n:>5}  {' | '.join(_ms_pair(r) for r in rows):<34} "
                   f"{_pair(rows, lambda r: str(r.unanswered)):<12} {_pair(rows, _cpu_per_answer):<16} "
                   f"{_pair(rows, _model_calls):<14} {_pair(rows, lambda r: f'{r.mb_per_call:.0f}'):<14} "
                   f"{_pair(rows, lambda r: 'yes' if r.holds else 'no')}")
    for server in servers:
        best = largest_holding(results[server])
        out.append(f"{server}: largest N with p95 <= {target_ms / 1000:g} s (nothing dropped or unanswered): "
                   f"{best if best is not None else 'none of those measured'}")
    return "\n".join(out)


def cpu_per_answer(row: StepRow) -> float | None:
    """Server CPU seconds per answered turn (StepRow keeps CPU per caller turn; an unanswered turn cost no answer)."""
    if not row.answered:
        return None
    return row.cpu_s_per_turn * row.turns / row.answered


def _cpu_per_answer(row: StepRow) -> str:
    value = cpu_per_answer(row)
    return "-" if value is None else f"{value:.2f}"


def _model_calls(row: StepRow) -> str:
    return "-" if row.model_calls_per_turn is None else f"{row.model_calls_per_turn:.2f}"


def suffixed(paths: Sequence[Path], server: str) -> list[Path]:
    """load.csv -> load_pipecat.csv: voiceloop's files keep their names, another server's are labelled."""
    return [p if server == "voiceloop" else p.with_name(f"{p.stem}_{server}{p.suffix}") for p in paths]


def meta_for(server: str, meta: Mapping[str, Any]) -> dict[str, Any]:
    return {**meta, "server": server, **({"serve_args": ""} if server != "voiceloop" else {})}
