"""Issue 22, item 5: the end of a turn from the audio itself (Smart Turn v3.2) beside the transcript rules, and a
caller who only paused is answered once, whole.

The rules and the core are tested with the model's verdict given; the model itself on real recordings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.paths import ROOT
from tests.voice.call.test_call_core import Harness, ask, run_started
from voice.audio import load_audio
from voice.call.events import ScoreTurnEnd, SettleApproval, StartRun, TurnEndScored
from voice.call.turns import TurnConfig, needed_silence
from voice.trace import TraceKind

SPEECH = ROOT / "audio_fixtures" / "recordings"


class ScoredHarness(Harness):
    """Also answers the core's `ScoreTurnEnd` with `complete` (None: like a driver with no model)."""

    def __init__(self, complete: float | None, **cfg: Any) -> None:
        super().__init__(**cfg)
        self.complete = complete
        self.scored: list[ScoreTurnEnd] = []

    def feed(self, event: Any) -> list[Any]:
        out = super().feed(event)
        for cmd in out:
            if isinstance(cmd, ScoreTurnEnd):
                self.scored.append(cmd)
                if self.complete is not None:
                    self.feed(TurnEndScored(cmd.key, self.complete, 0.0))
        return out


def starts(h: Harness) -> list[StartRun]:
    return [c for c in h.log if isinstance(c, StartRun)]


# ---- the rule --------------------------------------------------------------------------------------------


def test_the_model_shortens_the_wait_only_for_words_that_look_finished() -> None:
    cfg = TurnConfig()
    assert needed_silence("Where is my order?", cfg, 0.9) == cfg.semantic_silence_s == 0.2
    assert needed_silence("Where is my order?", cfg, 0.3) == cfg.endpoint_silence_s  # not complete: as before
    assert needed_silence("Where is my order?", cfg, None) == cfg.endpoint_silence_s  # not asked, or not back
    assert needed_silence("I want the", cfg, 0.99) == cfg.hold_silence_s  # the words trail off: the model can't
    assert needed_silence("my order number is 4567", cfg, 0.99) == cfg.open_silence_s  # unpunctuated: as before
    # ... unless the number was said in one go: then it ends the words like a full stop, when the model agrees
    assert needed_silence("my order number is 4567", cfg, 0.99, number_whole=True) == cfg.semantic_silence_s
    assert needed_silence("my order number is 4567", cfg, 0.3, number_whole=True) == cfg.open_silence_s
    assert needed_silence("my order number is 45", cfg, 0.99, number_whole=True) == cfg.open_silence_s  # too short
    assert needed_silence("order 4567 and", cfg, 0.99, number_whole=True) == cfg.hold_silence_s
    # a statement ending on what names a number is followed by the number, whatever the model says
    assert needed_silence("I'm calling about job number.", cfg, 0.99) == cfg.hold_silence_s
    assert needed_silence("My booking reference", cfg, 0.99) == cfg.hold_silence_s
    assert needed_silence("What's my booking reference?", cfg, 0.99) == cfg.semantic_silence_s
    assert needed_silence("My job number is 4712.", cfg, 0.99) == cfg.semantic_silence_s
    assert needed_silence("Where is my order?", TurnConfig(semantic_silence_s=None), 0.99) == cfg.endpoint_silence_s
    assert needed_silence("Where is my order?", TurnConfig(semantic_threshold=0.95), 0.9) == cfg.endpoint_silence_s


# ---- the core --------------------------------------------------------------------------------------------


def test_a_finished_turn_the_model_calls_complete_ends_after_the_short_silence() -> None:
    h = ScoredHarness(0.9)
    h.say("Where is my order?", 1.0)
    h.frames(0.6, speech=False)
    assert [s.text for s in starts(h)] == ["Where is my order?"]
    assert h.core.talk.turns[0].latency_ms["endpointing"] == 224.0  # 0.2 s on the 32 ms frame grid
    assert len(h.scored) == 1 and len(h.scored[0].audio) > 0  # asked once per pause, with the turn's audio
    scored = [e for e in h.core.trace if e["kind"] == TraceKind.TURN_END_SCORED]
    assert scored and scored[0]["complete"] == 0.9


def test_a_number_said_in_one_go_ends_the_turn_soon_and_one_dictated_in_pieces_waits() -> None:
    h = ScoredHarness(0.9)
    h.say("Is my car ready? The job number is 4712", 2.0)
    h.frames(0.3, speech=False)
    assert [s.text for s in starts(h)] == ["Is my car ready? The job number is 4712"]
    assert h.core.talk.turns[0].latency_ms["endpointing"] == 224.0
    h = ScoredHarness(0.9)  # Smart Turn calls a pause between dictated digits complete, too
    h.say("My account number is 7,", 1.5)
    h.frames(0.3, speech=False)
    h.say("My account number is 72904", 1.5)
    h.frames(0.5, speech=False)
    assert not starts(h)  # the number grew over the turn's pauses: it may grow on
    h.frames(0.4, speech=False)
    assert [s.text for s in starts(h)] == ["My account number is 72904"]
    assert h.core.talk.turns[0].latency_ms["endpointing"] == 768.0


@pytest.mark.parametrize("complete", [0.2, None])
def test_without_a_complete_verdict_the_turn_waits_as_before(complete: float | None) -> None:
    h = ScoredHarness(complete)
    h.say("Where is my order?", 1.0)
    h.frames(0.6, speech=False)
    assert [s.text for s in starts(h)] == ["Where is my order?"]
    assert h.core.talk.turns[0].latency_ms["endpointing"] == 448.0


def test_no_model_is_asked_when_the_config_turns_it_off() -> None:
    h = ScoredHarness(0.9, turns=TurnConfig(semantic_silence_s=None))
    h.say("Where is my order?", 1.0)
    h.frames(0.6, speech=False)
    assert h.scored == [] and h.core.talk.turns[0].latency_ms["endpointing"] == 448.0


def test_a_verdict_that_comes_back_late_counts_in_the_wait() -> None:
    """On the wall clock the model takes time: the turn ends when both the words and the verdict are in."""
    h = ScoredHarness(None)
    h.say("Where is my order?", 1.0)
    h.frames(0.192, speech=False)  # past early_stt_s: asked, no verdict yet
    assert h.scored and not starts(h)
    h.feed(TurnEndScored(h.scored[0].key, 0.9, 100.0))  # came back 100 ms after it was asked
    h.frames(0.1, speech=False)
    assert [s.text for s in starts(h)] == ["Where is my order?"]
    latency = h.core.talk.turns[0].latency_ms
    assert latency["endpointing"] == 224.0 and latency["stt"] > 0  # the wait for the verdict is in the figure


def test_an_answer_to_an_approval_question_ends_by_the_words_alone() -> None:
    """"Yes" followed by a pause and "but make it $10" must not be cut after the "yes" and approve."""
    h = ScoredHarness(0.95, approval_hold_s=0)  # the end of the answer alone: no held yes
    run_started(h, "Refund twenty dollars on order 4567.")
    ask(h)
    h.say("Yes.", 0.5)
    h.frames(0.3, speech=False)  # past 0.2 s: a complete-sounding "yes" still does not settle anything
    assert not any(isinstance(c, SettleApproval) for c in h.log)
    h.frames(0.3, speech=False)
    assert [c.approved for c in h.log if isinstance(c, SettleApproval)] == [True]


def test_a_whole_yes_or_no_without_a_full_stop_ends_like_a_closed_sentence() -> None:
    """Whisper leaves "Yes, please" unpunctuated more often than not: as a clear answer to the question it ends
    after the words rule's silence for a finished sentence, not the longer one kept for an open request; a yes
    with more to come ("yes, but", "yes and") waits as before, and no answer ever ends on the model's word."""
    cfg = TurnConfig()
    assert needed_silence("Yes, please", cfg, answered=True) == cfg.answer_silence_s == 0.45
    assert needed_silence("Yes, please", cfg) == cfg.open_silence_s  # outside an approval: as before
    assert needed_silence("Yes, please", cfg, 0.99, answered=True) == cfg.answer_silence_s  # never quicker
    # a closed "Yes." as well: an answer waits its own silence, longer than a finished question's
    assert needed_silence("Yes.", cfg, answered=True) == cfg.answer_silence_s > cfg.endpoint_silence_s
    assert needed_silence("Yes.", TurnConfig(endpoint_silence_s=0.3, answer_silence_s=0.1), answered=True) == 0.3
    assert needed_silence("Yes, and", cfg, answered=True) == cfg.hold_silence_s
    for text, approved, ends_after in [("Yes, please", True, 0.45), ("No, leave it", False, 0.45)]:
        h = Harness(approval_hold_s=0)
        run_started(h, "Refund twenty dollars on order 4567.")
        ask(h)
        h.say(text, 0.5)
        h.frames(0.4, speech=False)
        assert not any(isinstance(c, SettleApproval) for c in h.log), text
        h.frames(ends_after - 0.4 + 0.07, speech=False)
        assert [c.approved for c in h.log if isinstance(c, SettleApproval)] == [approved], text
    for text in ("Yes, but", "Well, maybe"):  # not a whole answer: the open or held silence, as before
        h = Harness(approval_hold_s=0)
        run_started(h, "Refund twenty dollars on order 4567.")
        ask(h)
        h.say(text, 0.5)
        h.frames(0.6, speech=False)
        assert not any(isinstance(c, SettleApproval) for c in h.log), text


def test_no_verdict_is_asked_for_an_answer_to_an_approval_question() -> None:
    h = ScoredHarness(0.95, approval_hold_s=0)  # the end of the answer alone: no held yes
    run_started(h, "Refund twenty dollars on order 4567.")
    ask(h)
    h.scored.clear()
    h.say("Yes, please.", 0.6)
    h.frames(0.6, speech=False)
    assert h.scored == [] and [c.approved for c in h.log if isinstance(c, SettleApproval)] == [True]


def test_a_servers_shared_end_of_turn_model_is_skipped_not_queued_for_under_load() -> None:
    """Scoring every pause of 40 calls took about 40 % of two cores and made p95 worse: a busy model (one
    inference in flight, or busy more than its share of the last window) is skipped, and that turn ends by its
    words alone, as with no model."""
    import asyncio
    import time
    from types import SimpleNamespace

    from voice.runtime.realtime import RealtimeDriver
    from voice.speech.shared_models import SharedTurnModel

    class SlowModel:
        calls = 0

        def complete(self, audio: np.ndarray) -> float:
            self.calls += 1
            time.sleep(0.05)
            return 0.9

    inner = SlowModel()
    model, fed, traced = SharedTurnModel(inner, window_s=1.0, busy_share=0.5), [], []
    driver = SimpleNamespace(turn_model=model, feed=fed.append, pump=lambda: None,
                             trace=lambda kind, **f: traced.append(kind))

    async def pauses(n: int) -> None:
        await asyncio.gather(*(RealtimeDriver._score_turn_end(driver, ScoreTurnEnd(1.0, np.zeros(160, np.int16)))
                               for _ in range(n)))

    asyncio.run(pauses(3))  # three calls pause at once: one is scored, two end by their words
    assert inner.calls == 1 and len(fed) == 1 and traced == [TraceKind.TURN_END_SKIPPED] * 2
    assert model.load.in_flight == 0 and not model.load.busy()  # 50 ms of the last 1 s: below its 50 % share
    model.load.busy_share = 0.04
    assert model.load.busy() and model.claim() is None  # busy more than 4 % of the last second: skipped
    assert model.work == {"scored": 1, "skipped": 3}
    # the server's last log line says so, and `bench load` reads it back as the share of pauses skipped
    from voice.bench.load_usage import speech_work
    from voice.speech.shared_models import work_summary

    line = work_summary(SimpleNamespace(work={"transcriptions": 2, "wall_s": 0.2}), SimpleNamespace(work={}), model)
    assert line.endswith("; end of turn scored 1 pauses, skipped 3")
    work = speech_work(line)
    assert (work["turn_scored"], work["turn_skipped"], work["transcriptions"]) == (1, 3, 2)
    assert speech_work(work_summary(SimpleNamespace(work={}), SimpleNamespace(work={})))["turn_skipped"] == 0
    from voice.bench.load_report import ServerUsage, format_table, step_row

    row = step_row(1, [], ServerUsage(cpu_s=1, wall_s=1, speech=work), 1500)
    assert row.turn_skipped_pct == 75.0 and "turn skip %" in format_table([row], 1500, "t")


# ---- the model -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smart_turn() -> Any:
    from voice.speech.end_of_turn import SmartTurn

    return SmartTurn()


def test_smart_turn_scores_real_speech_and_its_features_are_whispers(smart_turn: Any) -> None:
    from voice.speech.end_of_turn import last_window, log_mel

    audio = load_audio(SPEECH / "speech" / "cmu_arctic_us_aew_a0001.wav")
    features = log_mel(last_window(audio))
    assert features.shape == (80, 800) and features.dtype == np.float32
    assert float(features.min()) > -1.5 and float(features.max()) < 2.5
    whole = smart_turn.complete(audio)
    assert 0.0 <= whole <= 1.0
    assert smart_turn.complete(np.zeros(0, np.int16)) >= 0.0  # empty audio is scored, not an error


def test_smart_turn_hears_a_finished_sentence_as_more_complete_than_its_first_half(smart_turn: Any) -> None:
    """Recorded sentences scored whole and cut in the middle of a word: the model tells them apart (by a margin
    wide enough not to depend on the CPU's numerics)."""
    whole, halves = [], []
    for name in ("telephone/osr34_001.wav", "telephone/osr34_004.wav", "speech/cmu_arctic_us_aew_a0001.wav"):
        audio = load_audio(SPEECH / name)
        whole.append(smart_turn.complete(audio))
        halves.append(smart_turn.complete(audio[: len(audio) // 2]))
    assert np.mean(whole) > np.mean(halves) + 0.2, (whole, halves)


def test_a_missing_model_file_is_a_clear_error_by_name_and_no_model_by_default(monkeypatch: Any,
                                                                              tmp_path: Path) -> None:
    from voice.speech.engines import TURN_ENGINES, EngineUnavailableError
    from voice.speech.stack import load_turn_model

    monkeypatch.setenv("VOICELOOP_SMART_TURN", str(tmp_path / "absent.onnx"))
    with pytest.raises((FileNotFoundError, EngineUnavailableError), match="pipecat-ai"):
        TURN_ENGINES.load("smart-turn")
    assert load_turn_model(None) == (None, "none")
    assert load_turn_model("none") == (None, "none")


# ---- whole calls through the real VAD, Whisper, Smart Turn and Piper, on the virtual clock ---------------


@pytest.fixture(scope="module")
def stack() -> Any:
    from voice.speech.stack import load_stack

    loaded = load_stack("tiny.en", tts="piper")
    assert loaded.names["turn"] == "smart-turn" and loaded.turn is not None  # the default where it is installed
    return loaded


@pytest.mark.parametrize("name", ["plain_question", "order_delivered", "telephone_8k"])
def test_a_call_ends_its_turns_by_the_models_verdict_and_the_words(name: str, stack: Any, tmp_path: Path) -> None:
    """Whatever Smart Turn says on this CPU, the core does what the rule says with it: a turn whose last verdict
    was complete and whose words look finished ends after 0.2 s, any other after the transcript rules' wait."""
    import asyncio

    from voice.call.turns import ends_on_digits, ends_on_number, looks_finished
    from voice.testing.scripted_call import Fixture, run_call

    result = asyncio.run(run_call(Fixture.load(ROOT / "audio_fixtures" / f"{name}.yaml"), stack, tmp_path))
    assert result.failures == []
    trace = result.trace
    for i, ended in enumerate(e for e in trace if e["kind"] == TraceKind.CALLER_TURN_ENDED):
        at = trace.index(ended)
        verdicts = [e for e in trace[:at] if e["kind"] == TraceKind.TURN_END_SCORED]
        assert verdicts, "the model was asked in the pause"
        since = max((j for j, e in enumerate(trace[:at]) if e["kind"] == TraceKind.CALLER_TURN_ENDED), default=0)
        earlier = [e["text"] for e in trace[since:at] if e["kind"] == TraceKind.CALLER_PARTIAL][:-1]
        whole = ends_on_number(ended["text"]) and not any(map(ends_on_digits, earlier))
        quick = verdicts[-1]["complete"] >= 0.5 and (looks_finished(ended["text"]) or whole)
        assert (ended["latency_ms"]["endpointing"] == 224.0) is quick, (i, verdicts[-1], ended)
