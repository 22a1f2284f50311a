"""`Tool(answers=True)`: when a batch of such tools all ran fine, their results are said at once as the answer; the
model is still asked for a next action, but its words are never said (the loop stops reading at the first one).
Anything else (a failure, a refusal, another tool in the batch) goes back to the model as usual."""

from __future__ import annotations

from dataclasses import replace

from loop import EventKind, LoopConfig, RunOutcome, ScriptedModel, Tool, ToolCall
from loop.store.journal import Event
from tests.helpers import ORDER_SCHEMA, Calls, agent, read_tool, transcript, write_tool


def _answering(tool: Tool) -> Tool:
    return replace(tool, answers=True)


def _status(order_id: str) -> str:
    if order_id == "0":
        raise LookupError("the order database is down")
    return f"Order {order_id} has shipped."


STATUS = Tool(_status, name="order_status", description="status", args=ORDER_SCHEMA, answers=True)


def test_an_answering_read_is_said_and_the_models_words_after_it_are_not() -> None:
    model = ScriptedModel([ToolCall("order_status", {"order_id": "42"}), "never said", "next turn"])
    seen: list[Event] = []
    result = agent(model, [STATUS], listeners=[seen.append]).run_sync("Where is order 42?")
    assert transcript(result) == """\
user: Where is order 42?
assistant: -> order_status({"order_id":"42"})
tool[order_status]: Order 42 has shipped.
assistant: Order 42 has shipped.
=> COMPLETED: the tools' results were the answer"""
    assert result.answer == "Order 42 has shipped."
    assert [r.words_spoken for r in model.requests] == [False, True]
    assert [e.payload["text"] for e in seen if e.kind == EventKind.TOOL_ANSWER] == ["Order 42 has shipped."]
    assert not [e for e in seen if e.kind == EventKind.MODEL_DELTA and e.payload["type"] == "text"]
    assert model.line_for(result.messages) == 2  # the unsaid words took their line: the next turn gets the next


def test_the_same_calls_again_after_their_words_were_said_end_the_run_as_answered() -> None:
    again = ToolCall("order_status", {"order_id": "42"})
    model = ScriptedModel([again, ToolCall("order_status", {"order_id": "42"}), "never said"])
    result = agent(model, [STATUS]).run_sync("Where is order 42?")  # a small model repeats what it just did
    assert result.outcome is RunOutcome.COMPLETED and result.answer == "Order 42 has shipped."
    assert result.reason == "the tools' results were the answer"


def test_the_write_just_made_asked_for_again_is_not_made_twice_and_its_result_is_the_answer() -> None:
    """A small model asks again for the very write it just made: the write is made once, and the run ends on its
    result in plain words (not "I did it, but I couldn't finish the rest")."""
    calls = Calls()
    refund = write_tool(calls, "refund")  # answers=False: its words are not meant to be said as they stand
    again = ToolCall("refund", {"order_id": "9"})
    seen: list[Event] = []
    result = agent(ScriptedModel([again, ToolCall("refund", {"order_id": "9"}), "never said"]), [refund],
                   LoopConfig.profile("voice"), approver=lambda call, verdict: True,
                   listeners=[seen.append]).run_sync("Refund order 9")
    assert result.outcome is RunOutcome.COMPLETED and result.answer == "refund done for 9"
    assert [n for n, _ in calls.log] == ["refund"]
    assert [e.payload["text"] for e in seen if e.kind == EventKind.TOOL_ANSWER] == ["refund done for 9"]


def test_the_same_calls_again_with_a_result_no_caller_may_hear_still_stop_as_repeating() -> None:
    json_status = Tool(lambda order_id: {"order": order_id, "state": "shipped"}, name="order_status",
                       description="status", args=ORDER_SCHEMA)
    again = ToolCall("order_status", {"order_id": "42"})
    result = agent(ScriptedModel([again, ToolCall("order_status", {"order_id": "42"}), "x"]), [json_status],
                   LoopConfig.profile("voice")).run_sync("Where is order 42?")
    assert result.outcome is RunOutcome.LOOP_DETECTED


def test_a_batch_of_answering_reads_is_answered_in_proposal_order() -> None:
    batch = [ToolCall("order_status", {"order_id": "7"}), ToolCall("order_status", {"order_id": "8"})]
    result = agent(ScriptedModel([batch, "ok"]), [STATUS]).run_sync("7 and 8?")
    assert result.answer == "Order 7 has shipped. Order 8 has shipped."


def test_after_an_answer_the_model_may_still_act_and_the_last_words_said_are_the_answer() -> None:
    calls = Calls()
    refund = _answering(write_tool(calls, "refund"))
    model = ScriptedModel([ToolCall("order_status", {"order_id": "9"}), ToolCall("refund", {"order_id": "9"}), "x"])
    seen: list[Event] = []
    result = agent(model, [STATUS, refund], LoopConfig.profile("voice"), approver=lambda call, verdict: True,
                   listeners=[seen.append]).run_sync("Refund my whole order 9")
    said = [e.payload["text"] for e in seen if e.kind == EventKind.TOOL_ANSWER]
    assert said == ["Order 9 has shipped.", "refund done for 9"] and result.answer == "refund done for 9"
    assert [n for n, _ in calls.log] == ["refund"]


def test_a_failed_answering_tool_goes_back_to_the_model() -> None:
    model = ScriptedModel([ToolCall("order_status", {"order_id": "0"}), "Sorry, I can't look that up right now."])
    result = agent(model, [STATUS]).run_sync("Where is order 0?")
    assert result.outcome is RunOutcome.COMPLETED and result.answer == "Sorry, I can't look that up right now."
    assert len(model.requests) == 2


def test_a_batch_with_a_tool_that_does_not_answer_goes_back_to_the_model() -> None:
    calls = Calls()
    batch = [ToolCall("order_status", {"order_id": "7"}), ToolCall("lookup_order", {"order_id": "8"})]
    result = agent(ScriptedModel([batch, "Both found."]), [STATUS, read_tool(calls)]).run_sync("7 and 8?")
    assert result.answer == "Both found."


def test_a_declined_answering_mutation_goes_back_to_the_model() -> None:
    refund = _answering(write_tool(Calls(), "refund"))
    model = ScriptedModel([ToolCall("refund", {"order_id": "9"}), "Okay, nothing was refunded."])
    config = LoopConfig.profile("voice")
    result = agent(model, [refund], config, approver=lambda call, verdict: False).run_sync("refund 9")
    assert result.answer == "Okay, nothing was refunded."
    assert [o.call.name for o in result.trajectory] == []


def test_an_approved_answering_mutation_is_the_answer() -> None:
    calls = Calls()
    refund = _answering(write_tool(calls, "refund"))
    model = ScriptedModel([ToolCall("refund", {"order_id": "9"}), "never said"])
    config = LoopConfig.profile("voice")
    result = agent(model, [refund], config, approver=lambda call, verdict: True).run_sync("refund 9")
    assert result.answer == "refund done for 9" and [n for n, _ in calls.log] == ["refund"]
