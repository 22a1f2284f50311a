"""transcript.txt tells each thing once: a run's reply said after a declined write is not written again as the run's
answer (it had been: "Sorry, what would you like me to change?" twice)."""

from __future__ import annotations

from voice.testing.scripted_call import transcript_lines


def test_a_reply_after_a_declined_write_is_written_once() -> None:
    trace = [
        {"t": 19.4, "kind": "caller_turn_ended", "text": "Actually make it thirsty."},
        {"t": 19.4, "kind": "loop.run_finished", "outcome": "APPROVAL_DENIED", "answer": "",
         "reason": "book_delivery was not done: the caller asked for a change"},
        {"t": 19.4, "kind": "agent_said", "part": "reply", "text": "Sorry,"},
        {"t": 19.4, "kind": "agent_said", "part": "reply", "text": "what would you like me to change?"},
        {"t": 19.4, "kind": "loop.run_finished", "outcome": "COMPLETED",
         "answer": "Sorry, what would you like me to change?", "reason": "the model gave a final answer"},
        {"t": 25.0, "kind": "caller_turn_ended", "text": "Thursday."},
        {"t": 25.5, "kind": "agent_said", "part": "reply", "text": "Okay."},
        {"t": 25.5, "kind": "loop.run_finished", "outcome": "COMPLETED", "answer": "Okay.", "reason": "answered"},
    ]
    said = [line.split("agent:", 1)[1].strip() for line in transcript_lines(trace) if "agent:" in line]
    assert said == ["Sorry,", "what would you like me to change?", "Okay."]
