"""The server's shared TTS: one synthesis at a time, on two threads only while nothing else wants the cores."""

from __future__ import annotations

import threading
import time

import numpy as np

from voice.shared_models import LockedTTS


class NamedTTS:
    def __init__(self, name: str, seconds: float = 0.0) -> None:
        self.name, self.seconds, self.used = name, seconds, 0

    def synthesize(self, text: str) -> np.ndarray:
        self.used += 1
        time.sleep(self.seconds)
        return np.zeros(160, np.int16)


def test_a_lone_clause_on_an_idle_machine_gets_the_two_thread_voice() -> None:
    full, lean = NamedTTS("full"), NamedTTS("lean")
    tts = LockedTTS(full, lean, busy=lambda: False)
    tts.synthesize("Order 4567 has shipped,")
    assert (full.used, lean.used, tts.work["lean"]) == (1, 0, 0)


def test_a_loaded_machine_or_waiting_clauses_get_the_one_thread_voice() -> None:
    full, lean = NamedTTS("full", 0.2), NamedTTS("lean", 0.2)
    assert LockedTTS(full, lean, busy=lambda: True).synthesize("Sure,").size and lean.used == 1
    tts = LockedTTS(full, lean, busy=lambda: False)
    workers = [threading.Thread(target=tts.synthesize, args=(f"clause {i}",)) for i in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert full.used + lean.used == 4 and lean.used >= 2  # the first may run alone; the ones that queued did not


def test_without_a_lean_voice_everything_uses_the_one_there_is() -> None:
    full = NamedTTS("full")
    tts = LockedTTS(full, None, busy=lambda: True)
    tts.synthesize("Done:")
    assert full.used == 1 and tts.work["lean"] == 0
