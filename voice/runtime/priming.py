"""Preemptive decisions: the model call for a turn is started while the caller pauses, on the words heard so
far, and the real run's identical request is served from it — so the model's first token is ready, or nearly,
when the turn ends. A request that differs in any byte (the caller said more, the history changed) is a miss
and goes to the model as usual; a primed call that nobody claims is cancelled.

Only the model's output is kept ahead of time. Tools still run inside the real run, through vetting and
approval; the only actions taken early are the speculative reads policy allows outright (`speculation.py`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from typing import Any

from loop.types import Model, ModelEvent, ModelRequest, ModelResponse, TextDelta, ToolCallDelta, Usage

MAX_PRIMED = 4  # calls kept at once; older ones are cancelled


def request_key(request: ModelRequest) -> str:
    """Identical requests, byte for byte, share a key (the turn number is bookkeeping, not input)."""
    return json.dumps([[m.to_dict() for m in request.messages], request.tools, request.max_output_tokens],
                      sort_keys=True, default=str)


@dataclass
class PrimedCall:
    events: list[ModelEvent] = field(default_factory=list)
    done: bool = False
    error: BaseException | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task | None = None
    paid: bool = False  # its spend is settled by the speculation that started it (`loop.prefetch`)


class PrimedModel:
    """Wraps a `loop.types.Model`; everything but `stream` is the wrapped model's."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.primed: dict[str, PrimedCall] = {}
        self.hits = self.misses = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    def prime(self, request: ModelRequest, exclusive: bool = False) -> PrimedCall:
        """Start this call now (idempotent); its events are kept for the run that asks the same. `exclusive`
        drops every other primed call first (the caller paused: older partial words will not be the turn)."""
        key = request_key(request)
        if exclusive:
            for other in [k for k in self.primed if k != key]:
                self._drop(other)
        if key in self.primed:
            return self.primed[key]
        while len(self.primed) >= MAX_PRIMED:
            self._drop(next(iter(self.primed)))
        call = PrimedCall()
        call.task = asyncio.create_task(self._consume(request, call))
        self.primed[key] = call
        return call

    async def wait(self, call: PrimedCall) -> list[ModelEvent]:
        """Everything the primed call produced, once it is finished (raises what it raised)."""
        while not call.done:
            call.changed.clear()
            await call.changed.wait()
        if call.error is not None:
            raise call.error
        return list(call.events)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        call = self.primed.pop(request_key(request), None)
        if call is not None and call.done and call.error is not None:
            call = None  # it failed or was cancelled before anyone asked: ask the model afresh
        if call is None:
            self.misses += 1
            self.forget()  # whatever was primed is for words the caller did not end on: free the model
            async for event in self.model.stream(request):
                yield event
            return
        self.hits += 1
        seen = 0
        while True:
            while seen < len(call.events):
                seen += 1
                event = call.events[seen - 1]
                if call.paid and isinstance(event, ModelResponse):  # paid for once, by the speculation
                    event = replace(event, usage=Usage())
                yield event
            if call.done:
                break
            call.changed.clear()
            await call.changed.wait()
        if call.error is not None:
            raise call.error

    def forget(self) -> None:
        for key in list(self.primed):
            self._drop(key)

    def _drop(self, key: str) -> None:
        call = self.primed.pop(key)
        if call.task is not None and not call.task.done():
            call.task.cancel()
        if not call.done:  # a task cancelled before it ever ran never reaches its `finally`: nobody may wait forever
            call.error, call.done = call.error or RuntimeError("primed call cancelled"), True
            call.changed.set()

    async def _consume(self, request: ModelRequest, call: PrimedCall) -> None:
        try:
            async for event in self.model.stream(request):
                call.events.append(event)
                call.changed.set()
        except asyncio.CancelledError:
            call.error = RuntimeError("primed call cancelled")
            raise
        except Exception as exc:
            call.error = exc
        finally:
            call.done = True
            call.changed.set()


async def primed_text(call: PrimedCall) -> AsyncIterator[str]:
    """A primed call's reply text as it comes; nothing more once it turns out to call a tool instead."""
    seen = 0
    while True:
        while seen < len(call.events):
            event = call.events[seen]
            seen += 1
            if isinstance(event, ToolCallDelta):
                return
            if isinstance(event, TextDelta):
                yield event.text
        if call.done:
            return
        call.changed.clear()
        await call.changed.wait()
