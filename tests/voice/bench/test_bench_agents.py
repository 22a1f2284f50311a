"""`bench voice --calls` by path and folder, per-agent figures, and `bench brain --agent` on an agent's own eval
set: the options that measure agents other than the demo. Timings are never asserted."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
import yaml

from loop.bench import brain as brain_bench
from loop.bench.brain import load_cases
from tests.paths import ROOT
from voice.bench import voice as bench_voice
from voice.bench.voice import COLUMNS, CallOutcome, bench_paths, call_label, run_bench, summarise
from voice.bench.voice_report import format_summary
from voice.cli import build_parser
from voice.speech.stack import load_stack
from voice.testing.scripted_call import FIXTURES

EXAMPLES = ROOT / "examples"
AGENTS = ("appointments", "farmacia", "garage", "hotel", "outage_line")


def test_calls_by_name_file_and_folder() -> None:
    hotel = EXAMPLES / "hotel" / "calls"
    picked = bench_paths("local", ["refund_yes", str(hotel / "cancel_yes.yaml"), str(hotel)])
    assert picked[:2] == [FIXTURES / "refund_yes.yaml", hotel / "cancel_yes.yaml"]
    assert len(picked) == 1 + len(list(hotel.glob("*.yaml")))  # cancel_yes is not run twice
    every = bench_paths("local", [str(EXAMPLES)])  # agent files and eval sets are not call scripts
    assert {call_label(p).split("/")[0] for p in every} == set(AGENTS) and len(every) >= 6 * len(AGENTS)
    assert len({call_label(p) for p in every}) == len(every)  # thanks_bye of two agents stays apart
    assert call_label(FIXTURES / "refund_yes.yaml") == "refund_yes"
    assert "barge_in" not in {p.stem for p in bench_paths("local", [str(FIXTURES)])}


def test_what_is_not_a_call_script_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"no such call script\(s\): nope, .*agent\.yaml \(not a call script"):
        bench_paths("script", ["nope", str(EXAMPLES / "hotel" / "agent.yaml")])
    with pytest.raises(ValueError, match="a folder without call scripts"):
        bench_paths("script", [str(tmp_path)])


def _outcome(name: str, agent: str, passed: bool, v2v: float) -> CallOutcome:
    row = {k: "" for k in COLUMNS} | {"call": name, "agent": agent, "voice_to_voice_ms": v2v, "with_tools": 1,
                                      "first_audio_ms": v2v, "ack_first": 0}
    return CallOutcome(name, [row], passed, [] if passed else ["missing 'ready'"], ["reply: hi"], [], 1.0, agent)


def test_each_agent_has_its_own_pass_rate_and_latency() -> None:
    calls = [_outcome("hotel/a", "hotel", True, 800.0), _outcome("hotel/b", "hotel", False, 1200.0),
             _outcome("garage/a", "garage", True, 700.0)]
    summary = summarise(calls)
    assert summary["agents"]["hotel"] == {"calls": 2, "passed": 1, "rate": 0.5,
                                          "voice_to_voice_ms": {"n": 2, "p50": 800.0, "p95": 1200.0}}
    text = format_summary(summary, "local", 1.0)
    assert "  hotel: 1/2 calls pass (50.0 %), voice-to-voice p50 800 / p95 1200 ms (n=2)" in text
    assert "  garage: 1/1 calls pass (100.0 %)" in text and "FAIL hotel/b: missing 'ready'" in text
    assert "  garage:" not in format_summary(summarise(calls[2:]), "local", 1.0)  # one agent: no breakdown


def test_an_example_call_on_the_wall_clock_is_labelled_with_its_agent(tmp_path: Path) -> None:
    calls = run_bench([EXAMPLES / "garage" / "calls" / "opening_hours.yaml"], load_stack("tiny.en", tts="piper"),
                      None, speed=3.0, trace_dir=tmp_path)
    (call,) = calls
    assert call.passed, call.problems
    assert (call.name, call.agent, call.rows[0]["call"], call.rows[0]["agent"]) == (
        "garage/opening_hours", "garage", "garage/opening_hours", "garage")
    assert (tmp_path / "garage" / "opening_hours.jsonl").is_file()


def test_bench_voice_takes_a_folder_and_checks_each_calls_agent_first(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    def fake_run(paths: list[Path], *_a: Any, **_k: Any) -> list[CallOutcome]:
        seen["paths"] = paths
        return [_outcome(call_label(p), "hotel", True, 900.0) for p in paths]

    monkeypatch.setattr(bench_voice, "run_bench", fake_run)
    monkeypatch.setattr("voice.speech.stack.load_stack", lambda *a, **k: None)
    folder = EXAMPLES / "hotel" / "calls"
    args = build_parser().parse_args(["bench", "voice", "--calls", str(folder), "--csv", str(tmp_path / "t.csv")])
    assert args.func(args) == 0 and seen["paths"] == sorted(folder.glob("*.yaml"))
    broken = tmp_path / "mine.yaml"
    broken.write_text(yaml.safe_dump({"agent": "nowhere.yaml", "caller": [{"audio": "x.wav", "at": 0.5}]}))
    bad = build_parser().parse_args(["bench", "voice", "--calls", str(broken)])
    assert bad.func(bad) == 2  # before any model is loaded


def test_bench_brain_measures_the_agent_it_is_given(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    seen: dict[str, Any] = {}

    def fake_bench(name: str, cases: list[dict[str, Any]], setup: Any, **_k: Any) -> dict[str, Any]:
        seen.update(name=name, cases=cases, setup=setup)
        return {"model": name, "agent": setup.name, "load_s": 1.0, "tokens_per_s": 30.0, "ttft_cold_s": 1.0,
                "ttft_warm_s": 0.1, "evaluated_cold": 500, "evaluated_warm": 5, "prefix_tokens": 495,
                "warm_eval_s": 1.0}

    monkeypatch.setattr(brain_bench, "bench_model", fake_bench)
    args = build_parser().parse_args(["bench", "brain", "--agent", str(EXAMPLES / "garage" / "agent.yaml"),
                                      "--limit", "3"])
    assert args.func(args) == 0
    setup = seen["setup"]
    assert [t.name for t in setup.tools] == ["repair_status", "price_quote", "book_collection"]
    assert "Hartley's Garage" in setup.system_prompt and "collection needs the caller's yes" in setup.policy_text
    assert setup.eval_set == EXAMPLES / "garage" / "tool_choice_eval.yaml" and len(seen["cases"]) == 3
    assert "as the agent garage" in capsys.readouterr().out
    default = build_parser().parse_args(["bench", "brain", "--limit", "1"])
    assert default.func(default) == 0 and seen["setup"].tools[0].name == "lookup_order"
    bad = build_parser().parse_args(["bench", "brain", "--agent", "nowhere.yaml"])
    assert bad.func(bad) == 2


@pytest.mark.parametrize("agent", AGENTS)
def test_each_agents_eval_set_names_its_own_tools_and_arguments(agent: str) -> None:
    from voice.cli import _brain_setup

    setup = _brain_setup(argparse.Namespace(agent=str(EXAMPLES / agent / "agent.yaml")))
    schemas = {t.name: set(t.schema.get("properties", {})) for t in setup.tools}
    cases = load_cases(setup.eval_set)
    assert len(cases) >= 15 and len({c["id"] for c in cases}) == len(cases)
    for case in cases:
        expect = case["expect"]
        if expect != "text":
            assert set(expect["args"]) == schemas[expect["tool"]], case["id"]
    assert {c["expect"]["tool"] for c in cases if c["expect"] != "text"} == set(schemas)


def test_tool_choice_arguments_are_compared_as_said() -> None:
    from loop.bench.brain import score
    from loop.types import ModelResponse, ToolCall

    said = ModelResponse(text="", tool_calls=[ToolCall("book_collection", {"job_number": "6021", "day": "friday",
                                                                         "time": "10 am"})])
    expect = {"tool": "book_collection", "args": {"job_number": "6021", "day": "Friday", "time": "10 a.m."}}
    assert score(expect, said)[0]
    assert not score({**expect, "args": {**expect["args"], "job_number": "6012"}}, said)[0]
