"""Speech first: after a tool's own words became the answer (`loop.Tool.answers`), the loop asks the model only
whether to act further (`ModelRequest.words_spoken`). Nothing waits on that check but a chained action, whose
question would follow the answer anyway — while the voice synthesising the answer's first clause is what the
caller waits on. On two cores the two compete (first answer audio ~0.3 s alone, 1-2 s beside the check), so the
check starts once the voice has caught up with every clause queued, or after `max_wait_s` at the latest.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from loop.types import ModelEvent, ModelRequest
from voice.runtime.priming import PrimedModel


class SpeechGate:
    """Open while text-to-speech has nothing queued or in flight."""

    def __init__(self) -> None:
        self.pending = 0
        self._idle = asyncio.Event()
        self._idle.set()

    def queued(self) -> None:
        self.pending += 1
        self._idle.clear()

    def done(self) -> None:
        self.pending = max(0, self.pending - 1)
        if self.pending == 0:
            self._idle.set()

    async def wait_idle(self, max_wait_s: float) -> bool:
        """True when the voice caught up, False when `max_wait_s` passed first."""
        try:
            await asyncio.wait_for(self._idle.wait(), max_wait_s)
        except TimeoutError:
            return False
        return True


class SpeechFirstModel:
    """Wraps a `loop.types.Model`: a words-spoken check waits for the gate; everything else goes straight through."""

    def __init__(self, model: Any, gate: SpeechGate, max_wait_s: float = 2.0) -> None:
        self.model, self.gate, self.max_wait_s = model, gate, max_wait_s

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if request.words_spoken:
            await self.gate.wait_idle(self.max_wait_s)
        async for event in self.model.stream(request):
            yield event


def install(agent: Any, gate: SpeechGate) -> None:
    """Put the gate under the agent's model (beneath a `PrimedModel`, which must stay outermost); an agent reused
    for another call gets that call's gate."""
    holder = agent
    while isinstance(holder.model, PrimedModel):
        holder = holder.model  # the gate goes inside it
    if isinstance(holder.model, SpeechFirstModel):
        holder.model.gate = gate
    else:
        holder.model = SpeechFirstModel(holder.model, gate)
