"""Session logic on a virtual clock with fast stand-in models: approvals, speculation, endpointing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from loop import Agent, LoopConfig, ModelRequest, ModelResponse, ScriptedModel, TextDelta, ToolCall, Usage
from loop.types import Pricing
from tests.fakes import LoudnessVAD, ScriptedSTT, ToneTTS, WordChunker, track
from voice.call.turns import TurnConfig
from voice.demo.order_desk import OrderDesk, order_policy
from voice.runtime.session import CallSession, SessionConfig

REFUND = [ToolCall("lookup_order", {"order_id": "4567"}), ToolCall("issue_refund", {"order_id": "4567", "amount": 20}),
          "Done."]


def session_for(model: Any, tmp_path: Path, stt: dict[int, str], **cfg: Any) -> tuple[CallSession, OrderDesk]:
    desk = OrderDesk(tmp_path / "orders.db")
    agent = Agent(model=model, tools=desk.tools(), policy=order_policy(), config=LoopConfig.profile("voice"),
                  journal_path=str(tmp_path / "j.db"))
    config = SessionConfig(**cfg)
    return CallSession(agent, LoudnessVAD(), ScriptedSTT(stt), ToneTTS(), WordChunker, config), desk


def refunds(desk: OrderDesk) -> list:
    return desk.db.execute("SELECT order_id, amount FROM refunds").fetchall()


def kinds(session: CallSession) -> list[str]:
    return [e["kind"] for e in session.trace]


def test_operator_decision_overrides_and_releases_the_mutation(tmp_path: Path) -> None:
    session, desk = session_for(ScriptedModel(REFUND), tmp_path, {60: "refund twenty dollars on order 4567."})

    async def call() -> None:
        task = asyncio.create_task(session.run_file(track((0.2, 60), total_s=8.0)))
        while session.approval is None:
            await asyncio.sleep(0)
        await session.decide(True)
        await task

    asyncio.run(call())
    assert refunds(desk) == [("4567", 20.0)]
    assert kinds(session).index("operator_decision") < kinds(session).index("loop.run_finished")


def test_no_answer_times_out_and_declines(tmp_path: Path) -> None:
    session, desk = session_for(ScriptedModel(REFUND), tmp_path, {60: "refund twenty dollars on order 4567."},
                                approval_timeout_s=3.0)
    asyncio.run(session.run_file(track((0.2, 60), total_s=10.0)))
    assert refunds(desk) == []
    assert "approval_timeout" in kinds(session)
    declined = [e for e in session.trace if e["kind"] == "loop.tool_result" and e["status"] == "declined"]
    assert [e["call"]["name"] for e in declined] == ["issue_refund"]


def test_unclear_answer_is_asked_again_then_yes_releases(tmp_path: Path) -> None:
    stt = {60: "refund twenty dollars on order 4567.", 20: "maybe later perhaps.", 12: "yes please."}
    session, desk = session_for(ScriptedModel(REFUND), tmp_path, stt)
    asyncio.run(session.run_file(track((0.2, 60), (5.5, 20), (9.0, 12), total_s=14.0)))
    replies = [e["answer"] for e in session.trace if e["kind"] == "approval_reply"]
    assert replies == ["unclear", "yes"]
    assert refunds(desk) == [("4567", 20.0)]


class EchoOrderModel:
    """Proposes lookup_order for the last number the caller said; answers once a result is in."""

    name, pricing = "echo", Pricing()

    def count_tokens(self, text: str) -> int:
        return len(text) // 4 + 1

    async def stream(self, request: ModelRequest):
        last = request.messages[-1]
        if last.role == "tool":
            yield TextDelta("Found it.")
            yield ModelResponse(text="Found it.", usage=Usage(10, 2))
            return
        digits = [w for w in last.content.replace(".", "").split() if w.isdigit()]
        call = ToolCall("lookup_order", {"order_id": digits[-1] if digits else "0"})
        yield ModelResponse(tool_calls=[call], usage=Usage(10, 5))


def test_speculation_is_discarded_when_the_final_transcript_differs(tmp_path: Path) -> None:
    # partials end in "1234" early on; the final says "4567": the early read must not be reused
    stt = {80: "order 1234 sorry no order 4567."}
    session, _ = session_for(EchoOrderModel(), tmp_path, stt, turns=TurnConfig(speculate_every_s=0.3),
                             speculate=True)
    asyncio.run(session.run_file(track((0.2, 80), total_s=6.0)))
    spec = [e["call"] for e in session.trace if e["kind"] == "speculative_read"]
    assert 'lookup_order:{"order_id":"1234"}' in spec
    final = session.turns[0].tool_calls
    assert [c["arguments"] for c in final] == [{"order_id": "4567"}]
    journal_results = [e for e in session.trace if e["kind"] == "loop.tool_result"]
    assert len(journal_results) == 1


def test_unfinished_words_hold_the_turn_open_across_a_pause(tmp_path: Path) -> None:
    # two bursts 0.9 s apart: the first ends without punctuation, so the pause does not end the turn
    stt = {20: "so what i wanted", 50: "so what i wanted was to ask about my order."}
    model = ScriptedModel(["Sure."])
    session, _ = session_for(model, tmp_path, stt)
    audio = track((0.2, 20), (0.2 + 20 * 0.032 + 0.9, 30), total_s=6.0)
    asyncio.run(session.run_file(audio))
    assert len(session.turns) == 1


class WarmedModel(ScriptedModel):
    def __init__(self, turns: list) -> None:
        super().__init__(turns)
        self.log: list[str] = []
        self.warmed: ModelRequest | None = None

    def warm(self, request: ModelRequest) -> None:
        self.log.append("warm")
        self.warmed = request

    async def stream(self, request: ModelRequest):
        self.log.append("stream")
        async for ev in super().stream(request):
            yield ev


def test_stable_prefix_is_warmed_at_call_start_and_reused_byte_for_byte(tmp_path: Path) -> None:
    model = WarmedModel(["Hello.", "Bye."])
    session, _ = session_for(model, tmp_path, {20: "hi there.", 25: "thanks bye."}, speculate=False,
                                 preempt=False)
    asyncio.run(session.run_file(track((1.0, 20), (4.0, 25), total_s=8.0)))
    assert model.log[0] == "warm" and model.log.count("stream") == 2
    assert model.warmed is not None
    prefix = model.warmed.messages[: model.warmed.stable_prefix]
    for request in model.requests:
        assert request.messages[: request.stable_prefix] == prefix
        assert request.tools == model.warmed.tools
    assert session.trace[0]["kind"] == "prefix_warmed"
