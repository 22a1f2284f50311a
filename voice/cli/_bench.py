"""The benches of `voiceloop bench`, each its own subcommand with its own options and help."""

from __future__ import annotations

import argparse
import inspect
import tempfile
from pathlib import Path
from typing import Any

from loop.run.cli import BenchTarget

EVAL_FILE = "tool_choice_eval.yaml"  # an agent's own tool-choice cases, beside its agent file or module


def _order_desk() -> Any:
    from voice.demo.order_desk import order_desk_brain  # the demo agent, wired here: loop/ knows no particular agent

    return order_desk_brain()


def brain_setup(args: argparse.Namespace) -> Any:
    """What `bench brain` measures: the agent `--agent` names (the demo order desk without it), its prompt, tools
    and policy text exactly as an Agent over them sends them, and its eval set (`--eval-set`, else EVAL_FILE
    beside its agent file, or beside the module of its factory)."""
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
                      eval_set if eval_set.is_file() else None, agent.config.context_tokens, name=source.name,
                      scope=agent.assembler.scope, language=agent.language, related=agent.assembler.related)


def _voice_arguments(parser: argparse.ArgumentParser) -> None:
    from voice.agents.source import add_agent_option
    from voice.bench.voice import add_bench_voice_arguments
    from voice.speech.engines import add_engine_options

    add_bench_voice_arguments(parser)
    add_agent_option(parser)  # every call script with this agent instead of the one it names
    # auto: the real neural voice (Piper) for English, the voice an agent of another language speaks with
    add_engine_options(parser)


def _brain_arguments(parser: argparse.ArgumentParser) -> None:
    from loop.bench.brain import add_brain_arguments
    from voice.agents.source import add_agent_option

    add_brain_arguments(parser)
    add_agent_option(parser)  # the agent measured


def _load_arguments(parser: argparse.ArgumentParser) -> None:
    from voice.bench.load import add_bench_load_arguments
    from voice.speech.engines import add_engine_options

    add_bench_load_arguments(parser)
    add_engine_options(parser, llm=False)  # --stt/--tts openai: speech served by a stand-in, not in the server


def bench_targets() -> dict[str, BenchTarget]:
    """`voice`, `brain` and `load`, next to the loop's own `loop`."""
    from loop.bench.brain import brain_command
    from voice.bench.load import cmd_bench_load
    from voice.bench.voice import cmd_bench_voice

    return {
        "voice": BenchTarget(
            cmd_bench_voice, "whole calls on the wall clock: voice-to-voice latency, barge-in, reply quality",
            "Call scripts played on the wall clock through VAD, Whisper, the model and TTS: voice-to-voice from the "
            "scheduled end of the caller's speech (p50/p95, with and without tools, the breakdown), barge-in stop, "
            "the reply-quality pass rate, each agent's own pass rate when the calls are for several, and a per-turn "
            "CSV. By default every call script in audio_fixtures/.", _voice_arguments),
        "brain": BenchTarget(
            brain_command(brain_setup), "the embedded LLM's speed and tool-choice accuracy as one agent",
            "LLM speed and tool-choice accuracy as agent --agent (default the order desk) on its own cases: "
            f"{EVAL_FILE} beside its agent file or module, or --eval-set.", _brain_arguments),
        "load": BenchTarget(
            cmd_bench_load, "how many phone calls one machine holds",
            "N simulated Twilio callers against a real `voiceloop serve`, for each N: voice-to-voice p50/p95, "
            "barge-in stop, drops, CPU and memory; a table, CSVs and an SVG plot.", _load_arguments),
    }
