"""Words the embedded model's decoding says without generating, for any agent: a batch of reads whose results are
speakable as they stand, and a question the agent's prompt answers in a quoted line that fits better than any tool.
No model needed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from loop import ScriptedModel, Tool
from loop.locale import en
from loop.models.llama.decoding import read_out
from loop.models.llama.qwen_format import present
from loop.types import Message, ModelRequest, ToolCall
from tests import plain_agents as pa
from tests.helpers import labelled
from tests.loop.grounding.test_grounding_kinds import _request


def _after_read(agent: str, said: str, call: ToolCall, result: str) -> ModelRequest:
    request = _request(agent, said)
    messages = [*request.messages, Message("assistant", "", [call]), Message("tool", result, tool_call_id=call.id)]
    return replace(request, messages=present(messages))


def test_a_speakable_read_result_is_the_reply_without_generating() -> None:
    status = ToolCall("repair_status", {"job_number": "4712"}, "c1")
    data = '{"job_number": "4712", "car": "silver Ford Focus", "status": "ready for collection"}'
    said = read_out(_after_read("garage", "Is my car ready? Job 4712.", status, data))
    assert said == "Job number 4712, car silver Ford Focus, status ready for collection."
    assert read_out(_after_read("garage", "Is job 4712 ready?", status, "Job 4712 is ready.")) == "Job 4712 is ready."
    # deeper data, a failure naming the tool, or a caller who also asked for a write not made yet: the model answers
    assert read_out(_after_read("garage", "Job 4712?", status, '{"a": {"b": {"c": 1}}}')) == ""
    assert read_out(_after_read("garage", "Job 4712?", status, "repair_status failed: timeout. Try again.")) == ""
    assert read_out(_after_read("garage", "Is job 4712 ready? If not book a service.", status, data)) == ""


def test_a_write_that_ran_is_said_in_its_own_words_and_one_that_failed_is_left_to_the_model() -> None:
    book = ToolCall("book_service", {"job_number": "4712"}, "c2")
    done = "Job 4712 is booked in for a service on Friday."
    assert read_out(_after_read("garage", "Book job 4712 in for a service.", book, done)) == done
    declined = "The user declined book_service: the caller said no. It was not done."  # shown as the truth about it
    assert read_out(_after_read("garage", "Book job 4712 in.", book, declined)) == en.NOT_DONE_SAID_NO
    cut = "book_service did not finish within 5 s, so it was cancelled before it took effect: nothing was changed."
    assert read_out(_after_read("garage", "Book job 4712 in.", book, cut)) == ""  # names the tool
    # the words the made write shares with another write ("booking" / book_room) do not hold its result back
    cancel = ToolCall("cancel_booking", {"booking_reference": "3091"}, "c3")
    gone = "Booking 3091 for Tom Hale on June 20 is cancelled."
    assert read_out(_after_read("hotel", "Please cancel my booking, 3091.", cancel, gone)) == gone
    assert read_out(_after_read("hotel", "Cancel 3091 and book me a double room.", cancel, gone)) == ""


def test_a_question_the_prompt_answers_gets_its_words_at_once_unless_a_tool_fits_as_well() -> None:
    from loop.grounding._prompt_answer import prompt_answer

    prompt = yaml.safe_load(Path("examples/hotel/agent.yaml").read_text())["system_prompt"]
    agent = pa.hotel(ScriptedModel(["ok"]))
    agent.assembler = type(agent.assembler)(prompt, list(agent.tools.values()), len, 4096)

    def answer(*said: str) -> str:
        messages = [Message("user" if i % 2 == 0 else "assistant", text) for i, text in enumerate(said)]
        return prompt_answer(agent.assembler.build(messages, 0, 96)[0])

    assert "11 a.m." in answer("What time is check-out?") and "Breakfast" in answer("Is breakfast included?")
    assert answer("Do you have a double room free from June 12 for two nights?") == ""  # a tool's question
    assert answer("Can you check my booking? The reference is 3091.") == ""  # an identifier: a tool's
    assert answer("I'd like a room.", "What date would you arrive?", "Check-out on Friday") == ""  # an answer


def test_a_word_for_the_same_thing_counts_toward_the_prompts_line() -> None:
    """"What time do you close?" meets the garage's hours line by "close" for "open" and "time" for "hours" (the
    0.5B otherwise spent ~150 ms on a reply the guard threw away for that same line); a question a tool answers
    better stays the tool's."""
    from examples.garage.workshop import Workshop
    from loop.grounding._prompt_answer import prompt_answer
    from loop.prompt import PromptAssembler

    prompt = yaml.safe_load(Path("examples/garage/agent.yaml").read_text())["system_prompt"]
    assembler = PromptAssembler(prompt, Workshop(":memory:").tools(), len, 4096)

    def answer(said: str) -> str:
        return prompt_answer(assembler.build([Message("user", said)], 0, 96)[0])

    assert answer("What time do you close on Saturday?").startswith("We're open Monday to Friday")
    assert answer("When is my car ready?") == "" and answer("How much does a service cost?") == ""
    assert answer("Can I collect my car on Saturday at 9am?") == ""


def test_a_policy_rule_without_a_reason_is_never_read_out_by_its_name() -> None:
    """A rule given no `reason:` denies as "rule receta.amoxicilina" (the trace keeps it); the model is shown a
    plain refusal, not the rule's name, which the 0.5B read aloud (the Spanish example's helper saw "Lo siento, no
    puedo hacerlo: rule receta.amoxicilina.")."""
    call = ToolCall("reserve", {"item": "amoxicilina"}, "d1")
    shown = present([Message("user", "Resérveme amoxicilina."), Message("assistant", "", [call]),
                     Message("tool", "Denied by policy (receta.amoxicilina): rule receta.amoxicilina. Do not retry; "
                                     "tell the caller.", tool_call_id="d1")])[-1].content
    assert shown == en.CANNOT_DO_PLAIN and "receta" not in shown
    given = present([Message("tool", "Denied by policy (weekend): the practice is closed at the weekend. Do not "
                                     "retry; tell the caller.", tool_call_id="d1")])[-1].content
    assert given == "Sorry, I can't do that: the practice is closed at the weekend."


@pytest.mark.parametrize(("language", "said", "tool", "lines", "answer"), [
    (row[0], *row[1].split("\t")) for row in labelled("prompt_answers.tsv")])
def test_a_lines_numbers_and_money_count_toward_it(language: str, said: str, tool: str, lines: str,
                                                  answer: str) -> None:
    """tests/data/prompt_answers.tsv: "How much does the twenty gig pack cost?" is answered by "the 20 GB pack is
    $25" (set 3's mobile line asked for a phone number and a pack instead), not by the tool that sells packs."""
    from loop import locale
    from loop.grounding._prompt_answer import prompt_answer
    from loop.prompt import PromptAssembler

    def act(day: str) -> str:
        return day

    lead = "Lo que puede decir sin herramienta" if language == "es" else "What you may tell callers without a tool"
    prompt = f"You answer the phone.\n{lead}: {'; '.join(f'{line.strip()}.' for line in lines.split(' ; '))}"
    assembler = PromptAssembler(prompt, [Tool(act, name="act", description=tool)], len, 4096)
    request = replace(assembler.build([Message("user", said)], 0, 96)[0], language=language)
    found = prompt_answer(request)
    assert found.startswith(answer) if answer != "-" else found == "", (found, locale.get(language).PRICE_ASKED)
