"""Speculative reads: while the caller is still talking, run the reads the model would propose on the
partial transcript — only reads, only what policy ALLOWs outright — and keep their results by signature."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loop import Agent, Decision, Message, ModelResponse
from loop.act import ToolRunner
from loop.policy import VetContext, tighten, worst_hit


async def speculate_reads(agent: Agent, history: list[Message], partial: str,
                          trace: Callable[..., None]) -> int:
    """Fill `agent.speculative`; returns how many reads ran. Never a mutation, never an approval."""
    request, _ = agent.assembler.build([*history, Message("user", partial)], 0, agent.config.max_output_tokens)
    try:
        events = [ev async for ev in agent.model.stream(request)]
    except Exception as exc:  # speculation is an optimisation; failing it costs nothing
        trace("speculation_failed", error=str(exc)[:200])
        return 0
    response = next((ev for ev in events if isinstance(ev, ModelResponse)), None)
    ran = 0
    for call in response.tool_calls if response else []:
        tool = agent.tools.get(call.name)
        if tool is None or tool.mutates or call.signature in agent.speculative:
            continue
        if not _allowed_outright(agent, call, tool, partial):
            continue
        obs = await ToolRunner(default_timeout_s=agent.config.default_tool_timeout_s).invoke(call, tool)
        if obs.status == "ok":
            agent.speculative[call.signature] = obs
        ran += 1
        trace("speculative_read", partial=partial, call=call.signature, status=obs.status)
    return ran


def _allowed_outright(agent: Agent, call: Any, tool: Any, partial: str) -> bool:
    verdict = tighten(agent.policy.evaluate(call, tool), tool, agent.policy.grants)
    return verdict.decision is Decision.ALLOW and worst_hit(agent.guardrails, call, tool,
                                                             VetContext(user_text=partial)) is None
