"""Generation with the real embedded 0.5B model (skipped without llama-cpp-python or its weights): the warm
prefix reused, text streamed, tool calls valid and never invented, generation cancelled, threads shared with a
voice, and the call so far read ahead of the turn."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from loop.bench.brain import case_request
from loop.models.llama.qwen_format import render_prefix, render_prompt
from loop.types import Message, ModelRequest, ModelResponse, TextDelta, ToolCall, ToolCallDelta
from tests.helpers import assert_heard, embedded_model
from voice.demo.order_desk import demo_assembler

# ---- generation with the real 0.5B model -----------------------------------------------------


@pytest.fixture(scope="module")
def model() -> Any:
    return embedded_model()


@pytest.fixture(scope="module")
def desk(model: Any) -> Any:
    """The order-desk demo as an Agent would assemble it: its tools, policy and system prompt."""
    return demo_assembler(model.count_tokens)


def _ask(desk: Any, say: str, history: list[dict[str, Any]] | None = None, max_output: int = 48) -> ModelRequest:
    return case_request(desk, {"say": say, "history": history or []}, max_output)


async def _collect(model: Any, request: ModelRequest) -> tuple[list[Any], ModelResponse]:
    events = [event async for event in model.stream(request)]
    assert isinstance(events[-1], ModelResponse)
    assert not any(isinstance(e, ModelResponse) for e in events[:-1])
    return events[:-1], events[-1]


async def test_warm_prefix_is_reused_by_the_next_turn(model: Any, desk: Any, tmp_path: Path) -> None:
    request = _ask(desk, "Hi there!")
    model.reset_cache()
    model.state_dir = tmp_path
    try:
        prefix_tokens = len(model._tok(render_prefix(request.messages[:1], request.tools)))
        assert await model.warm(request) == prefix_tokens  # cold: the whole system prompt and tool schemas
        assert await model.warm(request) == 0  # already in the KV cache
        assert len(list(tmp_path.glob("*.kv"))) == 1  # and saved for the next process
        model.reset_cache()
        assert await model.warm(request) == 0  # restored from disk, nothing evaluated
    finally:
        model.state_dir = None
    _, response = await _collect(model, request)
    assert model.last.reused_tokens >= prefix_tokens
    assert model.last.evaluated_tokens <= model.last.prompt_tokens - prefix_tokens + 1
    assert response.usage.cached_input_tokens == model.last.reused_tokens and response.text
    # the second turn reuses the whole first prompt, not only the system prefix
    first_prompt = model.last.prompt_tokens
    history = [{"role": "user", "content": "Hi there!"}, {"role": "assistant", "content": response.text}]
    await _collect(model, _ask(desk, "Bye", history))
    assert model.last.reused_tokens >= first_prompt - 1
    assert model.last.evaluated_tokens <= model.last.prompt_tokens - first_prompt + 1


async def test_text_reply_streams_before_the_response(model: Any, desk: Any) -> None:
    request = _ask(desk, "Hello! How are you today?")
    events, response = await _collect(model, request)
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) >= 2 and not response.tool_calls
    assert "".join(d.text for d in deltas).strip() == response.text and "<" not in response.text
    assert response.finish_reason in ("stop", "length")
    assert response.usage.input_tokens == len(model._tok(render_prompt(request)))
    assert 0 < response.usage.output_tokens <= 48 and response.usage.cost_usd == 0.0


async def test_order_question_yields_a_valid_lookup_call(model: Any, desk: Any) -> None:
    events, response = await _collect(model, _ask(desk, "Where is my order 4567?"))
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert not any(isinstance(e, TextDelta) for e in events)
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("lookup_order", {"order_id": "4567"})]
    assert deltas and deltas[0].id == response.tool_calls[0].id and deltas[0].name == "lookup_order"
    assert json.loads(deltas[0].arguments) == {"order_id": "4567"}
    assert response.finish_reason == "tool_calls"
    # one call ends the output: its tail is not read back in only to learn whether a second call follows
    assert model.last.finish == "stop"
    if model.last.output_tokens:  # generated (a call decided without generating has no tail to read back)
        assert model.llm.n_tokens < model.last.prompt_tokens + model.last.output_tokens


async def test_a_finished_call_may_be_followed_by_another_when_asked(model: Any, desk: Any) -> None:
    model.one_call = False
    try:
        _, response = await _collect(model, _ask(desk, "Where is my order 4567?"))
    finally:
        model.one_call = True
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("lookup_order", {"order_id": "4567"})]
    assert model.llm.n_tokens == model.last.prompt_tokens + model.last.output_tokens  # read back, then stopped


async def test_missing_details_are_asked_for_not_invented(model: Any, desk: Any) -> None:
    _, response = await _collect(model, _ask(desk, "I want a refund."))
    assert not response.tool_calls  # the model's own words differ between CPUs: it asks about the order
    assert_heard(response.text, ("order", "number"))


async def test_truncated_tool_call_is_returned_as_invalid_json(model: Any, desk: Any) -> None:
    # two calls are possible (a look-up, or the address), so the model generates one and is cut off
    _, response = await _collect(model, _ask(desk, "Is my order 4567 going to 12 High Street?", max_output=6))
    assert response.finish_reason == "length"
    assert len(response.tool_calls) == 1 and "__invalid_json__" in response.tool_calls[0].arguments


async def test_consumer_stopping_cancels_generation(model: Any, desk: Any) -> None:
    stream = model.stream(_ask(desk, "Tell me how orders and refunds work here, in detail.", max_output=200))
    async for event in stream:
        if isinstance(event, TextDelta):
            break
    await stream.aclose()  # barge-in: the consumer stops listening
    with model._lock:  # the worker lets go within a token
        assert model.last.finish == "cancelled" and model.last.output_tokens < 20
    _, response = await _collect(model, _ask(desk, "Hello!"))  # and the model still works
    assert response.text


def test_count_tokens_is_exact(model: Any) -> None:
    text = "Refund twenty dollars on order 4567, please."
    assert model.count_tokens(text) == len(model.llm.tokenize(text.encode(), add_bos=False))
    assert model.count_tokens("") == 0


async def test_grammars_compile_for_whatever_words_the_caller_says(model: Any, desk: Any) -> None:
    """Spans of the caller's words become grammar patterns: dots, apostrophes, slashes and amounts must compile."""
    for say in ("Refund 35.50 on order 2020, and send it to St. John's Rd. 4/5, Leeds & Co. #2 at 3 p.m.",
                "Change the address of order 1234 to 221B Baker St., London - flat 2."):
        _, response = await _collect(model, _ask(desk, say, max_output=8))
        assert response.finish_reason in ("stop", "length", "tool_calls")


async def test_decoding_uses_both_threads_until_a_voice_speaks_beside_it(model: Any, desk: Any,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool call is decoded on `quiet_threads` (nothing is synthesised meanwhile); a spoken reply only up to its
    first clause, which Piper then speaks on the other core, and with the tools' words already being said, on one.
    (The cores count as free here, whatever else this machine runs: tests/loop/models/llama/test_cpu_share.py.)"""
    import llama_cpp

    from loop.models.llama.cpu_share import CpuShare

    monkeypatch.setattr(model, "cpu", CpuShare(read=lambda: None))

    def threads() -> int:
        return int(llama_cpp.llama_n_threads(model.llm._ctx.ctx))

    model.llm._ctx.set_n_threads(1, 1)  # a call decided without decoding ("Where is my order 4567?") sets none
    _, response = await _collect(model, _ask(desk, "I want a refund of $20 on order 4567."))
    assert response.tool_calls and model.last.output_tokens and threads() == model.quiet_threads == 2
    _, response = await _collect(model, _ask(desk, "Hello! How are you today?"))
    from loop.grounding.speakable import CLAUSE_END

    assert threads() == (1 if CLAUSE_END.search(response.text) else 2)  # its first clause went to the voice
    request = _ask(desk, "Where is my order 4567?")
    request.words_spoken = True
    await _collect(model, request)
    assert threads() == 1
    busy = CpuShare(cpus=2, read=lambda: None)
    busy.others = 1.2  # another process holds a core: one thread, which it cannot stall
    monkeypatch.setattr(model, "cpu", busy)
    _, response = await _collect(model, _ask(desk, "I want a refund of $20 on order 4567."))
    assert response.tool_calls and model.last.output_tokens and threads() == 1


async def test_a_call_with_no_alternative_is_not_generated(model: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The garage's "is my car ready? job 4712" admits one call whatever the model names (`Plan.sole_call`): it
    comes out at once, nothing evaluated, and it is the call the model makes when it does decide."""
    from examples.garage.workshop import Workshop
    from loop.models.llama.decoding import Plan
    from loop.prompt import PromptAssembler

    tools = Workshop(":memory:").tools()
    garage = PromptAssembler("You answer Hartley's Garage's phone. Look jobs up with the tools.", tools,
                             model.count_tokens, 2048)
    request = garage.build([Message("user", "Hi, is my car ready? The job number is 4712")], 0, 96)[0]
    events, decided = await _collect(model, request)
    assert [c.name for c in decided.tool_calls] == ["repair_status"] and decided.finish_reason == "tool_calls"
    assert isinstance(events[0], ToolCallDelta) and model.last.evaluated_tokens == 0 == model.last.output_tokens
    monkeypatch.setattr(Plan, "sole_call", lambda self: "")
    _, generated = await _collect(model, request)
    assert model.last.output_tokens > 0
    assert [(c.name, c.arguments) for c in generated.tool_calls] == [(c.name, c.arguments) for c in decided.tool_calls]


async def test_the_call_so_far_is_read_ahead_of_the_turn_and_never_over_another_call(model: Any, desk: Any) -> None:
    """`warm_conversation` (while the caller speaks): the turn's prompt then evaluates only the caller's new words;
    a cache holding another call's turn is left alone, and a generation waiting for the model stops the reading."""
    history = [{"role": "user", "content": "Where is my order?"},
               {"role": "assistant", "content": "Sure, I can help with that. Could you tell me the order number?"}]
    request = _ask(desk, "It is 4567.", history)
    so_far = replace(request, messages=request.messages[:-1])
    model.reset_cache()
    await model.warm(request)
    model._wanted.set()  # a generation waits for the model: nothing is read
    assert await model.warm_conversation(so_far) == 0
    model._wanted.clear()
    assert await model.warm_conversation(so_far) > 0
    assert await model.warm_conversation(so_far) == 0  # read already
    await _collect(model, request)
    new_words = len(model._tok("<|im_start|>user\nIt is 4567.<|im_end|>\n<|im_start|>assistant\n"))
    assert model.last.evaluated_tokens <= new_words + len(model._tok('{"name": "'))
    other = _ask(desk, "Can I get a refund on order 2020?")  # another call's first turn, now in the cache
    await _collect(model, other)
    assert await model.warm_conversation(so_far) == 0
    model._used_at -= 60  # that call has not used the model for a minute: it is over, or between turns
    assert await model.warm_conversation(so_far) > 0


async def test_a_change_to_a_declined_write_reaches_the_embedded_models_plan(model: Any) -> None:
    """The model is shown a declined write as "I have not done that" (`present`), but its plan reads the messages as
    they are: "Actually make it Thursday." to a Tuesday delivery is the same call with Thursday (a dev-half call
    heard right had the Tuesday asked again, and booked on "Yes, that's right.")."""
    from loop.approvals import not_approved

    tool = {"type": "function", "function": {"name": "book_delivery", "description": "Book a delivery", "parameters": {
        "type": "object", "properties": {"ticket": {"type": "string", "pattern": "^[0-9]{5}$"},
                                         "day": {"type": "string", "enum": ["tuesday", "thursday", "friday"]}},
        "required": ["ticket", "day"]}}}
    call = ToolCall("book_delivery", {"ticket": "48217", "day": "tuesday"}, "c1")
    change = "Actually make it Thursday."
    messages = [Message("system", "You answer a dry cleaner's phone."),
                Message("user", "Please deliver ticket 48217 on Tuesday."), Message("assistant", "", [call]),
                Message("tool", not_approved("book_delivery", f"the caller asked for a change: {change!r}"),
                        tool_call_id="c1"), Message("user", change)]
    _, response = await _collect(model, ModelRequest(messages, [tool], 96, writes=frozenset({"book_delivery"})))
    assert [(c.name, c.arguments) for c in response.tool_calls] == [
        ("book_delivery", {"ticket": "48217", "day": "thursday"})]
