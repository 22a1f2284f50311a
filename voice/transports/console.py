"""`voiceloop console`: talk to the agent with this computer's microphone and speaker (`sounddevice`).

PortAudio callbacks run on audio threads: the input callback hands each block to the event loop, which
feeds `session.hear`; the output callback plays the agent's queued frames and counts what it played,
which the event loop reports to `session.played` (the playout cursor). A barge-in's `clear` drops
whatever the speaker had not played yet. Use headphones, or a device with echo cancellation: the
agent must not hear itself.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import threading
from collections import deque
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from loop import locale
from loop.run.tenancy import add_storage_options
from voice.agents.source import add_agent_option
from voice.audio import SAMPLE_RATE
from voice.speech.engines import add_engine_options
from voice.trace import TraceKind

BLOCK = 320  # 20 ms


def import_sounddevice() -> ModuleType | None:
    try:
        import sounddevice
    except ImportError:
        print("voiceloop console needs `sounddevice`: pip install 'voiceloop[console]' (and PortAudio: "
              "apt-get install libportaudio2)", file=sys.stderr)
        return None
    except OSError as exc:  # the module is there, the PortAudio library is not
        print(f"voiceloop console: PortAudio is missing ({exc}); install it: apt-get install libportaudio2 "
              "(macOS: brew install portaudio)", file=sys.stderr)
        return None
    return sounddevice


def device_problem(sd: Any, device_in: Any = None, device_out: Any = None) -> str | None:
    """Why the console cannot talk on this machine's sound devices (one line naming the fix), or None. Asked before
    any model loads: no microphone or speaker at all (a server, a container), or chosen devices that refuse 16 kHz
    mono int16."""
    try:
        devices = list(sd.query_devices())
    except Exception as exc:  # PortAudio itself failed: sounddevice raises its own PortAudioError
        return f"PortAudio cannot list the sound devices ({exc})"
    for kind, key in (("input", "max_input_channels"), ("output", "max_output_channels")):
        if not any(d.get(key, 0) > 0 for d in devices):
            what = "microphone" if kind == "input" else "speaker"
            return (f"no {kind} device found (no {what} that PortAudio can see): plug one in, or try the agent "
                    "without a sound card: voiceloop call CALLER.wav, or voiceloop serve and a browser")
    try:
        sd.check_input_settings(device=device_in, samplerate=SAMPLE_RATE, channels=1, dtype="int16")
        sd.check_output_settings(device=device_out, samplerate=SAMPLE_RATE, channels=1, dtype="int16")
    except Exception as exc:  # PortAudioError, or ValueError for a device name that matches none
        return (f"the audio device refused 16 kHz mono int16 ({exc}); pick another with "
                "--input-device/--output-device (python -m sounddevice lists them)")
    return None


class SpeakerSink:
    """The session's AudioSink, drained by the output callback on PortAudio's thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.chunks: deque[np.ndarray] = deque()
        self.offset = 0  # samples of chunks[0] already played
        self.unreported = 0
        self.played_total = 0
        self.clears = 0

    def send(self, pcm: np.ndarray) -> None:
        with self.lock:
            self.chunks.append(np.asarray(pcm, dtype=np.int16))

    def clear(self) -> None:
        with self.lock:
            self.chunks.clear()
            self.offset = 0
            self.unreported = 0  # the session rewinds to what it was told; nothing more counts
            self.clears += 1

    def fill(self, out: np.ndarray) -> int:
        """Write the next len(out) samples (silence when idle); returns how many were agent audio."""
        n = written = 0
        with self.lock:
            while n < len(out) and self.chunks:
                head = self.chunks[0]
                take = min(len(head) - self.offset, len(out) - n)
                out[n:n + take] = head[self.offset:self.offset + take]
                n += take
                self.offset += take
                if self.offset >= len(head):
                    self.chunks.popleft()
                    self.offset = 0
            written = n
            self.unreported += written
            self.played_total += written
        out[n:] = 0
        return written

    def take_played(self) -> int:
        with self.lock:
            n, self.unreported = self.unreported, 0
            return n

    def output_callback(self, outdata: np.ndarray, frames: int, time: Any, status: Any) -> None:
        self.fill(outdata[:, 0])
        for channel in range(1, outdata.shape[1]):
            outdata[:, channel] = outdata[:, 0]


class Console:
    """Opens the input and output streams and moves audio between them and a session."""

    def __init__(self, sd: Any, device_in: Any = None, device_out: Any = None) -> None:
        self.sd, self.device_in, self.device_out = sd, device_in, device_out
        self.sink = SpeakerSink()
        self.mic: asyncio.Queue[np.ndarray] = asyncio.Queue()
        self.overflows = 0

    def _input_callback(self, loop: asyncio.AbstractEventLoop) -> Any:
        def callback(indata: np.ndarray, frames: int, time: Any, status: Any) -> None:
            if status:
                self.overflows += 1
            loop.call_soon_threadsafe(self.mic.put_nowait, indata[:, 0].copy())

        return callback

    async def run(self, session: Any, stop: asyncio.Event) -> None:
        """Talk until `stop` is set (Ctrl-C in the command)."""
        loop = asyncio.get_running_loop()
        common = {"samplerate": SAMPLE_RATE, "blocksize": BLOCK, "dtype": "int16", "channels": 1}
        inp = self.sd.InputStream(device=self.device_in, callback=self._input_callback(loop), **common)
        out = self.sd.OutputStream(device=self.device_out, callback=self.sink.output_callback, **common)
        await session.start()
        stopper = asyncio.create_task(stop.wait())
        try:
            with inp, out:
                while not stop.is_set():
                    getter = asyncio.create_task(self.mic.get())
                    await asyncio.wait({getter, stopper}, return_when=asyncio.FIRST_COMPLETED)
                    if getter.done():
                        await session.hear(getter.result())
                    else:
                        getter.cancel()
                    if played := self.sink.take_played():
                        session.played(played)
        finally:  # Ctrl-C cancels us: still end the call cleanly
            stopper.cancel()
            await session.close()


def _printer(entry: dict[str, Any]) -> None:
    kind = entry["kind"]
    if kind == TraceKind.CALLER_TURN_ENDED and entry.get("text"):
        print(f"you:    {entry['text']}", flush=True)
    elif kind == TraceKind.AGENT_SAID:
        print(f"agent:  {entry['text']}", flush=True)
    elif kind == TraceKind.BARGE_IN:
        print(f"        (interrupted; you heard: {entry['heard']!r})", flush=True)
    elif kind == TraceKind.LOOP_VERDICT:
        print(f"        [{entry['decision']} {entry.get('rule', '')}]", flush=True)
    elif kind == TraceKind.LOOP_TOOL_RESULT:
        print(f"        tool {entry['call']['name']}({entry['call']['arguments']}) -> {entry['status']}", flush=True)
    elif kind == TraceKind.APPROVAL_ASKED:
        print(f"        waiting for your spoken yes or no on {entry['call']}", flush=True)


def cmd_console(args: argparse.Namespace) -> int:
    sd = import_sounddevice()
    if sd is None:
        return 2
    if problem := device_problem(sd, _device(args.input_device), _device(args.output_device)):
        print(f"voiceloop console: {problem}", file=sys.stderr)
        return 2
    from loop.run.tenancy import storage_from_args
    from voice.agents.source import load_agent
    from voice.hosting.registry import CallFactory, model_source
    from voice.runtime.session import SessionConfig
    from voice.speech.engines import STT_ENGINES, TTS_ENGINES
    from voice.speech.stack import load_stack

    data = Path(args.data_dir)
    try:
        agent = load_agent(args.agent)
        make_agent = agent.maker(data, model_source(args.script, args.llm))
        make_agent("check")  # a tool that cannot work as declared fails now, in one line, not after "talk now"
        db, tenant = storage_from_args(args, data)
    except (OSError, ValueError, RuntimeError) as exc:  # DatabaseUnavailable is a RuntimeError
        print(f"voiceloop console: {exc}", file=sys.stderr)
        return 2
    stt, tts = agent.engine("stt", args.stt, STT_ENGINES.default), agent.engine("tts", args.tts, TTS_ENGINES.default)
    print(f"loading the speech stack ({stt}, {tts}) for the agent {agent.name}...", file=sys.stderr)
    stack = load_stack(stt, tts=tts, turn=getattr(args, "turn", None), language=agent.language)
    greeting = args.greeting if args.greeting is not None else agent.greeting or locale.get(agent.language).GREETING
    factory = CallFactory(stack, make_agent, data, SessionConfig(greeting=greeting), db=db, tenant=tenant,
                          tts_voices=1)  # one call: one voice at a time
    console = Console(sd, _device(args.input_device), _device(args.output_device))
    call = factory.new_call(console.sink, "console")
    call.session.observers.append(_printer)
    print("talk now (Ctrl-C to hang up)", file=sys.stderr)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(console.run(call.session, asyncio.Event()))
    except getattr(sd, "PortAudioError", OSError) as exc:
        print(f"voiceloop console: the audio device refused 16 kHz mono int16 ({exc}); "
              "pick another with --input-device/--output-device (python -m sounddevice lists them)", file=sys.stderr)
        return 2
    return 0


def _device(value: str | None) -> int | str | None:
    return int(value) if value is not None and value.isdigit() else value


def add_console_command(sub: Any) -> None:
    p = sub.add_parser("console", help="talk to the agent with this computer's microphone and speaker")
    add_engine_options(p, script=True)
    add_agent_option(p)
    p.add_argument("--greeting", default=None, help="said first (default: the agent's, else 'Hello, how can I help?')")
    p.add_argument("--data-dir", default=os.environ.get("VOICELOOP_DATA", "voiceloop-data"),
                   help="journal.db and the agent's own files (the demo's orders.db) live here")
    add_storage_options(p)
    p.add_argument("--input-device", default=None, help="sounddevice input device (name or index)")
    p.add_argument("--output-device", default=None, help="sounddevice output device (name or index)")
    p.set_defaults(func=cmd_console, stt=None, tts=None)  # unset: the agent file's engines, else the defaults
