"""OpenAICompatModel against a real local HTTP server speaking the chat-completions SSE protocol."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from loop.errors import (
    MalformedStream,
    ModelAuthError,
    ModelRequestError,
    ModelUnavailable,
)
from loop.models.openai import OpenAICompatModel
from loop.types import (
    Message,
    Model,
    ModelEvent,
    ModelRequest,
    ModelResponse,
    Pricing,
    TextDelta,
    ToolCall,
    ToolCallDelta,
)
from tests.openai_server import (
    OpenAIServer,
    Reply,
    broken_stream,
    chunk,
    error_reply,
    free_port,
    garbage_stream,
    slow_reply,
    stalled_stream,
    text_reply,
    tool_calls_reply,
    usage,
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def request(*messages: Message, tools: list | None = None, max_tokens: int = 64) -> ModelRequest:
    msgs = list(messages) or [Message("system", "You are terse."), Message("user", "Hi")]
    return ModelRequest(messages=msgs, tools=TOOLS if tools is None else tools, max_output_tokens=max_tokens)


async def collect(model: OpenAICompatModel, req: ModelRequest, into: list[ModelEvent] | None = None) -> list:
    events = [] if into is None else into
    async for event in model.stream(req):
        events.append(event)
    return events


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


# ---- happy paths ----------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_text_streams_as_deltas_then_one_final_response(server, make_model):
    server.enqueue(text_reply("Hel", "lo ", "world."))
    model = make_model()
    assert isinstance(model, Model)

    events = await collect(model, request())

    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo ", "world."]
    assert all(isinstance(e, TextDelta) for e in events[:-1])
    final = events[-1]
    assert isinstance(final, ModelResponse)
    assert (final.text, final.finish_reason, final.model, final.tool_calls) == (
        "Hello world.",
        "stop",
        "test-model",
        [],
    )


@pytest.mark.asyncio
async def test_parallel_tool_calls_assembled_from_interleaved_fragments(server, make_model):
    weather, search = '{"city": "Paris", "unit": "celsius"}', '{"query": "trains to Lyon tomorrow"}'
    server.enqueue(tool_calls_reply([("call_a", "get_weather", weather), ("call_b", "search", search)], pieces=4))

    events = await collect(make_model(), request())

    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert {d.index for d in deltas} == {0, 1}
    assert "".join(d.arguments for d in deltas if d.index == 1) == search
    assert [(d.index, d.id, d.name) for d in deltas if d.name] == [
        (0, "call_a", "get_weather"),
        (1, "call_b", "search"),
    ]
    final = events[-1]
    assert isinstance(final, ModelResponse)
    assert final.finish_reason == "tool_calls"
    assert [(c.id, c.name, c.arguments) for c in final.tool_calls] == [
        ("call_a", "get_weather", {"city": "Paris", "unit": "celsius"}),
        ("call_b", "search", {"query": "trains to Lyon tomorrow"}),
    ]


@pytest.mark.asyncio
async def test_usage_with_cached_tokens_and_cost(server, make_model):
    server.enqueue(text_reply("ok", usage_=usage(1000, 50, cached=800)))
    model = make_model(pricing=Pricing(input_per_mtok=2.0, output_per_mtok=8.0))

    final = (await collect(model, request()))[-1]

    assert (final.usage.input_tokens, final.usage.output_tokens, final.usage.cached_input_tokens) == (
        1000,
        50,
        800,
    )
    assert final.usage.cost_usd == pytest.approx((1000 * 2.0 + 50 * 8.0) / 1e6)


@pytest.mark.asyncio
async def test_missing_usage_chunk_is_estimated_not_zero(server, make_model):
    server.enqueue(text_reply("a reply of some length"))  # server ignored include_usage
    final = (await collect(make_model(), request()))[-1]
    assert final.usage.input_tokens > 0 and final.usage.output_tokens > 0


@pytest.mark.asyncio
async def test_request_body_roles_tools_and_headers(server, make_model):
    server.enqueue(text_reply("fine"))
    call = ToolCall(name="get_weather", arguments={"city": "Oslo", "days": 2}, id="call_9")
    history = [
        Message("system", "You are terse."),
        Message("user", "Weather in Oslo?"),
        Message("assistant", "", tool_calls=[call]),
        Message("tool", '{"temp_c": 3}', tool_call_id="call_9", name="get_weather"),
        Message("user", "And?"),
    ]
    model = make_model(api_key="sk-test-abcdef", extra_body={"temperature": 0.2})

    await collect(model, request(*history, max_tokens=123))

    [sent] = server.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test-abcdef"
    body = sent.body
    assert body["model"] == "test-model" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 123 and body["temperature"] == 0.2
    assert body["tools"] == TOOLS
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "tool", "user"]
    assistant, tool = body["messages"][2], body["messages"][3]
    assert assistant["content"] == ""  # not null: llama.cpp's server rejects null
    [wire_call] = assistant["tool_calls"]
    assert {k: wire_call[k] for k in ("id", "type")} == {"id": "call_9", "type": "function"}
    assert wire_call["function"]["name"] == "get_weather"
    assert json.loads(wire_call["function"]["arguments"]) == {"city": "Oslo", "days": 2}
    assert tool == {"role": "tool", "content": '{"temp_c": 3}', "tool_call_id": "call_9"}


@pytest.mark.asyncio
async def test_no_tools_key_when_no_tools_and_none_in_extra_body_removes_a_key(server, make_model):
    server.enqueue(text_reply("ok"))
    model = make_model(extra_body={"stream_options": None, "max_completion_tokens": 7})
    await collect(model, request(tools=[]))
    body = server.requests[0].body
    assert "tools" not in body and "stream_options" not in body and body["max_completion_tokens"] == 7


@pytest.mark.asyncio
async def test_invalid_json_arguments_are_kept_not_raised(server, make_model):
    server.enqueue(tool_calls_reply([("call_x", "get_weather", '{"city": "Par')]))
    final = (await collect(make_model(), request()))[-1]
    assert final.tool_calls[0].arguments == {"__invalid_json__": '{"city": "Par'}
    assert final.tool_calls[0].name == "get_weather"


@pytest.mark.asyncio
async def test_consumer_may_stop_early(server, make_model):
    server.enqueue(text_reply("one", "two", "three"), text_reply("again"))
    model = make_model()
    stream = model.stream(request())
    first = await anext(stream)
    await stream.aclose()
    assert first == TextDelta("one")
    assert (await collect(model, request()))[-1].text == "again"  # the client is still usable


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


# ---- construction ----------------------------------------------------------------------------


def test_from_env_names_the_missing_variable():
    with pytest.raises(ValueError, match="VOICELOOP_LLM_MODEL"):
        OpenAICompatModel.from_env({"VOICELOOP_LLM_URL": "http://localhost:11434/v1"})
    with pytest.raises(ValueError, match="VOICELOOP_LLM_URL"):
        OpenAICompatModel.from_env({"VOICELOOP_LLM_MODEL": "llama3.2"})
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        OpenAICompatModel.from_env({"VOICELOOP_LLM_URL": "https://api.openai.com/v1", "VOICELOOP_LLM_MODEL": "m"})
    model = OpenAICompatModel.from_env(
        {"VOICELOOP_LLM_URL": "http://localhost:11434/v1", "VOICELOOP_LLM_MODEL": "llama3.2"}, max_retries=1
    )
    assert (model.url, model.name, model.max_retries) == (
        "http://localhost:11434/v1/chat/completions",
        "llama3.2",
        1,
    )


@pytest.mark.parametrize(
    ("base_url", "endpoint"),
    [
        ("https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions"),
        ("http://localhost:8000/", "http://localhost:8000/v1/chat/completions"),
        ("http://h:8080/v1/chat/completions", "http://h:8080/v1/chat/completions"),
    ],
)
def test_base_url_forms(base_url, endpoint):
    assert OpenAICompatModel(base_url, "m").url == endpoint


def test_count_tokens_heuristic():
    model = OpenAICompatModel("http://localhost:1/v1", "m")
    assert model.count_tokens("") == 0
    assert model.count_tokens("a") == 1
    assert model.count_tokens("x" * 400) == 100


# ---- warming the server's prompt cache ---------------------------------------------------------


@pytest.mark.asyncio
async def test_warm_sends_the_stable_prefix_once_for_one_token_then_turns_share_it(server, make_model):
    server.enqueue(text_reply("H"), text_reply("fine"))
    model = make_model()
    system = Message("system", "You are terse.")
    warm = request(system, Message("user", "ignored"))  # stable_prefix=1: the system prompt alone is warmed
    await model.warm(warm)
    await model.warm(warm)  # one in flight: not sent twice
    await model._warming
    await collect(model, request(system, Message("user", "Weather in Oslo?")))

    first, turn = server.requests
    assert first.body["max_tokens"] == 1 and first.body["stream"] is False and "stream_options" not in first.body
    assert first.body["tools"] == turn.body["tools"] == TOOLS
    assert first.body["messages"][0] == turn.body["messages"][0]  # the same prefix, by construction
    assert [m["role"] for m in first.body["messages"]] == ["system", "user"]


@pytest.mark.asyncio
async def test_a_failed_warm_changes_nothing_and_openais_endpoint_is_not_warmed(server, make_model):
    server.enqueue(error_reply(500, "boom"), text_reply("fine"))
    model = make_model(max_retries=0)
    await model.warm(request(Message("system", "s"), Message("user", "u")))
    await model._warming  # swallowed: the first turn is cold, nothing more
    events = await collect(model, request(Message("system", "s"), Message("user", "u")))
    assert isinstance(events[-1], ModelResponse)
    assert OpenAICompatModel("https://api.openai.com/v1", "gpt-4o-mini", api_key="k").warm_prefix is False
    assert OpenAICompatModel("https://api.openai.com/v1", "m", api_key="k", warm_prefix=True).warm_prefix is True


@pytest.mark.asyncio
async def test_a_server_warms_the_shared_prompt_before_its_first_call(server, make_model, tmp_path):
    from types import SimpleNamespace

    from loop import Agent
    from tests.fakes import LoudnessVAD, ToneTTS, WordChunker
    from voice.hosting.registry import CallFactory

    server.enqueue(text_reply("H"))
    model = make_model()
    stack = SimpleNamespace(tts=ToneTTS(), stt=None, chunker=WordChunker, new_vad=LoudnessVAD)
    factory = CallFactory(stack, lambda _id: Agent(model, system_prompt="You are the order desk."), tmp_path)  # type: ignore[arg-type]
    took = await factory.warm_model()
    assert took is not None and took >= 0
    [sent] = server.requests  # answered before the server takes a call
    assert sent.body["max_tokens"] == 1 and sent.body["messages"][0]["content"].startswith("You are the order desk.")
