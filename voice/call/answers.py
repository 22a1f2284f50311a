"""Reading a caller's answer to a confirmation question. Only a clear yes to the question asked approves.

`read_answer(text, context)` sorts an answer into one of six kinds, each with the reason in words:

- YES: an answer every word of which the approval grammar accounts for (`voice.call._yes_grammar`): affirmatives
  and courtesies from closed sets, and the pending call's own words and values ("yes, cancel it" for a
  cancellation, "yes, the $20 on 4567"), no value, day or time the question did not hold;
- NO: a refusal ("no", "don't", "stop", "wait");
- CHANGE: agreement or refusal with a change ("yes, but make it $30", "no, Friday", "sure, for Friday instead"),
  or a new request: it goes back to the model, which proposes a new call that is confirmed afresh;
- QUESTION: anything asked ("how much?", "which order?", "say that again?"): answered, then asked again;
- ECHO: the agent's own question heard back (its words, no yes of the caller's own): ignored;
- UNCLEAR: the rest, backchannels ("mhm", "fine"), doubt ("I'm not sure") and a yes with a word left over ("yes, I
  believe so") included: asked again, narrower.

Declining is the safe error: whatever is not clearly a yes does not approve. The agent's own lines heard back (runs
of its words in its order) are an echo, and a yes inside them is not the caller's. The word lists are English (the
only language shipped); the held-out answer sets that measure them are in tests/data/approval_sets/.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from loop.locale import en
from voice.call._answer_values import AnswerValues, restates
from voice.call._yes_grammar import Own, YesGrammar, plain, stem


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
_GRAMMAR = YesGrammar.of(en)
_FILLERS = set(en.FILLERS)
_VALUES = AnswerValues(en)
_SHORT_FORMS = {**en.ABBREVIATIONS, **{long: (short,) for short, longs in en.ABBREVIATIONS.items() for long in longs}}
_values = _VALUES.values


def words_of(text: str) -> list[str]:
    """Lower-case words with digits joined ("$20" -> "20", "4 5 6 7" stays four words)."""
    text = text.lower().replace("\u2019", "'").replace("-", " ")
    return re.findall(r"[a-z0-9']+(?:\.\d+)?", text)


def _normal(text: str) -> str:
    return " ".join(words_of(text))


_FRAME_WORDS = set(words_of(en.CONFIRM.format(action="")))  # "just to confirm": the agent's, not the action's


@dataclass
class AnswerContext:
    """What the caller is answering: the agent's words (question and re-asks), the pending call's values and the
    verbs that name its action ("cancel" for cancel_booking)."""

    said: list[str] = field(default_factory=list)
    values: set[str] = field(default_factory=set)
    actions: set[str] = field(default_factory=set)
    others: set[str] = field(default_factory=set)  # words naming the agent's other tools ("address", "transfer")
    own: Own | None = None  # the pending call's own words, which a yes may restate (`_yes_grammar`)

    @classmethod
    def of(cls, question: str, arguments: dict[str, Any] | None = None, action_words: Iterable[str] = (),
           other_tools: Iterable[str] = ()) -> AnswerContext:
        values: set[str] = set()
        for value in (arguments or {}).values():
            values |= _values(str(value))
        mine = set(words_of(question))
        others = {w for name in other_tools for w in words_of(name.replace("_", " "))
                  if len(w) > 3 and w not in mine and w not in _FILLERS and not _YES.fullmatch(w)}
        actions = {w.lower() for w in action_words if len(w) > 2}
        ctx = cls([question], values | _values(question), actions | {stem(w) for w in actions}, others)
        ctx.own = _own_words(question, arguments or {}, actions, ctx.values)
        return ctx

    def agent_words(self) -> set[str]:
        return {w for line in self.said for w in words_of(line)}


def _own_words(question: str, arguments: dict[str, Any], actions: set[str], values: set[str]) -> Own:
    """What a yes may restate of the pending call: its values' words exactly, the rest of the question, its
    argument names and verbs by stem, "my" for the question's "your", the money's unit, and its numbers."""
    exact = {plain(w) for value in arguments.values() for w in words_of(str(value))}
    said = [plain(w) for w in words_of(question) if w not in _FRAME_WORDS]
    exact |= {other for w in [*exact, *said] for other in _SHORT_FORMS.get(w, ())}
    said += sorted(actions)
    said += [mine for w in said for mine in en.OWN_WORDS.get(w, ())]
    if "$" in question:
        said += list(en.MONEY_WORDS)

    return Own(frozenset(exact), frozenset(stem(w) for w in said if w not in exact), frozenset(map(stem, actions)),
               lambda span: restates(span, values, _VALUES))


_NOTHING_OWN = Own(frozenset(), frozenset(), frozenset(), lambda _span: False)


def read_answer(text: str, context: AnswerContext | None = None) -> Reading:
    """What the caller's `text` says to the pending question (see the module docstring for the kinds)."""
    ctx = context or AnswerContext()
    raw = text.strip()
    norm = _normal(raw)
    if not norm:
        return Reading(Answer.UNCLEAR, "nothing was said")
    heard_back = _heard_back(norm, ctx)
    if _is_echo(norm, ctx, heard_back):
        return Reading(Answer.ECHO, "the agent's own words heard back")
    affirms, left = _GRAMMAR.account(words_of(raw), ctx.own or _NOTHING_OWN, heard_back)
    new = sorted(_values(raw) - ctx.values)
    change = next((m for m in _CHANGE.finditer(norm) if stem(m.group().split()[0]) not in ctx.actions), None)
    # numbers are the grammar's (each run read every way it can be meant); a day or a time must be the question's
    retimed = _VALUES.typed(_VALUES.cardinals(raw)) - ctx.values
    if affirms and not left and not retimed and not change and not raw.rstrip(" .\"'").endswith("?"):
        return Reading(Answer.YES, f"a clear yes ({', '.join(affirms)})")
    if change:
        return Reading(Answer.CHANGE, f"asks for a change ({change.group()!r})")
    if why := _asks(raw, norm):
        return Reading(Answer.QUESTION, why)
    if _UNSURE.search(norm):
        return Reading(Answer.UNCLEAR, "not sure yet")
    if new:
        return Reading(Answer.CHANGE, f"says a value the question did not hold ({', '.join(new)})")
    if (m := _BUT.search(norm)) and set(words_of(m["rest"])) - _FILLERS:
        return Reading(Answer.CHANGE, f"a 'but' with more after it ({m['rest'].strip()!r})")
    if m:
        return Reading(Answer.UNCLEAR, "a 'but' with nothing after it yet")
    return _not_a_clear_yes(norm, ctx, left, _names(raw, left))


def _not_a_clear_yes(norm: str, ctx: AnswerContext, left: list[str], names: list[str]) -> Reading:
    """An answer the grammar did not take for a yes (`left`: its words no closed set or pending value accounts
    for): a no, a change, or unclear, and why."""
    plain = _YES_IDIOMS.sub(" yes ", norm)
    words = words_of(plain)
    negated = {m.group() for m in _NO.finditer(plain)} - ctx.actions
    yes = [m.group() for m in _YES.finditer(plain)]
    if names and (yes or negated):  # "yes, for Max", "no, Maria Lopez": a name the question did not hold
        return Reading(Answer.CHANGE, f"names what the question did not ({', '.join(names)})")
    if negated:
        return Reading(Answer.NO, f"a refusal ({', '.join(sorted(negated))})")
    if m := _HESITATION.search(plain) or _HEDGE.search(plain):
        return Reading(Answer.UNCLEAR, f"hesitates or hedges ({m.group()!r})")
    if others := sorted(set(words) & ctx.others):  # "yes, and update my address": more than this call
        return Reading(Answer.CHANGE, f"asks for something else as well ({', '.join(others)})")
    if _REQUEST.search(norm):
        return Reading(Answer.CHANGE, "a new request")
    if yes:
        return Reading(Answer.UNCLEAR, f"a yes with words it does not account for ({' '.join(left)})")
    if _WEAK.search(plain):
        return Reading(Answer.UNCLEAR, "a backchannel, not a yes")
    return Reading(Answer.UNCLEAR, "no yes or no in it")


def _names(raw: str, left: list[str]) -> list[str]:
    """Words left over that Whisper wrote as names: capitalised, not the first of a sentence, not "I"."""
    starts = {m.group(1) for m in re.finditer(r"(?:^|[.!?]\s+)[\"']?([A-Za-z']+)", raw)}
    return [w for w in left if w[:1].isupper() and w not in starts and not w.startswith("I'") and w != "I"]


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


def _heard_back(norm: str, ctx: AnswerContext) -> set[int]:
    """The answer's words that are runs of two or more words the agent said in that order ("say yes or no",
    "refund $20 on order 4567"): what the caller's microphone may have picked up of the agent's own voice."""
    words, lines = norm.split(), [f" {_normal(line)} " for line in ctx.said]
    covered: set[int] = set()
    i = 0
    while i < len(words):
        n = 1
        while i + n < len(words) and any(f" {' '.join(words[i:i + n + 1])} " in line for line in lines):
            n += 1
        covered |= set(range(i, i + n)) if n >= 2 else set()
        i += n
    return covered


def _is_echo(norm: str, ctx: AnswerContext, heard_back: set[int]) -> bool:
    """The agent's own lines heard back: (nearly) all the answer is `heard_back`, and no yes of the caller's own
    stands outside it ("yes, refund $20 on order 4567" restates). "Just to confirm" is never the caller's."""
    if not ctx.said:
        return False
    if "just to confirm" in norm:
        return True
    words = norm.split()
    if len(words) < 2 or any(_GRAMMAR.affirms(w) for i, w in enumerate(words) if i not in heard_back):
        return False
    agent = ctx.agent_words() | ctx.values  # or its words out of order, as a transcript of a half-heard line
    return max(len(heard_back), sum(w in agent for w in words)) >= 0.8 * len(words)


def classify_answer(text: str, context: AnswerContext | None = None) -> Answer:
    """The kind of answer `text` is (see `read_answer`, which also says why)."""
    return read_answer(text, context).answer
