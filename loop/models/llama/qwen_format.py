"""The Qwen2.5 chat format, written out: prompt rendering, the tool-call grammar, and output parsing.

Rendering follows the `tokenizer.chat_template` in the GGUF's metadata exactly (a test compares the bytes with
the Jinja template): the system message with the tool schemas in `<tools>` (JSON-schema `title`s dropped),
assistant calls in `<tool_call>` tags, tool results as `<tool_response>` inside one user turn. The same inputs
always render to the same bytes, so the stable prefix is byte-identical across turns and llama.cpp's KV cache hits.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from dataclasses import replace
from types import ModuleType
from typing import Any

from loop.approvals import not_approved_reason
from loop.grounding.phase import spoken_data
from loop.locale import DEFAULT_WORDS
from loop.tools import tool_name
from loop.types import Message, ModelEvent, ModelRequest, TextDelta, ToolCall, ToolCallDelta

DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
_TOOLS_HEAD = ("\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
               "You are provided with function signatures within <tools></tools> XML tags:\n<tools>")
_TOOLS_TAIL = ("\n</tools>\n\nFor each function call, return a json object with function name and arguments "
               "within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, "
               "\"arguments\": <args-json-object>}\n</tool_call>")
_NAME_RE = re.compile(r'"name"\s*:\s*"([^"]*)"')
UNSPEAKABLE = set('<>{}[]`"_*#|\\')


def _char_class(first: bool) -> str:
    """What a spoken reply may hold: printable ASCII but UNSPEAKABLE, Latin letters with accents ("São Paulo"),
    typographic apostrophes and dashes; a line break (it ends the reply) but not first, nor a space first.
    Anything else (another script, an emoji, a control character) the voice cannot say."""
    ascii_ok = [c for c in map(chr, range(0x21 if first else 0x20, 0x7F)) if c not in UNSPEAKABLE]
    ranges, start, prev = [], None, None
    for c in ascii_ok:
        if start is not None and ord(c) == ord(prev) + 1:
            prev = c
            continue
        if start is not None:
            ranges.append((start, prev))
        start = prev = c
    ranges.append((start, prev))
    body = "".join(f"\\x{ord(a):02X}" if a == b else f"\\x{ord(a):02X}-\\x{ord(b):02X}" for a, b in ranges)
    return "[" + body + "\\u00C0-\\u024F\\u2013\\u2014\\u2018\\u2019" + ("" if first else "\\x0A") + "]"


TEXT_RULE = f"text ::= {_char_class(True)} {_char_class(False)}*"
CONTINUATION = f"root ::= {_char_class(False)}*"  # the rest of a reply whose start is given


# ---- prompt rendering (the GGUF's chat template, written out) --------------------------------


def _strip_titles(schema: Any) -> Any:
    """Drop JSON-schema `title` keywords (pydantic adds them; they only cost prompt tokens)."""
    if isinstance(schema, list):
        return [_strip_titles(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: _strip_titles(sub) for name, sub in value.items()}
        else:
            out[key] = _strip_titles(value)
    return out


def render_system(system: str | None, tools: Sequence[dict[str, Any]]) -> str:
    """The system turn; with tools, their schemas follow in the `<tools>` block as the template has it."""
    text = DEFAULT_SYSTEM if system is None else system
    if not tools:
        return f"<|im_start|>system\n{text}<|im_end|>\n"
    schemas = "".join("\n" + json.dumps(_strip_titles(t), ensure_ascii=False) for t in tools)
    return f"<|im_start|>system\n{text}{_TOOLS_HEAD}{schemas}{_TOOLS_TAIL}<|im_end|>\n"


def _render_call(call: ToolCall) -> str:
    raw = call.arguments.get("__invalid_json__") if set(call.arguments) == {"__invalid_json__"} else None
    args = str(raw) if raw is not None else json.dumps(call.arguments, ensure_ascii=False)
    return f'\n<tool_call>\n{{"name": "{call.name}", "arguments": {args}}}\n</tool_call>'


def render_messages(messages: Sequence[Message]) -> str:
    """Every message after the first system one; consecutive tool results share one user turn."""
    out: list[str] = []
    for i, msg in enumerate(messages):
        if msg.role == "tool":
            if i == 0 or messages[i - 1].role != "tool":
                out.append("<|im_start|>user")
            out.append(f"\n<tool_response>\n{msg.content}\n</tool_response>")
            if i == len(messages) - 1 or messages[i + 1].role != "tool":
                out.append("<|im_end|>\n")
        elif msg.role == "assistant" and msg.tool_calls:
            body = ("\n" + msg.content if msg.content else "") + "".join(_render_call(c) for c in msg.tool_calls)
            out.append(f"<|im_start|>assistant{body}<|im_end|>\n")
        else:
            out.append(f"<|im_start|>{msg.role}\n{msg.content}<|im_end|>\n")
    return "".join(out)


def render_prefix(messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> str:
    """The system turn (+ tools) and any other prefix messages; identical bytes for identical inputs."""
    if messages and messages[0].role == "system":
        return render_system(messages[0].content, tools) + render_messages(messages[1:])
    return render_system(None, tools) + render_messages(messages)


def render_prompt(request: ModelRequest) -> str:
    """The whole prompt: prefix, then the conversation, then the open assistant turn."""
    return render_prefix(request.messages, request.tools) + "<|im_start|>assistant\n"


# ---- grammar ---------------------------------------------------------------------------------


def _tool_params(tool: dict[str, Any]) -> dict[str, Any]:
    params = (tool.get("function") or tool).get("parameters") or {"type": "object", "properties": {}}
    return _grammar_safe(dict(params))


# Regular-expression shorthands llama.cpp's schema converter copies into the grammar as they are, where GBNF reads
# them as unknown escapes: the classes they stand for (ASCII, as an argument a caller dictates is)
_SHORTHANDS = {"d": "0-9", "w": "a-zA-Z0-9_", "s": " \\t"}


def _grammar_safe(schema: Any) -> Any:
    """`schema` with every `pattern`'s \\d, \\w and \\s spelt as the character classes they stand for."""
    if isinstance(schema, dict):
        return {k: _spelt_pattern(v) if k == "pattern" and isinstance(v, str) else _grammar_safe(v)
                for k, v in schema.items()}
    if isinstance(schema, list):
        return [_grammar_safe(v) for v in schema]
    return schema


def _spelt_pattern(pattern: str) -> str:
    out, i, in_class = [], 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt in _SHORTHANDS:
                out.append(_SHORTHANDS[nxt] if in_class else f"[{_SHORTHANDS[nxt]}]")
            elif nxt.isupper() and nxt.lower() in _SHORTHANDS and not in_class:
                out.append(f"[^{_SHORTHANDS[nxt.lower()]}]")
            else:
                out.append(pattern[i:i + 2])
            i += 2
            continue
        in_class = (in_class and ch != "]") or ch == "["
        out.append(ch)
        i += 1
    return "".join(out)


def build_grammar(tools: Sequence[dict[str, Any]], calls_only: bool = False) -> str:
    """GBNF: a plain-text reply, or tool calls `{"name": <a tool>, "arguments": <per its schema>}` (only calls with
    `calls_only`).

    A call may come inside `<tool_call>` tags as the template asks, or bare (what the 0.5B prefers). A text reply
    is meant to be spoken: it starts with a visible character, so the first character tells a reply from a call,
    and holds nothing a voice cannot say: no brackets, backticks, quotes, underscores (tool names), markdown
    (`*#|`), backslashes or control characters other than a line break (which ends a spoken reply).
    """
    from llama_cpp.llama_grammar import SchemaConverter

    text = TEXT_RULE
    if not tools:
        return "root ::= text\n" + text
    conv = SchemaConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    alts = []
    for i, tool in enumerate(tools):
        args_rule = conv.visit(conv.resolve_refs(_tool_params(tool), f"tool{i}"), f"args{i}")
        literal = json.dumps(json.dumps(tool_name(tool)) + ', "arguments": ')  # GBNF string literal
        alts.append(f"{literal} {args_rule}")
    rules = conv.format_grammar().splitlines()
    # JSON strings without control characters: a newline inside an argument is never what a caller said
    rules = [r'char ::= [^"\\\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})' if r.startswith("char ::=")
             else r for r in rules]
    return "\n".join([
        "root ::= calls" if calls_only else "root ::= text | calls", 'calls ::= call ("\\n" call)*',
        'call ::= "<tool_call>\\n" body "\\n</tool_call>" | body',
        'body ::= "{\\"name\\": " ( ' + " | ".join(alts) + ' ) "}"', text, *rules])


def call_texts(tools: Sequence[dict[str, Any]], limit: int = 64, tagged: bool = False) -> list[str]:
    """Every bare call `build_grammar(tools)` admits, as text, for tools whose arguments are all required and
    each one of a few values (grounded ids, amounts, names); for any other tool, the start every call to it has
    (`{"name": "lookup_order", "arguments": `). Written as the grammar writes JSON (`", "` and `": "`).
    `tagged`: the same inside `<tool_call>` tags (a whole call with its closing tag)."""
    if tagged:
        return tag_calls(call_texts(tools, limit))
    import itertools as it

    out: list[str] = []
    for tool in tools:
        head = '{"name": ' + json.dumps(tool_name(tool)) + ', "arguments": '
        params = _tool_params(tool)
        props = params.get("properties") or {}
        enums = [p.get("enum") if set(p) == {"enum"} else None for p in props.values()]
        if not props:  # nothing to fill: the whole call is known ("opening_hours", {})
            out.append(head + "{}}")
            continue
        finite = set(params.get("required") or []) == set(props) and all(enums) \
            and not params.get("additionalProperties", False)
        combos = list(it.islice(it.product(*enums), limit + 1)) if finite else []
        if finite and len(combos) <= limit:
            out += [head + json.dumps(dict(zip(props, values, strict=True)), ensure_ascii=False) + "}"
                    for values in combos]
        else:
            out.append(head)
    return out


def tag_calls(calls: Sequence[str]) -> list[str]:
    """Bare calls as the template writes them inside `<tool_call>` tags (a whole call with its closing tag)."""
    return ["<tool_call>\n" + c + ("\n</tool_call>" if c.endswith("}") else "") for c in calls]


def forced(calls: Sequence[str], raw: str) -> str:
    """What must follow `raw` whatever the model picks: the common rest of the calls that start with it."""
    rests = [c[len(raw):] for c in calls if c.startswith(raw)]
    if not rests:
        return ""
    common = rests[0]
    for rest in rests[1:]:
        n = 0
        for a, b in zip(common, rest, strict=False):
            if a != b:
                break
            n += 1
        common = common[:n]
    return common


# ---- parsing the output ----------------------------------------------------------------------


def parse_call(body: str, call_id: str | None = None) -> ToolCall:
    """One call body as a ToolCall; JSON that does not parse is kept as `__invalid_json__`."""
    call_id = call_id or "call_" + uuid.uuid4().hex[:12]
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("name"), str):
        args = data.get("arguments", {})
        if isinstance(args, str):  # double-encoded, as some models do
            try:
                args = json.loads(args)
            except ValueError:
                args = None
        if isinstance(args, dict):
            return ToolCall(data["name"], args, call_id)
    found = _NAME_RE.search(body)
    return ToolCall(found.group(1) if found else "", {"__invalid_json__": body}, call_id)


_DECODER = json.JSONDecoder()


def complete_calls(raw: str) -> tuple[list[ToolCall], str]:
    """The finished calls at the start of `raw` (tagged or bare JSON objects) and the unparsed rest."""
    calls: list[ToolCall] = []
    pos = 0
    while True:
        rest = raw[pos:].lstrip()
        tag = rest.startswith("<tool_call>")
        if tag:
            rest = rest[len("<tool_call>"):].lstrip()
        try:
            value, end = _DECODER.raw_decode(rest)
        except ValueError:
            return calls, raw[pos:]
        tail = rest[end:]
        if tag:
            if not tail.lstrip().startswith("</tool_call>"):
                return calls, raw[pos:]  # the closing tag has not arrived yet
            tail = tail.lstrip()[len("</tool_call>"):]
        calls.append(parse_call(json.dumps(value)) if isinstance(value, dict) else parse_call(rest[:end]))
        pos = len(raw) - len(tail)


def one_whole_call(raw: str) -> bool:
    """`raw` is exactly one finished tool call."""
    calls, rest = complete_calls(raw)
    return len(calls) == 1 and not rest.strip()


def parse_output(raw: str) -> tuple[str, list[ToolCall]]:
    """(text, tool calls) of a finished generation; output starting with "<" or "{" is read as tool calls."""
    if not raw.lstrip().startswith(("<", "{")):
        return raw.strip(), []
    calls, rest = complete_calls(raw)
    rest = rest.strip()
    if rest:  # an unfinished call (max tokens) or stray output: keep it visible to the loop as invalid
        calls.append(parse_call(rest.removeprefix("<tool_call>").removesuffix("</tool_call>").strip()))
    unique = {c.signature: c for c in reversed(calls)}  # small models repeat a call; once is what they meant
    return "", [c for c in calls if unique.get(c.signature) is c]


class OutputSplitter:
    """Turns decoded pieces into events: text streams at once; tool calls come out whole, one per call."""

    def __init__(self) -> None:
        self.raw = ""
        self.mode: str | None = None  # "text" | "tools"
        self.parsed = 0  # complete calls seen so far, repeats included
        self.done_at = 0  # where the output ended, once a call repeated (the rest is ignored)
        self.ids: dict[str, str] = {}  # signature -> id announced in a ToolCallDelta

    def feed(self, piece: str) -> list[ModelEvent]:
        self.raw += piece
        if self.mode is None:
            head = self.raw.lstrip()
            if not head:
                return []
            self.mode = "tools" if head.startswith(("<", "{")) else "text"
            return [TextDelta(head)] if self.mode == "text" else self._calls()
        if self.mode == "text":
            return [TextDelta(piece)] if piece else []
        return self._calls() if "}" in piece or ">" in piece else []

    def _calls(self) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        complete, _ = complete_calls(self.raw)
        for call in complete[self.parsed:]:
            self.parsed += 1
            if call.signature in self.ids:  # a repeat: small models loop here, so the reply ends
                self.done_at = self.done_at or len(self.raw) - len(complete_calls(self.raw)[1])
                continue
            self.ids[call.signature] = call.id
            events.append(ToolCallDelta(len(self.ids) - 1, call.id, call.name, json.dumps(call.arguments)))
        return events

    def finish(self) -> tuple[str, list[ToolCall]]:
        text, calls = parse_output(self.raw[: self.done_at or len(self.raw)])
        for call in calls:
            call.id = self.ids.get(call.signature, call.id)  # keep the ids the deltas announced
        return text, calls


# the loop's refusals (loop/vet.py), framed for a model that reads them aloud: the reason, as the policy words it
_DECLINED = re.compile(r"^The user declined \w+: .*It was not done\.$", re.S)
_DENIED = re.compile(r"^Denied by policy \([^)]*\): (?P<reason>.*?)\.? Do not retry;.*$", re.S)


def present(messages: Sequence[Message], words: ModuleType = DEFAULT_WORDS) -> list[Message]:
    """The messages as this model is shown them: a refusal by the loop's policy or by the caller reads as what to
    tell the caller ("Okay, I have not done that." / the policy's reason), without rule or tool names, which a
    0.5B model otherwise reads out or answers with an unrelated line. Deterministic, so the KV cache still hits."""
    out = []
    arguments = {c.id: list(c.arguments.values()) for m in messages for c in m.tool_calls}
    for msg in messages:
        if msg.role == "tool" and msg.content.lstrip().startswith("{") and (
                said := spoken_data(msg.content, known=arguments.get(msg.tool_call_id or "", []))):
            msg = replace(msg, content=said)  # plain data as words: the 0.5B otherwise reads JSON as a task
        if msg.role == "tool" and _DECLINED.match(msg.content):
            msg = replace(msg, content=words.NOT_DONE_SAID_NO)
        elif msg.role == "tool" and (reason := not_approved_reason(msg.content)) is not None:  # no only if said
            said_no = "said no" in reason
            msg = replace(msg, content=words.NOT_DONE_SAID_NO if said_no else words.NOT_DONE_NO_YES)
        elif msg.role == "tool" and (m := _DENIED.match(msg.content)):
            reason = m.group("reason").strip()  # "rule receta.amoxicilina": a rule given no reason is not read out
            plain = re.fullmatch(r"rule \S+", reason) is not None
            msg = replace(msg, content=words.CANNOT_DO_PLAIN if plain else words.CANNOT_DO.format(reason=reason))
        out.append(msg)
    return out
