"""Loop configuration: four named profiles of one frozen, documented LoopConfig."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from loop import Budget, Ceiling, LoopConfig
from loop.config import PROFILES


def test_four_profiles_of_one_class() -> None:
    assert LoopConfig.profile_names() == ("voice", "chat", "task", "long_horizon")
    for name in LoopConfig.profile_names():
        config = LoopConfig.profile(name)
        assert type(config) is LoopConfig and config.name == name
        assert type(config.budget) is Budget


def test_voice_is_fast_and_short() -> None:
    voice = LoopConfig.profile("voice")
    assert voice.turn_wall_clock_s.limit < 1.0
    assert voice.budget.turns.limit <= 5
    assert voice.parallel_reads


def test_profiles_differ_where_the_use_differs() -> None:
    by_name = {n: LoopConfig.profile(n) for n in LoopConfig.profile_names()}
    turns = [by_name[n].budget.turns.limit for n in ("voice", "chat", "task", "long_horizon")]
    assert turns == sorted(turns)  # more autonomy, more turns
    assert by_name["task"].stop_on_decline and by_name["long_horizon"].stop_on_decline
    assert not by_name["voice"].stop_on_decline and not by_name["chat"].stop_on_decline


@pytest.mark.parametrize("model", [LoopConfig, Budget, Ceiling])
def test_every_field_is_documented(model: type[BaseModel]) -> None:
    undocumented = [name for name, f in model.model_fields.items() if not (f.description or "").strip()]
    assert undocumented == []
    schema = model.model_json_schema()
    props = schema["properties"]
    assert all(props[name].get("description") for name in model.model_fields)


def test_unknown_profile_names_the_choices() -> None:
    with pytest.raises(ValueError, match="unknown loop profile 'phone'; choose one of voice, chat, task, long_horizon"):
        LoopConfig.profile("phone")


def test_configs_are_frozen() -> None:
    config = LoopConfig.profile("voice")
    with pytest.raises(ValidationError):
        config.repeat_threshold = 9  # type: ignore[misc]
    with pytest.raises(ValidationError):
        config.budget.turns = Ceiling(limit=99)  # type: ignore[misc]
    with pytest.raises(ValidationError):
        config.budget.turns.limit = 99  # type: ignore[misc]


def test_overrides_copy_and_leave_the_profile_alone() -> None:
    config = LoopConfig.profile("voice", repeat_threshold=5, budget=Budget.of(turns=3))
    assert config.repeat_threshold == 5 and config.budget.turns.limit == 3 and config.name == "voice"
    assert PROFILES["voice"].repeat_threshold == 2 and PROFILES["voice"].budget.turns.limit == 4


def test_overrides_are_validated() -> None:
    with pytest.raises(ValidationError):
        LoopConfig.profile("task", repeat_threshold="often")
    with pytest.raises(ValidationError):
        LoopConfig.profile("task", repeat_treshold=2)  # a typo must not be silently ignored
