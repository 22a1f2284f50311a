"""The OpenAI-compatible client's retries and errors, against a fake server: what is retried (429 after its
Retry-After, 5xx, a stream broken before any output, timeouts, a refused connection) and what is not (auth, a bad
request, a stream broken or stalled after output, garbage), each as its own error."""

from __future__ import annotations

import json
import time

import pytest

from loop.errors import MalformedStream, ModelAuthError, ModelRequestError, ModelUnavailable
from loop.types import ModelEvent, TextDelta
from tests.loop.models.test_openai_compat import collect, request
from tests.openai_server import (
    Reply,
    broken_stream,
    chunk,
    error_reply,
    free_port,
    garbage_stream,
    slow_reply,
    stalled_stream,
    text_reply,
)

# ---- retries and errors -------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_429_is_retried_after_retry_after(server, make_model):
    server.enqueue(error_reply(429, "Rate limit reached", retry_after=0.3), text_reply("ok"))

    final = (await collect(make_model(), request()))[-1]

    assert final.text == "ok"
    assert len(server.requests) == 2
    assert server.requests[1].at - server.requests[0].at >= 0.28  # backoff_s is 0.001: this is Retry-After


@pytest.mark.asyncio
async def test_retry_after_beyond_what_a_voice_turn_can_wait_gives_up(server, make_model):
    server.enqueue(error_reply(429, "Rate limit reached", retry_after=120), text_reply("never"))
    with pytest.raises(ModelUnavailable, match="120s"):
        await collect(make_model(), request())
    assert len(server.requests) == 1


@pytest.mark.asyncio
async def test_5xx_until_retries_run_out_is_unavailable(server, make_model):
    server.enqueue(*[error_reply(500, "The server had an error") for _ in range(3)])

    with pytest.raises(ModelUnavailable, match="HTTP 500") as info:
        await collect(make_model(max_retries=2), request())

    assert len(server.requests) == 3
    assert info.value.retryable


@pytest.mark.asyncio
async def test_401_is_auth_error_without_the_key(server, make_model):
    key = "sk-live-SECRET1234567890"
    server.enqueue(error_reply(401, f"Incorrect API key provided: {key}. Find your key at platform."))

    with pytest.raises(ModelAuthError) as info:
        await collect(make_model(api_key=key), request())

    message = str(info.value)
    assert "HTTP 401" in message and "OPENAI_API_KEY" in message and "retrying unchanged will fail" in message
    assert key not in message and "SECRET" not in message
    assert len(server.requests) == 1
    assert not info.value.retryable


@pytest.mark.asyncio
async def test_400_is_request_error_with_provider_message(server, make_model):
    server.enqueue(error_reply(400, "Invalid value for 'messages[3].role': 'robot' is not supported."))

    with pytest.raises(ModelRequestError, match=r"HTTP 400.*'robot' is not supported"):
        await collect(make_model(), request())

    assert len(server.requests) == 1


@pytest.mark.asyncio
async def test_stream_broken_after_output_is_malformed_and_not_retried(server, make_model):
    server.enqueue(broken_stream("Hello", " there"), text_reply("Hello there again"))
    seen: list[ModelEvent] = []

    with pytest.raises(MalformedStream, match="partial output"):
        await collect(make_model(), request(), into=seen)

    assert seen == [TextDelta("Hello"), TextDelta(" there")]
    assert len(server.requests) == 1  # a retry would have repeated spoken tokens


@pytest.mark.asyncio
async def test_stream_broken_before_any_output_is_retried(server, make_model):
    server.enqueue(broken_stream(), text_reply("ok"))
    events = await collect(make_model(), request())
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["ok"]
    assert len(server.requests) == 2


@pytest.mark.asyncio
async def test_garbage_data_line_is_malformed(server, make_model):
    server.enqueue(garbage_stream("Hi"))
    with pytest.raises(MalformedStream, match="Non-JSON data line"):
        await collect(make_model(), request())


@pytest.mark.asyncio
async def test_error_event_mid_stream_is_malformed(server, make_model):
    reply = text_reply("Hi")
    reply.events.insert(2, json.dumps({"error": {"message": "engine overloaded"}}))
    server.enqueue(reply)
    with pytest.raises(MalformedStream, match="engine overloaded"):
        await collect(make_model(), request())


@pytest.mark.asyncio
async def test_stream_ending_without_done_or_finish_reason_is_malformed(server, make_model):
    server.enqueue(Reply(events=[chunk({"content": "Hi"})], send_done=False))
    with pytest.raises(MalformedStream, match=r"without \[DONE\]"):
        await collect(make_model(), request())


@pytest.mark.asyncio
async def test_timeout_is_retried_then_unavailable(server, make_model):
    server.enqueue(slow_reply(5.0), slow_reply(5.0))
    started = time.monotonic()

    with pytest.raises(ModelUnavailable, match="Timeout"):
        await collect(make_model(timeout_s=0.2, max_retries=1), request())

    assert len(server.requests) == 2
    assert time.monotonic() - started < 2.0


@pytest.mark.asyncio
async def test_timeout_then_success(server, make_model):
    server.enqueue(slow_reply(5.0), text_reply("ok"))
    final = (await collect(make_model(timeout_s=0.2), request()))[-1]
    assert final.text == "ok" and len(server.requests) == 2


@pytest.mark.asyncio
async def test_request_timeout_overrides_model_timeout(server, make_model):
    server.enqueue(slow_reply(5.0))
    req = request()
    req.timeout_s = 0.2
    with pytest.raises(ModelUnavailable):
        await collect(make_model(timeout_s=30.0, max_retries=0), req)


@pytest.mark.asyncio
async def test_stall_after_output_is_malformed_not_retried(server, make_model):
    server.enqueue(stalled_stream("Hi", delay_s=5.0), text_reply("dup"))
    with pytest.raises(MalformedStream, match="ReadTimeout"):
        await collect(make_model(timeout_s=0.2), request())
    assert len(server.requests) == 1


@pytest.mark.asyncio
async def test_connection_refused_is_retried_then_unavailable(make_model):
    model = make_model(base_url=f"http://127.0.0.1:{free_port()}/v1", max_retries=1)
    with pytest.raises(ModelUnavailable, match="ConnectError"):
        await collect(model, request())
