"""The conversation around one pending approval, without I/O: what the agent asks, how each answer settles it.

Shared by the call core (`voice/call/_agent_side.py`) and the LiveKit adapter (`voice/livekit/llm.py`), so both
ask the same way and approve on the same evidence. The rules (`voice.call.answers`):

- only a clear yes, said after the whole question was heard, approves: every word of it accounted for
  (`voice.call._yes_grammar`); a yes over the question asks it again;
- a yes is held (`Step.hold`) until the caller has stayed quiet for a moment: speech that resumes before the
  driver commits it is read again together with the yes ("Yes." + "but make it thirty" is a change);
- a question is answered from the pending call itself ("I'm asking you this: shall I refund $20 on order 4567?") and
  asked again; an unclear answer is asked again once, narrower ("... Please say yes or no", and the keypad on a
  phone); a second unclear answer, too many questions or silence until the timeout decline and say so: "I haven't
  done that: I didn't hear a yes.";
- a change ("yes, but make it $30") declines the pending call and the caller's words go back to the model, which
  proposes the new call, confirmed afresh;
- the agent's own question heard back (an echo) and backchannels over the question change nothing.

No line the agent says here approves anything when heard back: the narrow re-ask's "say yes or no" is read as the
agent's own words (`voice.call.answers`).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from loop import ApprovalAnswer, ToolCall
from loop.locale import DEFAULT_WORDS
from loop.tools import Tool
from voice.call.answers import Answer, AnswerContext, Reading, read_answer
from voice.call.approval import action_phrase, confirmation_question
from voice.speech.spoken import SpokenForm

# English, for the tests; a dialog says its own language's (`words`)
MAX_UNCLEAR = 2  # the second unclear answer declines
MAX_QUESTIONS = 3  # questions answered before the agent stops asking


@dataclass(frozen=True)
class Step:
    """What to do after one answer: settle the approval (and say `say`), or say `say` and keep waiting.
    `resume`: the answer was a backchannel over the question, which goes on playing. `rerun`: after settling,
    these words are the caller's next turn (a change). `hold`: an approval the driver commits only once the caller
    has stayed quiet a moment (`ApprovalDialog.hear` reads what they say meanwhile together with it)."""

    settle: ApprovalAnswer | None = None
    hold: bool = False
    say: str = ""
    resume: bool = False
    rerun: str = ""
    reading: Reading | None = None


class ApprovalDialog:
    """One pending approval: the question, the answers heard so far, and the rules above."""

    def __init__(self, call: ToolCall, tool: Tool | None = None, keypad: bool = False,
                 other_tools: tuple[str, ...] = (), words: ModuleType = DEFAULT_WORDS) -> None:
        self.call, self.tool, self.words = call, tool, words  # `words`: the language's sentences (`loop.locale`)
        self.action = action_phrase(call, tool, words)
        self.question = confirmation_question(call, tool, words)
        verbs = {self.action.split()[0]} if self.action else set()
        self.context = AnswerContext.of(self.question, call.arguments, verbs | set(call.name.split("_")[:1]),
                                        [name for name in other_tools if name != call.name], words)
        self.spoken = SpokenForm(words.LANGUAGE)
        self.context.said = [self.spoken.speak(self.question)]  # beside the written form: an echo may be either
        self.unclear = self.questions = 0
        self.held = ""  # a yes not committed yet: the caller may be going on
        self.keypad = keypad
        self.hint = self._said(words.KEYS_HINT) if keypad else ""  # said after the question, on a phone

    def _said(self, line: str) -> str:
        self.context.said += [line, self.spoken.speak(line)]  # an echo comes back in either form
        return line

    def settled_by(self, text: str) -> bool:
        """Whether `text` is a clear yes or no to the question: a whole answer, which the turn may end on."""
        return read_answer(text, self.context).answer in (Answer.YES, Answer.NO)

    def hear(self, text: str, *, over_question: bool = False) -> Step:
        """The caller's whole turn while the approval waits. `over_question`: they began before the question had
        been heard to its end."""
        if self.held:  # the caller went on after their yes: the whole answer is read again
            text, self.held = f"{self.held} {text.strip()}", ""
        reading = read_answer(text, self.context)
        match reading.answer:
            case Answer.YES if over_question:
                return Step(say=self._said(self.words.ASK_AGAIN.format(action=self.action)), reading=reading)
            case Answer.YES:
                self.held = text.strip()
                return Step(settle=ApprovalAnswer(True, "the caller said yes"), hold=True, reading=reading)
            case Answer.NO:
                return Step(settle=ApprovalAnswer(False, "the caller said no", end_run=True), say=self.words.SAID_NO,
                            reading=reading)
            case Answer.CHANGE:
                why = f"the caller asked for a change: {text.strip()!r}"
                return Step(settle=ApprovalAnswer(False, why, end_run=True), rerun=text.strip(), reading=reading)
            case Answer.QUESTION:
                self.questions += 1
                if self.questions > MAX_QUESTIONS:
                    return self._no_yes(reading, "no yes was heard after several questions")
                return Step(say=self._said(self.words.ASKING_THIS.format(action=self.action)), reading=reading)
            case Answer.ECHO:
                return Step(resume=over_question, reading=reading)
            case _ if over_question:
                return Step(resume=True, reading=reading)
        self.unclear += 1
        if self.unclear >= MAX_UNCLEAR:
            return self._no_yes(reading, "no clear yes was heard (asked twice)")
        again = self.words.UNCLEAR_ASK_AGAIN.format(action=self.action)
        return Step(say=self._said(again + (self.words.UNCLEAR_KEYS if self.keypad else "")), reading=reading)

    def key(self, digit: str) -> Step | None:
        """A key pressed on the phone while the approval waits: the two the question offered settle it."""
        if not self.hint or digit not in ("1", "2"):
            return None
        if digit == "1":
            return Step(settle=ApprovalAnswer(True, "the caller pressed 1 to confirm"))
        return Step(settle=ApprovalAnswer(False, "the caller said no (pressed 2)", end_run=True),
                    say=self.words.SAID_NO)

    def _no_yes(self, reading: Reading | None, why: str) -> Step:
        return Step(settle=ApprovalAnswer(False, why, end_run=True), say=self.words.NO_YES_HEARD, reading=reading)

    def timed_out(self) -> Step:
        """Nobody answered in time."""
        return self._no_yes(None, "no answer came before the approval timed out")

    def decided(self, approved: bool) -> Step:
        """An operator's decision over the API, whatever the caller says."""
        if approved:
            return Step(settle=ApprovalAnswer(True, "an operator approved"))
        return Step(settle=ApprovalAnswer(False, "an operator declined", end_run=True), say=self.words.NOT_APPROVED)
