"""Live calls for `voiceloop serve`: one real-time CallSession per call, and the registry the operator API reads.

The contract between the server and a transport (`voice/transports/*.py`): an accepted WebSocket (Starlette's
`WebSocket`) and a `CallContext`:

- `ctx.factory: CallFactory` — `call = ctx.factory.new_call(sink, transport="twilio", **meta)` builds a
  `Call`: a real-time `CallSession` (its own Silero VAD, the server's shared Whisper STT and TTS, an Agent
  from `make_agent(call_id)` journaling into the server's one SQLite journal) that sends agent audio to
  `sink` (an `AudioSink`: `send(pcm16k)` must not block, `clear()` flushes on barge-in).
- `ctx.registry: CallRegistry` — live calls for the operator API; `add` raises `CallLimitReached` when
  `--max-calls` calls are live (the transport closes with 1013).
- `ctx.config: ServerConfig` (voice/server_config.py) — every limit a transport honours.
- `ctx.admission` (voice/admission.py) — per-source caps on sockets and calls; `ctx.call_tokens`
  (voice/call_tokens.py) — the browser callers' per-call tokens.
- `ctx.open_call(sink, transport, **meta)` — build, register and start a call; closed on the way out.

Transports do this through one driver (`voice.transports.connection.Connection`): it opens the call with
`ctx.open_call`, feeds `await call.session.hear(pcm16k)`, reports playout with `call.session.played(samples)`,
records transport events with `call.note(kind, **data)` (they go into the session trace as
`transport.<kind>`), and ends with `await call.close(reason)`: that closes the session, waits for a cancelled
run to be journaled (`run_cancelled`), releases the VAD and unregisters the call.

Models for `serve` (`model_source`): `--script FILE.yaml` (a scripted model: a YAML list of turns, or a
fixture with a `model:` list; played per user turn, round and round, so a long call never exhausts it),
`--llm openai` (`OpenAICompatModel.from_env()`), `--llm local` / `local-1.5b` (`loop.local_llm.LlamaModel`,
imported only when asked for; one instance shared by every call).
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

import yaml

from loop import (
    Agent,
    EventKind,
    Journal,
    LoopConfig,
    Message,
    ModelResponse,
    Pricing,
    ScriptedTurn,
    TextDelta,
    ToolCall,
    Usage,
)
from loop.types import Model, ModelEvent, ModelRequest, ToolCallDelta
from voice.admission import Admission
from voice.call_events import AudioSink
from voice.call_tokens import CallTokens
from voice.server_config import ServerConfig  # ServerConfig's home; imported from here too
from voice.session import CallSession, SessionConfig
from voice.shared_models import LockedTTS, SharedSTT
from voice.stack import SpeechStack

log = logging.getLogger("voiceloop.calls")


class CallLimitReached(RuntimeError):
    """`--max-calls` calls are already live: the caller should try again later (close code 1013)."""


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

    def _observe(self, entry: dict[str, Any]) -> None:
        self.seq += 1
        self.events.append({"seq": self.seq, **entry})

    def note(self, kind: str, **data: Any) -> None:
        """A transport event, in the session trace (and so in the operator's event list) as `transport.<kind>`."""
        self.session.note(kind, **data)

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

    def __init__(self, max_calls: int = 20, keep_ended: int = 100) -> None:
        self.max_calls = max_calls
        self.calls: dict[str, Call] = {}
        self.ended: deque[Call] = deque(maxlen=keep_ended)

    @property
    def full(self) -> bool:
        return len(self.calls) >= self.max_calls

    def add(self, call: Call) -> str:
        if self.full:
            raise CallLimitReached(f"{self.max_calls} calls are live; try again later")
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

    def get(self, call_id: str) -> Call | None:
        return self.calls.get(call_id) or next((c for c in self.ended if c.call_id == call_id), None)

    def live(self) -> list[Call]:
        return list(self.calls.values())


class CallFactory:
    """Builds a real-time CallSession per call from one loaded speech stack."""

    def __init__(self, stack: SpeechStack, make_agent: Callable[[str], Agent], data_dir: str | Path,
                 session_config: SessionConfig | None = None, vad_factory: Callable[[], Any] | None = None) -> None:
        self.stack, self.make_agent = stack, make_agent
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.journal = Journal(str(self.data_dir / "journal.db"))
        self.session_config = session_config or SessionConfig()
        self.tts = LockedTTS(stack.tts)
        self.stt = SharedSTT(stack.stt)
        self.vad_factory = vad_factory or stack.new_vad
        self.idle_vads: list[Any] = []

    def new_call(self, sink: AudioSink, transport: str = "unknown", **meta: Any) -> Call:
        """A call that is built but neither registered nor started (see the module docstring)."""
        call_id = uuid.uuid4().hex[:12]
        agent = self.make_agent(call_id)
        if agent.journal is None:
            agent.journal = self.journal  # every call journals into the server's one file
        vad = self.idle_vads.pop() if self.idle_vads else self.vad_factory()
        vad.reset()
        session = CallSession(agent, vad, self.stt, self.tts, self.stack.chunker, self.session_config,
                              sink, realtime=True)
        call = Call(call_id, transport, session, dict(meta))
        session.observers.append(call._observe)
        agent.listeners.append(lambda ev: call.run_ids.append(ev.run_id) if ev.kind == EventKind.RUN_STARTED else None)
        call.on_release = lambda: self.idle_vads.append(vad)
        return call

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
        if self.registry.full:
            raise CallLimitReached(f"{self.registry.max_calls} calls are live; try again later")
        call = self.factory.new_call(sink, transport, **meta)
        try:
            self.registry.add(call)
        except CallLimitReached:
            call._released()
            raise
        try:
            await call.session.start()
            yield call
        finally:
            await call.close(call.end_reason or "call ended")


# ---- models ----------------------------------------------------------------------------------


class LoopingScript:
    """A scripted model for live calls. The script is cut into blocks, one per user turn, each ending at a
    reply with no tool calls; user turn k plays block k (round and round), step by step within the turn.
    Tool call ids carry the call id and turn so a refund in one call never collides with another's."""

    def __init__(self, turns: list[ScriptedTurn], call_id: str = "", name: str = "scripted") -> None:
        if not turns:
            raise ValueError("the script has no turns")
        self.blocks: list[list[ScriptedTurn]] = [[]]
        for turn in turns:
            self.blocks[-1].append(turn)
            if not turn.tool_calls:
                self.blocks.append([])
        if not self.blocks[-1]:
            self.blocks.pop()
        self.call_id, self.name, self.pricing = call_id or uuid.uuid4().hex[:8], name, Pricing()

    def count_tokens(self, text: str) -> int:
        return (len(text) + 3) // 4

    def _step(self, messages: list[Message]) -> tuple[int, int, ScriptedTurn]:
        users = [i for i, m in enumerate(messages) if m.role == "user"]
        user_turn = max(0, len(users) - 1)
        since = sum(1 for m in messages[users[-1] + 1:] if m.role == "assistant") if users else 0
        block = self.blocks[user_turn % len(self.blocks)]
        return user_turn, since, block[min(since, len(block) - 1)]

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        user_turn, step, turn = self._step(list(request.messages))
        if turn.delay_s:
            await asyncio.sleep(turn.delay_s)
        words = turn.text.split(" ") if turn.text else []
        for i, word in enumerate(words):
            yield TextDelta(word if i == len(words) - 1 else word + " ")
        calls = [ToolCall(c.name, dict(c.arguments), f"{self.call_id}_u{user_turn}_s{step}_{i}")
                 for i, c in enumerate(turn.tool_calls)]
        for i, call in enumerate(calls):
            yield ToolCallDelta(index=i, id=call.id, name=call.name, arguments=json.dumps(call.arguments))
        tokens = sum(self.count_tokens(m.content) + 4 for m in request.messages)
        yield ModelResponse(text=turn.text, tool_calls=calls, model=self.name,
                            usage=Usage(input_tokens=tokens, output_tokens=self.count_tokens(turn.text),
                                        cost_usd=0.0))


def load_script(path: str | Path) -> list[ScriptedTurn]:
    """A YAML list of turns (`- text: ...` / `- tool_calls: [{name, arguments}]`, optional `delay_s`),
    or a fixture file whose `model:` key holds that list."""
    data = yaml.safe_load(Path(path).read_text())
    if isinstance(data, dict):
        data = data.get("model")
    if not isinstance(data, list) or not data:
        raise ValueError(f"{path}: expected a YAML list of model turns (or a mapping with a 'model:' list)")
    turns = []
    for i, item in enumerate(data):
        if isinstance(item, str):
            item = {"text": item}
        if not isinstance(item, dict):
            raise ValueError(f"{path}: turn {i + 1} must be a mapping with 'text' and/or 'tool_calls'")
        calls = [ToolCall(c["name"], dict(c.get("arguments") or {})) for c in item.get("tool_calls") or []]
        turns.append(ScriptedTurn(text=str(item.get("text", "")), tool_calls=calls,
                                  delay_s=float(item.get("delay_s", 0.0))))
    return turns


DEFAULT_SCRIPT = [ScriptedTurn(text="Thanks, I heard you. How else can I help?")]


def model_source(script: str | None = None, llm: str | None = None) -> Callable[[str], Model]:
    """`call_id -> Model` for the chosen backend. Remote and local LLMs are shared by every call."""
    if script:
        turns = load_script(script)
        return lambda call_id: LoopingScript(turns, call_id)
    from voice.engines import SCRIPTED, load_llm

    shared = None if llm in (None, SCRIPTED) else load_llm(llm)  # ValueError for an unknown name
    if shared is not None:
        return lambda _call_id: shared
    return lambda call_id: LoopingScript(DEFAULT_SCRIPT, call_id)


def order_desk_agents(model_for: Callable[[str], Model], data_dir: str | Path) -> Callable[[str], Agent]:
    """`make_agent` for the demo order desk: one orders database per server, an Agent per call."""
    from voice.fixtures import SYSTEM
    from voice.orders import OrderDesk, order_policy

    Path(data_dir).mkdir(parents=True, exist_ok=True)
    desk = OrderDesk(Path(data_dir) / "orders.db")

    def make(call_id: str) -> Agent:
        return Agent(model=model_for(call_id), tools=desk.tools(), policy=order_policy(),
                     config=LoopConfig.profile("voice"), system_prompt=SYSTEM)

    make.desk = desk  # type: ignore[attr-defined]  # tests read the refunds table
    return make
