"""Grounding as a phase of the loop, the same for every model: what is said without asking a model, what a
model's spoken reply may say, and whether its tool calls hold what the caller said.

- `said_without_generating`: thanks and goodbye, "Brilliant." after an answer, a question about something the
  agent is not for (its scope sentence) and a question the prompt quotes the answer to are answered by these words,
  not a model's;
- `reply_guard`: a spoken reply a clause at a time, ended where it would name the machinery, state a fact no tool,
  prompt or caller gave, or only say the caller's words back (`loop.grounding.speakable.ReplyGuard`);
- `grounded_calls`: a tool call whose arguments the caller never gave is not made: the caller is asked for them
  (an argument heard one way only is taken as heard).

The embedded model (`loop.models.llama`) applies these inside its decoding, where its grammar can steer each token;
any other model's stream goes through `grounded_stream` (`loop.agent.Agent` does this for a model whose
`grounds_output` is not true: the OpenAI-compatible adapter, a LiveKit session's model).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import Any

from loop import locale
from loop.grounding._arg_kinds import arg_kind
from loop.grounding._change import (  # noqa: F401  (fixed_call_tool: for loop.models)
    changed_call,
    declined_just_now,
    fixed_call_tool,
    unclear_change,
)
from loop.grounding._completion import completed_ask, fits, stated_call, volunteered_call
from loop.grounding._facts import FactCheck, asks, question_again
from loop.grounding._prompt_answer import prompt_answer, quoted_reply
from loop.grounding._schema import description_of, properties, required_of
from loop.grounding._scope import closest_reads, out_of_scope, scope_sentence
from loop.grounding._spoken_data import results_said, spoken_data  # noqa: F401  (spoken_data re-exported)
from loop.grounding.arguments import ground, since_agent_spoke
from loop.grounding.remarks import acknowledgement, affirmation, closing_remark, closing_reply
from loop.grounding.speakable import ReplyGuard
from loop.grounding.tool_choice import (
    about_tool,
    ask_for,
    asked_for,
    fresh_reads,
    id_reads_elsewhere,
    labels_asked,
    made_writes,
    named_writes,
    uncued,
    unnamed_id_writes,
    without_made_writes,
)
from loop.tools import tool_name
from loop.types import Message, ModelEvent, ModelRequest, ModelResponse, TextDelta, ToolCall, ToolCallDelta


def said_without_generating(request: ModelRequest, every: ModelRequest | None = None) -> str:
    """The reply decided before any model is asked, or "". `every`: the request with all its tools (a cued tool
    is in scope by its cues) when `request` holds only those the caller's words allow."""
    every = every or request
    last = request.messages[-1] if request.messages else None
    if last is None or last.role != "user":
        return ""
    words = locale.get(request.language)
    if closing_remark(last.content, words):  # thanks and goodbye: never a tool, never a transfer
        return closing_reply(last.content, words)
    if unclear_change(every):  # "Actually make it thirsty.": what to change, never another tool
        return str(words.WHICH_CHANGE)
    yes_to_nothing = affirmation(last.content, words) and not declined_just_now(request.messages)
    if (acknowledgement(last.content, words) or yes_to_nothing) and _answered(request.messages):
        return str(words.ANYTHING_ELSE)  # "Brilliant." or "Yes, that's right." after an answer
    # "What is the capital of France?": the scope sentence, never an invented answer ("can we do the 21st
    # instead?" after a no is the declined write, changed)
    if out_of_scope(request) and not changed_call(every):
        return scope_sentence(every)
    # "What time is check-out?": the prompt's own words for it, at once; else what the call the agent asked for
    # still lacks after the caller's answer (the model's own question was "What is the name of the Alice?")
    return ("" if _values_fill_a_read(request) else prompt_answer(every)) or _still_lacking(every, words)


def _values_fill_a_read(request: ModelRequest) -> bool:
    """The caller's words since the agent spoke fill a read that takes arguments ("from July the 22nd for six
    nights, is there room for our cat?" fills the availability): a tool answers, not the prompt's line that shares
    their words (the prices, "a cat is $22 a night")."""
    return any(properties(t) for t in fresh_reads(request.tools, request.messages, request.writes, request.language))


_TYPED = frozenset({"when", "number", "integer", "enum", "id"})  # the kinds of `arg_kind` a value has


def _still_lacking(request: ModelRequest, words: Any) -> str:
    """The agent asked for what a call lacked and the caller answered (not a question of theirs): ask for what it
    still lacks, in the same words a first ask uses."""
    last = request.messages[-1]
    asked = asked_for(request.tools, request.messages, request.writes, request.language)
    if not asked or asks(last.content, locale.get(request.language)):
        return ""
    by_name = {tool_name(t): t for t in request.tools}
    if any(id_reads_elsewhere(request.tools, request.messages, request.writes, by_name[n], request.language)
           for n in asked):
        return ""  # "Could you tell me the area?" - "It's 72048.": the booking they meant, not the area again
    if volunteered_call(request) is not None:
        return ""  # "Could you tell me the stage?" - "The enrolment number is 30418.": the call that number makes
    _, missing = ground(request.tools, request.messages, request.language)
    by_name = {tool_name(t): t for t in request.tools}
    lacking = [name for name in asked if missing.get(name)]
    if lacking and not labels_asked(last.content, asked, words) and (found := _going_on(request, missing)) \
            is not None and tool_name(going := found[0]) not in asked:
        # asked for a price, the caller gave a booking's date (no price has one): they go on with the booking
        typed = {arg for arg in found[1]  # a value of its own kind (a date, a count, a listed one), not a guessed name
                 if (k := arg_kind(arg, properties(going)[arg], description_of(going))) and k.kind in _TYPED}
        if typed - {arg for name in asked for arg in properties(by_name[name])}:
            return ask_for(missing[tool_name(going)], going, words, request.messages)
    return ask_for(missing[lacking[0]], by_name[lacking[0]], words, request.messages) if lacking else ""


def _ask(request: ModelRequest, lacks: Sequence[str], tool: dict[str, Any]) -> str:
    """The question for what `tool` lacks, in the call's language (its courtesy only the first time)."""
    return ask_for(lacks, tool, locale.get(request.language), request.messages)


def _answered(messages: Sequence[Message]) -> bool:
    """The agent's last words before the caller's were an answer, not a question ("Okay." to "Could you tell me the
    job number?" is no acknowledgement of an answer)."""
    said = next((m.content.strip() for m in reversed(messages[:-1]) if m.role == "assistant" and m.content.strip()), "")
    return bool(said) and not said.endswith("?")


def questions_for_missing(request: ModelRequest, missing: dict[str, list[str]], scope: str) -> dict[str, str]:
    """What to say when the model names each tool the conversation cannot fill: a question for what it lacks
    ("Could you tell me the job number?") when the caller spoke of what it does. A tool the caller did not speak of
    ("a losing game" -> issue_refund) is not asked about: the caller is asked what a read their words speak of lacks,
    else the first read, which steers back to the agent's purpose, or told what the agent is for when no read lacks
    anything. Of reads that
    lack an identifier each, the one closest to the caller's words is asked for ("Is there a power cut near me?":
    the postcode, not the account number)."""
    by_name = {tool_name(t): t for t in request.tools}
    lacking_reads = [t for t in request.tools if missing.get(tool_name(t)) and tool_name(t) not in request.writes]
    about_reads = [t for t in lacking_reads if about_tool(t, request.messages, (), locale.get(request.language))]
    closest = {tool_name(t) for t in closest_reads(about_reads, request)} if about_reads else set()
    # they answered part of the agent's question
    asked = asked_for(request.tools, request.messages, request.writes, request.language)
    # "I need a plumber, there's a leak": the callout they gave the problem of, not a job's arrival they gave nothing of
    pursued = [by_name[n] for n in pursued_writes(request, missing) if not _nothing_given(by_name[n], missing[n])]
    asks = {}
    for name in [n for n, lacks in missing.items() if lacks]:
        if len(pursued) == 1 and name not in asked and name != tool_name(pursued[0]) and _nothing_given(
                by_name[name], missing[name]):
            asks[name] = _ask(request, missing[tool_name(pursued[0])], pursued[0])
        elif name not in asked and name in {tool_name(t) for t in about_reads} and name not in closest:
            read = next(t for t in about_reads if tool_name(t) in closest)
            asks[name] = _ask(request, missing[tool_name(read)], read)
        elif name in asked or about_tool(by_name[name], request.messages, (), locale.get(request.language)):
            asks[name] = _ask(request, missing[name], by_name[name])
        elif spoken := _spoken_of(request, missing):  # "I'd like the four cheese": the order's, not a tracking's
            asks[name] = _ask(request, missing[tool_name(spoken)], spoken)
        elif lacking_reads:  # a read the words speak of first ("check my bookings": the booking's, not an area's)
            read = next((t for t in about_reads if tool_name(t) in closest), lacking_reads[0])
            asks[name] = _ask(request, missing[tool_name(read)], read)
        else:
            asks[name] = scope
    return asks


def reply_guard(request: ModelRequest, repeat: str = "") -> ReplyGuard:
    """The guard for a request's spoken reply. Its fallback, for a reply that leaks before it said anything, is the
    last tool result when that is itself speakable (the facts, as the tool put them), else the reply the prompt
    quotes for what the caller asked, else a request to repeat (`repeat`): honest, never an invented answer. A
    clause stating a fact nobody gave, or the caller's own words, is not said either
    (`loop.grounding._scope.FactCheck`); said instead, when nothing was said yet: the tool result (plain data read
    out), a question for what a tool
    the caller spoke of lacks, or what the agent is for."""
    repeat = repeat or str(locale.get(request.language).REPEAT_PLEASE)
    names = [tool_name(t) for t in request.tools]
    system = request.messages[0].content if request.messages and request.messages[0].role == "system" else ""
    last = request.messages[-1] if request.messages else None
    fallback, facts = repeat, FactCheck(request)
    if last is not None and last.role == "tool":  # the result itself, its data as words, or its first sentences
        fallback = results_said(request) or repeat
    else:  # what the prompt says to tell a caller who asks this, else a question for what the caller wants
        return ReplyGuard(names, system, lambda: quoted_reply(request) or _unknown_fallback(request, repeat),
                          vet=facts.unknown, echoes=facts.echoes,
                          vet_fallback=lambda: _ask_distinct(request, asked=facts.asked)
                          or _cannot_tell(request, facts)
                          or _unknown_fallback(request, asked=facts.asked), words=locale.get(request.language))
    vet_fallback = fallback if fallback != repeat else lambda: _unknown_fallback(request)  # only when it fires
    return ReplyGuard(names, system, fallback, vet=facts.unknown, vet_fallback=vet_fallback, echoes=facts.echoes,
                      ending=fallback if fallback != repeat else "", words=locale.get(request.language))


def _nothing_given(tool: dict[str, Any], lacks: Sequence[str]) -> bool:
    """The caller gave none of the tool's required arguments."""
    return set(lacks) >= set(required_of(tool))


def _cannot_tell(request: ModelRequest, facts: FactCheck) -> str:
    """An honest answer to a question nothing here covers: that it cannot be told here, and what the agent is for
    ("" when the reply was caught for something else). Never a question back ("Could you tell me the order
    number?"): nothing the caller could give would answer it. Only to a question: an answer to the agent's own
    ("Yes, outside." to "Which film?") gets that question again (`_unknown_fallback`)."""
    if not facts.answered_uncovered or not facts.asked:
        return ""
    return f"{locale.get(request.language).CANNOT_TELL} {scope_sentence(request)}"


def _spoken_of(request: ModelRequest, missing: dict[str, list[str]], asked: bool = False) -> dict[str, Any] | None:
    """The first tool that lacks arguments and that the caller's words speak of, and of no other tool ("Where is
    my pizza?": track_order's "where", not the menu's "pizza"). `asked`: the caller asked a question, which a write
    answers only when they name it ("Can I book a court?"), not by a word of its description ("Who won the club
    championship?" is no booking "for a club member")."""
    for tool in request.tools:
        others = [t for t in request.tools if tool_name(t) != tool_name(tool)]
        by_name = asked and tool_name(tool) in request.writes
        if missing.get(tool_name(tool)) and about_tool(tool, request.messages, others, locale.get(request.language),
                                                       by_name=by_name):
            return tool
    return None


def _ask_distinct(request: ModelRequest, asked: bool = False) -> str:
    """A question for what a tool the caller spoke of lacks (`_spoken_of`): once filled, it may answer them."""
    _, missing = ground(request.tools, request.messages, request.language)
    tool = _spoken_of(request, missing, asked)
    return _ask(request, missing[tool_name(tool)], tool) if tool else ""


def _unknown_fallback(request: ModelRequest, otherwise: str = "", asked: bool = False) -> str:
    """A question for what a tool the caller spoke of lacks ("Could you tell me the job number?"), or for what a
    write their words just gave values to still lacks, else `otherwise`, else what the agent is for. `asked`: the
    caller asked a question (a write only by its name)."""
    _, missing = ground(request.tools, request.messages, request.language)
    for tool in request.tools:
        lacks = missing.get(tool_name(tool))
        by_name = asked and tool_name(tool) in request.writes
        if lacks and about_tool(tool, request.messages, (), locale.get(request.language), by_name=by_name):
            return _ask(request, lacks, tool)
    if tool := _continued_write(request, missing):
        return _ask(request, missing[tool_name(tool)], tool)
    return otherwise or question_again(request) or scope_sentence(request)


def _continued_write(request: ModelRequest, missing: dict[str, list[str]]) -> dict[str, Any] | None:
    """The one write the caller's last words gave a value to ("Wednesday the 22nd of July." after the price of a
    tuning: the booking's date) that still lacks something: they are going on with it."""
    found = _going_on(request, missing)
    return found[0] if found is not None else None


def _going_on(request: ModelRequest, missing: dict[str, list[str]]) -> tuple[dict[str, Any], set[str]] | None:
    """`_continued_write`'s write, with the arguments the caller's last words gave it."""
    if not request.messages or request.messages[-1].role != "user":
        return None
    _, before = ground(request.tools, request.messages[:-1], request.language)
    gained = {tool_name(t): set(before.get(tool_name(t)) or required_of(t)) - set(missing[tool_name(t)])
              for t in request.tools if tool_name(t) in request.writes and missing.get(tool_name(t))}
    going_on = [t for t in request.tools if gained.get(tool_name(t))]
    return (going_on[0], gained[tool_name(going_on[0])]) if len(going_on) == 1 else None


def grounded_calls(request: ModelRequest, calls: Sequence[ToolCall]) -> tuple[list[ToolCall], str]:
    """The calls to make, and what to say instead of the rest ("" when all are made). A call is made when each of
    its arguments holds a value the conversation gave (an argument the caller said one way only is taken as they
    said it: "4567" for a model's "4576"); otherwise the caller is asked for what it lacks, once, and none of the
    batch is made (a write after a read that was guessed is no better)."""
    if not calls:
        return [], ""
    request, every = _narrowed(request)
    grounded, missing = ground(request.tools, request.messages, request.language)
    by_name = {tool_name(t): t for t in grounded}
    asks = questions_for_missing(request, missing, scope_sentence(every))
    made, done = [], made_writes(request.messages, request.writes)
    if done and all(c.name in done or c.name not in request.writes for c in calls):
        # the write just made, again, or a read after it: what it did is the answer
        return [], results_said(request)
    for call in calls:
        tool = by_name.get(call.name)
        if tool is None:  # a tool the caller's words cannot fill, or one it may not name yet
            if instead := _reads_instead(request, call.name, missing):
                return instead, ""
            return [], asks.get(call.name) or _unknown_fallback(request)
        fixed = _as_heard(call, tool)
        if fixed is None:
            lacking = _unheard(call, tool)
            original = next((t for t in request.tools if tool_name(t) == call.name), tool)
            return [], _ask(request, lacking, original)
        made.append(fixed)
    return made, ""


def _reads_instead(request: ModelRequest, named: str, missing: dict[str, list[str]]) -> list[ToolCall]:
    """For a write the model named but the caller did not ask for ("Are there any seats left for Starfall?" is no
    booking): the reads their words fill on their own, each with the one value it was given; [] when none."""
    if named not in request.writes or named in pursued_writes(request, missing):
        return []
    calls = []
    for read in fresh_reads(request.tools, request.messages, request.writes, request.language):
        options = {name: schema.get("enum") or [] for name, schema in properties(read).items()}
        if any(len(values) != 1 for values in options.values()):
            return []  # the model must choose: it named a write instead
        calls.append(ToolCall(tool_name(read), {name: values[0] for name, values in options.items()}))
    return calls


def pursued_writes(request: ModelRequest, missing: dict[str, list[str]]) -> set[str]:
    """The writes that cannot be called yet which the caller asked for and gave part of ("a refund for order 4567"
    lacks only the amount): asking for the rest is what they want. A question that names a write only by its
    object ("Are there any seats left?" of `book_seats`) asks for what a read tells, not for the write."""
    question = asks(" ".join(m.content for m in since_agent_spoke(request.messages)), locale.get(request.language))
    found = set(named_writes(request.tools, request.messages, request.writes, as_verb=True, verb_only=question,
                             words=locale.get(request.language)))
    found &= set(missing)
    for tool in request.tools:
        lacks = missing.get(tool_name(tool))
        required = required_of(tool)
        # by a word only it has: "the repair on job 5186" is about every tool of a garage, "collect" about one
        others = [t for t in request.tools if t is not tool]
        about = about_tool(tool, request.messages, others, locale.get(request.language))
        if lacks and len(lacks) < len(required) and about:
            found.add(tool_name(tool))
    by_name = {tool_name(t): t for t in request.tools}
    return {n for n in found
            if not id_reads_elsewhere(request.tools, request.messages, request.writes, by_name[n], request.language)}


def _as_heard(call: ToolCall, tool: dict[str, Any]) -> ToolCall | None:
    """`call` with each argument as the conversation holds it, or None when one holds a value nobody gave."""
    arguments = dict(call.arguments)
    for name, schema in properties(tool).items():
        if name not in arguments or fits(arguments[name], schema):
            continue
        options = schema.get("enum") or []
        if len(options) != 1:
            return None
        arguments[name] = options[0]  # heard one way only: as heard
    return replace(call, arguments=arguments)


def _unheard(call: ToolCall, tool: dict[str, Any]) -> list[str]:
    return [n for n, s in properties(tool).items() if n in call.arguments and not fits(call.arguments[n], s)]


async def grounded_stream(model: Any, request: ModelRequest) -> AsyncIterator[ModelEvent]:
    """`model.stream(request)` through the phase: words said without asking it, its spoken reply guarded a clause
    at a time (generation stops where the guard ends the reply), its calls made only when they hold what was said.
    Tool-call deltas pass as they come; the response says what is done."""
    narrowed, _ = _narrowed(request)
    if say := said_without_generating(narrowed, request):
        yield TextDelta(say)
        yield ModelResponse(text=say, tool_calls=[], finish_reason="stop", model=str(getattr(model, "name", "")))
        return
    # "Actually make it Thursday.": the same write, with Thursday; "It's 4567." to "Could you tell me the order
    # number?": the call it was asked for, when every argument now holds one value
    if made := changed_call(request) or completed_ask(request) or volunteered_call(request) or stated_call(narrowed):
        yield ModelResponse(tool_calls=[made], finish_reason="tool_calls", model=str(getattr(model, "name", "")))
        return
    guard = reply_guard(request)
    response: ModelResponse | None = None
    spoke = False  # the model said something: a call alone has no words to guard (nor a fallback to say)
    source = model.stream(request)
    try:
        async for event in source:
            if isinstance(event, ModelResponse):
                response = event
            elif isinstance(event, ToolCallDelta):
                yield event
            elif isinstance(event, TextDelta):
                spoke = spoke or bool(event.text.strip())
                if text := guard.feed(event.text):
                    yield TextDelta(text)
            if guard.done:
                break
    finally:
        await source.aclose()
    if response is None and not guard.done:
        return  # the loop reports a stream that ended without a response
    if response is not None and response.refused:
        yield response  # a provider's refusal is the loop's to report, as it came
        return
    if response is not None and response.text.strip() and not spoke:
        spoke = True  # a model that gives its words only in the response (no deltas)
        if text := guard.feed(response.text):
            yield TextDelta(text)
    if (spoke or response is None or not response.tool_calls) and (
            tail := guard.finish(cut=not guard.done and response is not None and response.finish_reason == "length")):
        yield TextDelta(tail)
    calls, instead = grounded_calls(request, response.tool_calls if response is not None else [])
    text = guard.said.strip()
    if instead:
        yield TextDelta((" " if text else "") + instead)
        text = f"{text} {instead}".strip()
    base = response or ModelResponse(text="", tool_calls=[], finish_reason="stop")
    finish = base.finish_reason if calls == base.tool_calls and not guard.done else "tool_calls" if calls else "stop"
    yield replace(base, text=text, tool_calls=calls, finish_reason=finish)


def _narrowed(request: ModelRequest) -> tuple[ModelRequest, ModelRequest]:
    """The request with the tools the caller's words allow now, and the request with all of them."""
    tools = without_made_writes(uncued(request.tools, request.messages, request.cues), request.messages,
                                request.writes)
    return replace(request, tools=unnamed_id_writes(tools, request.messages, request.writes, request.language)), request
