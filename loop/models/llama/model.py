"""`Model` over an embedded llama.cpp (llama-cpp-python) running a Qwen2.5 GGUF, with grammar-constrained output.

To the loop it is indistinguishable from `OpenAICompatModel`: TextDelta / ToolCallDelta events, then one
ModelResponse with exact Usage (tokens from the model's own tokenizer; cached = reused from the KV cache; cost 0).

- Prompt: the GGUF's Qwen2.5 chat template, written out in `loop.models.llama.qwen_format`. The stable prefix renders
  byte-identically every turn, so the longest common token prefix is reused from the KV cache; `warm()`
  evaluates that prefix ahead of the first turn.
- Output: a GBNF grammar admits either a plain-text reply or tool calls whose name is one of the request's
  tools and whose arguments fit that tool's schema. The first character tells which: text streams token by
  token, each tool call comes out as one ToolCallDelta when its JSON closes.
- Speech: a text reply goes out through `loop.grounding.speakable.ReplyGuard`: a clause at a time, ended after two
  sentences or at a line break, capped at `max_reply_tokens`; a clause that would read out a tool name, JSON or the
  prompt ends the reply (replaced by the tool's own result or a request to repeat when nothing was said yet). Every
  firing is logged and counted in `guard_fired`; `guard=False` lets the raw text through.
- Threads: generation runs in a worker thread with 1 thread to generate and 2 for the prompt (the machine's two
  cores are shared with STT and TTS), 1 for both while other processes hold the cores (`cpu_share`); the consumer
  stopping (barge-in) stops generation at the next token.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from loop import locale

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before llama_cpp loads its OpenMP runtime
# Passive alone parks the second thread after every batch, and waking it cost ~65 ms per prompt evaluation here
# (24 new tokens 173 ms, 2 tokens 100 ms on two threads); spinning ~100k times first (well under a millisecond,
# then it sleeps) keeps idle threads off the cores Whisper and Piper need and the batch quick (115 ms, 21 ms)
os.environ.setdefault("GOMP_SPINCOUNT", "100000")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from loop.errors import ModelError, ModelRequestError
from loop.grounding.phase import reply_guard
from loop.grounding.speakable import ReplyGuard, leaks, sentences
from loop.models.llama._token_loop import TokenLoop
from loop.models.llama.cpu_share import CpuShare
from loop.models.llama.decoding import Emit, GenStats, GrammarSampler, Plan, plan_for, read_out
from loop.models.llama.kv_cache import kv_state_path, load_kv_state, save_kv_state
from loop.models.llama.qwen_format import (
    CONTINUATION,
    OutputSplitter,
    build_grammar,
    present,
    render_prefix,
    render_prompt,
    tool_name,
)
from loop.tools import ToolDefinitionError
from loop.types import ModelEvent, ModelRequest, ModelResponse, Pricing, TextDelta, Usage

log = logging.getLogger("voiceloop.local_llm")
_MAX_CACHED_COUNTS = 4096
WARM_CHUNK = 8  # tokens evaluated at a time while warming: ~90 ms on one core here
LIVE_S = 5.0  # a call whose turn is in the cache and that used the model this recently is still talking to it


class LlamaModel:
    """The loop's `Model` over a local GGUF. One generation at a time per instance (the KV cache is its state)."""

    grounds_output = True  # the loop adds no grounding phase (`loop.grounding.phase`): its decoding grounds itself

    provider = "llama.cpp"  # gen_ai.provider.name

    def __init__(self, model_path: str | Path | None = None, *, name: str = "qwen2.5-coder-0.5b-instruct",
                 n_ctx: int = 4096, n_threads: int = 1, n_threads_batch: int = 2, n_batch: int = 512,
                 grammar: bool = True, ground: bool = True, state_dir: str | Path | None = "default",
                 guard: bool = True, max_reply_tokens: int = 64, tag_calls: bool = False,
                 lead_words: int = 2, force_fixed: bool = True, one_call: bool = True,
                 quiet_threads: int = 2) -> None:
        from llama_cpp import Llama

        from loop.models.llama.weights import cache_dir, runnable_gguf

        self.name = name
        self.pricing = Pricing()  # local: free
        self.use_grammar = grammar
        self.ground = ground  # narrow tool arguments to values heard in the conversation (loop.grounding.arguments)
        self.guard = guard  # text replies through loop.grounding.speakable.ReplyGuard
        self.max_reply_tokens = max_reply_tokens  # a spoken reply is short; tool calls keep the request's cap
        self.guard_fired: Counter[str] = Counter()
        # bare calls get the template's <tool_call> tags (TokenLoop._opens_tag); measured slower
        self.tag_calls = tag_calls
        self.lead_words = lead_words  # a reply to a speakable tool result starts with its first words (lead_in)
        # the parts of a tool call the grammar fixes are read, not decoded (TokenLoop._accept)
        self.force_fixed = force_fixed
        # a finished call ends the output: reading it back in only to learn whether a second call follows costs a
        # forward pass on the answer's critical path (~0.2 s here); a further call comes in the loop's next step
        self.one_call = one_call
        # decoding threads while no voice is synthesised beside it: a tool call, and a spoken reply up to its
        # first clause (then `n_threads`, and the other core for Piper); a copied address ~670 -> ~490 ms here
        self.quiet_threads = quiet_threads
        self.cpu = CpuShare()  # fewer threads while other processes hold the cores (loop/models/llama/cpu_share.py)
        self.path = Path(model_path) if model_path else runnable_gguf(name)
        started = time.perf_counter()
        self.llm = Llama(model_path=str(self.path), n_ctx=n_ctx, n_threads=n_threads,
                         n_threads_batch=n_threads_batch, n_batch=n_batch, verbose=False)
        self.load_s = time.perf_counter() - started
        self.n_ctx = n_ctx
        self.threads = (n_threads, n_threads_batch)
        # warmed prefixes' KV state on disk, so a new process skips the prefix's prompt eval; None: off
        self.state_dir = cache_dir() / "kv" if state_dir == "default" else Path(state_dir) if state_dir else None
        self.last = GenStats()
        self._lock = threading.Lock()
        self._wanted = threading.Event()  # a generation waits for the lock: warming gives way (`warm_conversation`)
        self._used_at = 0.0  # time.monotonic() of the last generation's end
        self._counts: dict[str, int] = {}
        self._samplers: dict[str, GrammarSampler] = {}
        self._candidates: Any = None
        self._stop = {self.llm.token_eos(), *self._tok("<|im_end|>"), *self._tok("<|endoftext|>")}
        self._tag = self._tok("<tool_call>\n")
        self._braces: dict[int, bool] = {}

    # ---- tokens and the KV cache ----

    def _tok(self, text: str, special: bool = True) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    def count_tokens(self, text: str) -> int:
        """Exact, with the model's tokenizer (cached: the loop counts the same prefix every turn)."""
        if not text:
            return 0
        if (n := self._counts.get(text)) is None:
            if len(self._counts) >= _MAX_CACHED_COUNTS:
                self._counts.clear()
            n = self._counts[text] = len(self._tok(text, special=False))
        return n

    def cached_tokens(self) -> list[int]:
        """Tokens whose keys/values sit in the KV cache right now."""
        return self.llm.input_ids[: self.llm.n_tokens].tolist()

    def _common_prefix(self, tokens: Sequence[int]) -> int:
        n = 0
        for a, b in zip(self.cached_tokens(), tokens, strict=False):
            if a != b:
                break
            n += 1
        return n

    def _eval_from_cache(self, tokens: list[int], keep_last: bool) -> int:
        """Evaluate `tokens`, reusing the cached common prefix; returns how many were reused. Lock held."""
        reused = self._common_prefix(tokens)
        if keep_last and reused >= len(tokens):
            reused = len(tokens) - 1  # logits for the last prompt token are needed to sample
        if reused < len(tokens):
            self.llm.n_tokens = reused  # eval() drops the cache from here on
            self.llm.eval(tokens[reused:])
        return reused

    def reset_cache(self) -> None:
        """Forget the KV cache: the next call is cold."""
        with self._lock:
            self.llm.reset()
            self.llm._ctx.kv_cache_clear()

    async def warm(self, request: ModelRequest) -> int:
        """Evaluate the stable prefix into the KV cache now; returns how many tokens that took (0: already hot)."""
        prefix = render_prefix(request.messages[: request.stable_prefix], request.tools)
        return await asyncio.to_thread(self.warm_text, prefix)

    def warm_text(self, text: str) -> int:
        """Put `text` in the KV cache: already there, else from the state saved on disk, else evaluated (and saved).
        Returns how many tokens were evaluated."""
        tokens = self._tok(text)
        with self._lock:
            if self._common_prefix(tokens) < len(tokens) and self._load_state(tokens):
                return 0
            evaluated = len(tokens) - self._eval_from_cache(tokens, keep_last=False)
            if evaluated:
                self._save_state(tokens)
            return evaluated

    async def warm_conversation(self, request: ModelRequest) -> int:
        """Evaluate the conversation so far into the KV cache while the caller speaks, so their turn's prompt
        evaluates only their new words (earlier turns are 40-150 tokens, ~5 ms each here). It never replaces the
        turn of another call still talking to the model (calls share it: `LIVE_S`), and gives way to any
        generation that wants the model. Returns how many tokens it evaluated."""
        messages = present(request.messages, locale.get(request.language))
        # this call's own: the cache holds its first message after the system prompt, which every call shares
        first = self._tok(render_prefix(messages[: request.stable_prefix + 1], request.tools))
        return await asyncio.to_thread(self._extend_cache, self._tok(render_prefix(messages, request.tools)),
                                       len(first))

    def _extend_cache(self, tokens: list[int], own: int) -> int:
        if not self._lock.acquire(blocking=False):
            return 0  # a generation has the model: it evaluates what it needs itself
        try:
            common = self._common_prefix(tokens)
            if common < self.llm.n_tokens and common < own and time.monotonic() - self._used_at < LIVE_S:
                return 0  # the cache holds the turn of another call that is still talking to the model
            self.llm.n_tokens = common  # eval() drops our own older tail (a call as decoded, not as rendered)
            self.llm._ctx.set_n_threads(1, 1)  # the other core transcribes the caller's pauses meanwhile
            done = common
            while done < len(tokens) and not self._wanted.is_set():
                self.llm.eval(tokens[done: done + WARM_CHUNK])  # a waiting generation waits one chunk at most
                done = self.llm.n_tokens
            return done - common
        finally:
            self._lock.release()

    def _state_path(self, tokens: list[int]) -> Path | None:
        if self.state_dir is None:
            return None
        return kv_state_path(self.state_dir, self.path, self.name, self.n_ctx, tokens)

    def _load_state(self, tokens: list[int]) -> bool:
        """Restore the KV cache for exactly `tokens` from disk (~10 ms instead of seconds of prompt eval)."""
        path = self._state_path(tokens)
        return path is not None and load_kv_state(self.llm, path, tokens)

    def _save_state(self, tokens: list[int]) -> None:
        path = self._state_path(tokens)
        if path is not None and self.llm.n_tokens == len(tokens):
            save_kv_state(self.llm, path, self.name)

    def _compiled(self, gbnf: str) -> GrammarSampler:
        import llama_cpp
        import numpy as np

        if gbnf not in self._samplers:
            if self._candidates is None:
                array = (llama_cpp.llama_token_data * self.llm.n_vocab())()
                self._candidates = (array, np.ctypeslib.as_array(array))
            if len(self._samplers) >= 32:
                self._samplers.pop(next(iter(self._samplers)))
            self._samplers[gbnf] = GrammarSampler(self.llm, gbnf, self._candidates)
        return self._samplers[gbnf]

    def check_tools(self, tools: Sequence[dict[str, Any]]) -> None:
        """Every tool's calls can be written under the tool-call grammar, or `ToolDefinitionError` names the tool
        and the parameter the grammar cannot hold: at load, not on every turn."""
        if not self.use_grammar:
            return
        for tool in tools:
            try:
                self._compiled(build_grammar([tool], calls_only=True))
            except Exception as exc:  # whatever the converter or llama.cpp refused: say where
                raise ToolDefinitionError(_unholdable(tool, exc, self._compiled)) from None

    def _plan(self, request: ModelRequest) -> Plan:
        if not self.use_grammar:
            return Plan(None)
        plan = plan_for(request, self._compiled, grounded=self.ground, forced_calls=self.force_fixed,
                        tagged=self.tag_calls)
        # a finished call ends the output (`one_call`), so a plan with one possible call has it decided already
        return Plan(None, call=call) if self.one_call and (call := plan.sole_call()) else plan

    # ---- stream ----

    def lead_in(self, request: ModelRequest) -> str:
        """The first words of the reply to a tool result that is itself speakable ("Order 4567 ..."), or "".

        Small models read a tool result in the user turn as a task ("Mark the order as shipped ..."); started on
        the result's own first words, they go on telling it. Only for one result with nothing unspeakable in it,
        so a refusal or an error (which names tools and rules) is still answered in the model's own words."""
        messages = request.messages
        if not self.lead_words or not messages or messages[-1].role != "tool" or messages[-2].role == "tool":
            return ""
        content = request.messages[-1].content.strip()
        if leaks(content, [tool_name(t) for t in request.tools]) or sentences(content) > 2:
            return ""
        return " ".join(content.split()[: self.lead_words])

    def _prompt(self, request: ModelRequest) -> tuple[list[int], str, str]:
        """The request's prompt tokens, the words a reply is known to start with, and a reply known whole."""
        # after the tools' own words were the answer only a further call matters: no lead-in, no guard
        answer = read_out(request) if self.use_grammar and self.ground and not request.words_spoken else ""
        lead = self.lead_in(request) if self.use_grammar and not request.words_spoken and not answer else ""
        prompt = self._tok(render_prompt(request) + lead)
        if self.n_ctx - len(prompt) < 8:
            raise ModelRequestError(f"The prompt has {len(prompt)} tokens; {self.name} holds {self.n_ctx}. "
                                    "Shorten the history or raise n_ctx.")
        return prompt, lead, answer

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        # the model reads the messages as presented to it; its grammar's plan reads them as they are, as every
        # other model's grounding does (a change the caller asked for is in the declined call's reason)
        prompt, lead, answer = self._prompt(replace(request, messages=present(request.messages,
                                                                           locale.get(request.language))))
        room = self.n_ctx - len(prompt)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        cancel = threading.Event()

        def emit(item: tuple[str, Any]) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the event loop is gone: nobody is listening
                cancel.set()

        threading.Thread(target=self._generate, name=f"llama-{self.name}", daemon=True,
                         args=(prompt, request, min(request.max_output_tokens, room), emit, cancel, lead,
                               answer)).start()
        splitter = OutputSplitter()
        guard = self.reply_guard(request) if self.guard and not request.words_spoken else None
        try:
            while True:
                kind, value = await queue.get()
                if kind == "reset":  # the model named a tool it cannot call yet: it answers in words instead
                    splitter = OutputSplitter()
                elif kind == "say":  # words the code chose (a question, the scope sentence): not the model's
                    for event in splitter.feed(value):
                        yield event
                    if guard is not None:
                        guard.say(value)
                elif kind == "piece":
                    for event in splitter.feed(value):
                        if guard is None or not isinstance(event, TextDelta):
                            yield event
                        elif text := guard.feed(event.text):
                            yield TextDelta(text)
                    if splitter.done_at or (guard is not None and guard.done):
                        cancel.set()  # a repeated call, or a whole spoken reply: what the model meant is complete
                elif kind == "error":
                    raise ModelError(f"{self.name}: generation failed: {value}") from value
                else:
                    if guard is not None and splitter.mode == "text":
                        if tail := guard.finish(cut=value.finish in ("length", "cancelled")):
                            yield TextDelta(tail)
                        self._guarded(guard, value, splitter.raw)
                    yield self._response(splitter, value, guard)
                    return
        finally:
            cancel.set()  # consumer stopped (barge-in, timeout) or finished: the worker stops at the next token

    def reply_guard(self, request: ModelRequest) -> ReplyGuard:
        """The guard for this request's spoken reply (`loop.grounding.phase.reply_guard`); its request to repeat is
        in the request's language."""
        return reply_guard(request)

    def _guarded(self, guard: ReplyGuard, stats: GenStats, raw: str) -> None:
        stats.guard = guard.fired
        if guard.fired is None:
            return
        self.guard_fired[guard.fired.split(" ")[0]] += 1
        log.warning("%s: spoken-reply guard caught %s in %r; said %r instead", self.name, guard.fired,
                    raw.strip()[:200], guard.said.strip()[:200])

    def _response(self, splitter: OutputSplitter, stats: GenStats, guard: ReplyGuard | None = None) -> ModelResponse:
        text, calls = splitter.finish()
        usage = Usage(input_tokens=stats.prompt_tokens, output_tokens=stats.output_tokens,
                      cached_input_tokens=stats.reused_tokens, cost_usd=0.0)
        finish = "tool_calls" if calls and (stats.finish == "stop" or splitter.done_at) else stats.finish
        if guard is not None and splitter.mode == "text":
            text, finish = guard.said.strip(), "stop"  # what the caller hears is the reply, ended where it ended
        return ModelResponse(text=text, tool_calls=calls, usage=usage, finish_reason=finish, model=self.name)

    def _generate(self, prompt: list[int], request: ModelRequest, max_tokens: int, emit: Emit,
                  cancel: threading.Event, lead: str = "", answer: str = "") -> None:
        """Worker thread: greedy decoding (under the grammar) one token at a time until a stop token. `answer`:
        the reply is already known (`read_out`), nothing is generated."""
        self._wanted.set()
        with self._lock:  # the KV cache, the samplers and their shared token array belong to one generation
            self._wanted.clear()
            try:
                plan = Plan(None, say=answer) if answer else \
                    Plan(self._compiled(CONTINUATION)) if lead else self._plan(request)
                if plan.say or plan.call:  # decided before generating: nothing for the model to do
                    emit(("say", plan.say) if plan.say else ("piece", plan.call))
                    self.last = GenStats(prompt_tokens=len(prompt), reused_tokens=len(prompt), finish="stop")
                    emit(("done", self.last))
                    return
                if lead:
                    emit(("piece", lead))
                # the tools' words are being synthesised now: one core for the prompt, one for the voice (README)
                # nothing is synthesised yet: decode on `quiet_threads` until a spoken reply's first clause is out
                quick, batch = (self.threads[0], 1) if request.words_spoken else (self.quiet_threads, self.threads[1])
                self.llm._ctx.set_n_threads(self.cpu.threads(quick), self.cpu.threads(batch))
                loop = TokenLoop(self, plan, max_tokens, emit, voice_threads=self.threads[0])
                stats = loop.run(prompt, cancel, lead)
            except Exception as exc:  # llama.cpp failure: surface it to the consumer, never leave it hanging
                emit(("error", exc))
                return
            self.last, self._used_at = stats, time.monotonic()
            emit(("done", stats))


def _unholdable(tool: dict[str, Any], exc: Exception, compiled: Any) -> str:
    """Which parameter of `tool` the grammar cannot hold, in one line."""
    fn = tool.get("function") or tool
    params = fn.get("parameters") or {}
    for name, schema in (params.get("properties") or {}).items():
        alone = {**fn, "parameters": {"type": "object", "properties": {name: schema}, "required": [name]}}
        try:
            compiled(build_grammar([alone], calls_only=True))
        except Exception:
            return (f"tool {fn.get('name')!r}: parameter {name!r} has a type the embedded model cannot write "
                    f"({schema}): give it a plain type (str, int, a Literal, a simple pattern)")
    return f"tool {fn.get('name')!r}: the embedded model cannot write its arguments ({str(exc).splitlines()[0]})"
