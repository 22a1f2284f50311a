"""One generation of the embedded model, a token at a time: pick under the grammar, read what the grammar forces
in one batch, open the template's tool-call tag for a bare call, and switch grammars when the caller has not said
what a call needs. `LlamaModel._generate` runs it in its worker thread, holding the model's lock."""

from __future__ import annotations

import codecs
import threading
import time
from typing import Any, Protocol

from loop.grounding.speakable import CLAUSE_END
from loop.models.llama.decoding import Emit, GenStats, GrammarSampler, Plan
from loop.models.llama.qwen_format import forced, one_whole_call, tag_calls

CALL_OPENING = '{"name": "'  # how every bare call starts, as the grammar writes it


class _Model(Protocol):
    """What a generation needs of `LlamaModel`: the llama.cpp instance, its tokens and its settings."""

    llm: Any
    _stop: set[int]
    _tag: list[int]
    _braces: dict[int, bool]
    tag_calls: bool
    one_call: bool
    guard: bool
    max_reply_tokens: int

    def _tok(self, text: str, special: bool = True) -> list[int]: ...

    def _eval_from_cache(self, tokens: list[int], keep_last: bool) -> int: ...


class TokenLoop:
    """Decodes one reply from the model's KV cache; `run` returns its statistics."""

    def __init__(self, model: _Model, plan: Plan, max_tokens: int, emit: Emit, voice_threads: int = 0) -> None:
        self.model, self.llm, self.plan, self.max_tokens, self.emit = model, model.llm, plan, max_tokens, emit
        # decoding threads once a spoken reply's first clause is out (its voice is synthesised beside the rest);
        # 0: as they are
        self.voice_threads = voice_threads
        self.sampler: GrammarSampler | None = plan.sampler
        self.raw = ""  # what this reply has decoded so far (under the sampler now in use)
        self.decoder: Any = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def run(self, prompt: list[int], cancel: threading.Event, lead: str = "") -> GenStats:
        started = time.perf_counter()
        stats = GenStats(prompt_tokens=len(prompt), finish="length")
        # calls only, bare as this model writes them: their fixed opening is read with the prompt, in its batch,
        # instead of the model picking "{" and the opening being read after it (~30 ms here)
        opening = CALL_OPENING if self.plan.calls_only and self.sampler is not None and not lead \
            and not self.model.tag_calls else ""
        head = self.model._tok(opening) if opening else []
        stats.reused_tokens = min(len(prompt), self.model._eval_from_cache(prompt + head, keep_last=True))
        self.raw = lead + opening
        if self.sampler is not None:
            self.sampler.reset()
            for t in head:
                self.sampler.accept(t)
        if opening:
            stats.output_tokens += len(head)
            self.emit(("piece", opening))
        while stats.output_tokens < self.max_tokens:
            if cancel.is_set():
                stats.finish = "cancelled"
                break
            token = self._pick()
            stats.ttft_s = stats.ttft_s or time.perf_counter() - started
            if token in self.model._stop:
                stats.finish = "stop"
                break
            if self._opens_tag(token, stats):
                continue
            batch, piece = self._accept(token, stats)
            if self.voice_threads and self.raw.lstrip()[:1] not in "{<" and CLAUSE_END.search(self.raw):
                # the first clause is let through to the voice (`ReplyGuard`): Piper speaks it now
                self.llm._ctx.set_n_threads(self.voice_threads, self.voice_threads)
                self.voice_threads = 0
            if (blocked := self._on_blocked(prompt)) == "asked":
                stats.finish = "stop"
                break
            if blocked == "switched":
                continue
            self.emit(("piece", piece))
            if self._over(piece, stats):
                break
            if stats.output_tokens < self.max_tokens:
                self.llm.eval(batch)
        self.emit(("piece", self.decoder.decode(b"", final=True)))
        stats.total_s = time.perf_counter() - started
        return stats

    def _pick(self) -> int:
        import numpy as np

        logits = np.ctypeslib.as_array(self.llm._ctx.get_logits_ith(-1), shape=(self.llm.n_vocab(),))
        return self.sampler.pick(logits) if self.sampler is not None else int(np.argmax(logits))

    def _is_brace(self, token: int) -> bool:
        braces = self.model._braces
        if token not in braces:
            braces[token] = self.llm.detokenize([token], special=True).lstrip().startswith(b"{")
        return braces[token]

    def _opens_tag(self, token: int, stats: GenStats) -> bool:
        """A bare call: write the template's <tool_call> tag first, so the call in the KV cache is the one the next
        turn's prompt renders, and the answer after the result reuses it instead of re-reading it."""
        sampler, tag = self.sampler, self.model._tag
        if not (self.model.tag_calls and sampler is self.plan.sampler is not None and not self.raw
                and self._is_brace(token)):
            return False
        for t in tag:
            sampler.accept(t)  # type: ignore[union-attr]
        stats.output_tokens += len(tag)
        self.raw = "<tool_call>\n"
        self.emit(("piece", self.raw))
        self.llm.eval(tag)
        return True

    def _accept(self, token: int, stats: GenStats) -> tuple[list[int], str]:
        """Take the picked token, and what the grammar then forces; returns the tokens to evaluate and the text."""
        plan = self.plan
        if self.sampler is not None:
            self.sampler.accept(token)
        stats.output_tokens += 1
        piece = self.decoder.decode(self.llm.detokenize([token], special=True))
        self.raw += piece
        batch = [token]
        sampler = self.sampler
        calls = plan.instead_calls if sampler is plan.instead else plan.calls if sampler is plan.sampler else []
        if calls and self.raw[:1] == "<" and calls[0][:1] == "{":
            calls = tag_calls(calls)  # the model opened the template's tag itself: the same calls, tagged
        if calls and self.raw[:1] in "{<" and (more := forced(calls, self.raw)):
            extra, more = self._read_forced(more, stats)
            batch += extra
            piece += more
            self.raw += more
        return batch, piece

    def _read_forced(self, more: str, stats: GenStats) -> tuple[list[int], str]:
        """What the grammar leaves no choice about ('name": "', the rest of a tool name, arguments that have one
        possible value) is read in one batch instead of decoded a token at a time. Returns its tokens and text."""
        extra = self.model._tok(more, special="<" in more)  # a closing tag is the template's special token
        if len(extra) > self.max_tokens - stats.output_tokens:  # the cap holds for read tokens too
            extra = extra[: max(0, self.max_tokens - stats.output_tokens)]
            more = self.llm.detokenize(extra, special=True).decode("utf-8", errors="replace")
        for t in extra:
            self.sampler.accept(t)  # type: ignore[union-attr]
        stats.output_tokens += len(extra)
        return extra, more

    def _on_blocked(self, prompt: list[int]) -> str:
        """A call the caller has not said what it needs: ask for it ("asked"), or answer in words or with the
        call it may make instead ("switched", back at the end of the prompt); "" when nothing is blocked."""
        plan = self.plan
        if self.sampler is plan.fallback or self.raw.lstrip()[:1] not in "{<":
            return ""
        if not (blocked := plan.blocked(self.raw)):
            return ""
        self.emit(("reset", None))
        if plan.asks.get(blocked) and not plan.yields(blocked):
            self.emit(("say", plan.asks[blocked]))
            return "asked"
        self.sampler, self.raw = (plan.instead, "") if plan.yields(blocked) else (plan.fallback, "")
        self.sampler.reset()  # type: ignore[union-attr]
        self.model._eval_from_cache(prompt, keep_last=True)  # back to the end of the prompt, still cached
        return "switched"

    def _over(self, piece: str, stats: GenStats) -> bool:
        """One whole call where one is wanted, or a spoken reply long enough (the guard ends it at its last
        whole clause)."""
        model, raw = self.model, self.raw
        if model.one_call and ("}" in piece or ">" in piece) and raw.lstrip()[:1] in "{<" and one_whole_call(raw):
            stats.finish = "stop"
            return True
        return bool(model.guard and stats.output_tokens >= model.max_reply_tokens and raw.strip()
                    and raw.lstrip()[:1] not in "{<")
