"""Streaming voice activity detection with Silero VAD v6 on onnxruntime (no torch).

The default model file ships inside faster-whisper (`faster_whisper/assets/silero_vad_v6.onnx`). Its graph
takes a batch of frames `input[seq, 576]` (64 samples of context from the previous frame, then the
512-sample frame) plus LSTM state `h`, `c` of shape [1, 1, 128], and runs the LSTM *across* the seq
axis. So feeding one frame at a time while carrying `h`, `c` and the 64-sample context gives exactly
what one batched call over the whole signal gives; `probs()` uses the batched form for speed. That file is
16 kHz only.

Silero's own export (`silero_vad.onnx`, shipped in the silero-vad and livekit-plugins-silero wheels; v6.2 there)
takes `input[1, context + frame]`, `state[2, 1, 128]` and `sr` (16000 or 8000: 32 + 256 samples at 8 kHz). Given
that file, `SileroVAD` runs it frame by frame, and with `sample_rate=8000` in the 8 kHz mode: it still takes the
session's 16 kHz 512-sample frames (the call core's 32 ms grid and clock are unchanged) and halves their rate
itself, so an 8 kHz transport only has to choose the VAD. Measured in `scripts/measure_vad.py`.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from voice.audio import FRAME_SAMPLES, SAMPLE_RATE

CONTEXT_SAMPLES = 64
STATE_SHAPE = (1, 1, 128)
_BATCH_FRAMES = 4096  # bounds the memory of one batched run over long audio
RATES = (16000, 8000)


def silero_model_path() -> Path:
    """Locate the Silero v6 ONNX file bundled with faster-whisper, without importing faster-whisper."""
    spec = importlib.util.find_spec("faster_whisper")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "Silero VAD v6 ships inside faster-whisper, which is not installed: pip install faster-whisper"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "assets" / "silero_vad_v6.onnx"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing; this faster-whisper build does not bundle Silero VAD v6")
    return path


def silero_full_model_path() -> Path:
    """Silero's own ONNX export (16 and 8 kHz, `sr` an input), from livekit-plugins-silero or silero-vad."""
    for package, parts in (("livekit.plugins.silero", ("resources",)), ("silero_vad", ("data",))):
        try:
            spec = importlib.util.find_spec(package)
        except ModuleNotFoundError:  # the parent package (livekit.plugins) is not there either
            continue
        if spec is not None and spec.submodule_search_locations:
            path = Path(next(iter(spec.submodule_search_locations))).joinpath(*parts, "silero_vad.onnx")
            if path.is_file():
                return path
    raise FileNotFoundError("Silero's 8 kHz mode needs its own export, silero_vad.onnx, which faster-whisper does not"
                            " ship: pip install livekit-plugins-silero (or pass model_path)")


class _Halver:
    """16 kHz -> 8 kHz, stateful across frames: a 63-tap low-pass at 3.6 kHz, then every other sample (the phone
    transport's filter, `voice.transports.twilio.codec.HalfbandStream`, which this layer may not import)."""

    def __init__(self, taps: int = 63, cutoff: float = 0.45) -> None:
        n = np.arange(taps) - (taps - 1) / 2
        h = cutoff * np.sinc(cutoff * n) * np.kaiser(taps, 8.0)
        self.h = (h / h.sum()).astype(np.float32)
        self.reset()

    def reset(self) -> None:
        self.history = np.zeros(len(self.h) - 1, dtype=np.float32)

    def __call__(self, frame: np.ndarray) -> np.ndarray:
        buffer = np.concatenate([self.history, frame])
        self.history = buffer[len(frame):]
        return np.convolve(buffer, self.h, mode="valid")[::2].astype(np.float32)  # frames are even in length


def _as_float_frame(frame: np.ndarray) -> np.ndarray:
    """int16 PCM -> float32 in [-1, 1); float input is taken as already scaled."""
    array = np.asarray(frame)
    if array.dtype == np.int16:
        return array.astype(np.float32) / 32768.0
    return array.astype(np.float32, copy=False)


class SileroVAD:
    """Per-frame speech probability for 16 kHz mono audio in 512-sample (32 ms) frames.

    Keeps the recurrent state and the last 64 samples between calls; `reset()` starts a new stream.
    `sample_rate=8000`: Silero's 8 kHz mode on the frames halved in rate (needs Silero's own export, see above).
    """

    def __init__(self, threshold: float = 0.5, model_path: str | Path | None = None, threads: int = 1,
                 sample_rate: int = 16000) -> None:
        import onnxruntime

        if not 0.0 < threshold < 1.0:
            raise ValueError(f"threshold must be between 0 and 1 (got {threshold})")
        if sample_rate not in RATES:
            raise ValueError(f"Silero VAD runs at 16000 or 8000 Hz (got {sample_rate})")
        self.threshold, self.sample_rate = threshold, sample_rate
        if model_path is None:
            model_path = silero_model_path() if sample_rate == 16000 else silero_full_model_path()
        options = onnxruntime.SessionOptions()
        # Pinned: STT, TTS and the LLM share two cores; onnxruntime would otherwise take them all.
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._own_export = "sr" in {i.name for i in self._session.get_inputs()}  # else faster-whisper's file
        if sample_rate == 8000 and not self._own_export:
            raise ValueError(f"{model_path} is 16 kHz only (faster-whisper's export); the 8 kHz mode needs Silero's"
                             " own silero_vad.onnx (pip install livekit-plugins-silero)")
        self._halver = _Halver() if sample_rate == 8000 else None
        self._context_samples = CONTEXT_SAMPLES * sample_rate // 16000
        self._rate = np.array(sample_rate, dtype=np.int64)
        self.reset()

    def reset(self) -> None:
        """Forget all previous audio (new caller, new stream)."""
        self._h = np.zeros(STATE_SHAPE, dtype=np.float32)
        self._c = np.zeros(STATE_SHAPE, dtype=np.float32)
        self._state = np.zeros((2, *STATE_SHAPE[1:]), dtype=np.float32)
        self._context = np.zeros(self._context_samples, dtype=np.float32)
        if self._halver is not None:
            self._halver.reset()

    def prob(self, frame: np.ndarray) -> float:
        """Speech probability of the next 512-sample frame of the stream (int16, or float in [-1, 1])."""
        samples = _as_float_frame(frame).reshape(-1)
        if samples.shape[0] != FRAME_SAMPLES:
            raise ValueError(
                f"Silero VAD needs frames of exactly {FRAME_SAMPLES} samples ({FRAME_SAMPLES * 1000 // SAMPLE_RATE}"
                f" ms at {SAMPLE_RATE} Hz), got {samples.shape[0]}; re-cut with voice.audio.FrameAssembler"
            )
        if self._halver is not None:
            samples = self._halver(samples)
        batch = np.concatenate([self._context, samples])[None, :]
        if self._own_export:
            output, self._state = self._session.run(None, {"input": batch, "state": self._state, "sr": self._rate})
        else:
            output, self._h, self._c = self._session.run(None, {"input": batch, "h": self._h, "c": self._c})
        self._context = samples[-self._context_samples:].copy()
        return float(np.asarray(output).reshape(-1)[0])

    def is_speech(self, frame: np.ndarray) -> bool:
        return self.prob(frame) >= self.threshold

    def probs(self, samples: np.ndarray) -> np.ndarray:
        """Probabilities for a whole signal (tail zero-padded to a full frame), continuing the stream.

        Same numbers as calling `prob` frame by frame, but in a few batched runs: 10 minutes of
        audio take well under a second.
        """
        signal = _as_float_frame(samples).reshape(-1)
        if signal.size == 0:
            return np.zeros(0, dtype=np.float32)
        signal = np.pad(signal, (0, -len(signal) % FRAME_SAMPLES))
        framed = signal.reshape(-1, FRAME_SAMPLES)
        if self._own_export:  # its graph takes one frame per run: no batching across time
            return np.array([self.prob(frame) for frame in framed], dtype=np.float32)
        contexts = np.concatenate([self._context[None, :], framed[:-1, -CONTEXT_SAMPLES:]])
        batched = np.concatenate([contexts, framed], axis=1)
        results = []
        for start in range(0, len(batched), _BATCH_FRAMES):
            output, self._h, self._c = self._session.run(
                None, {"input": batched[start : start + _BATCH_FRAMES], "h": self._h, "c": self._c}
            )
            results.append(np.asarray(output, dtype=np.float32).reshape(-1))
        self._context = framed[-1, -CONTEXT_SAMPLES:].copy()
        return np.concatenate(results)

    def speech_ratio(self, samples: np.ndarray) -> float:
        """Fraction of frames at or above the threshold, on a fresh stream (state is restored after)."""
        saved = (self._h, self._c, self._state, self._context, None if self._halver is None else self._halver.history)
        self.reset()
        try:
            probabilities = self.probs(samples)
        finally:
            self._h, self._c, self._state, self._context, history = saved
            if self._halver is not None and history is not None:
                self._halver.history = history
        return float((probabilities >= self.threshold).mean()) if probabilities.size else 0.0
