"""Every scripted call in audio_fixtures/ through the real VAD, STT, loop and TTS on a virtual clock."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
import yaml

from loop import locale
from voice.runtime.session import TurnRecord
from voice.speech.stack import SpeechStack, load_stack
from voice.testing.heard import heard_words, mentions
from voice.testing.scripted_call import FIXTURES, CallResult, Fixture, check_expectations, run_call

# the conversation scripts run in tests/voice/testing/test_conversations.py, with their reply checks
CALLS = [p for p in sorted(FIXTURES.glob("*.yaml"))
         if not str(yaml.safe_load(p.read_text()).get("description", "")).startswith("conversation:")]


# ---- what Whisper wrote, compared by key words (no audio) ------------------------------------------

@pytest.mark.parametrize(("written", "words"), [
    ("I would like a refund of $20 for order 4567.", "i would like a refund of 20 for order 4567"),
    ("a refund and twenty dollars for order four five six seven", "a refund and 20 dollars for order 4567"),
    ("Please end order 12, 34 to 20 Oxford Street, London.", "please end order 1234 to 20 oxford street london"),
    ("Why is my order to zero to zero running late?", "why is my order 2020 running late"),
    ("on order twenty twenty", "on order 2020"),
    ("It's 4 5 6 7, or 45-67", "it's 4567 or 4567"),
    ("four thousand five hundred sixty seven, one hundred and twenty", "4567 100 and 20"),
    ("Refunded $1,000.00, then $20.50.", "refunded 1000 then 20.50"),
])
def test_heard_words_puts_every_number_in_digits(written: str, words: str) -> None:
    assert heard_words(written) == words.split()


@pytest.mark.parametrize(("written", "words"), [
    ("Quería veinte euros del pedido cuatro cinco seis siete.", "queria 20 euros del pedido 4567"),
    ("Son trescientos ochenta y cinco pesos, ¿no?", "son 385 pesos no"),
    ("El número es 4 5 6 7", "el numero es 4567"),
    ("Para el año dos mil veintiséis", "para el año 2026"),
])
def test_a_spanish_calls_words_are_read_in_spanish(written: str, words: str) -> None:
    """The call's pack writes its number words in digits; accents are folded, "ñ" is a letter."""
    assert heard_words(written, locale.get("es")) == words.split()


def test_a_spanish_calls_user_text_is_checked_in_spanish() -> None:
    result = CallResult([TurnRecord("Sí, el pedido es cuatro cinco seis siete, veinte euros.", 0.5)], [],
                        np.zeros(0, np.int16), None, words=locale.get("es"))
    assert check_expectations({"user_text": [["si", "4567", "20 euros", "número"]]}, result) == [
        "turn 0: user text should contain 'número', got 'Sí, el pedido es cuatro cinco seis siete, veinte euros.'"]
    assert check_expectations({"user_text": [["pedido es 4567", "veinte"]]}, result) == []


def test_mentions_finds_key_words_not_whispers_exact_words() -> None:
    # the same recording on two CPUs: both hold the key words
    for heard in ("I would like a refund of $20 for order 4567.", "I would like a refund and $20 for order 4567"):
        assert all(mentions(heard, w) for w in ("refund", "twenty", "$20", "four five six seven", "order 4567"))
    assert mentions("Where's my order?", "where") and mentions("It was delivered.", "deliver")
    assert mentions("Sorry, no, I mean 4567.", ["sorry", "mean"]) and mentions("Go on.", ["stop", "go"])
    # and still tells wrong words apart: numbers whole, words from their start, phrases in order
    assert not mentions("order 4567", "4500") and not mentions("order 2020", "20") and not mentions("$25", "20")
    assert not mentions("a fund", "refund") and not mentions("order my where", "where is my order")
    assert not mentions("anything", ["stop", "go"]) and not mentions("", "refund") and not mentions("refund", "")


def test_user_text_expectations_are_key_words_with_alternatives() -> None:
    turns = [TurnRecord("I would like a refund and $20 for order 4567", 0.5), TurnRecord("Yes go ahead", 9.0)]
    result = CallResult(turns, [], np.zeros(0, np.int16), None)
    assert check_expectations({"user_text": [["refund", ["twenty", "20 dollars"], "4567"], "yes"]}, result) == []
    assert check_expectations({"user_text": [[["refund of", "refund for"]]]}, result) == [
        "turn 0: user text should contain 'refund of' or 'refund for', got "
        "'I would like a refund and $20 for order 4567'"]
    assert check_expectations({"user_text": ["refund", "no"]}, result) == [
        "turn 1: user text should contain 'no', got 'Yes go ahead'"]


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
    llama = pytest.importorskip("loop.models.llama.model", reason="llama-cpp-python is not installed")
    from loop.models.llama.weights import WeightsMissing

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
