"""`voiceloop livekit`: a LiveKit Agents worker. LiveKit dispatches each call (a browser or app in a room,
or a phone call through LiveKit SIP) as a job to any registered worker; this process runs our own
CallSession on it: the caller's audio track in, the agent's track out.

- caller audio: `rtc.AudioStream` of the first participant's microphone track (SIP callers publish
  theirs the same way), converted to 16 kHz mono int16 by `Inbound` and fed to `session.hear`;
- agent audio: the session's AudioSink (`LiveKitSink`) turns 16 kHz frames into `rtc.AudioFrame`s at
  `PUBLISH_RATE` and pushes them into an `rtc.AudioSource` published as a `LocalAudioTrack`.
  `capture_frame` blocks while the source holds more than `QUEUE_MS`, so what has been played is
  `captured - queued_duration`: that is what `session.played` is told. Barge-in (`clear`) calls
  `AudioSource.clear_queue()` and drops what was not yet captured.

livekit imports stay inside functions so the rest of voiceloop never needs `livekit-agents`.
Deployment: docs/livekit.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import logging
import os
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

import numpy as np

from voice.agents.source import add_agent_option
from voice.audio import SAMPLE_RATE, downmix
from voice.speech.engines import STT_ENGINES, TTS_ENGINES, add_engine_options

log = logging.getLogger("voiceloop.livekit")

PUBLISH_RATE = 48000
PUBLISH_FRAME_MS = 20  # LiveKit's usual publish frame; not the pipeline's 32 ms frame
QUEUE_MS = 200  # agent audio buffered in the AudioSource: the most a barge-in can have to discard
REPORT_S = 0.02


def _rtc() -> Any:
    try:
        from livekit import rtc
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise SystemExit("voiceloop livekit needs LiveKit Agents: pip install 'voiceloop[livekit]' "
                         "(livekit-agents)") from exc
    return rtc


class Inbound:
    """Caller frames at whatever rate and channel count LiveKit delivers -> 16 kHz mono int16."""

    def __init__(self) -> None:
        self.resampler: Any = None
        self.rate = 0

    def convert(self, frame: Any) -> np.ndarray:
        mono = downmix(np.frombuffer(frame.data, dtype=np.int16), frame.num_channels)
        if frame.sample_rate == SAMPLE_RATE:
            return mono
        rtc = _rtc()
        if self.rate != frame.sample_rate:
            self.resampler = rtc.AudioResampler(frame.sample_rate, SAMPLE_RATE, num_channels=1)
            self.rate = frame.sample_rate
        pushed = rtc.AudioFrame(mono.tobytes(), frame.sample_rate, 1, len(mono))
        out = [np.frombuffer(f.data, dtype=np.int16) for f in self.resampler.push(pushed)]
        return np.concatenate(out) if out else np.zeros(0, np.int16)


class Outbound:
    """16 kHz int16 agent audio -> `rtc.AudioFrame`s of PUBLISH_FRAME_MS at the publish rate."""

    def __init__(self, rate: int = PUBLISH_RATE) -> None:
        self.rate = rate
        self.size = rate * PUBLISH_FRAME_MS // 1000
        self.reset()

    def reset(self) -> None:
        """Forget buffered audio (after a barge-in the old reply's tail must not play)."""
        rtc = _rtc()
        same = self.rate == SAMPLE_RATE
        self.resampler = None if same else rtc.AudioResampler(SAMPLE_RATE, self.rate, num_channels=1)
        self.pending = np.zeros(0, np.int16)
        self.dirty = False  # audio inside the resampler or `pending` that a flush would emit

    def frames(self, pcm: np.ndarray, flush: bool = False) -> list[Any]:
        rtc = _rtc()
        pcm = np.asarray(pcm, dtype=np.int16)
        self.dirty = not flush
        if self.resampler is not None:
            parts = self.resampler.push(rtc.AudioFrame(pcm.tobytes(), SAMPLE_RATE, 1, len(pcm))) if len(pcm) else []
            if flush:
                parts += self.resampler.flush()
            pcm = np.concatenate([np.frombuffer(f.data, dtype=np.int16) for f in parts] or [pcm[:0]])
        self.pending = np.concatenate([self.pending, pcm])
        if flush and len(self.pending) % self.size:
            self.pending = np.pad(self.pending, (0, self.size - len(self.pending) % self.size))
        n = len(self.pending) // self.size
        out = [rtc.AudioFrame(self.pending[i * self.size:(i + 1) * self.size].tobytes(), self.rate, 1, self.size)
               for i in range(n)]
        self.pending = self.pending[n * self.size:]
        return out


class LiveKitSink:
    """The session's AudioSink over an `rtc.AudioSource`; `run` pushes frames and reports playout."""

    def __init__(self, source: Any) -> None:
        self.source = source
        self.out = Outbound(source.sample_rate)
        self.queue: deque[tuple[int, np.ndarray]] = deque()
        self.wake = asyncio.Event()
        self.epoch = 0
        self.captured = 0  # publish-rate samples handed to the source in this epoch
        self.acked = 0  # 16 kHz samples reported to the session in this epoch
        self.clears = 0

    def send(self, pcm: np.ndarray) -> None:
        self.queue.append((self.epoch, pcm))
        self.wake.set()

    def clear(self) -> None:
        self.epoch += 1
        self.clears += 1
        self.queue.clear()
        self.source.clear_queue()
        self.out.reset()
        self.captured = self.acked = 0

    def heard(self) -> int:
        """16 kHz samples of this epoch that have left the source's queue (reached the room)."""
        queued = self.source.queued_duration * self.source.sample_rate
        return int(max(0.0, self.captured - queued) * SAMPLE_RATE / self.source.sample_rate)

    def report(self, played: Callable[[int], None]) -> None:
        heard = self.heard()
        if heard > self.acked:
            played(heard - self.acked)
            self.acked = heard

    async def run(self, played: Callable[[int], None]) -> None:
        while True:
            if not self.queue:
                if self.out.dirty:
                    for frame in self.out.frames(np.zeros(0, np.int16), flush=True):  # the reply's tail
                        await self._capture(frame, self.epoch)
                self.report(played)
                with contextlib.suppress(TimeoutError):  # not wait_for: on 3.11 it can swallow a cancellation
                    async with asyncio.timeout(REPORT_S):
                        await self.wake.wait()
                self.wake.clear()
                continue
            epoch, pcm = self.queue.popleft()
            for frame in self.out.frames(pcm):
                if epoch != self.epoch:
                    break
                await self._capture(frame, epoch)
                self.report(played)

    async def _capture(self, frame: Any, epoch: int) -> None:
        await self.source.capture_frame(frame)  # waits while the source holds more than QUEUE_MS
        if epoch == self.epoch:
            self.captured += frame.samples_per_channel


async def bridge(frames: AsyncIterator[Any], sink: LiveKitSink, session: Any, stop: asyncio.Event) -> str:
    """Move audio both ways until the caller's stream ends or `stop` is set; returns why it ended."""
    inbound = Inbound()

    async def listen() -> str:
        async for item in frames:
            frame = getattr(item, "frame", item)  # AudioStream yields AudioFrameEvent
            await session.hear(inbound.convert(frame))
        return "caller audio ended"

    async def stopped() -> str:
        await stop.wait()
        return "caller left"

    tasks = [asyncio.create_task(listen()), asyncio.create_task(sink.run(session.played)),
             asyncio.create_task(stopped())]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return next(iter(done)).result()  # re-raises a failed task's exception


def participant_audio(participant: Any) -> AsyncIterator[Any]:
    rtc = _rtc()
    return rtc.AudioStream.from_participant(participant=participant, track_source=rtc.TrackSource.SOURCE_MICROPHONE,
                                            sample_rate=SAMPLE_RATE, num_channels=1)


async def run_job(job: Any, calls: Any, caller_audio: Callable[[Any], AsyncIterator[Any]] = participant_audio) -> None:
    """One dispatched job: join the room, wait for the caller, publish our track, run the call."""
    rtc = _rtc()
    from livekit.agents import AutoSubscribe

    await job.connect(auto_subscribe=AutoSubscribe.AUDIO_ONLY)
    participant = await job.wait_for_participant()
    source = rtc.AudioSource(PUBLISH_RATE, 1, queue_size_ms=QUEUE_MS)
    track = rtc.LocalAudioTrack.create_audio_track("voiceloop-agent", source)
    options = rtc.TrackPublishOptions(source=rtc.TrackSource.SOURCE_MICROPHONE)
    await job.room.local_participant.publish_track(track, options)
    left = asyncio.Event()
    job.room.on("participant_disconnected", lambda p: left.set() if p.identity == participant.identity else None)
    sink = LiveKitSink(source)
    meta = {"room": job.room.name, "participant": participant.identity, "kind": str(participant.kind)}
    try:
        async with calls.open_call(sink, "livekit", **meta) as call:
            reason = await bridge(caller_audio(participant), sink, call.session, left)
            call.note("ended", reason=reason, clears=sink.clears)
            call.end_reason = reason
    finally:
        await source.aclose()


# ---- the worker process -------------------------------------------------------------------------


@functools.cache
def shared_context() -> Any:
    """One speech stack and call registry per worker process, however many jobs it runs."""
    from loop.run.tenancy import open_tenant, parse_allowances
    from loop.store.db import DB_ENV, database_url
    from voice.agents.source import load_agent
    from voice.hosting.registry import CallContext, CallFactory, CallRegistry, ServerConfig, model_source
    from voice.runtime.session import SessionConfig
    from voice.speech.stack import load_stack

    data_dir = os.environ.get("VOICELOOP_DATA", "voiceloop-data")
    db = database_url(os.environ.get(DB_ENV) or None, data_dir)
    tenant_name, budget = os.environ.get("VOICELOOP_TENANT"), os.environ.get("VOICELOOP_TENANT_BUDGET")
    tenant = open_tenant(db, tenant_name, parse_allowances(budget) if budget else None) if tenant_name else None
    agent = load_agent(os.environ.get("VOICELOOP_AGENT") or None)
    make_agent = agent.maker(data_dir, model_source(os.environ.get("VOICELOOP_SCRIPT") or None,
                                                    os.environ.get("VOICELOOP_LLM") or None))
    stack = load_stack(agent.engine("stt", os.environ.get("VOICELOOP_STT"), STT_ENGINES.default),
                       tts=agent.engine("tts", os.environ.get("VOICELOOP_TTS"), TTS_ENGINES.default),
                       turn=os.environ.get("VOICELOOP_TURN") or None, language=agent.language)
    greeting = os.environ.get("VOICELOOP_GREETING", agent.greeting)
    factory = CallFactory(stack, make_agent, data_dir, SessionConfig(greeting=greeting), db=db, tenant=tenant)
    max_calls = int(os.environ.get("VOICELOOP_MAX_CALLS", "4"))
    return CallContext(factory, CallRegistry(max_calls), ServerConfig(max_calls=max_calls))


def prewarm(proc: Any) -> None:
    """Load the models before the first job arrives (LiveKit calls this in each new job process)."""
    proc.userdata["voiceloop"] = shared_context()


async def entrypoint(job: Any) -> None:
    await run_job(job, shared_context())


def worker_options(agent_name: str = "", executor: str = "process") -> Any:
    from livekit.agents import JobExecutorType, WorkerOptions

    kind = JobExecutorType.THREAD if executor == "thread" else JobExecutorType.PROCESS
    return WorkerOptions(entrypoint_fnc=entrypoint, prewarm_fnc=prewarm, agent_name=agent_name,
                         job_executor_type=kind)


def cmd_livekit(args: argparse.Namespace) -> int:
    from loop.run.tenancy import parse_allowances

    rest = args.livekit_args
    mode = rest[:1]
    if mode == ["console"]:  # LiveKit's console drives its own AgentSession's audio, which voiceloop does not use
        agent = args.agent or next((a for i, a in enumerate(rest) if i and rest[i - 1] == "--agent"), None)
        print("voiceloop livekit: LiveKit's console mode does not run voiceloop's agent; talk to it on this "
              "computer with: voiceloop console" + (f" --agent {agent}" if agent else ""), file=sys.stderr)
        return 2
    try:
        from livekit.agents import cli
    except ImportError:
        print("voiceloop livekit: livekit-agents is not installed; pip install 'voiceloop[livekit]'", file=sys.stderr)
        return 2
    if mode and mode[0] in ("start", "dev", "connect") and not os.environ.get("LIVEKIT_URL") \
            and "--url" not in args.livekit_args:
        print("voiceloop livekit: set LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET (see docs/livekit.md)",
              file=sys.stderr)
        return 2
    try:  # checked here, not first in a job process
        if args.tenant_budget_text:
            parse_allowances(args.tenant_budget_text)
        if mode and mode[0] in ("start", "dev", "connect"):
            _check_choices(args)
    except ValueError as exc:  # AgentConfigError and EngineConfigError are ValueErrors
        print(f"voiceloop livekit: {exc}", file=sys.stderr)
        return 2
    chosen = {"VOICELOOP_AGENT": args.agent,
              "VOICELOOP_SCRIPT": args.script, "VOICELOOP_LLM": args.llm, "VOICELOOP_DATA": args.data_dir,
              "VOICELOOP_STT": args.stt, "VOICELOOP_TTS": args.tts, "VOICELOOP_GREETING": args.greeting,
              "VOICELOOP_MAX_CALLS": args.max_calls and str(args.max_calls), "VOICELOOP_DB": args.db,
              "VOICELOOP_TENANT": args.tenant, "VOICELOOP_TENANT_BUDGET": args.tenant_budget_text}
    for name, value in chosen.items():
        if value:
            os.environ[name] = value  # job processes are spawned: they read the choice from the environment
    sys.argv = ["voiceloop livekit", *args.livekit_args]
    cli.run_app(worker_options(args.agent_name, args.executor))
    return 0


def _check_choices(args: argparse.Namespace) -> None:
    """The agent (built once, so a tool that cannot work fails here) and a remote model's settings, before any job
    process starts; the embedded model is not loaded twice for this."""
    from voice.agents.source import load_agent
    from voice.speech.engines import load_llm

    load_agent(args.agent).check()
    if args.llm == "openai":
        load_llm(args.llm)


def add_livekit_command(sub: Any) -> None:
    p = sub.add_parser("livekit", help="run as a LiveKit Agents worker (rooms and SIP calls; see docs/livekit.md)")
    add_engine_options(p, script=True, defaults=False)  # unset: the job processes read $VOICELOOP_STT etc.
    add_agent_option(p)  # job processes read it as $VOICELOOP_AGENT
    p.add_argument("--data-dir", help="journal.db and the agent's files (default $VOICELOOP_DATA or ./voiceloop-data)")
    p.add_argument("--db", default=None, metavar="URL", help="journal and tenant ledger: postgresql://... or a "
                   "SQLite path (default $VOICELOOP_DB, else journal.db in the data folder)")
    p.add_argument("--tenant", default=None, metavar="NAME", help="calls draw on this tenant's shared budget")
    p.add_argument("--tenant-budget", dest="tenant_budget_text", default=None, metavar="RESOURCE=N,...",
                   help="set the tenant's allowance, e.g. cost_usd=5,tool_calls=50")
    p.add_argument("--greeting", default=None, help="said when a call starts")
    p.add_argument("--max-calls", type=int, default=None, help="concurrent jobs per worker process (default 4)")
    p.add_argument("--agent-name", default="", help="explicit dispatch: only jobs for this agent name")
    p.add_argument("--executor", default="process", choices=["process", "thread"],
                   help="a process per job (isolation) or threads sharing one loaded speech stack (memory)")
    p.add_argument("livekit_args", nargs=argparse.REMAINDER,
                   help="LiveKit's own command and options: start | dev | connect --room NAME | --help")
    p.set_defaults(func=cmd_livekit)
