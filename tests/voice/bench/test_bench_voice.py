"""`voiceloop bench voice` plumbing with the scripted model: a couple of calls on the wall clock, fed fast.
Timings are never asserted, only that they are there and measured from the caller's side."""

from __future__ import annotations

import argparse
import copy
import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from tests.paths import ROOT
from voice.bench import voice as bench_voice
from voice.bench.voice import (
    COLUMNS,
    SCRIPT_ONLY,
    BenchSink,
    CallOutcome,
    Fed,
    answer_turns,
    bench_paths,
    run_bench,
    summarise,
    write_csv,
)
from voice.speech.stack import SpeechStack, load_stack
from voice.testing.scripted_call import FIXTURES


def _leaky_copy(tmp: Path) -> Path:
    """out_of_scope_weather with a reply that reads the prompt aloud, as the 0.5B model did."""
    data = yaml.safe_load((FIXTURES / "out_of_scope_weather.yaml").read_text())
    data = copy.deepcopy(data)
    for u in data["caller"]:
        u["audio"] = str(FIXTURES / u["audio"])
    data["model"] = [{"text": 'No tool; say: "Sorry, I can only help with your orders."'}]
    path = tmp / "leaky_weather.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[CallOutcome], Path]:
    stack: SpeechStack = load_stack("tiny.en", tts="piper")
    tmp = tmp_path_factory.mktemp("bench")
    paths = [FIXTURES / "order_total.yaml", FIXTURES / "out_of_scope_weather.yaml", _leaky_copy(tmp)]
    progress: list[str] = []
    calls = run_bench(paths, stack, None, speed=2.0, progress=progress.append, trace_dir=tmp / "traces")
    assert [line.split(":")[0] for line in progress] == ["[1/3] order_total", "[2/3] out_of_scope_weather",
                                                        "[3/3] leaky_weather"]
    out = tmp / "turns.csv"
    write_csv(out, calls)
    return calls, out


def test_csv_has_one_row_per_answer_turn_with_every_column(bench: tuple[list[CallOutcome], Path]) -> None:
    _, out = bench
    with out.open() as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
    assert tuple(reader.fieldnames or ()) == COLUMNS
    assert [(r["call"], r["turn"]) for r in rows] == [("order_total", "0"), ("out_of_scope_weather", "0"),
                                                      ("leaky_weather", "0")]
    total, weather, _ = rows
    assert total["with_tools"] == "1" and total["tools"] == "lookup_order" and weather["with_tools"] == "0"
    assert "35.50" in total["agent_text"] and total["answer_part"] == "reply"
    for r in rows:
        assert float(r["voice_to_voice_ms"]) > 0 and float(r["speech_end_s"]) > 0.5
        assert float(r["turn_detected_ms"]) + float(r["answer_after_turn_ms"]) == pytest.approx(
            float(r["voice_to_voice_ms"]), abs=0.2)
        assert r["first_audio_ms"] == r["voice_to_voice_ms"] and r["ack_first"] == "0"
        assert r["endpointing_ms"] and r["stt_ms"] and r["llm_first_token_ms"]  # the session's own parts


def test_each_call_leaves_its_wall_clock_trace(bench: tuple[list[CallOutcome], Path]) -> None:
    _, out = bench
    entries = [json.loads(line) for line in (out.parent / "traces" / "order_total.jsonl").read_text().splitlines()]
    kinds = [e["kind"] for e in entries]
    assert kinds.index("caller_turn_ended") < kinds.index("agent_said") and kinds[-1] == "call_ended"
    walls = [e["wall_ms"] for e in entries]
    assert walls == sorted(walls) and all("call_s" in e for e in entries)


def test_quality_pass_rate_and_a_leak_fails_the_call(bench: tuple[list[CallOutcome], Path]) -> None:
    calls, _ = bench
    assert [c.passed for c in calls] == [True, True, False]
    assert any("No tool" in p for p in calls[2].problems)
    summary = summarise(calls)
    assert summary["calls"] == 3 and summary["answer_turns"] == 3
    assert summary["voice_to_voice_ms"]["all"]["n"] == 3
    assert summary["voice_to_voice_ms"]["with_tools"]["n"] == 1
    assert summary["voice_to_voice_ms"]["without_tools"]["n"] == 2
    assert summary["quality"]["passed"] == 2 and summary["quality"]["rate"] == pytest.approx(2 / 3)
    assert "leaky_weather" in summary["quality"]["failed"]
    text = bench_voice.format_summary(summary, "script", 2.0)
    assert "quality: 2/3 calls pass (66.7 %)" in text and "FAIL leaky_weather" in text and "No tool" in text


def test_answer_turns_counts_an_acknowledgement_apart_from_the_answer() -> None:
    """Turn ended at call time 2.0 s (speech ended at 1.5 s); an ack is sent 0.3 s after the speech end,
    the answer 1.2 s after it: voice-to-voice is the answer's, first audio the ack's."""
    fed = Fed(started=100.0, speed=1.0)
    fed.events = [
        (102.0, 2.0, {"kind": "caller_turn_ended", "text": "Where is order 4567?", "t": 2.0}),
        (102.2, 2.2, {"kind": "agent_said", "part": "ack", "text": "One moment."}),
        (102.5, 2.5, {"kind": "loop.tool_result", "call": {"name": "lookup_order"}}),
        (102.6, 2.6, {"kind": "agent_said", "part": "reply", "text": "It shipped."}),
        (105.0, 5.0, {"kind": "caller_turn_ended", "text": "uh-huh", "t": 5.0}),  # no new speech frames: skipped
    ]
    sink = BenchSink()
    sink.sent_at = [102.3, 102.7]
    spans = [(0.5, 1.0), (1.0, 1.5)]

    class Rec:
        started_s, latency_ms = 2.0, {"endpointing": 480.0, "stt": 20.0}

    rows = answer_turns(fed, sink, spans, [Rec()])
    assert len(rows) == 1
    row = rows[0]
    assert row["first_audio_ms"] == pytest.approx(800.0) and row["voice_to_voice_ms"] == pytest.approx(1200.0)
    assert row["ack_first"] == 1 and row["with_tools"] == 1 and row["tools"] == "lookup_order"
    assert row["endpointing_ms"] == 480.0 and row["llm_first_token_ms"] == ""
    assert row["agent_text"] == "One moment. It shipped."


def test_the_line_after_an_approval_timed_out_is_not_the_turns_answer() -> None:
    """A question over a pending approval is answered by re-asking it; the decline said once the approval times
    out, ten seconds later, answers the silence, not the question."""
    fed = Fed(started=0.0, speed=1.0)
    fed.events = [
        (13.3, 13.3, {"kind": "caller_turn_ended", "text": "Um, what will the weather be?", "t": 13.3}),
        (13.4, 13.4, {"kind": "agent_said", "part": "prompt", "text": "I'm asking you this: shall I refund $20?"}),
        (23.3, 23.3, {"kind": "approval_timeout", "call": "issue_refund"}),
        (23.3, 23.3, {"kind": "loop.tool_result", "call": {"name": "issue_refund"}, "executed": False}),
        (23.4, 23.4, {"kind": "agent_said", "part": "reply", "text": "I haven't done that: I didn't hear a yes."}),
    ]
    sink = BenchSink()
    sink.sent_at = [13.45, 23.45]
    (row,) = answer_turns(fed, sink, [(10.0, 12.8)], [])
    assert row["answer_part"] == "prompt" and row["voice_to_voice_ms"] == pytest.approx(650.0)


def test_model_words_before_a_tool_result_are_an_acknowledgement_not_the_answer() -> None:
    fed = Fed(started=0.0, speed=1.0)
    fed.events = [
        (2.0, 2.0, {"kind": "caller_turn_ended", "text": "Where is order 4567?", "t": 2.0}),
        (2.1, 2.1, {"kind": "agent_said", "part": "reply", "text": "Let me check that."}),
        (2.9, 2.9, {"kind": "loop.tool_result", "call": {"name": "lookup_order"}}),
        (3.0, 3.0, {"kind": "agent_said", "part": "reply", "text": "It shipped to Lisbon."}),
    ]
    sink = BenchSink()
    sink.sent_at = [2.1, 3.0]
    (row,) = answer_turns(fed, sink, [(1.0, 1.5)], [])
    assert row["ack_first"] == 1 and row["first_audio_ms"] == pytest.approx(600.0)
    assert row["voice_to_voice_ms"] == pytest.approx(1500.0)


def test_a_caller_who_answers_the_agent_waits_until_it_has_spoken() -> None:
    from voice.bench.voice import Caller
    from voice.speech.vad import SileroVAD
    from voice.testing.scripted_call import Fixture

    caller = Caller(Fixture.load(FIXTURES / "refund_yes.yaml"), SileroVAD())  # "yes" is scheduled at 12.0 s
    assert caller.static is None and [ln.waits for ln in caller.lines] == [False, True]
    quiet = {"now": False}
    frames = [caller.frame(i, lambda: quiet["now"]) for i in range(500)]  # 16 s: the agent is still talking
    assert caller.lines[1].start is None and caller.last_speech_s() is None
    assert not np.any(np.concatenate(frames[400:]))  # silence while the caller waits
    quiet["now"] = True
    frames += [caller.frame(500, lambda: quiet["now"])]
    assert caller.lines[1].start == pytest.approx(16.0) and np.any(frames[-1])
    spans = caller.spans()
    assert spans[0][0] >= 0.5 and spans[-1][0] >= 16.0 and caller.last_speech_s() == spans[-1][1]
    assert Caller(Fixture.load(FIXTURES / "barge_in.yaml"), SileroVAD()).static is not None  # talks over the agent


def test_real_models_skip_the_script_only_calls() -> None:
    every = {p.stem for p in bench_paths("script")}
    real = {p.stem for p in bench_paths("local")}
    assert every >= SCRIPT_ONLY and not SCRIPT_ONLY & real and len(real) >= 25
    assert [p.stem for p in bench_paths("local", ["refund_yes"])] == ["refund_yes"]
    with pytest.raises(ValueError, match="no such call script"):
        bench_paths("script", ["nope"])


def test_cli_wiring(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from voice.cli import build_parser

    seen: dict[str, Any] = {}

    def fake_run(paths: list[Path], stack: Any, factory: Any, speed: float, progress: Any,
                 trace_dir: Path | None = None, session: dict[str, Any] | None = None) -> list[CallOutcome]:
        seen.update(paths=[p.stem for p in paths], factory=factory, speed=speed, trace_dir=trace_dir,
                    session=session)
        row = {k: "" for k in COLUMNS} | {"call": "order_total", "turn": 0, "voice_to_voice_ms": 900.0,
                                          "first_audio_ms": 900.0, "with_tools": 1, "ack_first": 0,
                                          "turn_detected_ms": 600.0, "answer_after_turn_ms": 300.0}
        return [CallOutcome("order_total", [row], True, [], ["reply: Order 2020 came to $35.50."], [], 1.0)]

    monkeypatch.setattr(bench_voice, "run_bench", fake_run)
    monkeypatch.setattr("voice.speech.stack.load_stack", lambda *a, **k: None)
    out = tmp_path / "b.csv"
    args = build_parser().parse_args(["bench", "voice", "--calls", "order_total", "--speed", "3",
                                      "--csv", str(out)])
    assert isinstance(args, argparse.Namespace) and args.llm == "script"
    assert args.func(args) == 0
    assert seen == {"paths": ["order_total"], "factory": None, "speed": 3.0, "trace_dir": tmp_path / "traces",
                    "session": {}}
    assert bench_voice.speculation_of(build_parser().parse_args(["bench", "voice", "--speculate", "pause"])) == {
        "speculate": False, "preempt": True}
    text = capsys.readouterr().out
    assert "voice-to-voice, all answer turns" in text and "quality: 1/1 calls pass (100.0 %)" in text
    assert out.read_text().splitlines()[0] == ",".join(COLUMNS)
    assert build_parser().parse_args(["bench", "voice", "--llm", "local-1.5b"]).llm == "local-1.5b"
    bad = build_parser().parse_args(["bench", "voice", "--calls", "nope"])
    assert bad.func(bad) == 2


def test_a_spanish_agents_calls_are_benched_with_its_language(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """The speech stack of `bench voice` is the agent's language's: Whisper told Spanish (base, not tiny.en) and
    the voice its agent speaks with (auto: espeak-ng's Spanish), never the English Piper voice."""
    data = yaml.safe_load((FIXTURES / "out_of_scope_weather.yaml").read_text())
    for u in data["caller"]:
        u["audio"] = str(FIXTURES / u["audio"])
    data["agent"] = str(ROOT / "evals/agents_es/farmacia/agent.yaml")
    path = tmp_path / "llamada.yaml"
    path.write_text(yaml.safe_dump(data))
    asked: dict[str, Any] = {}

    def capture(stt: str, **kwargs: Any) -> SpeechStack:
        asked.update(stt=stt, **kwargs)
        raise RuntimeError("captured")

    monkeypatch.setattr("voice.speech.stack.load_stack", capture)
    args = argparse.Namespace(llm="script", calls=str(path), agent=None, stt=None, tts=None, turn=None)
    with pytest.raises(RuntimeError, match="captured"):
        bench_voice.cmd_bench_voice(args)
    assert (asked["stt"], asked["tts"], asked["language"]) == ("base", "auto", "es")
