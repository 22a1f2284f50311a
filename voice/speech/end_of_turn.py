"""Whether the caller's last words sound finished, from the audio itself: Smart Turn v3.2 on onnxruntime.

The transcript rules (`voice/call/turns.py`) can only tell a finished sentence from its punctuation, so a
finished-looking turn still waits `endpoint_silence_s` in case the caller goes on. Smart Turn hears intonation
and rhythm: when it agrees that the words are finished, the turn may end after a much shorter silence.

The model (BSD-2-Clause, 8.7 MB) ships inside the `pipecat-ai` wheel on PyPI; `./run` installs that wheel with
`--no-deps` only for this file, and nothing here imports pipecat. Input: the last 8 s of 16 kHz audio as
Whisper log-mel features (1, 80, 800); output: the probability that the turn is complete.
"""

from __future__ import annotations

import importlib.util
import os
from functools import cache
from pathlib import Path

import numpy as np

RATE = 16000
WINDOW_S = 8
N_FFT, HOP = 400, 160
MODEL_FILE = "smart-turn-v3.2-cpu.onnx"
ENV_PATH = "VOICELOOP_SMART_TURN"  # a model file elsewhere


def model_path() -> Path:
    """Where Smart Turn's ONNX file is: $VOICELOOP_SMART_TURN, else inside the installed pipecat-ai wheel."""
    if explicit := os.environ.get(ENV_PATH):
        path = Path(explicit)
    else:
        spec = importlib.util.find_spec("pipecat")  # finds the package without importing it (or its deps)
        roots = list(spec.submodule_search_locations or []) if spec else []
        path = Path(roots[0] if roots else "<pipecat-ai not installed>") / "audio/turn/smart_turn/data" / MODEL_FILE
    if not path.is_file():
        raise FileNotFoundError(f"Smart Turn's model is not at {path}: install it with "
                                f"'pip install --no-deps pipecat-ai==1.14.0' (./run does), or set {ENV_PATH}")
    return path


@cache
def _mel_filters() -> np.ndarray:
    from faster_whisper.feature_extractor import FeatureExtractor

    return FeatureExtractor.get_mel_filters(RATE, N_FFT, n_mels=80).astype(np.float32)  # (80, 201), Slaney


def log_mel(audio: np.ndarray) -> np.ndarray:
    """Whisper's log-mel features of exactly `WINDOW_S` seconds of float audio: (80, 800), about -1..1."""
    x = audio.astype(np.float64)
    x = (x - x.mean()) / np.sqrt(x.var() + 1e-7)  # what the model was trained on: a normalised waveform
    padded = np.pad(x, N_FFT // 2, mode="reflect")
    frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP]
    window = np.hanning(N_FFT + 1)[:-1]  # periodic Hann, as torch's
    power = np.abs(np.fft.rfft(frames * window, axis=-1)) ** 2  # (frames, 201)
    mel = _mel_filters() @ power[:-1].T.astype(np.float32)  # Whisper drops the last frame: (80, 800)
    logs = np.log10(np.maximum(mel, 1e-10))
    logs = np.maximum(logs, logs.max() - 8.0)
    return ((logs + 4.0) / 4.0).astype(np.float32)


def last_window(pcm: np.ndarray) -> np.ndarray:
    """The turn's last `WINDOW_S` seconds as float audio, zeros in front of a shorter turn."""
    audio = pcm.astype(np.float32) / 32768.0 if pcm.dtype == np.int16 else pcm.astype(np.float32)
    n = WINDOW_S * RATE
    return audio[-n:] if len(audio) >= n else np.pad(audio, (n - len(audio), 0))


class SmartTurn:
    """Smart Turn v3.2: `complete(pcm)` is the probability that the caller has finished their turn."""

    def __init__(self, path: str | Path | None = None, threads: int = 1) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        self.path = Path(path) if path else model_path()
        self.session = ort.InferenceSession(str(self.path), sess_options=options,
                                            providers=["CPUExecutionProvider"])

    def complete(self, pcm: np.ndarray) -> float:
        """`pcm`: the turn so far, 16 kHz mono (int16 or float), ending where the caller went quiet."""
        features = log_mel(last_window(pcm))[np.newaxis]
        out = self.session.run(None, {"input_features": features})[0]
        return float(np.asarray(out).reshape(-1)[0])
