"""Reading a caller's answer to a confirmation question. Only a clear yes to the question asked approves.

`read_answer(text, context)` sorts an answer into one of six kinds, each with the reason in words:

- YES: an unambiguous affirmative ("yes", "go ahead", "yes, cancel it" for a cancellation), nothing added;
- NO: a refusal ("no", "don't", "stop", "wait");
- CHANGE: agreement or refusal with a change ("yes, but make it $30", "no, Friday", "sure, for Friday instead"),
  or a new request: it goes back to the model, which proposes a new call that is confirmed afresh;
- QUESTION: anything asked ("how much?", "which order?", "say that again?"): answered, then asked again;
- ECHO: the agent's own question heard back (its words, no yes of the caller's own): ignored;
- UNCLEAR: the rest, backchannels ("mhm", "fine") and doubt ("I'm not sure") included: asked again.

Declining is the safe error: whatever is not clearly a yes does not approve. The agent's own lines during an
approval never hold a yes word (`voice.call.approval_dialog` checks this), so an echo cannot approve either.
The word lists are English (the only language shipped).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from loop.grounding.arguments import id_candidates, number_candidates
from loop.locale import en


class Answer(StrEnum):
    YES = "yes"
    NO = "no"
    CHANGE = "change"
    QUESTION = "question"
    ECHO = "echo"
    UNCLEAR = "unclear"


@dataclass(frozen=True)
class Reading:
    answer: Answer
    why: str  # in words, for the trace ("a question", "new value 30")


def _phrases(*items: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(items) + r")\b")


_YES = _phrases(*en.ANSWER_YES)
_YES_IDIOMS = _phrases(*en.ANSWER_YES_IDIOMS)
_WEAK = _phrases(*en.ANSWER_WEAK)
_HESITATION = _phrases(*en.ANSWER_HESITATION)
_HEDGE = _phrases(*en.ANSWER_HEDGE)
_UNSURE = _phrases(*en.ANSWER_UNSURE)
_NO = _phrases(*en.ANSWER_NO)
_CHANGE = _phrases(*en.ANSWER_CHANGE)
_REQUEST = _phrases(*en.ANSWER_REQUEST)
_REPEAT = _phrases(*en.ANSWER_REPEAT)
_WH = set(en.WH)
_AUX = set(en.AUX)
_SUBJECTS = set(en.SUBJECTS)
_BUT = re.compile(r"\bbut\b(?P<rest>.*)")
_FILLERS = set(en.FILLERS)  # what a yes may carry without saying anything more
_WEEKDAYS, _MONTHS = en.WEEKDAYS, en.MONTHS
_TIME_WORDS = _phrases(*_WEEKDAYS, *(m for m in _MONTHS if m not in en.AMBIGUOUS_MONTHS), *en.TIME_WORDS)
_NOT_A_NUMBER = re.compile(r"\b(?:(?:the|that|this|which|no|every|any) one|one (?:moment|sec(?:ond)?|minute|thing))\b")


def words_of(text: str) -> list[str]:
    """Lower-case words with digits joined ("$20" -> "20", "4 5 6 7" stays four words)."""
    text = text.lower().replace("\u2019", "'").replace("-", " ")
    return re.findall(r"[a-z0-9']+(?:\.\d+)?", text)


def _normal(text: str) -> str:
    return " ".join(words_of(text))


@dataclass
class AnswerContext:
    """What the caller is answering: the agent's words (question and re-asks), the pending call's values and the
    verbs that name its action ("cancel" for cancel_booking)."""

    said: list[str] = field(default_factory=list)
    values: set[str] = field(default_factory=set)
    actions: set[str] = field(default_factory=set)
    others: set[str] = field(default_factory=set)  # words naming the agent's other tools ("address", "transfer")

    @classmethod
    def of(cls, question: str, arguments: dict[str, Any] | None = None, action_words: Iterable[str] = (),
           other_tools: Iterable[str] = ()) -> AnswerContext:
        values: set[str] = set()
        for value in (arguments or {}).values():
            values |= _values(str(value))
        mine = set(words_of(question))
        others = {w for name in other_tools for w in words_of(name.replace("_", " "))
                  if len(w) > 3 and w not in mine and w not in _FILLERS and not _YES.fullmatch(w)}
        return cls([question], values | _values(question), {w.lower() for w in action_words if len(w) > 2}, others)

    def agent_words(self) -> set[str]:
        return {w for line in self.said for w in words_of(line)}


def _values(text: str) -> set[str]:
    """Numbers, ids, days and times in `text`, normalised so "twenty dollars" and "$20" compare equal."""
    cleaned = _NOT_A_NUMBER.sub(" ", text.lower())
    found = {f"{n:g}" for n in number_candidates(cleaned)} | {i.lower() for i in id_candidates(cleaned)}
    found |= {f"{float(m):g}" for m in re.findall(r"\d+(?:\.\d+)?", cleaned)}
    return found | {m.group() for m in _TIME_WORDS.finditer(cleaned)}


def read_answer(text: str, context: AnswerContext | None = None) -> Reading:
    """What the caller's `text` says to the pending question (see the module docstring for the kinds)."""
    ctx = context or AnswerContext()
    raw = text.strip()
    norm = _normal(raw)
    if not norm:
        return Reading(Answer.UNCLEAR, "nothing was said")
    if _is_echo(norm, ctx):
        return Reading(Answer.ECHO, "the agent's own words heard back")
    if m := _CHANGE.search(norm):
        return Reading(Answer.CHANGE, f"asks for a change ({m.group()!r})")
    if why := _asks(raw, norm):
        return Reading(Answer.QUESTION, why)
    if _UNSURE.search(norm):
        return Reading(Answer.UNCLEAR, "not sure yet")
    if new := sorted(_values(raw) - ctx.values):
        return Reading(Answer.CHANGE, f"says a value the question did not hold ({', '.join(new)})")
    if (m := _BUT.search(norm)) and set(words_of(m["rest"])) - _FILLERS:
        return Reading(Answer.CHANGE, f"a 'but' with more after it ({m['rest'].strip()!r})")
    if m:
        return Reading(Answer.UNCLEAR, "a 'but' with nothing after it yet")
    return _yes_or_no(norm, ctx)


def _yes_or_no(norm: str, ctx: AnswerContext) -> Reading:
    plain = _YES_IDIOMS.sub(" yes ", norm)
    words, agent = words_of(plain), ctx.agent_words()
    negated = {m.group() for m in _NO.finditer(plain)}
    # the tool's own verb is a yes ("yes, cancel it"), with a word of the caller's own beside it (not an echo)
    actions = {w for w in words if w in ctx.actions} if set(words) - agent else set()
    if negated - actions:
        return Reading(Answer.NO, f"a refusal ({', '.join(sorted(negated - actions))})")
    if m := _HESITATION.search(plain) or _HEDGE.search(plain):
        return Reading(Answer.UNCLEAR, f"hesitates or hedges ({m.group()!r})")
    if others := sorted(set(words) & ctx.others):  # "yes, and update my address": more than this call
        return Reading(Answer.CHANGE, f"asks for something else as well ({', '.join(others)})")
    # a yes word the agent itself said ("just to confirm") may be its own voice heard back: it does not count
    yes = [m.group() for m in _YES.finditer(plain) if not set(m.group().split()) <= agent] + sorted(actions)
    extra = [w for w in words if w not in _FILLERS and w not in ctx.actions and w not in agent
             and not _YES.fullmatch(w)]
    if yes and len(extra) <= 2:
        return Reading(Answer.YES, f"a clear yes ({', '.join(yes)})")
    if _REQUEST.search(norm):
        return Reading(Answer.CHANGE, "a new request")
    if yes:
        return Reading(Answer.UNCLEAR, f"a yes with more in it ({' '.join(extra)})")
    if _WEAK.search(plain):
        return Reading(Answer.UNCLEAR, "a backchannel, not a yes")
    return Reading(Answer.UNCLEAR, "no yes or no in it")


def _asks(raw: str, norm: str) -> str:
    """Why the answer is a question, or ""."""
    if raw.rstrip(" .\"'").endswith("?"):
        return "a question"
    if _REPEAT.search(norm):
        return "asks to hear it again"
    if (wh := [w for w in words_of(raw) if w in _WH]) and "why not" not in norm:
        return f"a question ({wh[0]} ...)"
    for clause in re.split(r"[,.;:!?]+", raw.lower()):
        first = words_of(clause)[:2]
        if len(first) == 2 and first[0] in _AUX and first[1] in _SUBJECTS and not (
                first[0] == "do" and first[1] in ("it", "that")):
            return f"a question ({' '.join(first)} ...)"
    return ""


def _is_echo(norm: str, ctx: AnswerContext) -> bool:
    """The agent's own question picked up by the caller's microphone: its words, and no yes of the caller's own
    (the agent's lines hold no yes word). "Just to confirm" is never the caller's."""
    if not ctx.said:
        return False
    if "just to confirm" in norm:
        return True
    words = norm.split()
    if len(words) < 2:
        return False
    agent = ctx.agent_words() | ctx.values
    if any(_YES.fullmatch(w) and w not in agent for w in words):
        return False
    return sum(w in agent for w in words) >= 0.8 * len(words)


def classify_answer(text: str, context: AnswerContext | None = None) -> Answer:
    """The kind of answer `text` is (see `read_answer`, which also says why)."""
    return read_answer(text, context).answer
