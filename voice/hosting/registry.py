"""Live calls for `voiceloop serve`: one real-time CallSession per call, and the registry the operator API reads.

The contract between the server and a transport (`voice/transports/*.py`): an accepted WebSocket (Starlette's
`WebSocket`) and a `CallContext`:

- `ctx.factory: CallFactory` — `call = ctx.factory.new_call(sink, transport="twilio", **meta)` builds a
  `Call`: a real-time `CallSession` (its own Silero VAD, the server's shared Whisper STT and TTS, an Agent
  from `make_agent(call_id)` journaling into the server's one journal, SQLite or PostgreSQL: `--db`) that sends
  agent audio to `sink` (an `AudioSink`: `send(pcm16k)` must not block, `clear()` flushes on barge-in).
- `ctx.registry: CallRegistry` — live calls for the operator API; `add` raises `CallLimitReached` when
  `--max-calls` calls are live (the transport closes with 1013), `ServerDraining` once the server drains (1012).
- `ctx.config: ServerConfig` (voice/hosting/config.py) — every limit a transport honours.
- `ctx.admission` (voice/hosting/admission.py) — per-source caps on sockets and calls; `ctx.call_tokens`
  (voice/hosting/call_tokens.py) — the browser callers' per-call tokens.
- `ctx.open_call(sink, transport, **meta)` — build, register and start a call; closed on the way out.

Transports do this through one driver (`voice.transports.connection.Connection`): it opens the call with
`ctx.open_call`, feeds `await call.session.hear(pcm16k)`, reports playout with `call.session.played(samples)`,
records transport events with `call.note(kind, **data)` (they go into the session trace as
`transport.<kind>`), and ends with `await call.close(reason)`: that closes the session, waits for a cancelled
run to be journaled (`run_cancelled`), releases the VAD and unregisters the call.

Models for `serve` (`model_source`): `--script FILE.yaml` (a scripted model: a YAML list of turns, or a
fixture with a `model:` list; played per user turn, round and round, so a long call never exhausts it),
`--llm openai` (`OpenAICompatModel.from_env()`), `--llm local` / `local-1.5b` (`loop.models.llama.model.LlamaModel`,
imported only when asked for; one instance shared by every call), `--llm script` (no LLM: an agent's own script,
else the looping acknowledgement). With none of these, every agent answers with its
own model (an agent file's `model:`/`script:`, a factory's Agent). `make_agent` comes from the agent the command
was given (`voice.agents.source`: `--agent FILE.yaml|MODULE:FACTORY`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loop import Agent, EventKind, TenantBudget
from loop.store.db import database_url, open_journal
from loop.types import Model
from voice.agents.looping_script import LoopingScript, ScriptedReplies, load_script
from voice.call.events import AudioSink
from voice.hosting.admission import Admission
from voice.hosting.call_tokens import CallTokens
from voice.hosting.config import ServerConfig  # ServerConfig's home; imported from here too
from voice.runtime.session import CallSession, SessionConfig
from voice.speech.shared_models import PooledTTS, SharedSTT, SharedTurnModel
from voice.speech.stack import SpeechStack
from voice.speech.stt_batch import BatchedSTT

log = logging.getLogger("voiceloop.calls")


class CallLimitReached(RuntimeError):
    """`--max-calls` calls are already live: the caller should try again later (close code 1013)."""


class ServerDraining(RuntimeError):
    """The server is draining (SIGTERM, voice/server/drain.py): it takes no new call; calling again reaches another
    server behind the load balancer (close code 1012, the webhook 503)."""


DRAINING = "this server is shutting down and takes no new calls; call again to reach another server"


@dataclass(eq=False)
class Call:
    call_id: str
    transport: str
    session: CallSession
    meta: dict[str, Any] = field(default_factory=dict)
    started_at: float = field(default_factory=time.time)
    ended_at: float | None = None
    end_reason: str = ""
    run_ids: list[str] = field(default_factory=list)
    events: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=5000))
    seq: int = 0
    registry: CallRegistry | None = None
    on_release: Callable[[], None] | None = None
    hang_up: Callable[[str], None] | None = None
    """Set by the transport: end the call from the server's side, closing its socket with this reason."""

    def _observe(self, entry: dict[str, Any]) -> None:
        self.seq += 1
        self.events.append({"seq": self.seq, **entry})

    def note(self, kind: str, **data: Any) -> None:
        """A transport event, in the session trace (and so in the operator's event list) as `transport.<kind>`."""
        self.session.note(kind, **data)

    def key_pressed(self, digit: str) -> None:
        self.session.key_pressed(digit)

    def summary(self) -> dict[str, Any]:
        approval = self.session.approval
        return {
            "id": self.call_id, "transport": self.transport, "started_at": self.started_at,
            "ended_at": self.ended_at, "end_reason": self.end_reason, "meta": self.meta,
            "turns": [t.summary() for t in self.session.turns], "runs": list(self.run_ids),
            "pending_approval": None if approval is None else {"call": approval.call.name,
                                                               "arguments": approval.call.arguments},
        }

    async def close(self, reason: str = "call ended", wait_s: float = 5.0) -> None:
        """End the call: close the session, let a cancelled run reach the journal, unregister."""
        if self.ended_at is not None:
            return
        try:  # a run in flight is journaled as run_cancelled before the call ends
            await self.session.close(reason, wait_s)
        finally:
            self.end_reason = self.end_reason or reason
            if self.registry is not None:
                self.registry.remove(self.call_id, reason)
            else:
                self._released()

    def _released(self) -> None:
        if self.ended_at is None:
            self.ended_at = time.time()
        if self.on_release is not None:
            release, self.on_release = self.on_release, None
            release()


class CallRegistry:
    """Live calls by id (bounded by `max_calls`), plus the most recent ended ones for reading their events."""

    def __init__(self, max_calls: int = 20, keep_ended: int = 100, trace_dir: str | Path | None = None) -> None:
        self.max_calls = max_calls
        self.trace_dir = None if trace_dir is None else Path(trace_dir)  # each ended call's trace, as JSON lines
        self.calls: dict[str, Call] = {}
        self.ended: deque[Call] = deque(maxlen=keep_ended)
        self.draining = False

    @property
    def full(self) -> bool:
        return len(self.calls) >= self.max_calls

    def drain(self) -> None:
        """From now on every new call is refused (`ServerDraining`); live calls go on."""
        self.draining = True

    def check_room(self) -> None:
        """Raise why a new call cannot start now (the server is draining, or full)."""
        if self.draining:
            raise ServerDraining(DRAINING)
        if self.full:
            raise CallLimitReached(f"{self.max_calls} calls are live; try again later")

    def add(self, call: Call) -> str:
        self.check_room()
        call.registry = self
        self.calls[call.call_id] = call
        log.info("call %s started (%s); %d live", call.call_id, call.transport, len(self.calls))
        return call.call_id

    def remove(self, call_id: str, reason: str = "") -> None:
        call = self.calls.pop(call_id, None)
        if call is None:
            return
        call.end_reason = call.end_reason or reason
        call._released()
        self.ended.append(call)
        log.info("call %s ended: %s; %d live", call_id, call.end_reason, len(self.calls))
        # where each answer's wait went (endpointing, stt, llm_first_token, ...): `bench load` reads these lines
        log.info("call %s turn latencies: %s", call_id, json.dumps([t.latency_ms for t in call.session.turns]))
        if self.trace_dir is not None:
            self._write_trace(call)

    def _write_trace(self, call: Call) -> None:
        """`serve --trace-dir`: the call's whole trace, one JSON object a line, for reading a call afterwards."""
        try:
            self.trace_dir.mkdir(parents=True, exist_ok=True)
            path = self.trace_dir / f"{call.call_id}.jsonl"
            path.write_text("".join(json.dumps(e, default=str) + "\n" for e in call.session.trace))
        except OSError as e:  # a full disk loses the trace, never the call
            log.warning("call %s: could not write its trace: %s", call.call_id, e)

    def get(self, call_id: str) -> Call | None:
        return self.calls.get(call_id) or next((c for c in self.ended if c.call_id == call_id), None)

    def live(self) -> list[Call]:
        return list(self.calls.values())


class CallFactory:
    """Builds a real-time CallSession per call from one loaded speech stack."""

    def __init__(self, stack: SpeechStack, make_agent: Callable[[str], Agent], data_dir: str | Path,
                 session_config: SessionConfig | None = None, vad_factory: Callable[[], Any] | None = None, *,
                 db: str | None = None, tenant: TenantBudget | None = None, stt_batch: int = 8,
                 tts_voices: int = 2) -> None:
        self.stack, self.make_agent = stack, make_agent
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        # `db`: a postgresql:// URL many servers share, or a SQLite path; default data_dir/journal.db
        self.db_url = database_url(db, self.data_dir)
        self.journal = open_journal(self.db_url)
        self.tenant = tenant  # every call's runs also hold their spend against this shared budget
        self.session_config = session_config or SessionConfig()
        # several calls' transcriptions at once run as one Whisper batch (voice/speech/stt_batch.py)
        batched = stt_batch > 1 and hasattr(stack.stt, "transcribe_windows")
        self.stt = SharedSTT(BatchedSTT(stack.stt, stt_batch) if batched else stack.stt)
        # `tts_voices` clauses synthesise at once, earliest deadline first (a stack of other engines has one voice)
        voices, full = stack.tts_voices(tts_voices) if hasattr(stack, "tts_voices") else ([stack.tts], None)
        # audio due in seconds waits while a transcription runs: someone's turn waits for that one now
        self.tts = PooledTTS(voices, full, self.stt.busy, defer=lambda: self.stt.in_flight > 0)
        # Smart Turn only shortens waits the words bound anyway: under load it is skipped, not queued for
        self.turn = SharedTurnModel(stack.turn) if getattr(stack, "turn", None) is not None else None
        self.vad_factory = vad_factory or stack.new_vad
        self.idle_vads: list[Any] = []

    def new_call(self, sink: AudioSink, transport: str = "unknown", **meta: Any) -> Call:
        """A call that is built but neither registered nor started (see the module docstring)."""
        call_id = uuid.uuid4().hex[:12]
        agent = self.make_agent(call_id)
        if agent.journal is None:
            agent.journal = self.journal  # every call journals into the server's one database
        if agent.tenant is None:
            agent.tenant = self.tenant
        vad = self.idle_vads.pop() if self.idle_vads else self.vad_factory()
        vad.reset()
        # a phone caller has a keypad: approvals offer keys 1 and 2, and digits keyed in are heard
        config = self.session_config.model_copy(update={"keypad": bool(meta.pop("keypad", False))})
        session = CallSession(agent, vad, self.stt, self.tts, self.stack.chunker, config,
                              sink, realtime=True, call_id=call_id, transport=transport,
                              turn_model=self.turn)
        call = Call(call_id, transport, session, dict(meta))
        session.observers.append(call._observe)
        # the call's own view of the agent (`Agent.override`, made by the session) is the one its runs report to
        session.agent.listeners.append(
            lambda ev: call.run_ids.append(ev.run_id) if ev.kind == EventKind.RUN_STARTED else None)
        call.on_release = lambda: self.idle_vads.append(vad)
        return call

    async def warm_model(self, deadline_s: float = 30.0) -> float | None:
        """Server start: hand the model the agent's stable prefix (system prompt and tools), which every call
        shares, so that even the first call's first turn finds it held; seconds it took, None past the deadline
        (the calls then warm it themselves)."""
        started = time.monotonic()
        agent = self.make_agent("check")
        try:
            await asyncio.wait_for(agent.warm(), deadline_s)
            if (warmed := getattr(agent.model, "warmed", None)) is not None:  # a remote server warms in the background
                await asyncio.wait_for(warmed(), max(0.0, deadline_s - (time.monotonic() - started)))
        except TimeoutError:
            return None
        return time.monotonic() - started

    def runs(self, run_ids: list[str]) -> dict[str, str]:
        """Each run's last journaled event kind (run_finished / run_cancelled when it is complete)."""
        out = {}
        for run_id in run_ids:
            events = self.journal.events(run_id)
            out[run_id] = events[-1].kind if events else "missing"
        return out


@dataclass
class CallContext:
    """What a transport handler gets besides its socket (see the module docstring)."""

    factory: CallFactory
    registry: CallRegistry
    config: ServerConfig
    admission: Admission = field(default_factory=Admission)  # per-source socket and call counts
    call_tokens: CallTokens = field(default_factory=CallTokens)  # callers' per-call credentials

    @contextlib.asynccontextmanager
    async def open_call(self, sink: AudioSink, transport: str, **meta: Any) -> AsyncIterator[Call]:
        """Build, register and start a call; always closed on the way out."""
        self.registry.check_room()
        call = self.factory.new_call(sink, transport, **meta)
        try:
            self.registry.add(call)
        except (CallLimitReached, ServerDraining):
            call._released()
            raise
        try:
            await call.session.start()
            yield call
        finally:
            await call.close(call.end_reason or "call ended")


# ---- models ----------------------------------------------------------------------------------


def model_source(script: str | None = None, llm: str | None = None) -> Callable[[str], Model] | None:
    """`call_id -> Model` for the chosen backend (remote and local LLMs are shared by every call); None when
    neither is chosen: each agent then answers with its own model (voice/agents/source.py)."""
    if script:
        turns = load_script(script)
        return lambda call_id: LoopingScript(turns, call_id)
    if llm is None:
        return None
    from voice.speech.engines import SCRIPTED, load_llm

    if llm == SCRIPTED:  # no LLM: the agent's own script where it has one (voice/agents/source.py)
        return ScriptedReplies
    shared = load_llm(llm)  # ValueError for an unknown name
    return lambda _call_id: shared  # type: ignore[return-value]
