"""`voiceloop`: run a call, transcribe a file, read a journal, measure."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from loop.cli_commands import add_loop_commands
from voice.engines import add_engine_options


def cmd_call(args: argparse.Namespace) -> int:
    import yaml

    from voice.audio import AudioFormatError
    from voice.fixtures import run_call, write_outputs
    from voice.stack import load_stack

    try:
        fixture = _fixture_for(Path(args.source))
        fixture.caller_audio()  # read and check every recording before loading any model
    except (AudioFormatError, OSError, KeyError, TypeError, ValueError, yaml.YAMLError) as exc:
        print(f"voiceloop call: {args.source}: {exc}", file=sys.stderr)
        return 2
    print(f"loading the speech stack ({args.stt}, {args.tts})...", file=sys.stderr)
    stack = load_stack(args.stt, tts=args.tts)
    print(f"running {fixture.path.name} on the virtual clock...", file=sys.stderr)
    out = Path(args.out or tempfile.mkdtemp(prefix="voiceloop-call-"))
    model = _model_for(args.llm)
    result = asyncio.run(run_call(fixture, stack, out, model=model))
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


def _model_for(choice: str | None) -> Any:
    """The `--llm` choice (`voice.engines.LLM_ENGINES`); None for the fixture's scripted replies."""
    from voice.engines import SCRIPTED, load_llm

    if choice and choice != SCRIPTED:
        print(f"loading the model (--llm {choice})...", file=sys.stderr)
    return load_llm(choice)


def _fixture_for(source: Path):
    from voice.fixtures import Fixture

    if source.suffix in (".yaml", ".yml"):
        return Fixture.load(source)
    # A bare recording: one caller utterance, and a scripted agent that only acknowledges it.
    data = {"caller": [{"audio": str(source.resolve()), "at": 0.3}],
            "model": [{"text": "Thanks, I heard you. How else can I help?"}], "expect": {"outcome": "COMPLETED"}}
    return Fixture(source, data)


def _latency_table(turns: list) -> str:
    keys = ("endpointing", "stt", "llm_first_token", "first_clause", "tts_first_audio", "voice_to_voice")
    rows = ["turn  " + "  ".join(f"{k:>16}" for k in keys)]
    for i, t in enumerate(turns):
        rows.append(f"{i:>4}  " + "  ".join(f"{t.latency_ms.get(k, float('nan')):>14.1f}ms" for k in keys))
    return "\n".join(rows)


def cmd_transcribe(args: argparse.Namespace) -> int:
    from voice.audio import AudioFormatError, load_audio
    from voice.engines import STT_ENGINES

    try:
        audio = load_audio(args.file)
    except (AudioFormatError, FileNotFoundError) as exc:
        print(f"voiceloop transcribe: {exc}", file=sys.stderr)
        return 2
    text = STT_ENGINES.load(args.stt).transcribe(audio)
    print(json.dumps({"text": text}) if args.json else text)
    return 0


def _order_desk() -> Any:
    from voice.orders import order_desk_brain  # the demo agent, wired here: loop/ knows no particular agent

    return order_desk_brain()


def build_parser() -> argparse.ArgumentParser:
    from voice.console import add_console_command
    from voice.livekit_worker import add_livekit_command
    from voice.server import add_serve_command

    parser = argparse.ArgumentParser(prog="voiceloop", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    from loop.brain_bench import add_brain_arguments, brain_command
    from voice.bench_voice import add_bench_voice_arguments, cmd_bench_voice

    parsers = add_loop_commands(sub, bench_targets={"voice": cmd_bench_voice, "brain": brain_command(_order_desk)})
    add_brain_arguments(parsers["bench"])
    add_bench_voice_arguments(parsers["bench"])
    add_engine_options(parsers["bench"], tts_default="piper")  # voice: measured on the real neural voice
    call = sub.add_parser("call", help="run a whole call from a fixture YAML or a caller WAV")
    call.add_argument("source")
    call.add_argument("--out", help="folder for agent.wav, transcript.txt, trace.jsonl, summary.json, timeline.html")
    call.add_argument("--json", action="store_true")
    add_engine_options(call, model_alias=True)
    call.set_defaults(func=cmd_call)
    tr = sub.add_parser("transcribe", help="speech to text for one WAV file")
    tr.add_argument("file")
    add_engine_options(tr, tts=False, llm=False, model_alias=True)
    tr.add_argument("--json", action="store_true")
    tr.set_defaults(func=cmd_transcribe)
    add_serve_command(sub)
    add_console_command(sub)
    add_livekit_command(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
