"""A model wrapper that counts the calls made to it: what `voiceloop bench voice` reports as model calls per
reply (speculation, decisions started in a pause and withdrawn answers included: on a paid model each is paid)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from loop.types import Model, ModelEvent, ModelRequest


class CountedModel:
    """Wraps a `loop.types.Model`; `calls` is how many streams were started. Everything else is the model's."""

    def __init__(self, model: Model) -> None:
        self.model, self.calls = model, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.calls += 1
        async for event in self.model.stream(request):
            yield event
