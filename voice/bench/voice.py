"""`voiceloop bench voice`: the scripted calls in audio_fixtures/ on the wall clock, with the chosen model.

    voiceloop bench voice [--llm script|local|local-1.5b|openai] [--speed X] [--calls a,b|FILE|FOLDER] [--csv PATH]
                          [--json]

`--calls` takes names of audio_fixtures/ call scripts, paths of a user's own, and folders of them
(voice/bench/voice_scripts.py); each call runs with the agent its script names (`agent:`), or with `--agent` for all.

Voice-to-voice is measured from outside the session, as a caller would: from the scheduled time of the caller's
last speech frame of a turn (found by running the VAD over each clean source recording where the fixture places
it, on the schedule the audio is fed at) to the moment the first frame of the answer is handed to the transport
(`BenchSink.send`). The bench feeds the audio itself, one 32 ms frame when that frame has fully "happened", and
never waits for the session to catch up: a session that holds up intake pays for it.

Each turn that the agent answered (a reply, or a question such as a confirmation) is one row of the CSV. The answer
is what the agent says after the turn's last tool result; if it says something before that (an acknowledgement
while a tool runs, from the session or the model), the row has that first audio separately and only the answer's
audio counts as voice-to-voice. The session's own breakdown (endpointing, STT wait, model
first token, first clause, TTS first audio) is copied from its `TurnRecord.latency_ms` when it has one.

Every call is also checked for quality: what the fixture expects (`expect`, or `expect_llm` with a real model) and
what the spoken replies must and must never contain (voice/testing/reply_checks.py). A leaked
instruction fails the call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from voice.audio import FRAME_S
from voice.audio import FRAME_SAMPLES as FRAME
from voice.bench.counted_model import CountedModel
from voice.bench.voice_caller import Caller, Line  # noqa: F401 (Line is re-exported for the tests)
from voice.bench.voice_report import (  # noqa: F401 (COLUMNS is re-exported for the tests)
    COLUMNS,
    DEFAULT_CSV,
    CallOutcome,
    answer_turns,
    format_summary,
    summarise,
    write_csv,
)
from voice.bench.voice_scripts import SCRIPT_ONLY, bench_paths, call_label, call_labels  # noqa: F401 (re-exported)
from voice.server.args import add_speculation_option, speculation_of
from voice.testing.scripted_call import Fixture, finish_call, new_session


class BenchSink:
    """The transport: stamps every frame of agent audio it is handed, plays one frame per tick and acknowledges
    it (like Twilio marks), and drops its buffer on `clear`."""

    def __init__(self) -> None:
        self.sent: list[np.ndarray] = []
        self.sent_at: list[float] = []  # wall time of each send
        self.cleared_at: list[float] = []
        self.queued = 0

    def send(self, pcm: np.ndarray) -> None:
        self.sent_at.append(time.perf_counter())
        self.sent.append(pcm)
        self.queued += len(pcm)

    def clear(self) -> None:
        self.cleared_at.append(time.perf_counter())
        self.queued = 0

    def play_tick(self, session: Any) -> None:
        step = min(self.queued, FRAME)
        if step:
            self.queued -= step
            session.played(step)

    def first_send_after(self, wall: float) -> float | None:
        return next((t for t in self.sent_at if t >= wall), None)


@dataclass
class Fed:
    """What the feeder saw: when the feed started, and every trace entry with the wall time it appeared."""

    started: float = 0.0
    speed: float = 1.0
    frames: int = 0  # frames handed to the session so far
    events: list[tuple[float, float, dict[str, Any]]] = field(default_factory=list)  # (wall, call time, entry)

    def wall(self, call_s: float) -> float:
        """The wall time at which call time `call_s` was due on the feed schedule."""
        return self.started + call_s / self.speed


async def feed(session: Any, sink: BenchSink, caller: Caller, speed: float = 1.0, quiet_s: float = 3.0,
               max_tail_s: float = 60.0) -> Fed:
    """Feed the caller on the wall clock: frame i is handed over when it has been spoken, at
    start + (i + 1) x 32 ms / speed, whatever the session is doing. Half a second after the caller's last word,
    stop as soon as the agent is done: every turn finished, its answer spoken and played, nothing new for
    `quiet_s`; feed silence past the recording if needed, for at most `max_tail_s` (call time)."""
    fed = Fed(speed=speed)
    session.observers.append(lambda e: fed.events.append((time.perf_counter(), fed.frames * FRAME_S, e)))
    await session.start()
    fed.started = time.perf_counter()
    i = 0
    while True:
        await asyncio.sleep(max(0.0, fed.wall((i + 1) * FRAME_S) - time.perf_counter()))
        last_word, end = caller.last_speech_s(), caller.end_s()
        if last_word is not None and end is not None and i * FRAME_S >= last_word + 0.5:
            last = max([fed.started, *sink.sent_at[-1:], *(w for w, _, _ in fed.events[-1:])])
            if (time.perf_counter() - last >= quiet_s and _agent_done(session, sink, fed, last_word)) \
                    or i * FRAME_S >= end + max_tail_s:
                break
        sink.play_tick(session)
        frame = caller.frame(i, lambda: _agent_quiet(session, sink, fed, caller))
        fed.frames = i + 1
        await session.hear(frame)
        i += 1
    await session.close()
    return fed


def _agent_quiet(session: Any, sink: BenchSink, fed: Fed, caller: Caller) -> bool:
    """The caller's previous line was taken as a turn, the agent answered it and has finished speaking."""
    spoken = [ln for ln in caller.lines if ln.start is not None]
    if not spoken:
        return True
    prev_end = spoken[-1].start + max((b for _, b in spoken[-1].spans), default=0.0)
    ended = [w for w, c, e in fed.events if e["kind"] == "caller_turn_ended" and c >= prev_end]
    if not ended or not any(e["kind"] == "agent_said" and w >= ended[0] for w, _, e in fed.events):
        return False
    if sink.queued or (sink.sent_at and time.perf_counter() - sink.sent_at[-1] < 0.6):
        return False
    queue = getattr(getattr(session, "speech", None), "queue", None)
    return not getattr(getattr(session, "playout", None), "speaking", False) and (queue is None or queue.empty())


def _agent_done(session: Any, sink: BenchSink, fed: Fed, last_speech_s: float) -> bool:
    """Nothing left to say: every turn has an outcome (none waits for a yes), the last answer was spoken to its
    end, and the transport played it all. Session internals are looked at only if they are there."""
    if sink.queued or not all(t.outcome for t in session.turns):
        return False
    # the caller's last words must have been taken as a turn (or as noise): a session that holds up intake
    # (a model call inside `hear`) has not seen them yet, however quiet it has been
    if not any(e["kind"] == "caller_turn_ended" and c >= last_speech_s for _, c, e in fed.events):
        return False
    speech = getattr(session, "speech", None)
    queue = getattr(speech, "queue", None)
    if getattr(getattr(session, "playout", None), "speaking", False) or (queue is not None and not queue.empty()):
        return False
    events = [e for _, _, e in fed.events]
    finished = [i for i, e in enumerate(events) if e["kind"] == "loop.run_finished"]
    if not finished or not events[finished[-1]].get("answer"):
        return True
    start = max([0, *(i for i, e in enumerate(events[:finished[-1]]) if e["kind"] == "caller_turn_ended")])
    said = _alnum(" ".join(e["text"] for e in events[start:] if e["kind"] == "agent_said"))
    return said.endswith(_alnum(events[finished[-1]]["answer"])[-24:])


def _alnum(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


async def bench_call(fixture: Fixture, stack: Any, model: Any = None, speed: float = 1.0,
                     workdir: Path | None = None, agent: Any = None, trace_dir: Path | None = None,
                     label: str = "", session: dict[str, Any] | None = None) -> CallOutcome:
    """One scripted call on the wall clock through the bench's own feeder and transport; with `trace_dir`, its
    trace is written there as <label>.jsonl, each entry with the wall time since the feed started."""
    t0 = time.perf_counter()
    label = label or fixture.path.stem
    source = agent or fixture.agent_source()
    caller = Caller(fixture, stack.vad)
    sink = BenchSink()
    counted = CountedModel(model) if model is not None else None
    call, desk = new_session(fixture, stack, workdir, counted, sink=sink, realtime=True, agent=source,
                             session=session)
    fed = await feed(call, sink, caller, speed)
    if trace_dir is not None:
        write_wall_trace(trace_dir / f"{label}.jsonl", fed)
    result = finish_call(fixture, call, desk, sink.sent, model)
    rows = answer_turns(fed, sink, caller.spans(), call.turns)
    problems = list(dict.fromkeys([*result.failures, *result.reply_problems]))
    if not rows:
        problems.append("the agent never answered the caller")
    for r in rows:
        r["call"], r["agent"] = label, source.name
        r["call_passed"] = int(not problems)
        r["call_problems"] = " | ".join(problems)
    said = [f"{e['part']}: {e['text']}" for e in result.trace if e["kind"] == "agent_said"]
    stops = [e.get("stop_latency_wall_ms", e.get("stop_latency_ms")) for e in result.trace
             if e["kind"] == "agent_paused"]
    return CallOutcome(label, rows, not problems, problems, said, [s for s in stops if s is not None],
                       time.perf_counter() - t0, agent=source.name, model_calls=counted.calls if counted else 0,
                       replies=len(call.turns), **cut_offs(fed, caller))


def cut_offs(fed: Fed, caller: Caller) -> dict[str, int]:
    """Turns that ended inside one of the caller's lines (a pause taken for the end), and how many of those the
    session withdrew because the caller went on before hearing the answer (`caller_went_on`): the rest were
    answered early, the caller talking over the answer."""
    lines = [(ln.start, ln.start + max(b for _, b in ln.spans)) for ln in caller.lines
             if ln.start is not None and ln.spans]
    ends = [e["speech_end_s"] for _, _, e in fed.events if e["kind"] == "caller_turn_ended" and e.get("text")]
    inside = sum(any(start <= end < stop - 0.1 for start, stop in lines) for end in ends)
    return {"cut_offs": inside, "went_on": sum(e["kind"] == "caller_went_on" for _, _, e in fed.events)}


def write_wall_trace(path: Path, fed: Fed) -> None:
    """The call's trace as the feeder saw it: `wall_ms` since the feed started, `call_s` of audio fed by then."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        for wall, call_s, entry in fed.events:
            stamp = {"wall_ms": round((wall - fed.started) * 1000, 1), "call_s": round(call_s, 3)}
            fh.write(json.dumps({**stamp, **entry}, default=str) + "\n")


def run_bench(paths: Sequence[Path], stack: Any, model_factory: Callable[[], Any] | None = None,
              speed: float = 1.0, progress: Callable[[str], None] | None = None,
              agent: Any = None, trace_dir: Path | None = None,
              session: dict[str, Any] | None = None) -> list[CallOutcome]:
    """Every call in turn; `model_factory` gives the real model (None: each fixture's scripted replies);
    `session`: settings over each call script's own (`SessionConfig`, e.g. `--speculate`'s)."""
    model = model_factory() if model_factory else None
    calls = []
    with tempfile.TemporaryDirectory(prefix="voiceloop-bench-") as tmp:
        for i, (path, label) in enumerate(zip(paths, call_labels(paths), strict=True)):
            fixture = Fixture.load(path)
            outcome = asyncio.run(bench_call(fixture, stack, model, speed, Path(tmp) / label, agent,
                                                trace_dir, label, session))
            calls.append(outcome)
            if progress:
                v2v = ", ".join(f"{r['voice_to_voice_ms']:.0f}" for r in outcome.rows) or "-"
                verdict = "pass" if outcome.passed else "FAIL: " + "; ".join(outcome.problems)[:300]
                progress(f"[{i + 1}/{len(paths)}] {label}: {len(outcome.rows)} answer turn(s), "
                         f"voice-to-voice {v2v} ms, {outcome.seconds:.1f} s; {verdict}")
    return calls


def add_bench_voice_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `bench voice`, on its own parser."""
    parser.add_argument("--speed", type=float, default=1.0,
                        help="feed the recordings at this multiple of real time")
    parser.add_argument("--calls", default="",
                        help="comma-separated call scripts to run: names from audio_fixtures/, paths of your "
                             "own, or folders of them (default: every one in audio_fixtures/)")
    parser.add_argument("--csv", default=str(DEFAULT_CSV), help=f"per-turn CSV (default {DEFAULT_CSV})")
    add_speculation_option(parser)


def cmd_bench_voice(args: argparse.Namespace) -> int:
    """Exit 0 when every call passed its quality checks, 1 when one did not, 2 on bad arguments."""
    from voice.speech.stack import load_stack

    llm = getattr(args, "llm", "script")
    chosen: dict[str, Any] = {}
    try:
        paths = bench_paths(llm, [c.strip() for c in getattr(args, "calls", "").split(",") if c.strip()])
        if getattr(args, "agent", None):  # every call script with this agent instead of the one it names
            from voice.agents.source import load_agent

            chosen["agent"] = load_agent(args.agent)
        # every call's agent file is read and checked before any model loads; their language is the bench's
        languages = {chosen["agent"].language} if chosen else {Fixture.load(p).agent_source().language for p in paths}
        if len(languages) > 1:
            raise ValueError(f"the calls' agents speak {', '.join(sorted(languages))}: bench one language at a time")
    except (ValueError, OSError) as exc:  # AgentConfigError is a ValueError
        print(f"voiceloop bench voice: {exc}", file=sys.stderr)
        return 2
    language = next(iter(languages), "en")
    # English's reference voice is Piper's; another language gets the voice its agent speaks with (espeak-ng's)
    tts = getattr(args, "tts", None) or "auto"
    stt = getattr(args, "stt", None) or ("tiny.en" if language == "en" else "base")  # tiny.en hears English only
    print(f"loading the speech stack ({stt}, {tts}; the agents speak {language!r}) for {len(paths)} calls...",
          file=sys.stderr)
    stack = load_stack(stt, tts=tts, turn=getattr(args, "turn", None), language=language)
    factory = None
    if llm != "script":
        from voice.speech.engines import load_llm

        factory = lambda: load_llm(llm)  # noqa: E731
    speed = float(getattr(args, "speed", 1.0))
    csv_path = Path(getattr(args, "csv", DEFAULT_CSV))
    calls = run_bench(paths, stack, factory, speed, progress=lambda m: print(m, file=sys.stderr, flush=True),
                      trace_dir=csv_path.parent / "traces", session=speculation_of(args), **chosen)
    summary = summarise(calls)
    write_csv(csv_path, calls)
    if getattr(args, "json", False):
        print(json.dumps({**summary, "csv": str(csv_path), "llm": llm, "speed": speed,
                          "calls_detail": [asdict(c) for c in calls]}, indent=2, default=str))
    else:
        print(format_summary(summary, llm, speed))
        print(f"per-turn CSV: {csv_path}; each call's trace (wall_ms since the feed started): "
              f"{csv_path.parent / 'traces'}/<call>.jsonl")
    return 0 if summary["quality"]["passed"] == len(calls) else 1
