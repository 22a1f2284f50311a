"""Issue 10, item 10 (docs): every journal event kind a run emits, and `run()`'s `history=` and
`transcript=`, are documented on the documentation site's turn-loop page (docs/turn-loop.md)."""

from __future__ import annotations

import asyncio
import re

from loop import Decision, GuardrailHit, LoopConfig, Policy, Rule, ScriptedModel, ScriptedTurn, Severity, ToolCall
from tests.helpers import Calls, agent, read_tool, write_tool
from tests.paths import ROOT

LOOP_SECTION = (ROOT / "docs" / "turn-loop.md").read_text()


class BlockSeven:
    name = "no_seven"

    def check(self, call, tool, ctx):
        return GuardrailHit(Severity.BLOCK, "locked", self.name) if call.arguments.get("order_id") == "7" else None


def emitted_kinds() -> set[str]:
    kinds: set[str] = set()
    calls = Calls()
    policy = Policy(rules=[Rule("cancel.ask", "cancel_order", Decision.ASK)])
    batch = [ToolCall("lookup_order", {"order_id": "7"}), ToolCall("lookup_order", {"order_id": "1"}),
             ToolCall("cancel_order", {"order_id": "1"})]
    agent(ScriptedModel([batch, "done"]), [read_tool(calls), write_tool(calls)], LoopConfig.profile("chat"),
          policy=policy, approver=lambda c, v: True, guardrails=[BlockSeven()],
          listeners=[lambda e: kinds.add(e.kind)]).run_sync("x")

    async def cancelled() -> None:
        slow = agent(ScriptedModel([ScriptedTurn(text="late", delay_s=5)]), [],
                     listeners=[lambda e: kinds.add(e.kind)])
        task = asyncio.create_task(slow.run("x"))
        await asyncio.sleep(0.05)
        task.cancel("barge-in")
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(cancelled())
    return kinds


def test_every_event_kind_a_run_emits_is_documented() -> None:
    kinds = emitted_kinds()
    source = "".join(p.read_text() for p in (ROOT / "loop").glob("*.py"))
    kinds |= set(re.findall(r'emit\(\s*"([a-z_]+)"', source))
    assert {"tool_finished", "approval", "guardrail", "run_cancelled"} <= kinds
    undocumented = sorted(k for k in kinds if f"`{k}`" not in LOOP_SECTION)
    assert undocumented == []


def test_run_parameters_history_and_transcript_are_documented() -> None:
    assert "history=" in LOOP_SECTION and "transcript" in LOOP_SECTION
    assert "budget_dimension" in LOOP_SECTION and "mutations_need_approval" in LOOP_SECTION
