"""The answer's first clause, synthesised while the caller's pause lasts.

A decision started in the pause (`voice.runtime.priming`) often knows the answer before the turn ends: the model's
reply, a read's own words, or the answer it primed after its reads. The run that follows replays exactly that, so
its first clause is known too. Synthesised now, it is ready when the turn ends instead of ~0.1 s after it (the
time a clause of a dozen words takes Piper here). The run's clauses are matched by their exact text: a clause the
run does not say was work wasted, never words said.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import numpy as np

from loop.prefetch import Prefetch
from voice.runtime.priming import PrimedCall, primed_text
from voice.speech.engines import Chunker

MAX_KEPT = 4  # clauses kept at once: a pause or two back is as far as a run reaches
REHEARSAL_AHEAD_S = 2.0  # how far ahead of playing a rehearsed clause counts, for a server's shared voices


class Rehearsal:
    """Clauses synthesised ahead for one call, by text. `synthesize` runs a clause through the call's voice."""

    def __init__(self, synthesize: Callable[[str], Awaitable[np.ndarray]], chunker: Callable[[], Chunker]) -> None:
        self.synthesize, self.chunker = synthesize, chunker
        self.ready: dict[str, asyncio.Task[np.ndarray]] = {}
        self.used = 0

    async def rehearse(self, done: Prefetch, wanted: Callable[[], bool] = lambda: True) -> str:
        """Synthesise the first clause of the answer `done` knows, if it knows one and it is still `wanted` once
        known; returns the clause synthesised ("" for none)."""
        clause = await self._first_clause(done)
        if not clause or not wanted():
            return ""
        if clause not in self.ready:
            while len(self.ready) >= MAX_KEPT:
                self.ready.pop(next(iter(self.ready))).cancel()
            self.ready[clause] = asyncio.ensure_future(self.synthesize(clause))
        return clause

    def take(self, text: str) -> asyncio.Task[np.ndarray] | None:
        """The synthesis of this clause, if it was rehearsed (each is used once)."""
        task = self.ready.pop(text, None)
        if task is not None and not (task.done() and (task.cancelled() or task.exception() is not None)):
            self.used += 1
            return task
        return None

    def forget(self) -> None:
        for task in self.ready.values():
            task.cancel()
        self.ready.clear()

    async def _first_clause(self, done: Prefetch) -> str:
        chunker = self.chunker()
        pieces: AsyncIterator[str] = _one(done.words) if done.words else \
            primed_text(done.answer) if isinstance(done.answer, PrimedCall) else _one("")
        async for piece in pieces:
            if clauses := chunker.push(piece):
                return clauses[0]
        rest = chunker.flush()
        return rest[0] if rest else ""


async def _one(text: str) -> AsyncIterator[str]:
    if text:
        yield text

