"""Engines by name: the protocols the session calls, one registry per kind, and the same `--stt/--tts/--llm`
options on every command, all from `voice.speech.engines`. No model is loaded here."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import pytest

from tests.fakes import LoudnessVAD, ScriptedSTT, ToneTTS, WordChunker
from voice.speech.engines import (
    LLM_ENGINES,
    SCRIPTED,
    STT,
    STT_ENGINES,
    TTS,
    TTS_ENGINES,
    VAD,
    VAD_ENGINES,
    Chunker,
    EngineUnavailableError,
    Registry,
    add_engine_options,
    load_llm,
)
from voice.speech.stt import WhisperSTT
from voice.speech.tts import ClauseChunker, EspeakTTS, PiperTTS
from voice.speech.vad import SileroVAD

# `serve` joins this list once voice/server/app.py takes its options from add_engine_options.
COMMANDS = ("call", "console", "livekit", "bench voice", "serve")


class EchoSTT:
    """A stand-in engine registered by a test: it records what it was built with."""

    def __init__(self, model: str, threads: int = 1) -> None:
        self.model, self.threads = model, threads

    def transcribe(self, audio: np.ndarray) -> str:
        return f"{self.model}:{len(audio)}"


def test_the_registered_names_are_the_command_line_choices() -> None:
    assert STT_ENGINES.names() == ["tiny.en", "base", "openai"] and STT_ENGINES.default == "tiny.en"
    assert TTS_ENGINES.names() == ["auto", "piper", "espeak", "openai"] and TTS_ENGINES.default == "auto"
    assert LLM_ENGINES.names() == [SCRIPTED, "local", "local-1.5b", "openai"] and LLM_ENGINES.default == SCRIPTED
    assert VAD_ENGINES.names() == ["silero"]


def test_real_engines_and_test_fakes_satisfy_the_protocols() -> None:
    for cls in (SileroVAD, LoudnessVAD):
        assert issubclass(cls, VAD), cls
    for cls in (WhisperSTT, ScriptedSTT):
        assert issubclass(cls, STT), cls
    for cls in (PiperTTS, EspeakTTS, ToneTTS):
        assert issubclass(cls, TTS), cls
    for cls in (ClauseChunker, WordChunker):
        assert issubclass(cls, Chunker), cls


def test_a_new_engine_is_one_registry_line() -> None:
    registry: Registry[STT] = Registry("stt")
    registry.add("echo", "tests.voice.speech.test_engines:EchoSTT", "echoes", model="small")
    engine = registry.load("echo", threads=3, unused_setting=True)  # settings it does not take are left out
    assert isinstance(engine, EchoSTT) and (engine.model, engine.threads) == ("small", 3)
    assert engine.transcribe(np.zeros(5, np.int16)) == "small:5"
    assert "echo: echoes" in registry.help()


def test_unknown_and_unavailable_engines_are_clear_errors() -> None:
    with pytest.raises(ValueError, match=r"unknown --tts 'kokoro': use 'auto', 'piper', 'espeak' or 'openai'"):
        TTS_ENGINES.load("kokoro")
    with pytest.raises(ValueError, match="unknown --llm 'bogus'"):
        load_llm("bogus")
    registry: Registry[STT] = Registry("stt")
    registry.add("ghost", "no_such_package.stt:Ghost", "not installed")
    with pytest.raises(EngineUnavailableError, match=r"--stt ghost needs no_such_package\.stt:Ghost"):
        registry.load("ghost")


def test_llm_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from loop.models.openai import OpenAICompatModel

    assert load_llm(None) is None and load_llm(SCRIPTED) is None  # the scripted replies
    monkeypatch.setenv("VOICELOOP_LLM_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("VOICELOOP_LLM_MODEL", "m")
    assert isinstance(load_llm("openai"), OpenAICompatModel)


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {opt: a for a in parser._actions for opt in a.option_strings}


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    from voice.cli import build_parser

    def sub(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        action = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        return dict(action.choices) if action is not None else {}

    commands = sub(build_parser())
    return commands | {f"bench {name}": p for name, p in sub(commands["bench"]).items()}  # each bench its own


def test_every_command_takes_the_same_engine_options() -> None:
    commands = _subparsers()
    for name in COMMANDS:
        options = _options(commands[name])
        assert options["--stt"].choices == STT_ENGINES.names(), name
        assert options["--tts"].choices == TTS_ENGINES.names(), name
        assert options["--llm"].choices == LLM_ENGINES.names(), name
    assert _options(commands["transcribe"])["--stt"].choices == STT_ENGINES.names()
    for name in ("console", "livekit"):  # the commands that serve calls also take a script file instead
        with pytest.raises(SystemExit):
            commands[name].parse_args(["--script", "x.yaml", "--llm", "openai"])


def test_defaults_and_the_deprecated_model_spelling(capsys: pytest.CaptureFixture[str]) -> None:
    commands = _subparsers()
    call = commands["call"].parse_args(["f.yaml"])
    # unset: the agent file's engines, else the registries' defaults; the call script's (or agent's) replies
    assert (call.stt, call.tts, call.llm) == (None, None, None)
    assert commands["bench voice"].parse_args([]).tts == "auto"  # Piper for English, the agent's own voice else
    livekit: Any = commands["livekit"].parse_args([])
    assert (livekit.stt, livekit.tts, livekit.llm) == (None, None, None)  # the job processes read the env
    old = commands["transcribe"].parse_args(["f.wav", "--model", "base"])
    assert old.stt == "base" and "--model is deprecated; use --stt" in capsys.readouterr().err
    assert "--model" not in commands["transcribe"].format_help()
    parser = argparse.ArgumentParser()
    add_engine_options(parser, stt=False, llm=False)
    assert set(_options(parser)) == {"-h", "--help", "--tts"}


def test_an_agent_in_another_language_is_heard_and_spoken_in_it(tmp_path) -> None:
    """`language: es`: Whisper base told Spanish (tiny.en hears English only), espeak-ng's Spanish voice (the Piper
    voice installed is English), and the agent's own sentences in Spanish."""
    import shutil

    from voice.agents.source import load_agent
    from voice.speech.stack import load_stack
    from voice.speech.tts import piper_or_espeak

    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed")
    spec = tmp_path / "agent.yaml"
    spec.write_text("name: farmacia\nlanguage: es\nmodel: script\n")
    assert load_agent(str(spec)).language == "es"
    stack = load_stack("tiny.en", "auto", language="es")
    # heard in Spanish, its dictated ids read again with Spanish digit words (the pack's)
    assert stack.names["stt"] == "base" and stack.stt.language == "es" and stack.stt.read_digits
    assert isinstance(stack.tts, EspeakTTS) and isinstance(piper_or_espeak(language="es"), EspeakTTS)
    heard = stack.stt.transcribe(stack.tts.synthesize("Buenos días, quiero reservar una mesa."))
    assert "mesa" in heard.lower() and "buenos" in heard.lower()
    with pytest.raises(ValueError, match="hears English only"):
        WhisperSTT("tiny.en", language="es")
    with pytest.raises(Exception, match="speaks English"):
        PiperTTS(language="es")
