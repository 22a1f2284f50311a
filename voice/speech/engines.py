"""The engines a call runs on, behind names: what the session needs of each kind (typed protocols), one
registry per kind, and the one place every command gets its `--stt/--tts/--llm` options from.

A new engine is a class anywhere (it only has to have the protocol's methods) plus one line here:

    STT_ENGINES.add("distil", "mypkg.stt:DistilSTT", "Distil-Whisper on CTranslate2", model="distil-small.en")

Targets are `module:attribute` strings imported only when the engine is loaded, so `voiceloop --help` loads no
model library. A factory gets the registered options plus the settings it accepts (`threads`).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

import numpy as np

from loop.types import Model

# ---- what the session calls ----------------------------------------------------------------------------


@runtime_checkable
class VAD(Protocol):
    """Streaming voice activity: one speech probability per 512-sample (32 ms) 16 kHz int16 frame."""

    def prob(self, frame: np.ndarray) -> float: ...

    def reset(self) -> None:
        """Forget the stream so far (a new caller)."""


@runtime_checkable
class STT(Protocol):
    """Speech to text for 16 kHz mono int16 audio; "" when there is no speech. Called from worker threads.

    An engine that can be biased towards a call's words also takes `vocabulary=` (a tuple of words and phrases);
    `transcribe_with` passes it to those engines only."""

    def transcribe(self, audio: np.ndarray) -> str: ...


_TAKES: dict[tuple[type, str], bool] = {}


# Set while a transcript only feeds speculation (`Transcribe.optional`, on the wall clock): an engine may make it
# a quick pass (`voice.speech.stt.WhisperSTT`: one greedy decoding, no second one without the vocabulary, no digit
# re-reading), so the turn's final transcript, which waits for it, starts sooner. Not kept as a finished window.
QUICK_PASS: ContextVar[bool] = ContextVar("voiceloop_quick_stt_pass", default=False)


def takes_vocabulary(stt: object) -> bool:
    """Whether the engine's `transcribe` accepts a `vocabulary` keyword."""
    return _takes(stt, "vocabulary")


def takes_id_digits(stt: object) -> bool:
    """Whether the engine's `transcribe` accepts an `id_digits` keyword (the lengths of the call's identifiers)."""
    return _takes(stt, "id_digits")


def _takes(stt: object, keyword: str) -> bool:
    key = (type(stt), keyword)
    if key not in _TAKES:
        try:
            _TAKES[key] = keyword in inspect.signature(stt.transcribe).parameters  # type: ignore[attr-defined]
        except (TypeError, ValueError):
            _TAKES[key] = False
    return _TAKES[key]


def transcribe_with(stt: STT, audio: np.ndarray, vocabulary: Sequence[str] = (), id_digits: Sequence[int] = ()
                    ) -> str:
    """`stt.transcribe(audio)`, biased towards `vocabulary` when there is one and the engine takes it, told how
    many digits the call's identifiers have (`id_digits`) when the engine takes that."""
    options: dict[str, Any] = {}
    if vocabulary and takes_vocabulary(stt):
        options["vocabulary"] = tuple(vocabulary)
    if id_digits and takes_id_digits(stt):
        options["id_digits"] = tuple(id_digits)
    return stt.transcribe(audio, **options)  # type: ignore[call-arg]


@runtime_checkable
class TTS(Protocol):
    """Text (one clause) to 16 kHz mono int16 audio. Called from worker threads."""

    def synthesize(self, text: str) -> np.ndarray: ...


@runtime_checkable
class EndOfTurn(Protocol):
    """Whether the caller's turn so far (16 kHz mono, ending where they went quiet) sounds finished: a
    probability. Called from worker threads."""

    def complete(self, audio: np.ndarray) -> float: ...


@runtime_checkable
class Chunker(Protocol):
    """Streamed text deltas in, speakable clauses out (`voice.speech.tts.ClauseChunker`); one per reply."""

    def push(self, delta: str) -> list[str]: ...

    def flush(self) -> list[str]: ...


# ---- registries ----------------------------------------------------------------------------------------

E = TypeVar("E")


class EngineUnavailableError(RuntimeError):
    """An engine's library is not installed; the message names the option and the missing import."""


class EngineConfigError(ValueError):
    """An engine that cannot be built as configured (e.g. `--llm openai` without VOICELOOP_LLM_URL); one line
    naming the option and the fix."""


@dataclass(frozen=True)
class EngineSpec:
    name: str
    target: str | None  # "module:attr[.attr]"; None: nothing to load (the scripted model)
    about: str
    options: Mapping[str, Any] = field(default_factory=dict)


class Registry(Generic[E]):
    """Engines of one kind by name, in the order they were added; the first is the default."""

    def __init__(self, kind: str) -> None:
        self.kind = kind  # also the command-line option: --stt, --tts, --llm
        self.specs: dict[str, EngineSpec] = {}

    def add(self, name: str, target: str | None, about: str, /, **options: Any) -> None:
        """Register an engine; `options` are passed to its factory (positional-only above, so `name=` can be one)."""
        self.specs[name] = EngineSpec(name, target, about, options)

    def names(self) -> list[str]:
        return list(self.specs)

    @property
    def default(self) -> str:
        return next(iter(self.specs))

    def spec(self, name: str) -> EngineSpec:
        if name not in self.specs:
            known = [repr(n) for n in self.specs]
            choices = f"{', '.join(known[:-1])} or {known[-1]}" if len(known) > 1 else "".join(known)
            raise ValueError(f"unknown --{self.kind} {name!r}: use {choices}")
        return self.specs[name]

    def load(self, name: str, /, **settings: Any) -> E:
        """Build the engine `name`; `settings` (e.g. threads=1) go to factories that take them."""
        spec = self.spec(name)
        if spec.target is None:
            return None  # type: ignore[return-value]  # the scripted model; no end-of-turn model
        try:
            factory = _resolve(spec.target)
            return factory(**spec.options, **_accepted(factory, settings))
        except ImportError as exc:
            raise EngineUnavailableError(f"--{self.kind} {name} needs {spec.target}: {exc}") from exc
        except ValueError as exc:  # its settings (the environment, a file) are wrong: say which, not a traceback
            raise EngineConfigError(f"--{self.kind} {name}: {exc}") from None

    def help(self) -> str:
        return "; ".join(f"{s.name}: {s.about}" for s in self.specs.values())


def _resolve(target: str) -> Callable[..., Any]:
    module, _, path = target.partition(":")
    value: Any = importlib.import_module(module)
    for part in path.split("."):
        value = getattr(value, part)
    return value


def _accepted(factory: Callable[..., Any], settings: dict[str, Any]) -> dict[str, Any]:
    params = inspect.signature(factory).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return settings
    return {k: v for k, v in settings.items() if k in params}


VAD_ENGINES: Registry[VAD] = Registry("vad")
VAD_ENGINES.add("silero", "voice.speech.vad:SileroVAD",
                "Silero VAD v6 on onnxruntime (the file ships in faster-whisper)")

STT_ENGINES: Registry[STT] = Registry("stt")
# beam 3: ids dictated digit by digit come out whole ("to 0 to 0 running late" where greedy heard "too near too near
# O'Ragging rate"), for ~8 % more decoding time and the same word error rate over audio_fixtures
STT_ENGINES.add("tiny.en", "voice.speech.stt:WhisperSTT", "Whisper tiny.en on CTranslate2 (fast)", model="tiny.en",
                beam_size=3)
# base beam 3 too: over espeak-ng's Spanish callers (examples/farmacia and agents_es dev lines, 56) word error
# 0.442 -> 0.397 for ~5 % more time per line
STT_ENGINES.add("base", "voice.speech.stt:WhisperSTT", "Whisper base on CTranslate2 (more accurate)", model="base",
                beam_size=3)
STT_ENGINES.add("openai", "voice.speech.remote:OpenAISTT",
                "an OpenAI-compatible /v1/audio/transcriptions server: VOICELOOP_STT_URL, VOICELOOP_STT_MODEL")

TTS_ENGINES: Registry[TTS] = Registry("tts")
TTS_ENGINES.add("auto", "voice.speech.tts:piper_or_espeak", "Piper when its voice is installed, else espeak-ng")
TTS_ENGINES.add("piper", "voice.speech.tts:PiperTTS", "Piper, en_US joe medium (neural; GPL-3.0 through espeak-ng)")
TTS_ENGINES.add("espeak", "voice.speech.tts:EspeakTTS", "espeak-ng (robotic, tiny)")
TTS_ENGINES.add("openai", "voice.speech.remote:OpenAITTS",
                "an OpenAI-compatible /v1/audio/speech server: VOICELOOP_TTS_URL, _MODEL, _VOICE")

TURN_ENGINES: Registry[EndOfTurn | None] = Registry("turn")
TURN_ENGINES.add("smart-turn", "voice.speech.end_of_turn:SmartTurn",
                 "Smart Turn v3.2 on onnxruntime: ends a finished-sounding turn after 0.2 s of silence (the file "
                 "ships in the pipecat-ai wheel)")
TURN_ENGINES.add("none", None, "the transcript rules alone: a finished sentence waits 0.42 s of silence")

SCRIPTED = "script"
LLM_ENGINES: Registry[Model | None] = Registry("llm")
LLM_ENGINES.add(SCRIPTED, None, "no LLM, scripted replies: a call script's (or --script FILE's), else the agent's "
                "own script (an agent file's script:, a factory's ScriptedModel), else a looping acknowledgement")
LLM_ENGINES.add("local", "loop.models.llama.model:LlamaModel", "embedded Qwen2.5-Coder 0.5B on llama.cpp",
                name="qwen2.5-coder-0.5b-instruct")
LLM_ENGINES.add("local-1.5b", "loop.models.llama.model:LlamaModel",
                "embedded Qwen2.5-Coder 1.5B (slower, more accurate)", name="qwen2.5-coder-1.5b-instruct")
LLM_ENGINES.add("openai", "loop.models.openai:OpenAICompatModel.from_env",
                "any OpenAI-compatible server: VOICELOOP_LLM_URL, VOICELOOP_LLM_MODEL, OPENAI_API_KEY")


def load_llm(name: str | None) -> Model | None:
    """The model chosen by `--llm`; None for the scripted replies (also when no `--llm` was given)."""
    return LLM_ENGINES.load(name or SCRIPTED)


# ---- the command-line options --------------------------------------------------------------------------


class _DeprecatedAlias(argparse.Action):
    """An old spelling that still works (`--model` for `--stt`), with a note on stderr."""

    def __init__(self, *args: Any, new: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.new = new

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(f"{parser.prog}: {option_string} is deprecated; use {self.new}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_engine_options(parser: argparse.ArgumentParser, *, stt: bool = True, tts: bool = True, llm: bool = True,
                       script: bool = False, defaults: bool = True, tts_default: str | None = None,
                       model_alias: bool = False) -> None:
    """`--stt`, `--tts` and `--llm` (choices and help from the registries) on one command's parser.

    script: also `--script FILE`, exclusive with `--llm` (the commands that serve calls). defaults=False leaves
    unset options None, for commands that fall back to the environment (`livekit`). model_alias: keep
    `--model` as a hidden, deprecated spelling of `--stt` (where it was one: `call`, `transcribe`).
    """
    def default(registry: Registry[Any], chosen: str | None = None) -> str | None:
        return (chosen or registry.default) if defaults else None

    if stt:
        parser.add_argument("--stt", default=default(STT_ENGINES), choices=STT_ENGINES.names(),
                            help=f"speech to text (default {STT_ENGINES.default}): {STT_ENGINES.help()}")
    if stt and model_alias:
        parser.add_argument("--model", dest="stt", choices=STT_ENGINES.names(), default=argparse.SUPPRESS,
                            action=_DeprecatedAlias, new="--stt", help=argparse.SUPPRESS)
    if stt:
        parser.add_argument("--turn", default=None, choices=TURN_ENGINES.names(),
                            help="end of turn from the audio (default smart-turn where it is installed, else none): "
                                 f"{TURN_ENGINES.help()}")
    if tts:
        parser.add_argument("--tts", default=default(TTS_ENGINES, tts_default), choices=TTS_ENGINES.names(),
                            help=f"text to speech (default {tts_default or TTS_ENGINES.default}): {TTS_ENGINES.help()}")
    if llm:
        group = parser.add_mutually_exclusive_group() if script else parser
        if script:
            group.add_argument("--script", help="scripted model: a YAML list of turns (or a fixture with model:)")
        group.add_argument("--llm", default=None if script else default(LLM_ENGINES), choices=LLM_ENGINES.names(),
                           help=f"who answers (default {SCRIPTED}): {LLM_ENGINES.help()}")
