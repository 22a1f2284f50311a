"""Testing helpers for your own agent over audio: a scripted call (recordings placed in time, the agent's
replies scripted or from a real model) on the virtual clock through the real VAD, Whisper and TTS, then
assertions on the caller's transcript, tool calls, verdicts, outcome and spoken text.

    from voice.testing import run_audio_call, check_call_script

    call = run_audio_call("my_agent.yaml", [("caller.wav", 0.5), ("yes.wav", 9.0)],
                          script=[{"tool_calls": [{"name": "book", "arguments": {"day": "tuesday"}}]}, "Booked."])
    call.expect.heard("tuesday").called("book", day="tuesday").executed("book").said("booked")

    # a call script (voice/testing/scripted_call.py) and its own `expect:`
    check_call_script("calls/book_tuesday.yaml")

The speech stack (Whisper tiny.en, the default TTS) is loaded once per process. Text-only tests need no
audio: see `loop.testing.Conversation`.
"""

from __future__ import annotations

import asyncio
import functools
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loop import Agent
from loop.testing import Expect, Record
from voice.agents.source import AgentSource, load_agent
from voice.speech.stack import SpeechStack, load_stack
from voice.testing.scripted_call import CallResult, Fixture, run_call

AgentLike = AgentSource | str | Path | Callable[..., Agent] | None


@functools.cache
def shared_stack(stt: str = "tiny.en", tts: str = "auto", language: str = "en") -> SpeechStack:
    """One loaded speech stack per process and choice (loading Whisper takes seconds)."""
    return load_stack(stt, tts=tts, language=language)


def as_source(agent: AgentLike, base_dir: Path | None = None) -> AgentSource | None:
    """An `AgentSource` from a source, an agent file, an import path or a factory callable (None: the call
    script's own agent)."""
    if agent is None or isinstance(agent, AgentSource):
        return agent
    if isinstance(agent, str | Path):
        return load_agent(str(agent), base_dir)
    if callable(agent):
        return AgentSource(getattr(agent, "__qualname__", "agent"), factory=agent)
    raise TypeError(f"expected an agent file, an import path or a factory, got {type(agent).__name__}")


@dataclass
class AudioCall:
    """A finished scripted call: the fixtures' `CallResult` (turns, trace, agent audio, toolset state) and
    the same assertions as a text conversation (`expect`)."""

    result: CallResult

    @property
    def record(self) -> Record:
        turns = self.result.turns
        record = Record(user=[t.user_text for t in turns if t.user_text],
                        said=[e["text"] for e in self.result.trace if e["kind"] == "agent_said"])
        record.add_loop_entries((e for e in self.result.trace if str(e["kind"]).startswith("loop.")), "loop.")
        return record

    @property
    def expect(self) -> Expect:
        return Expect(self.record)

    @property
    def state(self) -> Any:
        """The agent's toolset object (e.g. its database), as the call left it."""
        return self.result.state

    @property
    def failures(self) -> list[str]:
        """The call script's own `expect:` and `reply:` checks that were not met."""
        return self.result.failures


def run_audio_call(agent: AgentLike, caller: Sequence[tuple[str | Path, float]] | str | Path, *,
                   script: Sequence[Any] | None = None, model: Any = None, stack: SpeechStack | None = None,
                   workdir: Path | None = None, greeting: str | None = None) -> AudioCall:
    """One call on the virtual clock. `caller`: recordings with their start second, or a call script's path
    (its agent, replies and expectations apply unless `agent`/`script` say otherwise). Who answers: `model`,
    else `script` (scripted replies: strings or `{text, tool_calls}`), else the script's or the agent's own."""
    if isinstance(caller, str | Path):
        fixture = Fixture.load(caller)
    else:
        data: dict[str, Any] = {"caller": [{"audio": str(Path(p).resolve()), "at": float(at)} for p, at in caller]}
        fixture = Fixture(Path(workdir or tempfile.mkdtemp(prefix="voiceloop-test-")) / "call.yaml", data)
    if script is not None:
        fixture.data["model"] = [{"text": s} if isinstance(s, str) else dict(s) for s in script]
    if greeting is not None:
        fixture.data["agent"] = {**fixture.agent_options(), "greeting": greeting}
    source = as_source(agent, Path.cwd())
    # the call's language is its agent's: the one given, else the script's own (a Spanish script is heard in Spanish)
    stack = stack or shared_stack(language=(source or fixture.agent_source()).language)
    result = asyncio.run(run_call(fixture, stack, workdir, model=model, agent=source))
    return AudioCall(result)


def check_call_script(path: str | Path, agent: AgentLike = None, stack: SpeechStack | None = None) -> AudioCall:
    """Run a call script with its scripted replies and fail the test with every unmet expectation."""
    call = run_audio_call(agent, path, stack=stack)
    if call.failures:
        raise AssertionError(f"{path}: " + "; ".join(call.failures) + f"\n  what happened: {call.record.story()}")
    return call


def check_call_scripts_complete(calls_dir: str | Path, agent_name: str, state_for: Callable[[Path], Any]) -> None:
    """Every call script in `calls_dir` is whole: its recordings load and are all in `audio/manifest.tsv`, it names
    the agent `agent_name`, it has `expect`, `expect_llm` and `reply`, and the toolset (`state_for(folder)`, a fresh
    one per check) knows every expectation beyond the generic ones."""
    from voice.testing.scripted_call import EXPECT_KEYS

    calls_dir = Path(calls_dir)
    audio = calls_dir / "audio"
    listed = {line.split("\t")[0] for line in (audio / "manifest.tsv").read_text().splitlines()[1:]}
    assert listed == {p.name for p in audio.glob("*.wav")}
    for path in sorted(calls_dir.glob("*.yaml")):
        fixture = Fixture.load(path)
        assert len(fixture.caller_audio()) and fixture.agent_source().name == agent_name, path
        assert {"expect", "expect_llm", "reply"} <= set(fixture.data), path
        for key in ("expect", "expect_llm"):
            extra = {k: v for k, v in fixture.data[key].items() if k not in EXPECT_KEYS}
            unknown = state_for(Path(path.stem) / key).check_expectations(extra)
            assert not [u for u in unknown if "unknown" in u], (path, unknown)


def check_call_with_embedded_model(path: str | Path, workdir: Path) -> AudioCall:
    """Play a call script with the embedded model (skipped, saying why, without llama-cpp-python or its weights)
    and fail the test with every unmet expectation and reply check."""
    import pytest

    from loop.models.llama.model import LlamaModel  # first: it sets OMP_WAIT_POLICY before llama.cpp's OpenMP loads

    pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed (scripts/install_llama.sh)")
    from loop.models.llama import weights
    try:
        weights.ensure_gguf()
    except (weights.WeightsMissing, weights.WeightsCorrupt) as exc:
        pytest.skip(f"the embedded model's weights are not installed: {exc}")
    call = run_audio_call(None, path, model=LlamaModel(), workdir=workdir)
    problems = call.failures + call.result.reply_problems
    assert not problems, f"{problems}\n  what happened: {call.record.story()}"
    return call
