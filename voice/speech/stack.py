"""The offline speech stack, loaded once by engine name: VAD, STT, TTS and the clause chunker."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from voice.speech.engines import (
    STT,
    STT_ENGINES,
    TTS,
    TTS_ENGINES,
    TURN_ENGINES,
    VAD,
    VAD_ENGINES,
    Chunker,
    EndOfTurn,
)

log = logging.getLogger("voiceloop.speech")


@dataclass
class SpeechStack:
    vad: VAD  # a streaming VAD keeps per-stream state: each concurrent call needs its own (`new_vad`)
    stt: STT
    tts: TTS
    chunker: Callable[[], Chunker]  # a fresh one per reply
    load_s: float = 0.0
    names: dict[str, str] = field(default_factory=dict)  # {"vad": "silero", "stt": "tiny.en", "tts": "piper"}
    threads: int = 1
    tts_threads: int = 1
    turn: EndOfTurn | None = None  # the end-of-turn model, shared by every call (None: the transcript rules alone)

    def tts_voices(self, count: int) -> tuple[list[TTS], TTS | None]:
        """`count` copies of the voice on one thread each, for a server's pool (`voice.speech.shared_models.PooledTTS`),
        and the stack's own voice when it runs on more threads (used for a clause alone on an idle machine)."""
        name = self.names.get("tts")
        if (at_once := getattr(self.tts, "concurrency", 1)) > 1:  # a server elsewhere: one client, many requests
            return [self.tts] * max(count, at_once), None
        if name is None:  # an engine built by hand, not by name: there is no second copy to load
            return [self.tts], None
        if self.tts_threads <= 1:
            return [self.tts, *(TTS_ENGINES.load(name, threads=1) for _ in range(count - 1))], None
        return [TTS_ENGINES.load(name, threads=1) for _ in range(count)], self.tts

    def new_vad(self) -> VAD:
        """Another VAD of the same engine, for one more concurrent call."""
        return VAD_ENGINES.load(self.names.get("vad", VAD_ENGINES.default), threads=self.threads)


def load_turn_model(name: str | None) -> tuple[EndOfTurn | None, str]:
    """The end-of-turn model `name`, or by default Smart Turn where its file is installed and none where it is not
    (said once in the log); a model asked for by name and missing is an error that says what to install."""
    if name is not None:
        return TURN_ENGINES.load(name), name
    try:
        return TURN_ENGINES.load(TURN_ENGINES.default), TURN_ENGINES.default
    except (FileNotFoundError, ImportError) as exc:
        log.warning("no end-of-turn model (%s): turns end by the transcript rules alone", exc)
        return None, "none"


def load_stack(stt: str = STT_ENGINES.default, tts: str = TTS_ENGINES.default, threads: int = 1,
               vad: str = VAD_ENGINES.default, tts_threads: int = 2, turn: str | None = None,
               stt_deadline_s: float | None = None, tts_deadline_s: float | None = None,
               language: str = "en") -> SpeechStack:
    """Load the engines registered under these names (`voice.speech.engines`); unknown names raise ValueError.
    `turn`: the end-of-turn model (`load_turn_model`; None: Smart Turn if installed). `*_deadline_s`: the overall
    deadline of one request to a remote engine (voice/speech/remote.py; None: its default); local ones ignore it.
    `language`: what the callers speak and the agent says (the agent's); Whisper tiny.en hears English only, so
    another language gets Whisper base, which hears many.

    TTS gets both cores (`tts_threads`): a caller hears nothing until the first clause is synthesised, and
    Piper makes it ~40 % sooner on two threads; its idle threads sleep rather than spin (voice/speech/tts.py)."""
    from voice.speech.tts import ClauseChunker

    for registry, name in ((STT_ENGINES, stt), (TTS_ENGINES, tts), (VAD_ENGINES, vad), (TURN_ENGINES, turn)):
        if name is not None:
            registry.spec(name)  # an unknown name fails before any model is loaded
    if language != "en" and str(STT_ENGINES.spec(stt).options.get("model", "")).endswith(".en"):
        log.warning("the agent speaks %r: Whisper base hears it (%s hears English only)", language, stt)
        stt = "base"
    started = time.perf_counter()
    turn_model, turn = load_turn_model(turn)
    stt_settings = {"deadline_s": stt_deadline_s} if stt_deadline_s is not None else {}
    tts_settings = {"deadline_s": tts_deadline_s} if tts_deadline_s is not None else {}
    stt_settings["language"] = tts_settings["language"] = language
    stack = SpeechStack(VAD_ENGINES.load(vad, threads=threads), STT_ENGINES.load(stt, threads=threads, **stt_settings),
                        TTS_ENGINES.load(tts, threads=tts_threads, **tts_settings), ClauseChunker,
                        names={"vad": vad, "stt": stt, "tts": tts, "turn": turn}, threads=threads,
                        tts_threads=tts_threads, turn=turn_model)
    stack.load_s = time.perf_counter() - started
    return stack
