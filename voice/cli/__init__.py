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


def cmd_call(args: argparse.Namespace) -> int:
    import yaml

    from loop.run.tenancy import storage_from_args
    from loop.store.db import DatabaseUnavailable
    from voice.agents.source import load_agent
    from voice.agents.spec import AgentConfigError
    from voice.audio import AudioFormatError
    from voice.speech.engines import STT_ENGINES, TTS_ENGINES
    from voice.speech.stack import load_stack
    from voice.testing.scripted_call import run_call, write_outputs

    try:
        fixture = _fixture_for(Path(args.source))
        fixture.caller_audio()  # read and check every recording before loading any model
        agent = load_agent(args.agent) if args.agent else fixture.agent_source()
    except (AudioFormatError, OSError, KeyError, TypeError, ValueError, yaml.YAMLError) as exc:
        print(f"voiceloop call: {args.source}: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out or tempfile.mkdtemp(prefix="voiceloop-call-"))
    try:  # the database is opened before any model loads: a bad --db fails at once
        out.mkdir(parents=True, exist_ok=True)
        db, tenant = storage_from_args(args, out)
    except (DatabaseUnavailable, OSError, ValueError) as exc:
        print(f"voiceloop call: {exc}", file=sys.stderr)
        return 2
    stt, tts = agent.engine("stt", args.stt, STT_ENGINES.default), agent.engine("tts", args.tts, TTS_ENGINES.default)
    print(f"loading the speech stack ({stt}, {tts})...", file=sys.stderr)
    stack = load_stack(stt, tts=tts, turn=getattr(args, "turn", None))
    print(f"running {fixture.path.name} with the agent {agent.name} on the virtual clock...", file=sys.stderr)
    try:
        model = _model_for(args.llm, has_script=bool(fixture.script()))
        result = asyncio.run(run_call(fixture, stack, out, model=model, agent=agent, db=db, tenant=tenant))
    except AgentConfigError as exc:
        print(f"voiceloop call: {exc}", file=sys.stderr)
        return 2
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
    return 1 if result.failures else 0


def _model_for(choice: str | None, has_script: bool = True) -> Any:
    """The `--llm` choice (`voice.speech.engines.LLM_ENGINES`); None for the call script's replies, or the agent's own
    model when neither `--llm` nor the script gives one. `--llm script` without a script: the looping default."""
    from voice.speech.engines import SCRIPTED, load_llm

    if choice == SCRIPTED and not has_script:
        from voice.hosting.registry import DEFAULT_SCRIPT, LoopingScript

        return LoopingScript(DEFAULT_SCRIPT, "call")
    if choice and choice != SCRIPTED:
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


EVAL_FILE = "tool_choice_eval.yaml"  # an agent's own tool-choice cases, beside its agent file or module


def _order_desk() -> Any:
    from voice.demo.order_desk import order_desk_brain  # the demo agent, wired here: loop/ knows no particular agent

    return order_desk_brain()


def _brain_setup(args: argparse.Namespace) -> Any:
    """What `bench brain` measures: the agent `--agent` names (the demo order desk without it), its prompt, tools
    and policy text exactly as an Agent over them sends them, and its eval set (`--eval-set`, else EVAL_FILE
    beside its agent file, or beside the module of its factory)."""
    import inspect

    from loop import ScriptedModel
    from loop.bench.brain import BrainSetup
    from voice.agents.source import load_agent

    if not getattr(args, "agent", None):
        return _order_desk()
    source = load_agent(args.agent)
    if source.spec is not None:
        folder = source.spec.base_dir
    else:
        folder = Path(inspect.getsourcefile(source.factory) or ".").resolve().parent  # type: ignore[arg-type]
    eval_set = folder / EVAL_FILE
    agent = source.maker(Path(tempfile.mkdtemp(prefix="voiceloop-brain-")), lambda _id: ScriptedModel([]))("brain")
    return BrainSetup(agent.assembler.system, list(agent.tools.values()), agent.policy.text,
                      eval_set if eval_set.is_file() else None, agent.config.context_tokens, name=source.name)


def build_parser() -> argparse.ArgumentParser:
    from loop.run.tenancy import add_storage_options
    from voice.agents.source import add_agent_option
    from voice.livekit.worker import add_livekit_command
    from voice.server.app import add_serve_command
    from voice.speech.engines import add_engine_options
    from voice.transports.console import add_console_command

    parser = argparse.ArgumentParser(prog="voiceloop", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    from loop.bench.brain import add_brain_arguments, brain_command
    from voice.bench.load import add_bench_load_arguments, cmd_bench_load
    from voice.bench.voice import add_bench_voice_arguments, cmd_bench_voice

    parsers = add_loop_commands(sub, bench_targets={"voice": cmd_bench_voice, "brain": brain_command(_brain_setup),
                                                    "load": cmd_bench_load})
    add_brain_arguments(parsers["bench"])
    add_bench_load_arguments(parsers["bench"])
    add_bench_voice_arguments(parsers["bench"])
    add_agent_option(parsers["bench"])  # voice: every call script with this agent; brain: the agent measured
    add_engine_options(parsers["bench"], tts_default="piper")  # voice: measured on the real neural voice
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
        args = build_parser().parse_args(argv)
        return args.func(args)
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if top not in EXTRA_FOR:
            raise
        print(f"voiceloop: {top} is not installed; it comes with the {EXTRA_FOR[top]} extra: "
              f"pip install 'voiceloop[{EXTRA_FOR[top]}]'", file=sys.stderr)
        return 2
