"""More than one `voiceloop serve`: helpers for the drain tests and the two-host tests (a real HAProxy in front
of two real serve processes, see `tests/test_fleet.py`)."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import numpy as np

from tests.abuse.serving import media_msgs
from voice.audio import load_audio, resample


def said_msgs(wav: Path, frame_ms: int = 200) -> list[str]:
    """A recording as Twilio media messages, then 1.5 s of silence (the end of the caller's turn)."""
    pcm = resample(load_audio(wav), 16000, 8000)
    return media_msgs(np.concatenate([pcm, np.zeros(12000, np.int16)]), frame_ms)


async def wait_exit(proc: subprocess.Popen[str], timeout_s: float = 60) -> int:
    """The process's exit code, waiting without blocking the event loop."""
    async with asyncio.timeout(timeout_s):
        while proc.poll() is None:
            await asyncio.sleep(0.05)
    return proc.returncode
