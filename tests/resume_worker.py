"""A run in its own process, for the kill-and-resume test. `--hang` makes the second lookup hang."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from loop import Agent, LoopConfig, ScriptedModel, Tool, ToolCall

SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}


def build(journal: str, side_effects: Path, hang: bool, approvals: Path) -> Agent:
    def lookup_order(order_id: str) -> str:
        if hang and order_id == "2":
            time.sleep(60)
        return f"order {order_id}: shipped"

    def issue_refund(order_id: str) -> str:
        with side_effects.open("a") as f:
            f.write(f"refund {order_id}\n")
        return f"refunded {order_id}"

    def approver(call: ToolCall, verdict: object) -> bool:
        with approvals.open("a") as f:
            f.write(f"asked {call.name}\n")
        return True

    model = ScriptedModel([ToolCall("lookup_order", {"order_id": "1"}), ToolCall("issue_refund", {"order_id": "1"}),
                           ToolCall("lookup_order", {"order_id": "2"}), "Refunded order 1; order 2 has shipped."])
    tools = [Tool(lookup_order, args=SCHEMA), Tool(issue_refund, args=SCHEMA, mutates=True, reversible=False)]
    return Agent(model=model, tools=tools, config=LoopConfig.profile("task"), journal_path=journal,
                 approver=approver)


if __name__ == "__main__":
    journal, side, approvals, mode = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
    agent = build(journal, side, mode == "--hang", approvals)
    result = agent.run_sync("refund order 1 and check order 2", run_id="run-1")
    print(result.outcome.value, result.reason)
