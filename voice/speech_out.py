"""Agent speech: streamed text -> clauses -> TTS -> playout -> the transport.

In virtual time (fixtures) synthesis is inline and deterministic. In real time it runs in a worker
thread behind a queue, and every clause carries the reply generation it belongs to, so audio of a
reply the caller already cut off is dropped instead of played.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from voice.playout import PlayoutCursor


class AudioSink(Protocol):
    """The transport's side: queue agent audio for the caller, or drop everything queued."""

    def send(self, pcm: np.ndarray) -> None: ...

    def clear(self) -> None: ...


class NullSink:
    def send(self, pcm: np.ndarray) -> None:
        pass

    def clear(self) -> None:
        pass


class SpeechOut:
    def __init__(self, tts: Any, chunker_cls: type, playout: PlayoutCursor, sink: AudioSink | None,
                 realtime: bool, on_said: Callable[[str, str, float], None]) -> None:
        self.tts, self.chunker_cls, self.playout, self.realtime = tts, chunker_cls, playout, realtime
        self.sink = sink or NullSink()
        self.on_said = on_said
        self.chunker = chunker_cls()
        self.generation = 0
        self.marks: dict[str, float] = {}
        self.queue: asyncio.Queue[tuple[int, str, str]] = asyncio.Queue()
        self.worker: asyncio.Task | None = None
        self.on_first_send: Callable[[], None] = lambda: None
        self.sent_this_reply = False

    def start(self) -> None:
        if self.realtime and self.worker is None:
            self.worker = asyncio.create_task(self._synthesise_forever())

    async def close(self) -> None:
        if self.worker is not None:
            self.worker.cancel()

    def new_reply(self) -> None:
        self.chunker = self.chunker_cls()
        self.sent_this_reply = False
        self.marks = {"run_start": time.perf_counter()}

    def text(self, delta: str) -> None:
        self.marks.setdefault("first_token", time.perf_counter())
        for clause in self.chunker.push(delta):
            self.say(clause, "reply")

    def end_of_text(self) -> None:
        for clause in self.chunker.flush():
            self.say(clause, "reply")

    def say(self, text: str, kind: str) -> None:
        if not text.strip():
            return
        if kind == "reply":
            self.marks.setdefault("first_clause", time.perf_counter())
        if self.realtime:
            self.queue.put_nowait((self.generation, text, kind))
        else:
            self._enqueue(text, kind, self.tts.synthesize(text))

    def cut_off(self) -> None:
        """Barge-in: forget the reply in flight, queued clauses included, and flush the transport."""
        self.generation += 1
        while not self.queue.empty():
            self.queue.get_nowait()
        self.chunker = self.chunker_cls()
        self.playout.clear()
        self.sink.clear()

    def pause(self) -> None:
        self.playout.paused = True
        self.sink.clear()
        self.playout.rewind_unheard()

    def resume(self) -> None:
        self.playout.paused = False
        self.pump()

    def pump(self) -> None:
        """Real time: hand every ready frame to the transport, which buffers and acknowledges playback."""
        if not self.realtime:
            return
        while (chunk := self.playout.next_frame()) is not None:
            self.sink.send(chunk)
            if not self.sent_this_reply:
                self.sent_this_reply = True
                self.on_first_send()

    def _enqueue(self, text: str, kind: str, audio: np.ndarray) -> None:
        if kind == "reply":
            self.marks.setdefault("first_audio_ready", time.perf_counter())
        self.playout.enqueue(text, audio, kind)
        self.on_said(kind, text, len(audio) / 16000)
        self.pump()

    async def _synthesise_forever(self) -> None:
        while True:
            generation, text, kind = await self.queue.get()
            audio = await asyncio.to_thread(self.tts.synthesize, text)
            if generation == self.generation:  # else the caller cut this reply off while it was synthesised
                self._enqueue(text, kind, audio)

    def latency(self, lat: dict[str, float]) -> None:
        m = self.marks
        if not {"first_token", "first_clause", "first_audio_ready"} <= m.keys():
            return
        lat["llm_first_token"] = round((m["first_token"] - m["run_start"]) * 1000, 1)
        lat["first_clause"] = round((m["first_clause"] - m["first_token"]) * 1000, 1)
        lat["tts_first_audio"] = round((m["first_audio_ready"] - m["first_clause"]) * 1000, 1)
        parts = ("endpointing", "stt", "llm_first_token", "first_clause", "tts_first_audio")
        if all(p in lat for p in parts):
            lat["voice_to_voice"] = round(sum(lat[p] for p in parts), 1)
