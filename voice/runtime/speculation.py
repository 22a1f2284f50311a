"""Speculative reads while the caller is still talking: the loop's own `Agent.prefetch_reads` on the partial
transcript (vetted, admitted against the agent's budget and tenant, journaled; never a write, never an
approval), with what it read noted in the call's trace."""

from __future__ import annotations

from collections.abc import Callable

from loop import Agent, Message
from loop.prefetch import Prefetch
from voice.trace import TraceKind


async def speculate_reads(agent: Agent, history: list[Message], partial: str,
                          trace: Callable[..., None], answer_too: bool = False) -> Prefetch:
    """Fill `agent.speculative`; returns what the speculation did (its reads, and the answer's words where it
    knows them). With `answer_too` (the caller paused) the model's answer after those reads is started as well."""
    done = await agent.prefetch_reads(partial, history, answer_too=answer_too)
    for obs in done.reads:
        trace(TraceKind.SPECULATIVE_READ, partial=partial, call=obs.call.signature, status=obs.status)
    if done.refused and done.refused != "cancelled":
        trace(TraceKind.SPECULATION_FAILED, error=done.refused[:200])
    return done
