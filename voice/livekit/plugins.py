"""voiceloop's offline engines as LiveKit Agents plugins, for an `AgentSession` of your own:

    from livekit.agents import AgentSession
    from voice.livekit.plugins import OfflineSTT, OfflineTTS, OfflineVAD
    from voice.livekit.llm import VoiceloopLLM
    session = AgentSession(vad=OfflineVAD.load(), stt=OfflineSTT.load("tiny.en"), tts=OfflineTTS.load("piper"),
                           llm=VoiceloopLLM(agent))

`OfflineSTT` is Whisper (non-streaming: LiveKit runs it per utterance, cut by the VAD), `OfflineTTS` is Piper or
espeak-ng (one synthesis per text), `OfflineVAD` is Silero v6 with start/end-of-speech hysteresis. Any engine
registered in `voice.speech.engines` loads by name; or wrap an engine object you already have. Nothing is downloaded
at run time. Importing this module needs livekit-agents (`pip install 'voiceloop[livekit]'`); nothing else in
voiceloop imports it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

try:
    from livekit import rtc
    from livekit.agents import APIConnectOptions, stt, tts, utils, vad
    from livekit.agents.types import DEFAULT_API_CONNECT_OPTIONS, NOT_GIVEN, NotGivenOr
except ImportError as exc:  # an optional extra: say how to get it
    raise ImportError("voice.livekit.plugins needs livekit-agents: pip install 'voiceloop[livekit]'") from exc

from voice.audio import FRAME_SAMPLES, SAMPLE_RATE, FrameAssembler, to_internal
from voice.speech.engines import STT, STT_ENGINES, TTS, TTS_ENGINES, VAD, VAD_ENGINES

PROVIDER = "voiceloop"


def frame_to_internal(frame: rtc.AudioFrame) -> np.ndarray:
    """A LiveKit frame (any rate, any channels) as voiceloop's 16 kHz mono int16."""
    pcm = np.frombuffer(frame.data, dtype=np.int16)
    return to_internal(pcm, frame.sample_rate, frame.num_channels)


def internal_frame(pcm: np.ndarray) -> rtc.AudioFrame:
    pcm = np.ascontiguousarray(pcm, dtype=np.int16)
    return rtc.AudioFrame(pcm.tobytes(), SAMPLE_RATE, 1, len(pcm))


class OfflineSTT(stt.STT):
    """A voiceloop STT engine (`transcribe(pcm16k) -> str`) as a LiveKit STT; runs in a worker thread."""

    def __init__(self, engine: STT, name: str = "whisper", language: str = "en") -> None:
        super().__init__(capabilities=stt.STTCapabilities(streaming=False, interim_results=False))
        self.engine, self.name, self.language = engine, name, language

    @classmethod
    def load(cls, name: str = STT_ENGINES.default, threads: int = 1) -> OfflineSTT:
        return cls(STT_ENGINES.load(name, threads=threads), name)

    @property
    def model(self) -> str:
        return self.name

    @property
    def provider(self) -> str:
        return PROVIDER

    async def _recognize_impl(self, buffer: utils.AudioBuffer, *, language: NotGivenOr[str] = NOT_GIVEN,
                              conn_options: APIConnectOptions) -> stt.SpeechEvent:
        frame = rtc.combine_audio_frames(buffer)
        pcm = frame_to_internal(frame) if frame.samples_per_channel else np.zeros(0, np.int16)
        text = (await asyncio.to_thread(self.engine.transcribe, pcm)).strip() if len(pcm) else ""
        lang = language if isinstance(language, str) else self.language
        return stt.SpeechEvent(type=stt.SpeechEventType.FINAL_TRANSCRIPT, request_id=utils.shortuuid(),
                               alternatives=[stt.SpeechData(language=lang, text=text,
                                                            end_time=len(pcm) / SAMPLE_RATE, confidence=1.0)])


class OfflineTTS(tts.TTS):
    """A voiceloop TTS engine (`synthesize(text) -> pcm16k`) as a LiveKit TTS at 16 kHz mono."""

    def __init__(self, engine: TTS, name: str = "piper") -> None:
        super().__init__(capabilities=tts.TTSCapabilities(streaming=False), sample_rate=SAMPLE_RATE, num_channels=1)
        self.engine, self.name = engine, name

    @classmethod
    def load(cls, name: str = TTS_ENGINES.default, threads: int = 1) -> OfflineTTS:
        return cls(TTS_ENGINES.load(name, threads=threads), name)

    @property
    def model(self) -> str:
        return self.name

    @property
    def provider(self) -> str:
        return PROVIDER

    def synthesize(self, text: str, *, conn_options: APIConnectOptions = DEFAULT_API_CONNECT_OPTIONS
                   ) -> tts.ChunkedStream:
        return _Synthesis(tts=self, input_text=text, conn_options=conn_options)


class _Synthesis(tts.ChunkedStream):
    async def _run(self, output_emitter: tts.AudioEmitter) -> None:
        engine = self._tts.engine  # type: ignore[attr-defined]
        output_emitter.initialize(request_id=utils.shortuuid(), sample_rate=SAMPLE_RATE, num_channels=1,
                                  mime_type="audio/pcm")
        pcm = await asyncio.to_thread(engine.synthesize, self.input_text)
        output_emitter.push(np.asarray(pcm, dtype=np.int16).tobytes())
        output_emitter.flush()


@dataclass(frozen=True)
class VADSettings:
    activation: float = 0.5
    """Speech probability at or above which a frame counts as speech."""
    min_speech_s: float = 0.096
    """Speech this long starts an utterance (START_OF_SPEECH)."""
    min_silence_s: float = 0.544
    """Silence this long ends it (END_OF_SPEECH, with the utterance's audio)."""
    prefix_s: float = 0.3
    """Audio kept from before the start of speech, so the first syllable is not lost."""


class OfflineVAD(vad.VAD):
    """A voiceloop VAD engine (`prob(512-sample frame)`) as a LiveKit VAD; each stream gets its own engine."""

    def __init__(self, new_engine: Any = None, name: str = VAD_ENGINES.default,
                 settings: VADSettings | None = None) -> None:
        super().__init__(capabilities=vad.VADCapabilities(update_interval=FRAME_SAMPLES / SAMPLE_RATE))
        self.new_engine = new_engine or (lambda: VAD_ENGINES.load(name))
        self.name, self.settings = name, settings or VADSettings()

    @classmethod
    def load(cls, name: str = VAD_ENGINES.default, settings: VADSettings | None = None) -> OfflineVAD:
        VAD_ENGINES.load(name)  # fail now, not in the first call, if the model is missing
        return cls(name=name, settings=settings)

    @property
    def model(self) -> str:
        return self.name

    @property
    def provider(self) -> str:
        return PROVIDER

    def stream(self) -> vad.VADStream:
        return _VADStream(self, self.new_engine(), self.settings)


class _VADStream(vad.VADStream):
    def __init__(self, owner: OfflineVAD, engine: VAD, settings: VADSettings) -> None:
        self.engine, self.settings = engine, settings
        super().__init__(owner)

    async def _main_task(self) -> None:
        state = _Hysteresis(self.settings)
        assembler = FrameAssembler()
        async for item in self._input_ch:
            if isinstance(item, vad.VADStream._FlushSentinel):
                state, assembler = _Hysteresis(self.settings), FrameAssembler()
                self.engine.reset()
                continue
            for frame in assembler.push(frame_to_internal(item)):
                started = time.perf_counter()
                prob = float(self.engine.prob(frame))
                for event in state.step(frame, prob, time.perf_counter() - started):
                    self._event_ch.send_nowait(event)


class _Hysteresis:
    """Speech probability per frame -> VAD events: START after `min_speech_s` of speech, END after
    `min_silence_s` of silence (carrying the utterance), INFERENCE_DONE for every frame."""

    def __init__(self, s: VADSettings) -> None:
        self.s = s
        self.samples = 0
        self.speaking = False
        self.speech_s = self.silence_s = 0.0
        self.utterance: list[np.ndarray] = []
        self.prefix: list[np.ndarray] = []

    def step(self, frame: np.ndarray, prob: float, took_s: float) -> list[vad.VADEvent]:
        dt, voiced = len(frame) / SAMPLE_RATE, prob >= self.s.activation
        self.samples += len(frame)
        out: list[vad.VADEvent] = []
        if voiced:
            self.speech_s, self.silence_s = self.speech_s + dt, 0.0
        else:
            self.silence_s += dt
            self.speech_s = self.speech_s if self.speaking else 0.0
        if self.speaking:
            self.utterance.append(frame)
        else:
            self.prefix = [*self.prefix, frame][-max(1, int(self.s.prefix_s / dt)):]
        if not self.speaking and self.speech_s >= self.s.min_speech_s:
            self.speaking, self.utterance = True, list(self.prefix)
            out.append(self._event(vad.VADEventType.START_OF_SPEECH, self.utterance))
        elif self.speaking and self.silence_s >= self.s.min_silence_s:
            out.append(self._event(vad.VADEventType.END_OF_SPEECH, self.utterance))
            self.speaking, self.speech_s, self.utterance, self.prefix = False, 0.0, [], []
        out.append(self._event(vad.VADEventType.INFERENCE_DONE, [frame], prob, took_s))
        return out

    def _event(self, kind: vad.VADEventType, frames: list[np.ndarray], prob: float = 0.0,
               took_s: float = 0.0) -> vad.VADEvent:
        return vad.VADEvent(type=kind, samples_index=self.samples, timestamp=time.time(),
                            speech_duration=self.speech_s, silence_duration=self.silence_s,
                            frames=[internal_frame(np.concatenate(frames))] if frames else [],
                            probability=prob, inference_duration=took_s, speaking=self.speaking,
                            raw_accumulated_speech=self.speech_s, raw_accumulated_silence=self.silence_s)
