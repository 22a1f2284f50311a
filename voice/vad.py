"""Streaming voice activity detection with Silero VAD v6 on onnxruntime (no torch).

The model file ships inside faster-whisper (`faster_whisper/assets/silero_vad_v6.onnx`). Its graph
takes a batch of frames `input[seq, 576]` (64 samples of context from the previous frame, then the
512-sample frame) plus LSTM state `h`, `c` of shape [1, 1, 128], and runs the LSTM *across* the seq
axis. So feeding one frame at a time while carrying `h`, `c` and the 64-sample context gives exactly
what one batched call over the whole signal gives; `probs()` uses the batched form for speed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from voice.audio import FRAME_SAMPLES, SAMPLE_RATE

CONTEXT_SAMPLES = 64
STATE_SHAPE = (1, 1, 128)
_BATCH_FRAMES = 4096  # bounds the memory of one batched run over long audio


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


def _as_float_frame(frame: np.ndarray) -> np.ndarray:
    """int16 PCM -> float32 in [-1, 1); float input is taken as already scaled."""
    array = np.asarray(frame)
    if array.dtype == np.int16:
        return array.astype(np.float32) / 32768.0
    return array.astype(np.float32, copy=False)


class SileroVAD:
    """Per-frame speech probability for 16 kHz mono audio in 512-sample (32 ms) frames.

    Keeps the recurrent state and the last 64 samples between calls; `reset()` starts a new stream.
    """

    def __init__(self, threshold: float = 0.5, model_path: str | Path | None = None, threads: int = 1) -> None:
        import onnxruntime

        if not 0.0 < threshold < 1.0:
            raise ValueError(f"threshold must be between 0 and 1 (got {threshold})")
        self.threshold = threshold
        options = onnxruntime.SessionOptions()
        # Pinned: STT, TTS and the LLM share two cores; onnxruntime would otherwise take them all.
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(
            str(model_path or silero_model_path()), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self.reset()

    def reset(self) -> None:
        """Forget all previous audio (new caller, new stream)."""
        self._h = np.zeros(STATE_SHAPE, dtype=np.float32)
        self._c = np.zeros(STATE_SHAPE, dtype=np.float32)
        self._context = np.zeros(CONTEXT_SAMPLES, dtype=np.float32)

    def prob(self, frame: np.ndarray) -> float:
        """Speech probability of the next 512-sample frame of the stream (int16, or float in [-1, 1])."""
        samples = _as_float_frame(frame).reshape(-1)
        if samples.shape[0] != FRAME_SAMPLES:
            raise ValueError(
                f"Silero VAD needs frames of exactly {FRAME_SAMPLES} samples ({FRAME_SAMPLES * 1000 // SAMPLE_RATE}"
                f" ms at {SAMPLE_RATE} Hz), got {samples.shape[0]}; re-cut with voice.audio.FrameAssembler"
            )
        batch = np.concatenate([self._context, samples])[None, :]
        output, self._h, self._c = self._session.run(None, {"input": batch, "h": self._h, "c": self._c})
        self._context = samples[-CONTEXT_SAMPLES:].copy()
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
        saved = (self._h, self._c, self._context)
        self.reset()
        try:
            probabilities = self.probs(samples)
        finally:
            self._h, self._c, self._context = saved
        return float((probabilities >= self.threshold).mean()) if probabilities.size else 0.0
