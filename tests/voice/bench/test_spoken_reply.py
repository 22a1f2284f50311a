"""voice.bench.reply_eval's spoken reply: what the caller hears from one run, in the agent's language."""

from __future__ import annotations

from loop import RunOutcome, locale
from voice.bench.reply_eval import spoken_reply


def test_a_run_that_did_not_answer_is_said_in_the_agents_language() -> None:
    es = locale.get("es")
    assert spoken_reply(RunOutcome.COMPLETED, "Claro.", es) == "Claro."
    assert spoken_reply(RunOutcome.ESCALATED, "", es) == es.HAND_OVER
    assert spoken_reply(RunOutcome.ESCALATED, "") == locale.DEFAULT_WORDS.HAND_OVER
    assert spoken_reply(RunOutcome.TOOL_FAILURE, "") == locale.DEFAULT_WORDS.COULD_NOT_FINISH
