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
from functools import cache
from types import ModuleType
from typing import Any

from loop.grounding.arguments import same_time, time_spans_in
from loop.locale import DEFAULT_WORDS, plain, unaccented
from voice.call._answer_values import AnswerValues, restates
from voice.call._yes_grammar import Own, YesGrammar


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


@dataclass(frozen=True)
class AnswerRules:
    """One language's readers of an answer, built from its pack (`loop.locale.<lang>`): `rules_for(words)`."""

    words: ModuleType
    yes: re.Pattern[str]
    yes_idioms: re.Pattern[str]
    weak: re.Pattern[str]
    hesitation: re.Pattern[str]
    hedge: re.Pattern[str]
    unsure: re.Pattern[str]
    no: re.Pattern[str]
    change: re.Pattern[str]
    request: re.Pattern[str]
    repeat: re.Pattern[str]
    but: re.Pattern[str]
    grammar: YesGrammar
    values: AnswerValues
    short_forms: dict[str, tuple[str, ...]]
    frame_words: frozenset[str]  # "just to confirm": the agent's, not the action's
    opening: str  # those words as said: never the caller's
    fillers: frozenset[str]
    wh: frozenset[str]  # question words, auxiliaries that open a question and the subjects after them
    aux: frozenset[str]
    subjects: frozenset[str]

    def stem(self, word: str) -> str:
        return self.grammar.stem(word)


@cache
def rules_for(words: ModuleType = DEFAULT_WORDS) -> AnswerRules:
    """The answer readers of one language, built once."""
    short = {**words.ABBREVIATIONS, **{long: (s,) for s, longs in words.ABBREVIATIONS.items() for long in longs}}
    return AnswerRules(
        words, _phrases(*words.ANSWER_YES), _phrases(*words.ANSWER_YES_IDIOMS), _phrases(*words.ANSWER_WEAK),
        _phrases(*words.ANSWER_HESITATION), _phrases(*words.ANSWER_HEDGE), _phrases(*words.ANSWER_UNSURE),
        _phrases(*words.ANSWER_NO), _phrases(*words.ANSWER_CHANGE), _phrases(*words.ANSWER_REQUEST),
        _phrases(*words.ANSWER_REPEAT), re.compile(rf"\b(?:{'|'.join(words.ANSWER_BUT)})\b(?P<rest>.*)"),
        YesGrammar.of(words), AnswerValues(words), short,
        frozenset(words_of(words.CONFIRM.format(action=""))), _normal(words.CONFIRM.format(action="")),
        frozenset(words.FILLERS), frozenset(words.WH), frozenset(words.AUX), frozenset(words.SUBJECTS))


def words_of(text: str) -> list[str]:
    """Lower-case words with digits joined ("$20" -> "20", "4 5 6 7" stays four words), in any alphabet."""
    text = text.lower().replace("\u2019", "'").replace("-", " ")
    return re.findall(r"(?:[^\W_]|')+(?:\.\d+)?", text)


def _normal(text: str) -> str:
    return unaccented(" ".join(words_of(text)))


@dataclass
class AnswerContext:
    """What the caller is answering: the agent's words (question and re-asks), the pending call's values and the
    verbs that name its action ("cancel" for cancel_booking), in the call's language (`rules`)."""

    said: list[str] = field(default_factory=list)
    values: set[str] = field(default_factory=set)
    actions: set[str] = field(default_factory=set)
    others: set[str] = field(default_factory=set)  # words naming the agent's other tools ("address", "transfer")
    own: Own | None = None  # the pending call's own words, which a yes may restate (`_yes_grammar`)
    rules: AnswerRules = field(default_factory=rules_for)

    @classmethod
    def of(cls, question: str, arguments: dict[str, Any] | None = None, action_words: Iterable[str] = (),
           other_tools: Iterable[str] = (), words: ModuleType = DEFAULT_WORDS) -> AnswerContext:
        rules = rules_for(words)
        values: set[str] = set()
        for value in (arguments or {}).values():
            values |= rules.values.values(str(value))
        mine = set(words_of(question))
        others = {w for name in other_tools for w in words_of(name.replace("_", " "))
                  if len(w) > 3 and w not in mine and w not in rules.fillers and not rules.yes.fullmatch(w)}
        actions = {w.lower() for w in action_words if len(w) > 2}
        ctx = cls([question], values | rules.values.values(question), actions | {rules.stem(w) for w in actions},
                  others, rules=rules)
        ctx.own = _own_words(question, arguments or {}, actions, ctx.values, rules)
        return ctx

    def agent_words(self) -> set[str]:
        return {w for line in self.said for w in words_of(line)}


def _own_words(question: str, arguments: dict[str, Any], actions: set[str], values: set[str],
               rules: AnswerRules) -> Own:
    """What a yes may restate of the pending call: its values' words exactly, the rest of the question, its
    argument names and verbs by stem, "my" for the question's "your", the money's unit, and its numbers."""
    words = rules.words
    exact = {plain(w) for value in arguments.values() for w in words_of(str(value))}
    said = [plain(w) for w in words_of(question) if w not in rules.frame_words]
    exact |= {other for w in [*exact, *said] for other in rules.short_forms.get(w, ())}
    said += sorted(actions)
    said += [mine for w in said for mine in words.OWN_WORDS.get(w, ())]
    if "$" in question:
        said += list(words.MONEY_WORDS)
    said += [plain(n) for symbol, names in words.MONEY_SYMBOLS.items() if symbol != "$" and symbol in question
             for n in names]  # "£414": "pounds"
    stem = rules.stem
    return Own(frozenset(exact), frozenset(stem(w) for w in said if w not in exact), frozenset(map(stem, actions)),
               lambda span: restates(span, values, rules.values))


_NOTHING_OWN = Own(frozenset(), frozenset(), frozenset(), lambda _span: False)


def read_answer(text: str, context: AnswerContext | None = None) -> Reading:
    """What the caller's `text` says to the pending question (see the module docstring for the kinds)."""
    ctx = context or AnswerContext()
    rules = ctx.rules
    raw, other_times = _times_as_asked(text.strip(), ctx)
    norm = _normal(raw)
    if not norm:
        return Reading(Answer.UNCLEAR, "nothing was said")
    heard_back = _heard_back(norm, ctx)
    if _is_echo(norm, ctx, heard_back):
        return Reading(Answer.ECHO, "the agent's own words heard back")
    affirms, left = rules.grammar.account(words_of(raw), ctx.own or _NOTHING_OWN, heard_back)
    new = sorted(rules.values.values(raw) - ctx.values | set(other_times))
    refusals = [m.span() for m in rules.no.finditer(norm)]  # "mejor no" is a no, though "mejor" may change
    change = next((m for m in rules.change.finditer(norm) if rules.stem(m.group().split()[0]) not in ctx.actions
                   and not _restates_a_value(m.group(), ctx)
                   and not any(a <= m.start() and m.end() <= b for a, b in refusals)), None)
    # numbers are the grammar's (each run read every way it can be meant); a day or a time must be the question's
    retimed = rules.values.typed(rules.values.cardinals(raw)) - ctx.values | set(other_times)
    if affirms and not left and not retimed and not change and not _asked(raw):
        return Reading(Answer.YES, f"a clear yes ({', '.join(affirms)})")
    if change:
        return Reading(Answer.CHANGE, f"asks for a change ({change.group()!r})")
    if why := _asks(raw, norm, rules):
        return Reading(Answer.QUESTION, why)
    if rules.unsure.search(norm):
        return Reading(Answer.UNCLEAR, "not sure yet")
    if new:
        return Reading(Answer.CHANGE, f"says a value the question did not hold ({', '.join(new)})")
    if (m := rules.but.search(norm)) and set(words_of(m["rest"])) - rules.fillers:
        return Reading(Answer.CHANGE, f"a {m.group().split()[0]!r} with more after it ({m['rest'].strip()!r})")
    if m:
        return Reading(Answer.UNCLEAR, f"a {m.group().split()[0]!r} with nothing after it yet")
    return _not_a_clear_yes(norm, ctx, left, _names(raw, left, rules.words))


def _times_as_asked(raw: str, ctx: AnswerContext) -> tuple[str, list[str]]:
    """Times of day the answer says: the question's own however said ("yes, half past seven", "7pm" to "at 7:30
    PM?") written as the question wrote it, so they restate a value instead of asking a change ("half"); and the
    others said as times ("seven thirty am", "at 2:30", "half past two" to "2 pm"), each a time the question did
    not hold. Bare number words ("seven forty-two Maple") may be anything, and are left to the number readings."""
    words = ctx.rules.words
    asked = [(clock, line[start:end]) for line in ctx.said[:1] for clock, start, end in time_spans_in(line, words)]
    others = []
    for clock, start, end in reversed(time_spans_in(raw, words)):  # from the end: a rewrite keeps earlier offsets
        hour, minute, half = clock
        if mine := next((written for time, written in asked if same_time(clock, time)), None):
            raw = f"{raw[:start]} {mine} {raw[end:]}"
            continue
        before = raw[max(0, start - 12):start].lower().split()[-1:]
        said = set(words_of(raw[start:end])) | set(before)
        if ":" in raw[start:end] or said & {*words.CLOCK_SAID, *words.CLOCK_CUES, *words.OCLOCK} or half:
            others.append(f"{hour}:{minute:02d}{' ' + half if half else ''}")
    return raw, others


def _restates_a_value(words: str, ctx: AnswerContext) -> bool:
    """A change word that is the pending call's own value ("yes, the double room" for a double room)."""
    return ctx.own is not None and set(words.split()) <= ctx.own.exact


def _asked(raw: str) -> bool:
    """Written as a question: "?" at its end, or "¿" at its start."""
    return raw.rstrip(" .\"'").endswith("?") or raw.lstrip(" \"'").startswith("\u00bf")


def _not_a_clear_yes(norm: str, ctx: AnswerContext, left: list[str], names: list[str]) -> Reading:
    """An answer the grammar did not take for a yes (`left`: its words no closed set or pending value accounts
    for): a no, a change, or unclear, and why."""
    rules = ctx.rules
    plain = rules.yes_idioms.sub(f" {rules.words.ANSWER_YES[0]} ", norm)
    words = words_of(plain)
    negated = {m.group() for m in rules.no.finditer(plain)} - ctx.actions
    yes = [m.group() for m in rules.yes.finditer(plain)]
    if names and (yes or negated):  # "yes, for Max", "no, Maria Lopez": a name the question did not hold
        return Reading(Answer.CHANGE, f"names what the question did not ({', '.join(names)})")
    if negated:
        return Reading(Answer.NO, f"a refusal ({', '.join(sorted(negated))})")
    if m := rules.hesitation.search(plain) or rules.hedge.search(plain):
        return Reading(Answer.UNCLEAR, f"hesitates or hedges ({m.group()!r})")
    if others := sorted(set(words) & ctx.others):  # "yes, and update my address": more than this call
        return Reading(Answer.CHANGE, f"asks for something else as well ({', '.join(others)})")
    if rules.request.search(norm):
        return Reading(Answer.CHANGE, "a new request")
    if yes:
        return Reading(Answer.UNCLEAR, f"a yes with words it does not account for ({' '.join(left)})")
    if rules.weak.search(plain):
        return Reading(Answer.UNCLEAR, "a backchannel, not a yes")
    return Reading(Answer.UNCLEAR, "no yes or no in it")


def _names(raw: str, left: list[str], words: ModuleType) -> list[str]:
    """Words left over that Whisper wrote as names: capitalised, not the first of a sentence, not "I"."""
    starts = {m.group(1) for m in re.finditer(r"(?:^|[.!?¡¿]\s+)[\"'¡¿]?((?:[^\W\d_]|')+)", raw)}
    return [w for w in left if w[:1].isupper() and w not in starts and w.split("'")[0] not in words.CAPITAL_WORDS]


def _asks(raw: str, norm: str, rules: AnswerRules) -> str:
    """Why the answer is a question, or ""."""
    if _asked(raw):
        return "a question"
    if rules.repeat.search(norm):
        return "asks to hear it again"
    idioms = {w for m in rules.yes_idioms.finditer(norm) for w in m.group().split()}  # "why not" is a yes
    if wh := [w for w in words_of(raw) if w in rules.wh and w not in idioms]:
        return f"a question ({wh[0]} ...)"
    for clause in re.split(r"[,.;:!?]+", raw.lower()):
        first = words_of(clause)[:2]
        opens = (plain(first[0]), plain(first[1])) if len(first) == 2 else ()
        if opens and first[0] in rules.aux and first[1] in rules.subjects and opens not in rules.grammar.affirm:
            # "do it" is an answer, "is it ...?" a question
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
    stands outside it ("yes, refund $20 on order 4567" restates). The question's own opening is never the caller's."""
    if not ctx.said:
        return False
    if f" {ctx.rules.opening} " in f" {norm} ":  # "just to confirm"
        return True
    words = norm.split()
    if len(words) < 2 or any(ctx.rules.grammar.affirms(w) for i, w in enumerate(words) if i not in heard_back):
        return False
    agent = ctx.agent_words() | ctx.values  # or its words out of order, as a transcript of a half-heard line
    return max(len(heard_back), sum(w in agent for w in words)) >= 0.8 * len(words)


def classify_answer(text: str, context: AnswerContext | None = None) -> Answer:
    """The kind of answer `text` is (see `read_answer`, which also says why)."""
    return read_answer(text, context).answer
