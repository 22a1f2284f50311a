"""Speculation is the loop's (`Agent.prefetch_reads`, loop/prefetch.py): vetted like a run, admitted against the
agent's budget and its tenant's shared ledger before anything is paid, journaled, never a write; its reads are
reused by the real turn, and `voiceloop report` shows what it spent."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

from loop import (
    Agent,
    Budget,
    LoopConfig,
    ModelRequest,
    ModelResponse,
    Policy,
    Pricing,
    Rule,
    TenantBudget,
    TextDelta,
    Tool,
    ToolCall,
    Usage,
)
from loop.events import EventKind
from loop.policy.rules import Decision
from loop.run.report import build_report, format_report
from loop.run.settle import settle_unfinished
from loop.store.db import open_journal, open_ledger
from tests.helpers import ORDER_SCHEMA
from voice.runtime.priming import PrimedModel

TENANT = "acme"


class PaidModel:
    """Answers by what the caller said last: an order number means a lookup (or a refund, if asked), the result of
    a read means a sentence. Every call costs $0.10."""

    name = "paid"
    pricing = Pricing(input_per_mtok=0.0, output_per_mtok=1000.0)  # 100 output tokens reserve $0.10

    def __init__(self) -> None:
        self.calls = 0

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        self.calls += 1
        await asyncio.sleep(0)
        last = request.messages[-1]
        usage = Usage(input_tokens=50, output_tokens=20, cost_usd=0.10)
        order = re.search(r"\d{4}", last.content)
        if last.role == "user" and order:
            name = "issue_refund" if "refund" in last.content else "lookup_order"
            args = {"order_id": order.group(0), **({"amount": 20} if name == "issue_refund" else {})}
            yield ModelResponse(tool_calls=[ToolCall(name, args, id=f"c{self.calls}")], usage=usage,
                                finish_reason="tool_calls", model=self.name)
            return
        yield TextDelta("It has shipped.")
        yield ModelResponse(text="It has shipped.", usage=usage, model=self.name)


def make_agent(tmp_path: Path, model: object | None = None, tenant: TenantBudget | None = None,
               policy: Policy | None = None) -> tuple[Agent, list[str]]:
    ran: list[str] = []

    def lookup_order(order_id: str) -> str:
        ran.append(f"lookup {order_id}")
        return f"Order {order_id} has shipped."

    def issue_refund(order_id: str, amount: float) -> str:
        ran.append(f"refund {order_id}")
        return "Refunded."

    refund_schema = {"type": "object", "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
                     "required": ["order_id", "amount"]}
    tools = [Tool(lookup_order, args=ORDER_SCHEMA), Tool(issue_refund, args=refund_schema, mutates=True)]
    tmp_path.mkdir(parents=True, exist_ok=True)
    config = LoopConfig.profile("voice", budget=Budget.of(cost_usd=5.0, turns=8), max_output_tokens=100)
    agent = Agent(model or PaidModel(), tools, policy=policy, config=config, journal_path=str(tmp_path / "runs.db"),
                  tenant=tenant)
    return agent, ran


def kinds(agent: Agent, run_id: str) -> list[str]:
    assert agent.journal is not None
    return [e.kind for e in agent.journal.events(run_id)]


def test_a_prefetched_read_is_vetted_journaled_and_reused_by_the_real_turn(tmp_path: Path) -> None:
    agent, ran = make_agent(tmp_path)
    done = asyncio.run(agent.prefetch_reads("Where is order 4567", []))
    assert [o.call.signature for o in done.reads] == ['lookup_order:{"order_id":"4567"}'] and ran == ["lookup 4567"]
    assert kinds(agent, done.id) == [EventKind.PREFETCH_STARTED, EventKind.MODEL_RESPONSE, EventKind.VERDICT,
                                     EventKind.TOOL_STARTED, EventKind.TOOL_RESULT, EventKind.PREFETCH_FINISHED]
    result = agent.run_sync("Where is order 4567")
    assert result.outcome.value == "COMPLETED" and ran == ["lookup 4567"]  # the run reused it: not run again
    assert result.trajectory[0].content == "Order 4567 has shipped."


def test_a_write_is_never_prefetched_and_neither_is_a_read_policy_would_ask_about(tmp_path: Path) -> None:
    agent, ran = make_agent(tmp_path)
    done = asyncio.run(agent.prefetch_reads("Please refund order 4567", []))
    assert done.proposed[0].name == "issue_refund" and done.reads == [] and ran == []
    ask = Policy([Rule("lookups.ask", "lookup_order", Decision.ASK, "lookups need a yes here")])
    agent, ran = make_agent(tmp_path / "ask", policy=ask)
    done = asyncio.run(agent.prefetch_reads("Where is order 4567", []))
    assert done.reads == [] and ran == [] and agent.speculative == {}


def test_speculation_never_takes_a_tenant_past_its_ceiling_and_the_report_shows_its_spend(tmp_path: Path) -> None:
    ledger = open_ledger(str(tmp_path / "ledger.db"))
    ledger.set_allowance(TENANT, "cost_usd", 0.35)  # three calls' reservations of $0.10, not four
    agent, ran = make_agent(tmp_path, tenant=TenantBudget(ledger, TENANT))

    async def speculate() -> list:
        return [await agent.prefetch_reads(f"Where is order {n}", []) for n in (1111, 2222, 3333, 4444, 5555)]

    done = asyncio.run(speculate())
    balance = ledger.balance(TENANT)["cost_usd"]
    assert balance["committed"] <= 0.35 + 1e-9
    assert [bool(d.refused) for d in done] == [False, False, False, True, True]
    assert "shared budget" in done[3].refused and ran == ["lookup 1111", "lookup 2222", "lookup 3333"]
    assert abs(balance["committed"] - 0.30) < 1e-6  # what the model calls actually cost, seen by the ledger
    report = build_report(str(tmp_path / "runs.db"))
    assert report["runs"] == 0 and report["speculation"]["prefetches"] == 5
    assert report["speculation"]["cost_usd"] == 0.3 and report["speculation"]["refused"] == 2
    assert "Speculative spend" in format_report(report) and "cost $0.3000" in format_report(report)


def test_a_decision_primed_by_speculation_is_paid_for_once(tmp_path: Path) -> None:
    ledger = open_ledger(str(tmp_path / "ledger.db"))
    ledger.set_allowance(TENANT, "cost_usd", 10.0)
    paid = PaidModel()
    agent, _ = make_agent(tmp_path, model=PrimedModel(paid), tenant=TenantBudget(ledger, TENANT))

    async def call() -> tuple:
        done = await agent.prefetch_reads("Where is order 4567", [], answer_too=True)
        await asyncio.gather(*agent.pending_prefetches)  # the answer after the read, primed too
        return done, await agent.run("Where is order 4567")

    done, result = asyncio.run(call())
    assert paid.calls == 2  # the decision and the answer, each made once, both served to the run from priming
    assert result.outcome.value == "COMPLETED" and result.usage["cost_usd"]["consumed"] == 0.0
    assert abs(ledger.balance(TENANT)["cost_usd"]["committed"] - 0.20) < 1e-6  # charged once, to speculation
    assert kinds(agent, done.id)[-1] == EventKind.PREFETCH_FINISHED


def test_a_prefetch_cut_off_by_a_kill_is_closed_on_restart_not_resumed(tmp_path: Path) -> None:
    journal = open_journal(str(tmp_path / "runs.db"))
    from loop.store.journal import EventLog

    log = EventLog(journal, "prefetch-killed")
    log.emit(EventKind.PREFETCH_STARTED, words="Where is order 4567", model="paid")
    log.emit(EventKind.TOOL_STARTED, call=ToolCall("lookup_order", {"order_id": "4567"}, id="c1").to_dict())
    resumed: list[str] = []
    agent, _ = make_agent(tmp_path / "agent")
    settled = asyncio.run(settle_unfinished(journal, agent.tools, resume=lambda run_id: resumed.append(run_id)))
    assert resumed == [] and [s.how for s in settled] == ["closed"]
    assert "nothing had been changed" in settled[0].reason
    report = build_report(str(tmp_path / "runs.db"))
    assert report["runs"] == 0 and report["speculation"]["prefetches"] == 1


def test_a_primed_answer_dropped_for_newer_words_is_settled_and_journaled_quietly(tmp_path: Path) -> None:
    agent, _ = make_agent(tmp_path, model=PrimedModel(PaidModel()))

    async def call() -> tuple:
        done = await agent.prefetch_reads("Where is order 4567", [], answer_too=True)
        agent.model.forget()  # the caller said more: the primed answer is dropped  # type: ignore[attr-defined]
        results = await asyncio.gather(*agent.pending_prefetches, return_exceptions=True)
        return done, results

    done, results = asyncio.run(call())
    assert results == [None]  # no exception left for nobody to retrieve
    assert agent.journal is not None
    finished = [e for e in agent.journal.events(done.id) if e.kind == EventKind.PREFETCH_FINISHED]
    assert len(finished) == 1 and finished[0].payload["refused"] == "cancelled"


def test_a_speculation_knows_the_answers_words_when_its_decision_holds_them(tmp_path: Path) -> None:
    """What the run will answer, as far as the speculation knows it: the model's reply itself, the answer tools'
    own words, or the handle of the answer it primed after its reads (a voice synthesises its first clause early)."""
    agent, _ = make_agent(tmp_path / "reply", model=PrimedModel(PaidModel()))
    done = asyncio.run(agent.prefetch_reads("Hello there", [], answer_too=True))
    assert done.words == "It has shipped." and done.answer is None  # no tool: the decision is the reply

    agent, _ = make_agent(tmp_path / "primed", model=PrimedModel(PaidModel()))
    done = asyncio.run(agent.prefetch_reads("Where is order 4567", [], answer_too=True))
    assert done.words == "" and done.answer is not None  # a read the model answers after: its primed answer

    agent, _ = make_agent(tmp_path / "own", model=PrimedModel(PaidModel()))
    agent.tools["lookup_order"].answers = True  # the read's result is the answer as it stands
    done = asyncio.run(agent.prefetch_reads("Where is order 4567", [], answer_too=True))
    assert done.words == "Order 4567 has shipped." and done.answer is None

    agent, _ = make_agent(tmp_path / "write", model=PrimedModel(PaidModel()))
    done = asyncio.run(agent.prefetch_reads("A refund on order 4567", [], answer_too=True))
    assert done.words == "" and done.answer is None  # a write is asked about first: nothing known to say
