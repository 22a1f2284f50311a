"""What may reach a caller (loop/grounding/speakable.py), the local model's guard over its text stream, the demo
prompt, and the reply-eval harness (voice/bench/reply_eval.py) with the scripted model. No LLM needed."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
import yaml

from loop import ScriptedModel, ToolCall, locale
from loop.grounding.speakable import ReplyGuard, check_reply, leaks, sentences
from loop.locale.en import REPEAT_PLEASE
from loop.models.llama.model import GenStats, LlamaModel
from loop.models.llama.qwen_format import CONTINUATION, TEXT_RULE
from loop.types import Message, ModelRequest, ModelResponse, TextDelta
from voice.bench.reply_eval import EVAL_SET, Timed, load_cases, run_case, summarize
from voice.demo.order_desk import DEMO_CONFIG, OrderDesk, demo_config

NAMES = ["lookup_order", "delivery_status", "issue_refund", "update_address", "transfer_to_human"]
SYSTEM = demo_config()["system_prompt"]

# what the 0.5B said to callers before (issue 9)
LEAKED = [
    'No tool; say: "Sorry, I can only help with your orders."',
    "No tool; ask for it, for example: Sure, what is the order number?",
    'Deliveries are looking in Phoenix by using the "delivery_status" function.',
    "TypeError",
    '{"name": "lookup_order", "arguments": {"order_id": "4567"}}',
    "**Order 4567**: shipped",
    "- shipped\n- total $59.90",
]


@pytest.mark.parametrize("text", LEAKED)
def test_leaks_are_found(text: str) -> None:
    assert leaks(text, NAMES)


def test_prompt_read_aloud_is_found() -> None:
    assert leaks("Pick the tool by what the caller wants.", NAMES, SYSTEM)
    assert not leaks("Order 4567 has shipped, and it is on its way to Lisbon. The total was $59.90.", NAMES, SYSTEM)
    assert not leaks("Sorry, I can only help with questions about your orders.", NAMES, SYSTEM)


def test_a_fact_quoted_in_the_prompt_may_be_said_but_not_the_rest() -> None:
    prompt = ('Only a tool knows about a repair job, its price or a collection.\n'
              '- opening hours: "We\'re open Monday to Friday from 8 in the morning to 6 in the evening."')
    assert leaks("We're open Monday to Friday from 8 in the morning to 6 in the evening.", prompt=prompt) == []
    assert leaks("Only a tool knows about a repair job.", prompt=prompt)


def test_sentences_are_counted_like_speech() -> None:
    assert sentences("") == 0
    assert sentences("Hi") == 1
    assert sentences("The total was $59.90. Anything else?") == 2
    assert sentences("Order 4567 has shipped. It goes to Lisbon. Total $59.90") == 3


def test_check_reply_wants_the_facts_and_nothing_else() -> None:
    said = "Order four five six seven has shipped; the total was $59.90."
    assert check_reply(said, ["4567", "shipped", "59.90"]) == []
    assert check_reply("Done, twenty dollars were refunded.", [["$20", "twenty dollars"]]) == []
    assert check_reply("Done: $20.00 has been refunded.", [["$20"]]) == []
    assert check_reply("It is delayed.", ["shipped"]) == ["missing 'shipped'"]
    assert check_reply("It has shipped.", [], ["shipped"]) == ["says 'shipped'"]
    assert check_reply("I used the lookup tool.", []) == ["talks about tools: 'tool'"]
    assert check_reply("One. Two. Three.", []) == ["3 sentences"]
    assert check_reply("", []) == ["nothing was said"]
    assert check_reply("抱歉, I can't assist with that.", []) == ["not English: '抱'"]
    assert check_reply("Here's a response:\nNo order 9931 exists. Ask the caller to repeat it.", ["9931"]) == [
        "talks about the conversation: \"Here's a response\"", "a line break"]


def _guarded(pieces: list[str], fallback: str = "FALLBACK") -> tuple[list[str], ReplyGuard]:
    guard = ReplyGuard(NAMES, SYSTEM, fallback)
    out = []
    for piece in pieces:
        out.append(guard.feed(piece))
        if guard.done:
            break
    out.append(guard.finish())
    return [o for o in out if o], guard


def test_guard_lets_clauses_through_and_ends_after_two_sentences() -> None:
    out, guard = _guarded(["Order", " 4567", " has", " shipped.", " The total", " was $59", ".90.", " Any", " more?"])
    assert out == ["Order 4567 has shipped. ", "The total was $59.90. "]
    assert guard.done and guard.fired is None


def test_guard_ends_the_reply_at_a_line_break() -> None:
    out, guard = _guarded(["Hello!", " How can I help", "?\n\n", "No tool"])
    assert "".join(out) == "Hello! How can I help?" and guard.fired is None


def test_guard_replaces_a_leak_before_anything_was_said() -> None:
    out, guard = _guarded(["No tool;", " say:", " Sorry"])
    assert out == ["FALLBACK"] and guard.fired == "prompt directive 'No tool'"
    out, guard = _guarded(["Sure,", " I will use", " lookup", "_order", " now."])
    assert out == ["Sure, ", "FALLBACK"] and guard.fired.startswith("tool name")  # "Sure," alone says nothing


def test_guard_drops_a_half_clause_when_the_model_was_cut() -> None:
    guard = ReplyGuard(NAMES, SYSTEM, "F")
    assert guard.feed("It has shipped. The total") == "It has shipped. "
    assert guard.finish(cut=True) == ""
    assert guard.said == "It has shipped. "


def test_guard_says_the_fallback_for_an_empty_reply() -> None:
    guard = ReplyGuard(NAMES, SYSTEM, "F")
    assert guard.finish() == "F" and guard.fired == "empty reply"


def test_text_grammar_forbids_what_a_voice_cannot_say() -> None:
    first, rest = (re.compile(c) for c in re.findall(r"\[[^\]]*\]", TEXT_RULE.split("::=")[1]))  # GBNF ~ re
    for char in '"_{}[]<>`*#|\\\t' + "抱歉😀":
        assert not first.fullmatch(char) and not rest.fullmatch(char), char
    for char in "Aa0$.,?!'-:;São–’":
        assert first.fullmatch(char) and rest.fullmatch(char), char
    assert rest.fullmatch(" ") and rest.fullmatch("\n") and not first.fullmatch(" ") and not first.fullmatch("\n")
    assert CONTINUATION.endswith(rest.pattern + "*")


class _FakeLlama(LlamaModel):
    """LlamaModel's stream with a canned generation instead of llama.cpp."""

    def __init__(self, pieces: list[str], guard: bool = True) -> None:
        self.name, self.n_ctx, self.guard, self.use_grammar = "fake", 4096, guard, False
        self.pieces, self.max_reply_tokens = pieces, 64
        from collections import Counter
        self.guard_fired = Counter()

    def _tok(self, text: str, special: bool = True) -> list[int]:
        return [0] * 10

    def _generate(self, prompt: list[int], request: ModelRequest, max_tokens: int, emit: Any, cancel: Any,
                  lead: str = "", answer: str = "") -> None:
        for piece in self.pieces:
            if cancel.is_set():
                break
            emit(("piece", piece))
        self.last = GenStats(prompt_tokens=10, output_tokens=len(self.pieces), finish="stop")
        emit(("done", self.last))


def _stream(model: LlamaModel, *messages: Message, language: str = "en") -> tuple[str, ModelResponse]:
    request = ModelRequest([Message("system", SYSTEM), *messages],
                           [t.openai_schema() for t in OrderDesk(":memory:").tools()], 96, language=language)

    async def go() -> tuple[str, ModelResponse]:
        events = [e async for e in model.stream(request)]
        return "".join(e.text for e in events if isinstance(e, TextDelta)), events[-1]

    return asyncio.run(go())


def test_local_model_speaks_the_tool_result_instead_of_a_leak(caplog: pytest.LogCaptureFixture) -> None:
    result = "Order 4567 has shipped, and it is on its way to Lisbon. The total was $59.90."
    call = ToolCall("lookup_order", {"order_id": "4567"}, "c1")
    history = [Message("user", "Where is order 4567?"), Message("assistant", "", [call]),
               Message("tool", result, tool_call_id="c1", name="lookup_order")]
    model = _FakeLlama(["Use", " the", " lookup", "_order", " function", "."])
    spoken, response = _stream(model, *history)
    assert spoken == result and response.text == result and response.finish_reason == "stop"
    assert model.last.guard and model.guard_fired["tool"] == 1 and "spoken-reply guard" in caplog.text
    spoken, _ = _stream(_FakeLlama(["No", " tool", ";", " say", ":", " hi", "."]), Message("user", "hi"))
    assert spoken == REPEAT_PLEASE
    # a Spanish agent's model asks in Spanish (it had been asked in English whatever the call's language)
    spoken, _ = _stream(_FakeLlama(["No", " tool", ";", " say", ":", " hola", "."]), Message("user", "hola"),
                        language="es")
    assert spoken == locale.get("es").REPEAT_PLEASE != REPEAT_PLEASE


def test_local_model_without_the_guard_lets_text_through() -> None:
    spoken, response = _stream(_FakeLlama(["No", " tool", ";", " say", ":", " hi", "."], guard=False),
                               Message("user", "hi"))
    assert spoken == response.text == "No tool; say: hi."


def test_demo_prompt_quotes_no_reply_to_read_aloud() -> None:
    """Examples in a small model's prompt become speech: the only quoted lines are callers' words before a call."""
    for line in SYSTEM.splitlines():
        if '"' in line:
            assert re.fullmatch(r'\s*"[^"]+" -> \{"name": .*\}\s*', line), line
    assert not re.search(r"\b(say|reply|answer)\s*:", SYSTEM, re.I)
    assert "no tool" not in SYSTEM.lower()
    assert yaml.safe_load(DEMO_CONFIG.read_text())["policy"]["text"]


# ---- the reply eval with the scripted model ----------------------------------------------------


def _run(script: list[Any], case: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(run_case(Timed(ScriptedModel(script)), case, SYSTEM, NAMES))


def test_eval_cases_load_and_name_real_tools() -> None:
    cases = load_cases(EVAL_SET)
    assert len(cases) >= 25 and len({c["id"] for c in cases}) == len(cases)
    for case in cases:
        for turn in case["turns"]:
            for spec in turn.get("calls") or []:
                assert spec.split("(")[0] in NAMES, spec


def test_eval_passes_a_right_reply_and_fails_a_leak() -> None:
    case = next(c for c in load_cases(EVAL_SET) if c["id"] == "out-of-scope-weather")
    good = _run(["Sorry, I can only help with your orders."], case)
    assert good["ok"], good
    bad = _run(['No tool; say: "Sorry, I can help with that."'], case)
    assert not bad["ok"]
    assert any("No tool" in p for p in bad["turns"][0]["problems"])
    assert any("missing 'only help'" in p for p in bad["turns"][0]["problems"])


def test_a_read_that_answers_is_the_reply_whatever_the_model_would_have_said() -> None:
    case = next(c for c in load_cases(EVAL_SET) if c["id"] == "status-shipped")
    lookup = ToolCall("lookup_order", {"order_id": "4567"})
    result = _run([lookup, 'No tool; say: "never spoken"'], case)
    assert result["ok"], result  # lookup_order's own sentence ends the run (loop.Tool.answers)


def test_eval_follows_approvals_and_escalations() -> None:
    cases = {c["id"]: c for c in load_cases(EVAL_SET)}
    refund = ToolCall("issue_refund", {"order_id": "1234", "amount": 15})
    declined = _run([refund, "Okay, I won't refund it."], cases["refund-declined"])
    assert declined["ok"], declined
    wrong = _run([refund, "Done, $15 has been refunded."], cases["refund-declined"])
    assert not wrong["ok"]
    human = _run([ToolCall("transfer_to_human", {"reason": "human"})], cases["ask-for-person"])
    assert human["ok"] and human["turns"][0]["outcome"] == "ESCALATED"
    summary = summarize("scripted", [declined, wrong, human])
    assert summary["passed"] == 2 and summary["cases"] == 3 and len(summary["failures"]) == 1


def test_a_reply_to_a_speakable_result_starts_on_its_first_words() -> None:
    model = _FakeLlama([])
    model.use_grammar, model.lead_words = True, 2
    tools = [t.openai_schema() for t in OrderDesk(":memory:").tools()]
    call = ToolCall("lookup_order", {"order_id": "4567"}, "c1")

    def lead(result: str, *more: Message) -> str:
        history = [Message("system", SYSTEM), Message("user", "Where is order 4567?"), Message("assistant", "", [call]),
                   Message("tool", result, tool_call_id="c1", name="lookup_order"), *more]
        return model.lead_in(ModelRequest(history, tools, 96))

    assert lead("Order 4567 has shipped, and it is on its way to Lisbon. The total was $59.90.") == "Order 4567"
    assert lead("The user declined issue_refund: refunds need the caller's spoken yes. It was not done.") == ""
    assert lead('{"status": "shipped"}') == ""
    assert lead("Order 4567 has shipped.", Message("tool", "Order 1234 is delayed.", tool_call_id="c2")) == ""
    assert lead("Order 4567 has shipped.", Message("user", "thanks")) == ""


def test_refusals_are_shown_to_the_model_as_what_to_tell_the_caller() -> None:
    from loop.models.llama.model import present

    declined = Message("tool", "The user declined issue_refund: a refund needs your yes. It was not done.",
                       tool_call_id="c1", name="issue_refund")
    denied = Message("tool", "Denied by policy (refund.over_limit): refunds above $500 need a supervisor's approval. "
                     "Do not retry; tell the user or try another way.", tool_call_id="c2", name="issue_refund")
    ok = Message("tool", "Done: $20 has been refunded on order 4567.", tool_call_id="c3")
    shown = present([Message("user", "hi"), declined, denied, ok])
    assert [m.content for m in shown[1:]] == ["Okay, I have not done that, as you said no.",
                                             "Sorry, I can't do that: refunds above $500 need a supervisor's approval.",
                                             ok.content]
    assert shown[1].tool_call_id == "c1" and declined.content.startswith("The user")  # the history is not touched
    assert all(not leaks(m.content, NAMES) for m in shown)


def test_a_corrected_order_number_is_not_offered() -> None:
    from loop.grounding.arguments import ground, retracted_ids

    assert retracted_ids("Where is order 1234, sorry, no, I mean order 7788?") == {"1234"}
    assert retracted_ids("Order 1234, I mean it, where is it?") == set()
    tools = [t.openai_schema() for t in OrderDesk(":memory:").tools()]
    grounded, _ = ground(tools, [Message("user", "Where is order 1234, sorry, no, I mean order 7788?")])
    lookup = next(t for t in grounded if t["function"]["name"] == "lookup_order")
    assert lookup["function"]["parameters"]["properties"]["order_id"]["enum"] == ["7788"]


def test_the_fixed_parts_of_a_tool_call_are_known_before_decoding() -> None:
    from loop.grounding.arguments import ground
    from loop.models.llama.qwen_format import call_texts, forced, tag_calls

    tools = [t.openai_schema() for t in OrderDesk(":memory:").tools()]
    grounded, _ = ground(tools, [Message("user", "Please refund twenty dollars on order 4567.")])
    by_name = {t["function"]["name"]: t for t in grounded}
    calls = call_texts([by_name.get(t["function"]["name"], t) for t in tools])
    assert '{"name": "issue_refund", "arguments": {"order_id": "4567", "amount": 20}}' in calls
    assert '{"name": "update_address", "arguments": ' in calls  # a free-text argument: only the start is fixed
    assert forced(calls, '{"') == 'name": "'
    assert forced(calls, '{"name": "issue') == '_refund", "arguments": {"order_id": "4567", "amount": 20}}'
    assert forced(calls, '{"name": "update') == '_address", "arguments": '
    assert forced(calls, '{"name": "update_address", "arguments": {') == ""
    assert forced(calls, '{"name": "lookup_order", "arguments": {"order_id": "4567"}}') == ""
    tagged = call_texts([by_name["lookup_order"]], tagged=True)
    assert tagged == ['<tool_call>\n{"name": "lookup_order", "arguments": {"order_id": "4567"}}\n</tool_call>']
    # a tool that takes nothing is a whole known call; a model that opens the tag itself reads the rest forced
    hours = {"type": "function", "function": {"name": "opening_hours", "parameters": {"type": "object",
                                                                                     "properties": {}}}}
    assert call_texts([hours]) == ['{"name": "opening_hours", "arguments": {}}']
    assert forced(tag_calls(call_texts([hours, by_name["lookup_order"]])), "<tool_call>\n{\"name\": \"open") == (
        'ing_hours", "arguments": {}}\n</tool_call>')


def test_a_tool_named_by_a_plain_word_is_not_machinery_but_an_identifier_is() -> None:
    # the gym's `membership` tool: "your membership is frozen" names nothing a caller should not hear
    assert leaks("Done: membership 880013 is frozen for 2 months.", ["membership", "freeze_membership"]) == []
    assert leaks("I used freeze_membership for that.", ["membership", "freeze_membership"])
    assert leaks("I called orderStatus.", ["orderStatus"])


@pytest.mark.parametrize(("line", "facts"), [
    ("What you may tell callers without a tool: a piano should be tuned twice a year; we don't move pianos.",
     ["A piano should be tuned twice a year.", "We don't move pianos."]),
    ("You can tell callers: every cake is made in a kitchen that uses nuts.",
     ["Every cake is made in a kitchen that uses nuts."]),
    ("After a tool result, tell the caller what it says.", []),  # no colon: an instruction, no facts
    ("- the caller asks the price: tell them -> quote", []),  # a tool's line
    ('Opening hours: "We are open nine to five."', []),  # a quote is quoted_lines' own
    ("Tell callers: yes; no.", []),  # too short to be a fact
    ("What you may tell callers: a day pass is $5. Fines are paid online, not here; we open at 9 a.m. daily.",
     ["A day pass is $5.", "Fines are paid online, not here.", "We open at 9 a.m. daily."]),  # a sentence each
])
def test_facts_a_prompt_lists_to_tell_are_replies(line: str, facts: list[str]) -> None:
    from loop.grounding.speakable import prompt_ngrams, told_facts

    assert told_facts(line) == facts
    if facts:  # said as they stand: no prompt read aloud
        assert not any(g in prompt_ngrams(line) for g in prompt_ngrams(facts[0]))


def test_facts_a_spanish_prompt_lists_to_tell_are_replies() -> None:
    from loop import locale
    from loop.grounding.speakable import told_facts

    es = locale.get("es")
    line = "Puedes decir a quien llame: una receta tarda dos días laborables; abrimos de lunes a viernes."
    assert told_facts(line, es) == ["Una receta tarda dos días laborables.", "Abrimos de lunes a viernes."]
    assert told_facts("Después de una herramienta, di lo que dice.", es) == []
