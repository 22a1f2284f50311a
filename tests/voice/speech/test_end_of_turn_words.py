"""When a turn ends by its words: digits the agent asked for are waited for across a pause and read with their
sound-alikes, digits said over the agent are a real interruption, a greeting alone waits for why they called, and a
Spanish caller's words are read by the Spanish pack; the bench counts turns ended inside a caller's line."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import labelled
from tests.voice.call.test_call_core import Harness
from voice.call.turns import TurnConfig, needed_silence, only_greets


def test_the_bench_counts_turns_ended_inside_a_callers_line_and_those_withdrawn() -> None:
    from types import SimpleNamespace

    from voice.bench.voice import Fed, Line, cut_offs

    line = Line(np.zeros(0, np.int16), 0.5, False, [(0.0, 1.0), (1.4, 2.5)], start=0.5)  # a pause at 1.5-1.9 s
    other = Line(np.zeros(0, np.int16), 6.0, True, [(0.0, 0.8)], start=6.0)
    fed = Fed(events=[(0, 0, {"kind": "caller_turn_ended", "text": "Hi.", "speech_end_s": 1.5}),
                      (0, 0, {"kind": "caller_went_on"}),
                      (0, 0, {"kind": "caller_turn_ended", "text": "Hi. I need a room.", "speech_end_s": 3.0}),
                      (0, 0, {"kind": "caller_turn_ended", "text": "", "speech_end_s": 5.0}),  # noise: no turn
                      (0, 0, {"kind": "caller_turn_ended", "text": "Yes.", "speech_end_s": 6.8})])
    assert cut_offs(fed, SimpleNamespace(lines=[line, other])) == {"cut_offs": 1, "went_on": 1}


def test_digits_the_agent_asked_for_are_waited_for_across_a_pause() -> None:
    """"Could you tell me the job number?" -> "Sure, it's" ... (a pause) ... "4 7 1 2": the pause is not the end."""
    from loop import Message
    from voice.call.turns import asked_for_a_number

    cfg = TurnConfig()
    asked = [Message("user", "Is my car ready?"), Message("assistant", "Could you tell me the job number?")]
    assert asked_for_a_number(asked) and not asked_for_a_number([Message("assistant", "What day suits you?")])
    assert not asked_for_a_number([Message("assistant", "Your job number is 4712.")])
    assert needed_silence("Sure, it's.", cfg, awaiting_digits=True) == cfg.hold_silence_s
    assert needed_silence("Sure, it's.", cfg) == cfg.endpoint_silence_s  # as before when nothing was asked
    assert needed_silence("It's 4712.", cfg, awaiting_digits=True) == cfg.endpoint_silence_s  # the digits came
    assert needed_silence("Yes please.", cfg, awaiting_digits=True) == cfg.hold_silence_s  # a lead-in: they follow
    # a finished sentence of more words with no digit answered something else: it ends as any other
    assert needed_silence("Five o'clock, I think.", cfg, awaiting_digits=True) == cfg.endpoint_silence_s
    assert needed_silence("Hang on, let me find the", cfg, awaiting_digits=True) == cfg.hold_silence_s
    h = Harness()
    h.core.talk.history = asked
    h.say("Sure, it's.", 0.6)
    h.frames(0.6, speech=False)  # past the finished sentence's 0.42 s: still one turn
    assert not [e for e in h.core.trace if e["kind"] == "caller_turn_ended"]


def test_an_answer_to_a_question_for_a_number_reads_its_sound_alikes_as_digits() -> None:
    """"Could you tell me the card's last four digits?" -> "It's 48 to 1." is card 4821; asked nothing, it is not."""
    from loop import Message

    for history, heard in (([Message("assistant", "Could you tell me the last four digits of the card?")], "4821"),
                           ([Message("assistant", "What can I do for you?")], "48 to 1")):
        h = Harness()
        h.core.talk.history = history
        h.say("It's 48 to 1.", 1.0)
        h.frames(2.5, speech=False)
        ended = [e["text"] for e in h.core.trace if e["kind"] == "caller_turn_ended"]
        assert ended and heard in ended[-1], ended


def test_a_number_dictated_in_pieces_is_waited_for_until_it_has_the_digits_asked_for() -> None:
    """"Could you tell me the eight-digit card number?" -> "Sure, it's 6821." ... "3390.": the pause after four
    of eight digits is not the end; after eight, the usual silence is."""
    from loop import Message
    from voice.call.turns import digits_asked

    cfg = TurnConfig()
    asked = [Message("user", "Any holds for me?"),
             Message("assistant", "Sure, I can help with that. Could you tell me the eight-digit card number?")]
    assert digits_asked(asked) == 8
    assert digits_asked([Message("assistant", "Could you tell me the card number?")]) == 0
    shaped = "Could you tell me the file reference, three letters and five digits?"
    assert digits_asked([Message("assistant", shaped)]) == 5  # "Yes, it's JFK334 ..." waits for the rest
    assert digits_asked([Message("assistant", "It's an eight-digit card number.")]) == 0  # no question
    assert needed_silence("Sure, it's 6821.", cfg, awaiting_digits=True, digits_wanted=8) == cfg.hold_silence_s
    assert needed_silence("Sure, it's 6821 3390.", cfg, awaiting_digits=True, digits_wanted=8) \
        == cfg.endpoint_silence_s
    assert needed_silence("Yes please.", cfg, awaiting_digits=True, digits_wanted=8) == cfg.hold_silence_s
    assert needed_silence("No, don't. I've just found it in my coat pocket.", cfg, awaiting_digits=True,
                          digits_wanted=4) == cfg.endpoint_silence_s  # something else than the number


@pytest.mark.parametrize(("said", "lengths", "waits"), [
    ("Me puede cancelar la reserva. 720", (5,), True),  # three of five digits, the model calling it complete
    ("Me puede cancelar la reserva, 7 2 0", (5,), True),  # dictated in pieces
    ("Me puede cancelar la reserva 72046.", (5,), False),  # all five
    ("Job number 4712", (4, 6), False),  # as long as one of the agent's ids
    ("Me puede cancelar la reserva. 720", (), False),  # an agent that declares no length
    ("Las de 10", (5,), False),  # two digits: a count or a time, not an id begun
])
def test_words_ending_on_fewer_digits_than_any_id_wait_for_the_rest(said: str, lengths: tuple[int, ...],
                                                                    waits: bool) -> None:
    """An id dictated with pauses ("siete ... dos ... cero ... cuatro ... seis") is not ended after "720" on the
    end-of-turn model's word: the agent's identifiers are five digits long, so the rest comes after the pause."""
    cfg = TurnConfig()
    needed = needed_silence(said, cfg, complete=0.9, number_whole=True, id_lengths=lengths)
    assert (needed == cfg.hold_silence_s) is waits, needed


@pytest.mark.parametrize(("said", "interrupts"), [
    ("681.", True), ("3390", True), ("Sure, it's 6821.", True), ("mm-hmm", False), ("yeah", False),
    ("okay okay", False), ("4", False), ("wait, stop", True),
])
def test_digits_said_over_the_agent_are_a_real_interruption_never_resumed_over(said: str, interrupts: bool) -> None:
    """A caller who gives the rest of their number while the agent talks is heard: "681." is no backchannel."""
    from voice.call.turns import is_interruption

    assert is_interruption(said, 0.9, TurnConfig()) is interrupts


@pytest.mark.parametrize(("said", "greeting"), labelled("greeting_turns.tsv"))
def test_a_greeting_alone_waits_for_why_they_called(said: str, greeting: str) -> None:
    cfg = TurnConfig()
    assert only_greets(said) is (greeting == "yes")
    if greeting == "yes":
        assert needed_silence(said, cfg, complete=0.99) == cfg.hold_silence_s


@pytest.mark.parametrize(("said", "wait"), labelled("turn_endings_es.tsv"))
def test_a_spanish_callers_words_are_waited_for_by_the_spanish_packs_words(said: str, wait: str) -> None:
    """A Spanish call ends turns by Spanish words: "Hola, buenas." and "... una caja de" wait for what comes next,
    a finished question does not (with the English words, "de" and "hola" ended nothing)."""
    from loop import locale

    cfg = TurnConfig()
    expected = {"end": cfg.endpoint_silence_s, "hold": cfg.hold_silence_s,
                "open": max(cfg.open_silence_s, cfg.endpoint_silence_s)}[wait]
    assert needed_silence(said, cfg, words=locale.get("es")) == expected


def test_a_spanish_question_for_a_number_says_how_many_digits_it_waits_for() -> None:
    from loop import Message, locale
    from voice.call.turns import asked_for_a_number, digits_asked

    es = locale.get("es")
    asked = [Message("assistant", "Claro, le ayudo con eso. ¿Me puede decir el número de reserva, de cinco cifras?")]
    assert asked_for_a_number(asked, es) and digits_asked(asked, es) == 5
    assert not asked_for_a_number([Message("assistant", "¿Qué día le viene bien?")], es)
