"""The fake OpenAI-compatible server and a factory of clients for it, shared by the client's tests
(test_openai_compat.py, test_openai_compat_errors.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from loop.models.openai import OpenAICompatModel
from tests.openai_server import OpenAIServer


@pytest.fixture
def server() -> AsyncIterator[OpenAIServer]:
    with OpenAIServer() as srv:
        yield srv


@pytest_asyncio.fixture
async def make_model(server: OpenAIServer) -> AsyncIterator:
    made: list[OpenAICompatModel] = []

    def factory(**kwargs: object) -> OpenAICompatModel:
        options: dict = {"timeout_s": 2.0, "max_retries": 2, "backoff_s": 0.001, **kwargs}
        options.setdefault("base_url", server.base_url)
        made.append(OpenAICompatModel(model="test-model", **options))
        return made[-1]

    yield factory
    for model in made:
        await model.aclose()
