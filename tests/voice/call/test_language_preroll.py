"""A turn keeps at least its language's pre-roll before the detected onset (the pack's ONSET_PREROLL_S): a Spanish
turn opening on "Sí" lost its /s/ to Whisper base with the call's own 0.1 s ("C, S, el 50 y 8")."""

from __future__ import annotations

import math

from tests.fakes import WordChunker
from voice.audio import FRAME_S
from voice.call.core import CallCore
from voice.call.state import SessionConfig
from voice.call.turns import TurnConfig


def _kept_frames(preroll_s: float, turns: TurnConfig) -> int:
    return turns.start_frames - 1 + math.ceil(preroll_s / FRAME_S - 1e-9)


def test_a_spanish_call_keeps_its_languages_pre_roll_and_an_english_one_its_own() -> None:
    turns = TurnConfig()
    spanish = CallCore(SessionConfig(language="es"), WordChunker, lambda: 0.0)
    english = CallCore(SessionConfig(), WordChunker, lambda: 0.0)
    assert spanish.hearing.recent.maxlen == _kept_frames(0.3, turns)
    assert english.hearing.recent.maxlen == _kept_frames(turns.preroll_s, turns)


def test_a_longer_pre_roll_the_call_asks_for_is_kept() -> None:
    core = CallCore(SessionConfig(language="es", turns=TurnConfig(preroll_s=0.5)), WordChunker, lambda: 0.0)
    assert core.hearing.recent.maxlen == _kept_frames(0.5, TurnConfig())
