"""Issue 10, items 7, 8 and the ScriptedModel part of 10: a refusal is not an answer, disguised repetition
is repetition, and a scripted model keeps its place with `history=` and with trimming."""

from __future__ import annotations

import asyncio

from loop import Agent, LoopConfig, Message, RunOutcome, ScriptedModel, ScriptedTurn, Tool, ToolCall
from loop.models.openai import OpenAICompatModel
from tests.helpers import ORDER_SCHEMA, Calls, agent, read_tool
from tests.openai_server import OpenAIServer, Reply, chunk, text_reply

# ---- item 7: a refusal ends the run as "content or action refused" ------------------------------


def test_a_content_filter_stop_is_not_a_completed_answer() -> None:
    model = ScriptedModel([ScriptedTurn(text="", finish_reason="content_filter")])
    result = agent(model, []).run_sync("x")
    assert result.outcome is RunOutcome.GUARDRAIL_STOP
    assert result.reason == ("model scripted's reply was stopped by its provider's content filter "
                             "(finish_reason=content_filter)")
    assert result.answer == ""


def test_a_refusal_stop_with_no_text_is_a_refusal_not_an_empty_answer() -> None:
    calls = Calls()
    model = ScriptedModel([ScriptedTurn(text="", finish_reason="refusal",
                                        tool_calls=[ToolCall("lookup_order", {"order_id": "1"})])])
    result = agent(model, [read_tool(calls)]).run_sync("x")
    assert result.outcome is RunOutcome.GUARDRAIL_STOP and result.outcome is not RunOutcome.COMPLETED
    assert result.reason == "model scripted refused to answer (finish_reason=refusal)"
    assert result.answer == "" and calls.log == []


def test_a_refusal_field_ends_the_run_with_the_refusal_as_reason_and_runs_no_tool() -> None:
    calls = Calls()
    model = ScriptedModel([ScriptedTurn(refusal="I can't help with that.",
                                        tool_calls=[ToolCall("lookup_order", {"order_id": "1"})])])
    result = agent(model, [read_tool(calls)]).run_sync("x")
    assert result.outcome is RunOutcome.GUARDRAIL_STOP
    assert result.reason == "model scripted refused: I can't help with that."
    assert calls.log == [] and result.messages[-1].content == "not run: the model refused"


def test_a_provider_refusal_over_the_openai_protocol_stops_the_run() -> None:
    refusal = Reply(events=[chunk({"role": "assistant", "content": None, "refusal": "I can't "}),
                            chunk({"refusal": "assist with that."}), chunk({}, "stop")])

    async def run() -> list:
        with OpenAIServer() as server:
            server.enqueue(refusal, text_reply("", finish_reason="content_filter"),
                           text_reply("", finish_reason="refusal"))
            model = OpenAICompatModel(model="test-model", base_url=server.base_url, timeout_s=5.0, max_retries=0)
            try:
                return [await Agent(model, []).run(goal) for goal in ("x", "y", "z")]
            finally:
                await model.aclose()

    refused, filtered, declined = asyncio.run(run())
    assert (refused.outcome, refused.reason) == (RunOutcome.GUARDRAIL_STOP,
                                                 "model test-model refused: I can't assist with that.")
    assert filtered.outcome is RunOutcome.GUARDRAIL_STOP and "content filter" in filtered.reason
    assert declined.outcome is RunOutcome.GUARDRAIL_STOP and "finish_reason=refusal" in declined.reason


# ---- item 8: whitespace and case of no meaning do not disguise a repeat -------------------------


def test_respaced_and_recased_arguments_are_the_same_intent_and_the_reason_shows_the_cycle() -> None:
    seen: list[str] = []

    def search_logs(query: str) -> str:
        seen.append(query)
        return f"0 results for {query.strip()!r} at 10:0{len(seen)}"

    schema = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
    variants = ["checkout errors", "checkout  errors", " Checkout errors", "CHECKOUT ERRORS"]
    model = ScriptedModel([ToolCall("search_logs", {"query": q}) for q in variants] + ["gave up"])
    result = agent(model, [Tool(search_logs, args=schema)]).run_sync("why did checkout fail?")
    assert result.outcome is RunOutcome.LOOP_DETECTED
    assert len(seen) == 2  # the third disguised retry is not run
    assert result.reason == (
        'the same call was proposed 3 times in a row: search_logs:{"query":"checkout errors"}; what it observed '
        "each time: [turn 1] 0 results for 'checkout errors' at 10:01; [turn 2] 0 results for 'checkout errors' "
        "at 10:02")


def test_meaningful_differences_are_still_progress() -> None:
    schema = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
    tool = Tool(lambda query: "none", name="search_logs", args=schema)
    model = ScriptedModel([ToolCall("search_logs", {"query": q}) for q in ["checkout errors", "checkout 500s",
                                                                           "payment errors"]] + ["gave up"])
    assert agent(model, [tool]).run_sync("x").outcome is RunOutcome.COMPLETED


# ---- item 10: ScriptedModel with history= and with trimming -------------------------------------


def test_scripted_model_ignores_assistant_messages_it_did_not_write() -> None:
    history = [Message("user", "Hi"), Message("assistant", "Hello! How can I help?")]
    calls = Calls()
    model = ScriptedModel([ToolCall("lookup_order", {"order_id": "42"}), "Order 42 has shipped."])
    result = agent(model, [read_tool(calls)]).run_sync("Where is order 42?", history=history)
    assert result.outcome is RunOutcome.COMPLETED and result.answer == "Order 42 has shipped."
    assert calls.log == [("lookup_order", {"order_id": "42"})]  # line 0 was played, not skipped


def test_scripted_model_continues_across_runs_of_one_conversation() -> None:
    model = ScriptedModel(["Hello!", ToolCall("lookup_order", {"order_id": "7"}), "Order 7 has shipped."])
    a = agent(model, [read_tool(Calls())], LoopConfig.profile("chat"))
    first = a.run_sync("Hi")
    second = a.run_sync("Where is order 7?", history=first.messages)
    assert (first.answer, second.answer) == ("Hello!", "Order 7 has shipped.")


def test_scripted_model_keeps_its_place_when_old_turns_are_trimmed() -> None:
    calls = Calls()

    def lookup_order(order_id: str) -> str:
        calls.enter("lookup_order", {"order_id": order_id})
        calls.leave()
        return f"order {order_id}: " + "details " * 60  # ~120 tokens per observation

    script = [ToolCall("lookup_order", {"order_id": str(i)}) for i in range(1, 6)] + ["All five have shipped."]
    config = LoopConfig.profile("task", context_tokens=700, max_output_tokens=100)
    a = agent(ScriptedModel(script), [Tool(lookup_order, args=ORDER_SCHEMA)], config)
    result = a.run_sync("check orders 1 to 5")
    assert result.outcome is RunOutcome.COMPLETED and result.answer == "All five have shipped."
    assert [args["order_id"] for _, args in calls.log] == ["1", "2", "3", "4", "5"]
    assert any(sum(m.role == "assistant" for m in r.messages) < 5 for r in a.model.requests[5:])  # it did trim
