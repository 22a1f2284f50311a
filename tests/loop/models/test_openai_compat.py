"""OpenAICompatModel against a real local HTTP server speaking the chat-completions SSE protocol."""

from __future__ import annotations

import json

import pytest

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
from tests.openai_server import error_reply, text_reply, tool_calls_reply, usage

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
