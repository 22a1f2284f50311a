"""Decoding pieces of the embedded llama.cpp model (`loop/models/llama/model.py`): greedy sampling under a GBNF grammar,
the plan for one request (its grammar and the fallback when a tool cannot be called yet), and what one
generation did (tokens reused from the KV cache, timings)."""

from __future__ import annotations

import ctypes
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from loop import locale
from loop.errors import ModelRequestError
from loop.grounding.arguments import ground
from loop.grounding.phase import (
    changed_call,
    closest_reads,
    fixed_call_tool,
    pursued_writes,
    questions_for_missing,
    results_said,
    said_without_generating,
    scope_sentence,
    stated_call,
    volunteered_call,
)
from loop.grounding.speakable import leaks, sentences
from loop.grounding.tool_choice import (
    about_tool,
    answered_ask,
    fresh_reads,
    fuller_writes,
    id_holders,
    lacks_id,
    made_writes,
    uncued,
    unnamed_id_writes,
    without_made_writes,
)
from loop.models.llama.qwen_format import build_grammar, call_texts, tool_name
from loop.types import ModelRequest

_NAMED = re.compile(r'"name"\s*:\s*"([^"]*)"')
Emit = Callable[[tuple[str, Any]], None]


class GrammarSampler:
    """Greedy decoding under a GBNF grammar, fast: the model's top token is checked alone first, and the grammar
    is applied to the whole vocabulary only when that token is not allowed (llama.cpp's common sampler does the
    same). Applying it to all 151k tokens every step would cost ~25 ms a token on this CPU."""

    def __init__(self, llm: Any, gbnf: str, candidates: Any) -> None:
        import llama_cpp

        self._c = llama_cpp
        self.ptr = llama_cpp.llama_sampler_init_grammar(llm._model.vocab, gbnf.encode(), b"root")
        if not self.ptr:
            raise ModelRequestError("llama.cpp could not parse the tool-call grammar")
        self._one = (llama_cpp.llama_token_data * 1)()
        self._all, self._view = candidates  # one token-data array per model, shared by its samplers

    def _apply(self, data: Any, size: int) -> None:
        arr = self._c.llama_token_data_array(data, size, -1, False)
        self._c.llama_sampler_apply(self.ptr, ctypes.byref(arr))

    def pick(self, logits: Any) -> int:
        import numpy as np

        token = int(np.argmax(logits))
        self._one[0].id, self._one[0].logit = token, float(logits[token])
        self._apply(self._one, 1)
        if self._one[0].logit != float("-inf"):
            return token
        self._view["id"] = np.arange(len(self._view), dtype=np.int32)  # samplers may reorder the array
        self._view["logit"] = logits
        self._apply(self._all, len(self._view))
        return int(self._view["id"][np.argmax(self._view["logit"])])

    def accept(self, token: int) -> None:
        self._c.llama_sampler_accept(self.ptr, token)

    def reset(self) -> None:
        self._c.llama_sampler_reset(self.ptr)

    def __del__(self) -> None:
        if getattr(self, "ptr", None):
            self._c.llama_sampler_free(self.ptr)
            self.ptr = None


@dataclass
class Plan:
    """How one request is decoded: its grammar and, with grounding, the fallback to a spoken reply."""

    sampler: GrammarSampler | None
    missing: dict[str, list[str]] = field(default_factory=dict)  # nameable tools that cannot be called yet
    fallback: GrammarSampler | None = None  # text-only grammar, for a blocked call with nothing to ask for
    calls: list[str] = field(default_factory=list)  # every bare call the grammar admits, or its fixed start
    instead: GrammarSampler | None = None  # the reads the caller's words fill, for a named read that cannot be called
    instead_calls: list[str] = field(default_factory=list)
    writes: frozenset[str] = frozenset()
    asks: dict[str, str] = field(default_factory=dict)  # what is said when the model names a tool in `missing`
    pursued: set[str] = field(default_factory=set)  # blocked tools the caller spoke of and gave part of: asked
    say: str = ""  # the reply, decided before generating (a question about something the agent is not for)
    calls_only: bool = False  # the grammar admits no spoken reply
    call: str = ""  # the call, decided before generating (`sole_call`)
    yielding: frozenset[str] | None = None  # when set, only these blocked tools give way to `instead`

    def yields(self, blocked: str) -> bool:
        """A named read the conversation cannot fill gives way to the reads the caller's words do fill; so does a
        write the caller neither spoke of nor gave any value for ("The reference is 3091" is no new booking)."""
        if self.yielding is not None and blocked not in self.yielding:
            return False
        return self.instead is not None and (blocked not in self.writes or blocked not in self.pursued)

    def sole_call(self) -> str:
        """The one call this plan ends in whatever the model picks, or "". So when it admits calls only, each
        tool it may name has one whole call (grounded values), and naming a tool the caller's words cannot fill
        gives way to reads that come to that same call (`yields`), never to a question or words. "Is my car
        ready? The job number is 4712": repair_status(4712), or book_collection, which yields to it. Nothing is
        left for the model to decide; generating it only costs the prompt's evaluation (~0.15 s here)."""
        if self.sampler is None or not self.calls_only or not self.calls:
            return ""
        ends: set[str] = set()
        for text in self.calls:
            name = next(iter(_NAMED.findall(text)), "")
            if name not in self.missing:
                ends.add(text)
            elif self.yields(name):
                ends.update(self.instead_calls)
            else:
                return ""
        only = next(iter(ends)) if len(ends) == 1 else ""
        return only if only.rstrip().endswith(("}", "</tool_call>")) else ""

    def blocked(self, raw: str) -> str | None:
        """The first tool named in `raw` that cannot be called, if any."""
        return next((name for name in _NAMED.findall(raw) if name in self.missing), None) if self.missing else None


def plan_for(request: ModelRequest, compiled: Callable[[str], GrammarSampler], *, grounded: bool = True,
             forced_calls: bool = True, tagged: bool = False) -> Plan:
    """The grammar for this request. With grounding, a tool the conversation cannot fill stays nameable (the
    model's choice of what to do is its own) but naming it switches to a spoken reply, which then asks — unless
    it is a read and the caller's words fill another read (`fresh_reads`): that read is called instead. A question
    about something the agent is not for is answered with its scope sentence, without generating."""
    if not grounded:
        return Plan(compiled(build_grammar(request.tools)))
    every = request  # all its tools, cued or not, say what the agent is for; a cued tool is in scope by its cues
    tools = uncued(request.tools, request.messages, request.cues)
    tools = without_made_writes(tools, request.messages, request.writes)  # the write just made, not again
    if made_writes(request.messages, request.writes):  # nor a read after it: what it did is the answer
        tools = [t for t in tools if tool_name(t) in request.writes]
        if not tools and (done := results_said(request)):
            return Plan(None, say=done)
    request = replace(request, tools=unnamed_id_writes(tools, request.messages, request.writes, request.language))
    if say := said_without_generating(request, every):  # thanks, "Brilliant.", out of scope, the prompt's answer
        return Plan(None, say=say)
    # "Actually make it Thursday.": the declined write, with Thursday; "yes, it's 60417." after "all four courts are
    # free": the one call that number completes
    if changed := changed_call(every) or volunteered_call(request) or stated_call(request):
        fixed = fixed_call_tool(every, changed)
        return Plan(compiled(build_grammar([fixed], calls_only=True)), {}, None,
                    call_texts([fixed], tagged=tagged) if forced_calls else [], calls_only=True)

    def texts(tools: list[dict[str, Any]]) -> list[str]:
        return call_texts(tools, tagged=tagged) if forced_calls else []

    tools, missing = ground(request.tools, request.messages, request.language)
    asks = questions_for_missing(request, missing, scope_sentence(every))
    # the caller gave what was asked for
    if completing := answered_ask(request.tools, request.messages, tools, request.writes, request.language):
        return Plan(compiled(build_grammar(completing, calls_only=True)), {}, None, texts(completing),
                    calls_only=True)
    by_name = {tool_name(t): t for t in tools}
    mixed = [by_name.get(tool_name(t), t) for t in request.tools]
    reads = fresh_reads(request.tools, request.messages, request.writes, request.language)
    if len(reads) > 1:  # one job number fills the status and the price: "how much" says which
        closest = {tool_name(t) for t in closest_reads(reads, request)}
        mixed = [t for t in mixed if tool_name(t) in closest or tool_name(t) not in {tool_name(r) for r in reads}]
        reads = [t for t in reads if tool_name(t) in closest]
    fuller = fuller_writes(request.tools, tools, reads, request.messages, request.writes,
                           locale.get(request.language)) if reads else []
    if fuller:
        mixed = [t for t in mixed if tool_name(t) not in {tool_name(r) for r in reads}]  # the day has no place in it
        reads = fuller  # naming a tool that lacks something is the write then, not the read it just ruled out
    # the caller named what a read looks up ("Why is my order 2020 late?"): the answer is in the tools, and a small
    # model that may answer in words invents one ("... because the customer has not provided ...")
    plan = Plan(compiled(build_grammar(mixed, calls_only=bool(reads))), missing,
                compiled(build_grammar([])) if missing else None, texts(mixed), writes=request.writes, asks=asks,
                calls_only=bool(reads))
    if missing and reads:
        plan.instead, plan.instead_calls = compiled(build_grammar(reads, calls_only=True)), texts(reads)
        plan.pursued = pursued_writes(request, missing)
    elif missing and (held := id_holders(request.tools, tools, missing, request.messages,
                                         locale.get(request.language))):
        # "a claim ... my policy number's HG318840": a tool lacking its own identifier gives way to the one the
        # caller's identifier fills
        every_tool = {tool_name(t): t for t in request.tools}
        plan.instead, plan.instead_calls = compiled(build_grammar(held, calls_only=True)), texts(held)
        plan.yielding = frozenset(n for n, lacks in missing.items() if lacks_id(every_tool[n], lacks))
    return plan


def read_out(request: ModelRequest) -> str:
    """The reply to a batch of calls whose results are themselves speakable (plain data as `present` shows it, or
    a sentence or two that names no tool): those words, said without generating. The 0.5B only copies them out
    again, a second slower and now and then with a word changed; hosted models are not asked this. That holds for
    a write the caller approved as much as for a read ("Booking 3091 ... is cancelled."). Not after a failure, a
    declined write or a hand-over (their results name the tool), and not when the caller's words also speak of a
    write this batch did not make: the model may still have a call to make ("check order 4567 and refund it")."""
    messages, start = request.messages, len(request.messages)
    while start > 0 and messages[start - 1].role == "tool":
        start -= 1
    if start in (0, len(messages)) or not messages[start - 1].tool_calls:
        return ""
    names = [tool_name(t) for t in request.tools]
    results = [m.content.strip() for m in messages[start:]]
    if any(not r or r.startswith(("{", "[")) or leaks(r, names) or sentences(r) > 2 for r in results):
        return ""
    made = {c.name for c in messages[start - 1].tool_calls}
    batch = [t for t in request.tools if tool_name(t) in made]
    if any(about_tool(t, messages[: start - 1], batch, locale.get(request.language))
           for t in request.tools if tool_name(t) in set(request.writes) - made):
        return ""
    return " ".join(results)


@dataclass
class GenStats:
    """What the last generation did: prompt tokens reused from the KV cache vs evaluated, and timings."""

    prompt_tokens: int = 0
    reused_tokens: int = 0
    output_tokens: int = 0
    ttft_s: float = 0.0
    total_s: float = 0.0
    finish: str = ""
    guard: str | None = None  # what the spoken-reply guard caught in this reply, if anything

    @property
    def evaluated_tokens(self) -> int:
        return self.prompt_tokens - self.reused_tokens

    @property
    def tokens_per_s(self) -> float:
        gen = self.total_s - self.ttft_s
        return (self.output_tokens - 1) / gen if self.output_tokens > 1 and gen > 0 else 0.0
