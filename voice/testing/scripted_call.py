"""Scripted audio calls: a YAML file names the caller's recordings and when they start, noise to lay
under them, the agent (`agent: FILE.yaml|MODULE:FACTORY`, or `{use: ..., greeting: ...}`; the demo order
desk by default), the scripted model's replies, and what must come out (`expect:`; keys this module does not
know go to the agent's toolset object, e.g. the order desk's `refunds:`, when it has `check_expectations`)."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import yaml

from loop import ScriptedModel, ScriptedTurn, TenantBudget, ToolCall, locale
from voice.agents.source import AgentSource, load_agent
from voice.audio import SAMPLE_RATE, load_audio, write_wav
from voice.call.turns import TurnConfig
from voice.observe.timeline_html import write_timeline
from voice.runtime.session import CallSession, SessionConfig, TurnRecord
from voice.testing.heard import mentions
from voice.testing.pacer import PacedSink, drive_realtime
from voice.testing.reply_checks import REPLY_KEYS, TURN_REPLY_KEYS, check_call

# The repository's scripted calls and recordings: what `bench voice` plays unless told, and what `bench load`'s
# callers say. They are not in the wheel: `audio_fixtures/` of the working directory (a checkout), or
# VOICELOOP_FIXTURES. A call script names its own recordings and agent relative to itself.
FIXTURES = Path(os.environ.get("VOICELOOP_FIXTURES") or Path.cwd() / "audio_fixtures").resolve()
# What `check_expectations` itself reads; any other key of `expect:` is the agent's toolset's to check.
EXPECT_KEYS = frozenset({"turns", "user_text", "executed_tools", "trace_counts", "outcome", "heard_text", "calls",
                         "not_called"})
# Every key a call script may hold (docs/call-scripts.md lists each; tests/project/test_docs_site.py holds the two
# equal).
SCRIPT_KEYS = frozenset({"description", "caller", "tail_s", "noise", "agent", "model", "session", "turns", "expect",
                         "expect_llm", "reply"})
CALLER_KEYS = frozenset({"audio", "at", "gain_db"})  # one caller line
NOISE_KEYS = frozenset({"audio", "snr_db"})
AGENT_KEYS = frozenset({"use", "greeting"})  # `agent:` as a mapping
MODEL_KEYS = frozenset({"text", "tool_calls"})  # one scripted reply of `model:`


@dataclass
class Fixture:
    path: Path
    data: dict[str, Any]

    @classmethod
    def load(cls, path: str | Path) -> Fixture:
        path = Path(path)
        data = yaml.safe_load(path.read_text())
        _check_keys(data, path)
        return cls(path, data)

    def audio_path(self, rel: str) -> Path:
        return (self.path.parent / rel).resolve()

    def caller_audio(self) -> np.ndarray:
        """The caller's side of the call: each utterance placed at its start time, noise underneath."""
        parts = [
            (float(u["at"]), load_audio(self.audio_path(u["audio"])) * _gain(u.get("gain_db", 0)))
            for u in self.data["caller"]
        ]
        end = max(at * SAMPLE_RATE + len(a) for at, a in parts) + int(self.data.get("tail_s", 4) * SAMPLE_RATE)
        track = np.zeros(int(end), np.float64)
        for at, audio in parts:
            start = int(at * SAMPLE_RATE)
            track[start : start + len(audio)] += audio
        if noise := self.data.get("noise"):
            track += _noise_at_snr(load_audio(self.audio_path(noise["audio"])), track, noise["snr_db"])
        return np.clip(track, -32768, 32767).astype(np.int16)

    def agent_options(self) -> dict[str, Any]:
        agent = self.data.get("agent") or {}
        return {"use": agent} if isinstance(agent, str) else dict(agent)

    def agent_source(self) -> AgentSource:
        """The agent this call is for (a relative file is resolved from the fixture's folder)."""
        return load_agent(self.agent_options().get("use"), self.path.resolve().parent)

    def script(self) -> list[ScriptedTurn]:
        return [
            ScriptedTurn(
                text=t.get("text", ""),
                tool_calls=[ToolCall(c["name"], c.get("arguments", {})) for c in t.get("tool_calls", [])],
            )
            for t in self.data.get("model", [])
        ]


def _check_keys(data: Any, path: Path) -> None:
    """A misspelt key would be ignored silently (`gain: 6` for `gain_db: 6`): refuse it in one line, naming the keys."""
    if not isinstance(data, dict) or not isinstance(data.get("caller"), list):
        raise ValueError(f"{path}: a call script is a mapping with a `caller:` list (docs/call-scripts.md)")
    parts = [("", data, SCRIPT_KEYS), *(("caller: ", c, CALLER_KEYS) for c in data["caller"] if isinstance(c, dict)),
             ("noise: ", data.get("noise") or {}, NOISE_KEYS),
             ("agent: ", data["agent"] if isinstance(data.get("agent"), dict) else {}, AGENT_KEYS),
             *(("model: ", t, MODEL_KEYS) for t in data.get("model") or [] if isinstance(t, dict)),
             ("reply: ", data.get("reply") or {}, REPLY_KEYS),
             *(("reply: turns: ", t, TURN_REPLY_KEYS) for t in (data.get("reply") or {}).get("turns") or [])]
    for where, part, known in parts:
        # top-level keys starting with "x-" are the author's own (an eval's notes), never read here
        if unknown := sorted(k for k in set(part) - known if not (part is data and str(k).startswith("x-"))):
            raise ValueError(f"{path}: unknown key {where}{', '.join(map(str, unknown))}: "
                             f"use {', '.join(sorted(known))} (docs/call-scripts.md)")


def _gain(db: float) -> float:
    return float(10 ** (db / 20))


def _noise_at_snr(noise: np.ndarray, speech: np.ndarray, snr_db: float) -> np.ndarray:
    reps = -(-len(speech) // len(noise))
    noise = np.tile(noise.astype(np.float64), reps)[: len(speech)]
    voiced = speech[np.abs(speech) > 0]
    p_speech = float(np.mean(voiced**2)) if len(voiced) else 1.0
    p_noise = float(np.mean(noise**2)) or 1.0
    return noise * np.sqrt(p_speech / (p_noise * 10 ** (snr_db / 10)))


@dataclass
class CallResult:
    turns: list[TurnRecord]
    trace: list[dict[str, Any]]
    agent_audio: np.ndarray
    state: Any  # the agent's toolset object (the order desk's database), None for a factory's agent
    failures: list[str] = field(default_factory=list)  # every unmet expectation (a scripted call's replies included)
    reply_problems: list[str] = field(default_factory=list)  # what was said that should not have been, or was not
    instructions: tuple[str, ...] = ()  # the agent's prompt and policy text: never to be read aloud
    own_words: frozenset[str] = frozenset()  # its tools' argument names and listed values: its questions name them
    words: ModuleType = locale.DEFAULT_WORDS  # the call's language pack: what its `user_text` checks read

    @property
    def desk(self) -> Any:  # the order desk's name for its state
        return self.state

    def summary(self) -> dict[str, Any]:
        outcome = next((t.outcome for t in reversed(self.turns) if t.outcome), "NO_TURN")
        return {"outcome": outcome, "turns": [t.summary() for t in self.turns]}


async def run_call(fixture: Fixture, stack: Any, workdir: Path | None = None, realtime: bool = False,
                   speed: float = 1.0, model: Any = None, agent: AgentSource | None = None, *,
                   db: str | None = None, tenant: TenantBudget | None = None) -> CallResult:
    """Run one fixture through the real speech stack (`stack` holds vad, stt, tts, chunker): on the
    virtual clock by default, or paced on the wall clock (`realtime`) as a transport would drive it. `model`
    replaces the fixture's scripted replies with a real model (the embedded LLM or a remote one); `agent`
    replaces the fixture's agent. `db`: the journal (default `workdir`/journal.db); `tenant`: a shared budget."""
    if realtime:
        sink = PacedSink()
        session, state = new_session(fixture, stack, workdir, model, sink=sink, realtime=True, agent=agent,
                                     db=db, tenant=tenant)
        await drive_realtime(session, sink, fixture.caller_audio(), speed)
        out = sink.sent
    else:
        session, state = new_session(fixture, stack, workdir, model, agent=agent, db=db, tenant=tenant)
        await session.run_file(fixture.caller_audio())
        out = session.out
    return finish_call(fixture, session, state, out, model)


def new_session(fixture: Fixture, stack: Any, workdir: Path | None = None, model: Any = None,
                sink: Any = None, realtime: bool = False, agent: AgentSource | None = None, *,
                db: str | None = None, tenant: TenantBudget | None = None,
                session: dict[str, Any] | None = None) -> tuple[CallSession, Any]:
    """A fresh agent (its toolset's data rebuilt in `workdir/agent_data`) and a call session for `fixture`, ready
    to be driven; also the toolset's state object. Who answers: `model` if given, else the fixture's scripted
    replies (`model:`), else the agent's own model. `session`: settings over the fixture's own (`SessionConfig`)."""
    workdir = workdir or Path(tempfile.mkdtemp(prefix="voiceloop-call-"))
    workdir.mkdir(parents=True, exist_ok=True)
    data_dir = workdir / "agent_data"
    shutil.rmtree(data_dir, ignore_errors=True)  # every call starts from the toolset's seeded data
    source = agent or fixture.agent_source()
    script = fixture.script()
    model_for = (lambda _id: model) if model is not None else (lambda _id: ScriptedModel(script)) if script else None
    maker = source.maker(data_dir, model_for)
    call_agent = maker.with_journal(fixture.path.stem, db or workdir / "journal.db")
    if call_agent.tenant is None:
        call_agent.tenant = tenant
    greeting = fixture.agent_options().get("greeting", source.greeting)
    config = SessionConfig(**{"greeting": greeting, **fixture.data.get("session", {}), **(session or {}),
                              "turns": TurnConfig(**fixture.data.get("turns", {}))})
    stack.vad.reset()
    turn_model = getattr(stack, "turn", None)  # a stack built by hand may have none
    if realtime:
        return CallSession(call_agent, stack.vad, stack.stt, stack.tts, stack.chunker, config, sink,
                           realtime=True, turn_model=turn_model), maker.state
    return CallSession(call_agent, stack.vad, stack.stt, stack.tts, stack.chunker, config,
                       turn_model=turn_model), maker.state


def finish_call(fixture: Fixture, session: CallSession, state: Any, out: list[np.ndarray],
                model: Any = None) -> CallResult:
    """The call's record, held to the fixture's expectations."""
    audio = np.concatenate(out) if out else np.zeros(0, np.int16)
    result = CallResult(session.turns, session.trace, audio, state)
    result.instructions = (session.agent.assembler.system, session.agent.policy.text)
    result.own_words = tool_words(session.agent.assembler.tool_schemas) | frozenset(re.findall(r"[a-z]+", " ".join(
        (result.words.ASK_FOR, result.words.LABEL_COUNT, result.words.LABEL_DIGITS)).lower()))
    result.words = locale.get(session.agent.language)
    # A real model may take another (valid) route than the script: it is held to `expect_llm` instead.
    expect = fixture.data.get("expect_llm", {}) if model is not None else fixture.data.get("expect", {})
    result.failures = check_expectations(expect, result)
    # What was said: held to the script's `reply:` section, and a real model always to the default leak list
    # and length limit (a scripted reply in an old fixture may be long on purpose, e.g. to be cut off). A scripted
    # reply that fails is a broken fixture; a real model's is a quality figure, kept apart (bench voice counts both).
    if "reply" in fixture.data or model is not None:
        result.reply_problems = check_replies(fixture, result)
        if model is None:
            result.failures += result.reply_problems
    return result


def check_replies(fixture: Fixture, result: CallResult) -> list[str]:
    """The agent's spoken replies against the fixture's `reply:` section (see voice/testing/reply_checks.py)."""
    return check_call(fixture.data.get("reply"), result.trace, [t.started_s for t in result.turns],
                      instructions=result.instructions or None, own_words=result.own_words)


def tool_words(schemas: list[dict[str, Any]]) -> frozenset[str]:
    """The words of the tools' argument names ("arrival_date": arrival, date) and listed values ("baby grand")."""
    words: set[str] = set()
    for schema in schemas:
        for name, prop in ((schema.get("function") or schema).get("parameters") or {}).get("properties", {}).items():
            words.update(name.lower().split("_"))
            for value in prop.get("enum") or [v for p in prop.get("anyOf", []) for v in p.get("enum", [])]:
                words.update(re.findall(r"[a-z0-9$']+", str(value).lower()))
    return frozenset(words)


def check_expectations(expect: dict[str, Any], result: CallResult) -> list[str]:
    """Each unmet expectation as one readable line; empty when the call did what the fixture says.

    `user_text: [turn 0, turn 1, ...]`: what Whisper wrote for each turn must hold each key word of that turn's
    entry (a word, a list of words, and in such a list a list of alternatives: `["refund", ["20", "dollars"]]`),
    compared as `mentions` does, in the call's language: never Whisper's exact words, which differ between CPUs."""
    fails: list[str] = []
    turns = result.turns
    if "turns" in expect and len(turns) != expect["turns"]:
        fails.append(f"expected {expect['turns']} turn(s), got {len(turns)}: {[t.user_text for t in turns]}")
    for i, frags in enumerate(expect.get("user_text", [])):
        got = turns[i].user_text if i < len(turns) else ""
        for frag in [frags] if isinstance(frags, str) else frags:
            if not mentions(got, frag, result.words):
                fails.append(f"turn {i}: user text should contain {_either(frag)}, got {got!r}")
    executed = [[c["name"] for c in t.tool_calls if c["executed"]] for t in turns]
    if "executed_tools" in expect and executed != expect["executed_tools"]:
        fails.append(f"executed tools per turn should be {expect['executed_tools']}, got {executed}")
    kinds = [e["kind"] for e in result.trace]
    for kind, count in expect.get("trace_counts", {}).items():
        if kinds.count(kind) != count:
            fails.append(f"trace should have {count} x {kind}, has {kinds.count(kind)}")
    if "outcome" in expect and result.summary()["outcome"] != expect["outcome"]:
        fails.append(f"outcome should be {expect['outcome']}, got {result.summary()['outcome']}")
    for i, frag in expect.get("heard_text", {}).items():
        heard = turns[int(i)].heard_text if int(i) < len(turns) else None
        if heard is None or not heard or frag.lower() not in heard.lower():
            fails.append(f"turn {i}: heard text should contain {frag!r}, got {heard!r}")
    fails += _check_calls(expect, [c for t in turns for c in t.tool_calls if c["executed"]])
    extra = {k: v for k, v in expect.items() if k not in EXPECT_KEYS}
    if extra and hasattr(result.state, "check_expectations"):
        fails += result.state.check_expectations(extra)
    elif extra:
        fails.append(f"expect: {', '.join(sorted(extra))} unknown (this agent's toolset checks no such thing)")
    return fails


def _check_calls(expect: dict[str, Any], executed: list[dict[str, Any]]) -> list[str]:
    """`calls: [{tool: NAME, args: {...}}]`: each ran during the call with those arguments (a subset; values compared
    as text, case and spacing aside); `not_called: [NAME]`: none of these ran."""
    fails = []
    for want in expect.get("calls", []):
        args = {k: _plain(v) for k, v in (want.get("args") or {}).items()}
        if not any(c["name"] == want["tool"] and all(_plain((c.get("arguments") or {}).get(k)) == v
                                                      for k, v in args.items()) for c in executed):
            ran = [(c["name"], c.get("arguments")) for c in executed]
            fails.append(f"{want['tool']}({args}) should have run; ran {ran}")
    fails += [f"{name} should not have run" for name in expect.get("not_called", [])
              if any(c["name"] == name for c in executed)]
    return fails


def _plain(value: Any) -> str:
    text = str(value).strip().lower()
    return re.sub(r"\s+", " ", text[:-2] if text.endswith(".0") else text)


def _either(wanted: str | list[str] | tuple[str, ...]) -> str:
    return repr(wanted) if isinstance(wanted, str) else " or ".join(repr(w) for w in wanted)


def write_outputs(result: CallResult, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_wav(out / "agent.wav", result.agent_audio)
    (out / "trace.jsonl").write_text("".join(json.dumps(e, default=str) + "\n" for e in result.trace))
    (out / "transcript.txt").write_text("\n".join(transcript_lines(result.trace)) + "\n")
    (out / "summary.json").write_text(json.dumps(result.summary(), indent=2))
    write_timeline(out / "timeline.html", json.loads(json.dumps(result.trace, default=str)), out.name or "call")


def transcript_lines(trace: list[dict[str, Any]]) -> list[str]:
    """The call as transcript.txt tells it: each thing said once, tools with their verdicts."""
    verdicts = {e["call_id"]: f"{e['decision']} {e['rule']}" for e in trace if e["kind"] == "loop.verdict"}
    lines, closing = [], False  # closing: the session's own words after a run that ended without an answer
    said_since = False  # words of the next run already written as they were said: its answer is not written again
    for e in trace:
        if e["kind"] == "agent_said" and e["part"] == "reply" and closing:
            lines.append(f"{e['t']:7.2f}s agent:  {e['text']}")
            said_since = True
        elif not (e["kind"] == "loop.run_finished" and e["answer"] and said_since) and (
                line := _transcript_line(e, verdicts)):
            lines.append(line)
        if e["kind"].startswith("loop.") or e["kind"] == "caller_turn_ended":  # a new run's events end them
            closing = e["kind"] == "loop.run_finished" and not e["answer"]
            said_since = False
    return lines


def _transcript_line(e: dict[str, Any], verdicts: dict[str, str]) -> str | None:
    """The call as a person would tell it: who said what, which tools ran under which verdict."""
    kind, at = e["kind"], f"{e['t']:7.2f}s"
    if kind == "caller_turn_ended" and e["text"]:
        return f"{at} caller: {e['text']}"
    if kind == "agent_said" and e["part"] != "reply":
        return f"{at} agent:  {e['text']}"
    if kind == "loop.tool_result":
        call = e["call"]
        verdict = verdicts.get(call["id"], "not vetted")
        return f"{at}   tool: {call['name']}({json.dumps(call['arguments'])}) [{verdict}] -> {e['status']}"
    if kind == "loop.run_finished":
        return f"{at} agent:  {e['answer']}" if e["answer"] else f"{at}   [{e['outcome']}: {e['reason']}]"
    if kind == "barge_in":
        return f"{at}   [caller cut in" + (f"; they had heard: {e['heard']!r}]" if e["heard"] else "]")
    if kind in ("approval_reply", "approval_timeout", "operator_decision"):
        return f"{at}   [{kind.replace('_', ' ')}: {e.get('answer', e.get('approved', ''))}]"
    return None
