"""Every scripted call in audio_fixtures/ through the real VAD, STT, loop and TTS on a virtual clock."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from voice.fixtures import FIXTURES, Fixture, run_call
from voice.stack import SpeechStack, load_stack

# the conversation scripts run in tests/test_conversations.py, with their reply checks
CALLS = [p for p in sorted(FIXTURES.glob("*.yaml"))
         if not str(yaml.safe_load(p.read_text()).get("description", "")).startswith("conversation:")]


@pytest.fixture(scope="module")
def stack() -> SpeechStack:
    return load_stack("tiny.en", tts="piper")


@pytest.mark.parametrize("path", CALLS, ids=[p.stem for p in CALLS])
def test_fixture_call(path: Path, stack: SpeechStack, tmp_path: Path) -> None:
    result = asyncio.run(run_call(Fixture.load(path), stack, tmp_path))
    assert result.failures == [], "\n".join(result.failures + [str(e) for e in result.trace])


def test_barge_in_truncates_history_to_what_was_heard(stack: SpeechStack, tmp_path: Path) -> None:
    result = asyncio.run(run_call(Fixture.load(FIXTURES / "barge_in.yaml"), stack, tmp_path))
    first = result.turns[0]
    assert first.interrupted and first.heard_text and first.heard_text != first.agent_text
    assert first.agent_text.startswith(first.heard_text.rstrip(",. "))
    paused = [e for e in result.trace if e["kind"] == "agent_paused"]
    assert paused and paused[0]["stop_latency_ms"] <= 64 + 32  # one VAD window plus one frame


def test_pause_mid_sentence_is_one_turn_with_one_reply(stack: SpeechStack, tmp_path: Path) -> None:
    result = asyncio.run(run_call(Fixture.load(FIXTURES / "pause_mid_sentence.yaml"), stack, tmp_path))
    assert len(result.turns) == 1
    assert sum(1 for e in result.trace if e["kind"] == "loop.run_finished") == 1


def test_latency_parts_add_up_to_voice_to_voice(stack: SpeechStack, tmp_path: Path) -> None:
    result = asyncio.run(run_call(Fixture.load(FIXTURES / "plain_question.yaml"), stack, tmp_path))
    lat = result.turns[0].latency_ms
    parts = ("endpointing", "stt", "llm_first_token", "first_clause", "tts_first_audio")
    assert abs(sum(lat[p] for p in parts) - lat["voice_to_voice"]) < 0.5


def test_speculative_read_is_not_executed_twice(stack: SpeechStack, tmp_path: Path) -> None:
    result = asyncio.run(run_call(Fixture.load(FIXTURES / "refund_approved.yaml"), stack, tmp_path))
    spec = [e for e in result.trace if e["kind"] == "speculative_read"]
    assert len(spec) == 1 and spec[0]["call"].startswith("lookup_order")
    asked = next(i for i, e in enumerate(result.trace) if e["kind"] == "approval_asked")
    said_yes = next(i for i, e in enumerate(result.trace) if e["kind"] == "approval_reply")
    refunded = next(i for i, e in enumerate(result.trace) if e["kind"] == "loop.tool_result"
                    and e["call"]["name"] == "issue_refund")
    assert asked < said_yes < refunded  # no mutation before the caller's yes


def test_refund_call_with_the_embedded_llm(stack: SpeechStack, tmp_path: Path) -> None:
    """The product path: recorded voice in, the embedded LLM choosing the tool, spoken approval, a refund."""
    llama = pytest.importorskip("loop.local_llm", reason="llama-cpp-python is not installed")
    from loop.weights import WeightsMissing

    try:
        model = llama.LlamaModel()
    except WeightsMissing as exc:
        pytest.skip(f"LLM weights not installed: {exc}")
    result = asyncio.run(run_call(Fixture.load(FIXTURES / "refund_approved.yaml"), stack, tmp_path, model=model))
    assert result.failures == [], "\n".join(result.failures + [str(e) for e in result.trace])
    asked = next(i for i, e in enumerate(result.trace) if e["kind"] == "approval_asked")
    refunded = next(i for i, e in enumerate(result.trace) if e["kind"] == "loop.tool_result"
                    and e["call"]["name"] == "issue_refund")
    assert asked < refunded and result.turns[0].agent_text.strip()
