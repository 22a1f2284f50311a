"""`voiceloop`: run a call, transcribe a file, read a journal, measure."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from loop.run.cli import add_loop_commands
from voice.cli._bench import EVAL_FILE, bench_targets
from voice.cli._bench import brain_setup as _brain_setup  # noqa: F401  (its old home; tests and scripts use it)

__all__ = ["EVAL_FILE", "build_parser", "main"]


def cmd_call(args: argparse.Namespace) -> int:
    from loop.run.tenancy import storage_from_args
    from loop.store.db import DatabaseUnavailable
    from voice.speech.engines import STT_ENGINES, TTS_ENGINES
    from voice.speech.stack import load_stack
    from voice.testing.scripted_call import run_call, write_outputs

    loaded = _call_setup(args)  # everything that can be wrong is found here, before any speech model loads
    if isinstance(loaded, int):
        return loaded
    fixture, agent, model = loaded
    out = Path(args.out or tempfile.mkdtemp(prefix="voiceloop-call-"))
    try:  # the database is opened before any model loads: a bad --db fails at once
        out.mkdir(parents=True, exist_ok=True)
        db, tenant = storage_from_args(args, out)
    except (DatabaseUnavailable, OSError, ValueError) as exc:
        print(f"voiceloop call: {exc}", file=sys.stderr)
        return 2
    stt, tts = agent.engine("stt", args.stt, STT_ENGINES.default), agent.engine("tts", args.tts, TTS_ENGINES.default)
    print(f"loading the speech stack ({stt}, {tts})...", file=sys.stderr)
    stack = load_stack(stt, tts=tts, turn=getattr(args, "turn", None), language=agent.language)
    print(f"running {fixture.path.name} with the agent {agent.name} on the virtual clock...", file=sys.stderr)
    result = asyncio.run(run_call(fixture, stack, out, model=model, agent=agent, db=db, tenant=tenant))
    write_outputs(result, out)
    if args.json:
        print(json.dumps(result.summary(), indent=2))
    else:
        print((out / "transcript.txt").read_text())
        print(_latency_table(result.turns))
        print(f"outcome: {result.summary()['outcome']}; agent audio, transcript and trace in {out}")
    for fail in result.failures:
        print(f"expectation not met: {fail}", file=sys.stderr)
    for problem in getattr(result, "reply_problems", []):  # what was said, checked by machine (reply_checks)
        print(f"reply check: {problem}", file=sys.stderr)
    model_failed = [t.reason for t in result.turns if t.outcome == "TOOL_FAILURE" and t.reason.startswith("model ")]
    for reason in model_failed[:1]:  # a model that never answered fails the call, whatever the script expects
        print(f"voiceloop call: {reason}", file=sys.stderr)
    return 1 if result.failures or model_failed else 0


def _call_setup(args: argparse.Namespace) -> tuple[Any, Any, Any] | int:
    """The call script, the agent and the model `call` runs, each checked (the agent built once, so a tool that
    cannot work fails now; the remote model's server reached), or the exit code after saying what is wrong."""
    import yaml

    from voice.agents.source import load_agent
    from voice.audio import AudioFormatError

    try:
        fixture = _fixture_for(Path(args.source))
        fixture.caller_audio()  # read and check every recording before loading any model
        agent = load_agent(args.agent) if args.agent else fixture.agent_source()
    except (AudioFormatError, OSError, KeyError, TypeError, ValueError, yaml.YAMLError) as exc:
        print(f"voiceloop call: {args.source}: {exc}", file=sys.stderr)
        return 2
    model = _model_for(args.llm, has_script=bool(fixture.script()))  # EngineConfigError: one line, in main
    if problem := getattr(model, "unreachable", lambda: None)():
        print(f"voiceloop call: --llm {args.llm}: {problem}", file=sys.stderr)
        return 2
    agent.check(model)
    return fixture, agent, model


def _model_for(choice: str | None, has_script: bool = True) -> Any:
    """The `--llm` choice (`voice.speech.engines.LLM_ENGINES`); None for the call script's replies, or the agent's own
    model when neither `--llm` nor the script gives one. `--llm script` without a call script: `ScriptedReplies`
    (the agent's own script if it has one, else the looping acknowledgement)."""
    from voice.speech.engines import SCRIPTED, load_llm

    if choice == SCRIPTED and not has_script:  # no LLM: the agent's own script, else the looping acknowledgement
        from voice.agents.looping_script import ScriptedReplies

        return ScriptedReplies("call")
    if choice and choice.startswith("local"):  # the embedded model takes a while; a remote one is a client
        print(f"loading the model (--llm {choice})...", file=sys.stderr)
    return load_llm(choice)


def _fixture_for(source: Path):
    from voice.testing.scripted_call import Fixture

    if source.suffix in (".yaml", ".yml"):
        return Fixture.load(source)
    # A bare recording: one caller utterance at 0.3 s, answered by the agent's own model (for the demo order
    # desk: a scripted acknowledgement that goes round and round, however many turns the recording holds). The
    # call is expected to end answered (COMPLETED); a recording with no speech says so with exit code 1.
    data = {"caller": [{"audio": str(source.resolve()), "at": 0.3}], "expect": {"outcome": "COMPLETED"}}
    return Fixture(source, data)


def _latency_table(turns: list) -> str:
    keys = ("endpointing", "stt", "llm_first_token", "first_clause", "tts_first_audio", "voice_to_voice")
    rows = ["turn  " + "  ".join(f"{k:>16}" for k in keys)]
    for i, t in enumerate(turns):
        rows.append(f"{i:>4}  " + "  ".join(f"{t.latency_ms.get(k, float('nan')):>14.1f}ms" for k in keys))
    return "\n".join(rows)


def cmd_transcribe(args: argparse.Namespace) -> int:
    from voice.audio import AudioFormatError, load_audio
    from voice.speech.engines import STT_ENGINES

    try:
        audio = load_audio(args.file)
    except (AudioFormatError, FileNotFoundError) as exc:
        print(f"voiceloop transcribe: {exc}", file=sys.stderr)
        return 2
    text = STT_ENGINES.load(args.stt).transcribe(audio)
    print(json.dumps({"text": text}) if args.json else text)
    return 0


def build_parser() -> argparse.ArgumentParser:
    from loop.run.tenancy import add_storage_options
    from voice.agents.source import add_agent_option
    from voice.livekit.worker import add_livekit_command
    from voice.server.app import add_serve_command
    from voice.speech.engines import add_engine_options
    from voice.transports.console import add_console_command

    parser = argparse.ArgumentParser(prog="voiceloop", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    add_loop_commands(sub, bench_targets=bench_targets())  # bench loop|voice|brain|load, each with its own --help
    call = sub.add_parser("call", help="run a whole call from a fixture YAML or a caller WAV")
    call.add_argument("source")
    call.add_argument("--out", help="folder for agent.wav, transcript.txt, trace.jsonl, summary.json, timeline.html")
    call.add_argument("--json", action="store_true")
    add_engine_options(call, model_alias=True)
    add_agent_option(call)
    add_storage_options(call)  # --db (default: journal.db in --out), --tenant, --tenant-budget
    # unset: the agent file's choice, else the registry's default; --llm unset: the script's or agent's model
    call.set_defaults(func=cmd_call, stt=None, tts=None, llm=None)
    tr = sub.add_parser("transcribe", help="speech to text for one WAV file")
    tr.add_argument("file")
    add_engine_options(tr, tts=False, llm=False, model_alias=True)
    tr.add_argument("--json", action="store_true")
    tr.set_defaults(func=cmd_transcribe)
    add_serve_command(sub)
    add_console_command(sub)
    add_livekit_command(sub)
    return parser


# A missing import here means an extra was not installed: say which one instead of a traceback.
EXTRA_FOR = {"numpy": "voice", "starlette": "voice", "uvicorn": "voice", "soxr": "voice", "onnxruntime": "voice",
             "faster_whisper": "voice", "ctranslate2": "voice", "tokenizers": "voice", "piper": "voice",
             "websockets": "voice", "sounddevice": "console", "livekit": "livekit", "llama_cpp": "llm"}


def main(argv: list[str] | None = None) -> int:
    try:
        from loop import ToolDefinitionError
        from voice.agents.spec import AgentConfigError
        from voice.speech.engines import EngineConfigError

        args = build_parser().parse_args(argv)
        try:
            return args.func(args)
        except (AgentConfigError, ToolDefinitionError, EngineConfigError) as exc:  # the user's setup: the fix
            print(f"voiceloop {args.command}: {exc}", file=sys.stderr)
            return 2
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if top not in EXTRA_FOR:
            raise
        print(f"voiceloop: {top} is not installed; it comes with the {EXTRA_FOR[top]} extra: "
              f"pip install 'voiceloop[{EXTRA_FOR[top]}]'", file=sys.stderr)
        return 2
