"""An agent's vocabulary (its declared words and its tools' enum values) reaches every transcription of its calls,
through the batched and shared Whisper too; engines that cannot be biased are called as before."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Literal

import numpy as np
import pytest
from pydantic import BaseModel

from loop import Agent, LoopConfig, ScriptedModel, Tool
from tests.fakes import LoudnessVAD, ToneTTS, WordChunker, track
from voice.agents.source import load_agent
from voice.agents.spec import AgentConfigError, AgentSpec
from voice.runtime.session import CallSession
from voice.speech._whisper_text import drop_repeated_sentence, repeats_a_sentence, too_fast, vocabulary_prompt
from voice.speech.engines import transcribe_with
from voice.speech.incremental_stt import TurnTranscriber
from voice.speech.shared_models import SharedSTT
from voice.speech.stt_batch import BatchedSTT
from voice.speech.vocabulary import agent_vocabulary, enum_strings, spoken_vocabulary


class PizzaArgs(BaseModel):
    dish: Literal["Margherita", "Quattro Formaggi", "calzone"]
    size: Literal["small", "extra_large"] = "small"


def order_pizza(dish: str, size: str = "small") -> str:
    return f"one {size} {dish}"


def delivery_slot(day: Literal["monday", "tuesday"], note: str = "") -> str:
    return day


def pizza_agent(**kwargs: object) -> Agent:
    tools = [Tool(order_pizza, args=PizzaArgs), Tool(delivery_slot)]
    return Agent(ScriptedModel(["Coming up."]), tools, config=LoopConfig.profile("voice"), **kwargs)  # type: ignore[arg-type]


def test_enum_values_of_every_tool_are_found_in_its_schema() -> None:
    schema = {"$defs": {"Size": {"enum": ["small", "large"]}}, "properties": {
        "dish": {"anyOf": [{"enum": ["Margherita", 3]}, {"const": "Calzone"}]}, "note": {"type": "string"}}}
    assert list(enum_strings(schema)) == ["small", "large", "Margherita", "Calzone"]
    assert list(enum_strings({"type": "object", "properties": {}})) == []


def test_the_declared_words_come_first_then_the_enums_said_as_words_and_once_each() -> None:
    agent = pizza_agent(vocabulary=("Quattro Formaggi", " Wickham Road ", "Siobhan"))
    assert agent.vocabulary == ("Quattro Formaggi", "Wickham Road", "Siobhan")
    assert agent_vocabulary(agent) == ("Quattro Formaggi", "Wickham Road", "Siobhan", "Margherita", "calzone",
                                       "small", "extra large", "monday", "tuesday")
    assert pizza_agent().vocabulary == ()
    assert spoken_vocabulary(["out_of_stock", "Out of stock", "", "  "]) == ("out of stock",)


def test_a_vocabulary_that_is_not_a_list_of_strings_is_refused() -> None:
    with pytest.raises(TypeError, match="not one string"):
        pizza_agent(vocabulary="Margherita")
    with pytest.raises(TypeError, match="strings only"):
        pizza_agent(vocabulary=("Margherita", 4))


def test_an_agent_file_declares_its_vocabulary(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text("name: pizzeria\nvocabulary: [Margherita, Quattro Formaggi, Wickham Road]\n"
                    "tools: [tests.voice.speech.test_stt_vocabulary:delivery_slot]\n")
    source = load_agent(str(path))
    agent = source.maker(tmp_path / "data")("call-1")
    assert agent.vocabulary == ("Margherita", "Quattro Formaggi", "Wickham Road")
    assert agent_vocabulary(agent)[-2:] == ("monday", "tuesday")
    path.write_text("vocabulary: Margherita\n")
    with pytest.raises(AgentConfigError, match="vocabulary"):
        AgentSpec.load(path)


class PlainSTT:
    def __init__(self) -> None:
        self.calls = 0

    def transcribe(self, audio: np.ndarray) -> str:
        self.calls += 1
        return "plain"


class HintedSTT:
    def __init__(self) -> None:
        self.heard: list[tuple[str, ...]] = []
        self.lock = threading.Lock()

    def transcribe(self, audio: np.ndarray, vocabulary: tuple[str, ...] = ()) -> str:
        with self.lock:
            self.heard.append(vocabulary)
        return "hinted" if np.abs(audio).max(initial=0) > 0 else ""


def test_only_engines_that_take_a_vocabulary_are_given_one() -> None:
    audio = np.ones(1600, np.int16)
    plain, hinted = PlainSTT(), HintedSTT()
    assert transcribe_with(plain, audio, ("Margherita",)) == "plain" and plain.calls == 1
    assert transcribe_with(hinted, audio, ["Margherita"]) == "hinted" and hinted.heard == [("Margherita",)]
    assert transcribe_with(hinted, audio) == "hinted" and hinted.heard[-1] == ()
    shared = SharedSTT(hinted)
    assert shared.transcribe(audio, ("Calzone",)) == "hinted" and hinted.heard[-1] == ("Calzone",)
    assert TurnTranscriber().transcribe(shared, audio, ("Niamh",)) == "hinted" and hinted.heard[-1] == ("Niamh",)


class RecordingWindows:
    def __init__(self) -> None:
        self.seen: list[list[tuple[str, ...]] | None] = []

    def split_windows(self, samples: np.ndarray) -> list[tuple[int, int]]:
        return [(0, len(samples))]

    def transcribe_windows(self, windows: list[np.ndarray],
                           vocabularies: list[tuple[str, ...]] | None = None) -> list[str]:
        self.seen.append(vocabularies)
        return [" ".join(v) for v in vocabularies] if vocabularies else ["-"] * len(windows)


def test_the_batched_whisper_keeps_each_windows_vocabulary() -> None:
    model = RecordingWindows()
    batched = BatchedSTT(model)
    assert batched.transcribe(np.zeros(4, np.int16)) == "-" and model.seen == [None]  # no vocabulary: as before
    assert batched.transcribe(np.zeros(4, np.int16), ["Margherita", "Calzone"]) == "Margherita Calzone"
    assert model.seen[-1] == [("Margherita", "Calzone")]
    served = SharedSTT(batched)  # a server's Whisper: shared by every call, batched (voice/hosting/registry.py)
    assert TurnTranscriber().transcribe(served, np.zeros(4, np.int16), ("Niamh",)) == "Niamh"


class RecordingLengths(RecordingWindows):
    def transcribe_windows(self, windows: list[np.ndarray], vocabularies: list[tuple[str, ...]] | None = None,
                           id_digits: list[tuple[int, ...]] | None = None) -> list[str]:
        self.seen.append(id_digits)
        return ["-"] * len(windows)


def test_the_batched_whisper_hands_on_each_windows_identifier_lengths() -> None:
    """`id_digits` (voice/speech/_id_length.py) goes to the engine with its window, as the vocabulary does; an
    engine that takes none is never handed them."""
    model = RecordingLengths()
    batched = BatchedSTT(model)
    batched.transcribe(np.zeros(4, np.int16), id_digits=(4, 8))
    assert model.seen == [[(4, 8)]]
    plain = RecordingWindows()
    BatchedSTT(plain).transcribe(np.zeros(4, np.int16), ["Margherita"])
    assert plain.seen == [[("Margherita",)]]


def test_every_transcription_of_a_call_carries_the_agents_vocabulary(tmp_path: Path) -> None:
    stt = HintedSTT()
    agent = pizza_agent(vocabulary=("Quattro Formaggi",))
    session = CallSession(agent, LoudnessVAD(), stt, ToneTTS(), WordChunker)
    asyncio.run(session.run_file(track((0.3, 40), total_s=4.0)))
    assert stt.heard and all(v == agent_vocabulary(agent) for v in stt.heard)


def test_the_prompt_names_each_word_once_with_a_capital() -> None:
    assert vocabulary_prompt(["Margherita", "calzone", "Margherita", " ", "monday"]) == "Margherita, Calzone, Monday."
    assert vocabulary_prompt([]) == ""


def test_a_language_puts_the_words_in_its_own_sentence_as_written() -> None:
    """The pack's VOCABULARY_PROMPT and VOCABULARY_CAPITALS: under a bare capitalised list Whisper base wrote Spanish
    callers as one ("Hola, Quemilla, Reserva, Cajas")."""
    from loop import locale

    en, es = locale.get("en"), locale.get("es")
    assert vocabulary_prompt(["calzone", "Monday"], en.VOCABULARY_PROMPT, en.VOCABULARY_CAPITALS) == \
        vocabulary_prompt(["calzone", "Monday"])
    assert vocabulary_prompt(["Farmacia Sol", "ibuprofeno"], es.VOCABULARY_PROMPT, es.VOCABULARY_CAPITALS) == \
        "Hola, buenas. Hablamos de Farmacia Sol, Ibuprofeno."


def test_a_sentence_said_twice_at_once_is_found_and_kept_once() -> None:
    looped = " Can I get a margarito with extra endugia? Can I get a margarito with extra endugia"
    assert repeats_a_sentence(looped) and drop_repeated_sentence(looped) == "Can I get a margarito with extra endugia?"
    assert too_fast(looped, 2.5) and not too_fast(looped, 8.0)  # 16 words: 2.5 s of speech cannot hold them
    assert not repeats_a_sentence("No. No. No.") and not repeats_a_sentence("I said it. I said it again.")


def test_a_decoder_that_starts_the_window_over_is_cut_where_it_does() -> None:
    """Whisper tiny.en on the garage's collection line: two sentences, then the first again with its numbers
    dropped. Left in, the caller's words end on "is" and the turn waits the long silence for a number."""
    looped = ("I'd like to pick up my car on Friday at 10 am. The job number is 6021 I'd like to pick up my car on"
              " Friday at am The job number is")
    kept = "I'd like to pick up my car on Friday at 10 am. The job number is 6021"
    assert repeats_a_sentence(looped) and drop_repeated_sentence(looped) == kept
    assert drop_repeated_sentence(kept + ". " + kept) == kept + "."  # the copy whole
    # a caller who starts over inside a sentence, or says something like an earlier sentence, is left alone
    for said in ["I want to cancel my, I want to cancel my order.", "Hi. Is my car ready? The job number is 4712.",
                 "Please send order 1234 to 20 Oxford Street. Please send it today."]:
        assert not repeats_a_sentence(said), said


def test_a_transcript_mentions_a_vocabulary_entry_or_one_of_its_rare_words() -> None:
    from voice.speech._whisper_text import hint_terms, mentions

    terms = hint_terms(["Doctor Okonkwo", "Harbour Suite"], is_rare=lambda w: w in {"okonkwo"})
    assert terms == ("doctor okonkwo", "harbour suite", "okonkwo")
    assert mentions("Put me through to Dr. Okonkwo.", terms) and mentions("Is the harbour suite free?", terms)
    assert not mentions("Is the harbor sweet free?", terms) and not mentions("okonkwos", terms)
