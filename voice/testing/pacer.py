"""Real-time playback of a recorded caller: feeds a real-time session at the pace of the audio and plays
the agent's audio back one frame per tick, acknowledging it like a transport would."""

from __future__ import annotations

import asyncio
import time

import numpy as np

from voice.audio import FRAME_S
from voice.audio import FRAME_SAMPLES as FRAME
from voice.runtime.session import CallSession


class PacedSink:
    """A transport that plays one frame per tick and acknowledges it, like Twilio marks."""

    def __init__(self) -> None:
        self.queued = 0
        self.sent: list[np.ndarray] = []
        self.clears = 0

    def send(self, pcm: np.ndarray) -> None:
        self.sent.append(pcm)
        self.queued += len(pcm)

    def clear(self) -> None:
        self.clears += 1
        self.queued = 0

    def play_tick(self, session: CallSession) -> None:
        step = min(self.queued, FRAME)
        if step:
            self.queued -= step
            session.played(step)


async def drive_realtime(session: CallSession, sink: PacedSink, caller: np.ndarray, speed: float = 1.0,
                         max_tail_s: float = 20.0) -> None:
    """Feed `caller` on the wall clock (`speed` x real time), then let the agent finish speaking."""
    await session.start()
    started = time.perf_counter()
    n_frames = -(-len(caller) // FRAME)
    tail = int(max_tail_s / FRAME_S)
    for i in range(n_frames + tail):
        if i >= n_frames and not session.busy and not sink.queued:
            break
        sink.play_tick(session)
        frame = caller[i * FRAME:(i + 1) * FRAME]
        await session.hear(np.pad(frame, (0, FRAME - len(frame))))
        # sleep to the frame's deadline, not a fixed step, so processing time does not stretch the call
        await asyncio.sleep(max(0.0, started + (i + 1) * FRAME_S / speed - time.perf_counter()))
    await session.close()
