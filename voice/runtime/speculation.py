"""Speculative reads: while the caller is still talking, run the reads the model would propose on the
partial transcript — only reads, only what policy ALLOWs outright — and keep their results by signature."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loop import Agent, Decision, Message, ModelRequest, ModelResponse, ObservationStatus
from loop.act import ToolRunner
from loop.policy.rules import VetContext, tighten, worst_hit
from voice.runtime.priming import PrimedModel
from voice.trace import TraceKind


async def speculate_reads(agent: Agent, history: list[Message], partial: str,
                          trace: Callable[..., None], answer_too: bool = False) -> int:
    """Fill `agent.speculative`; returns how many reads ran. Never a mutation, never an approval. With
    `answer_too` (the caller paused) the model's answer after those reads is started as well."""
    messages = [*history, Message("user", partial)]
    try:
        response = await _decide(agent, messages, exclusive=answer_too)
    except Exception as exc:  # speculation is an optimisation; failing it costs nothing
        trace(TraceKind.SPECULATION_FAILED, error=str(exc)[:200])
        return 0
    ran, results = 0, []
    for call in response.tool_calls if response else []:
        tool = agent.tools.get(call.name)
        if tool is None or tool.mutates or not _allowed_outright(agent, call, tool, partial):
            continue
        obs = agent.speculative.get(call.signature)
        if obs is None:
            obs = await ToolRunner(default_timeout_s=agent.config.default_tool_timeout_s).invoke(call, tool)
            ran += 1
            trace(TraceKind.SPECULATIVE_READ, partial=partial, call=call.signature, status=obs.status)
        if obs.status == ObservationStatus.OK and obs.escalation is None:  # a hand-over is no read to reuse
            agent.speculative[call.signature] = obs
            results.append(Message("tool", obs.content, tool_call_id=call.id, name=call.name))
    if answer_too and response and response.tool_calls and len(results) == len(response.tool_calls) \
            and isinstance(agent.model, PrimedModel) and not all(agent.tools[c.name].answers
                                                                 for c in response.tool_calls):
        # every proposed call was a read that is ready: the answer after them can be started too (unless the
        # reads' own results are the answer: then no model call follows them)
        asked = Message("assistant", response.text, tool_calls=response.tool_calls)
        agent.model.prime(_request(agent, [*messages, asked, *results]))
    return ran


async def _decide(agent: Agent, messages: list[Message], exclusive: bool) -> ModelResponse | None:
    """The model's first decision on these words: primed (kept for the real run) when the model allows it."""
    request = _request(agent, messages)
    if isinstance(agent.model, PrimedModel):
        events = await agent.model.wait(agent.model.prime(request, exclusive))
    else:
        events = [ev async for ev in agent.model.stream(request)]
    return next((ev for ev in events if isinstance(ev, ModelResponse)), None)


def _request(agent: Agent, messages: list[Message]) -> ModelRequest:
    return agent.assembler.build(messages, 0, agent.config.max_output_tokens)[0]


def _allowed_outright(agent: Agent, call: Any, tool: Any, partial: str) -> bool:
    verdict = tighten(agent.policy.evaluate(call, tool), tool, agent.policy.grants)
    return verdict.decision is Decision.ALLOW and worst_hit(agent.guardrails, call, tool,
                                                             VetContext(user_text=partial)) is None
