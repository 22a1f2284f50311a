"""How many threads a generation may take: as many as it wants while the cores are free, fewer while other
processes keep them busy.

llama.cpp's threads meet at a barrier on every layer, so a thread whose core another process holds stalls the
others. Measured on this 2-core machine beside another process's evaluation (it took ~1.2 cores, niced): Qwen2.5
0.5B decoded at 120-750 ms a token on two threads against 43-50 ms on one, and evaluated a turn's 32 new prompt
tokens in 1.1-3.0 s on two against 0.36-0.53 s on one; a spoken turn's model call missed its 8 s deadline. On an
idle machine two threads are the faster (`LlamaModel.quiet_threads`), so the count is chosen at each generation
from what the other processes took since the last look: the machine's busy time (`/proc/stat`) less this
process's own (`/proc/self/stat`; its speech-to-text and voice are its own business, already counted in the
threads it asks for). Where `/proc` cannot be read the threads asked for are taken.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

Ticks = tuple[int, int, int]  # the machine's busy and total CPU ticks, this process's own busy ticks
MIN_LOOK_S = 0.25  # a look closer than this to the last one keeps the last answer: too few ticks to tell


def read_ticks() -> Ticks | None:
    """(machine busy, machine total, this process busy) in clock ticks, or None where /proc cannot be read."""
    try:
        fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
        own = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, ValueError, IndexError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return user + nice + system + irq + softirq + steal, sum(fields), int(own[11]) + int(own[12])


class CpuShare:
    """The cores other processes left free since the last look, and the threads that fit in them."""

    def __init__(self, cpus: int | None = None, read: Callable[[], Ticks | None] = read_ticks,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.cpus = cpus or os.cpu_count() or 1
        self._read, self._clock = read, clock
        self._last, self._looked = read(), clock()
        self.others = 0.0  # cores' worth of CPU the other processes took between the last two looks

    def threads(self, wanted: int) -> int:
        """`wanted`, or as many as the cores the other processes left free (at least 1)."""
        if self._clock() - self._looked >= MIN_LOOK_S:
            self._look()
        free = self.cpus - self.others
        return wanted if free >= wanted - 0.5 else max(1, min(wanted, round(free)))

    def _look(self) -> None:
        now = self._read()
        if now is not None and self._last is not None and now[1] > self._last[1]:
            busy, total, own = (a - b for a, b in zip(now, self._last, strict=True))
            self.others = max(0.0, (busy - own) / total * self.cpus)
        self._last, self._looked = now, self._clock()
