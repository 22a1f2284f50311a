"""Ground tool arguments in the conversation: a small local model may only copy values, never invent them.

Small models invent arguments ("order 12345", "123 Main St", "New York"). Before generating, each tool's JSON
schema is narrowed to what the conversation actually contains, and the grammar built from it makes anything
else impossible to emit. What an argument may hold is read from its schema (`loop.grounding._arg_kinds`), for any agent:

- numbers (`number`/`integer`): an amount the caller said, in digits or spoken ("$15", "35.50", "twenty dollars",
  "twelve dollars and fifty cents"); a bare number of 4+ digits ("order 4567") is an identifier, not an amount;
- identifiers (`order_id`, `job_number: int`, `booking_ref`, an account "described as the 8-digit account number",
  a `pattern` of digits, a postcode): a token with a digit, or a run of spoken digits ("four five six seven" ->
  "4567"), from the caller's words or the tools' results, matching the schema's pattern, but not one the caller
  just took back ("order 1234, sorry, I mean 7788");
- names (city, country, name, `guest_name`, ...): a run of capitalised words the caller said since the agent last
  spoke, other than a sentence's first word ("Is anything delayed for Austin?" -> "Austin") unless the agent had
  asked for a name;
- times and dates (`time`, `day`, `check_in`): the caller's words that say when ("Tuesday", "10 a.m.");
- enums: the values the conversation named;
- free text (a reason, a note): a span of at most 8 consecutive words the caller said since the agent last spoke;
  an address: such a span that starts on a number or a capitalised word; any other string: a span without the
  request's own words ("I want to check on my repair" holds no item and no address).
Booleans, formats, nested values and patterns that admit plain words stay as the schema says. A call already made
with the same arguments is not offered again.

A tool whose required argument has no candidate cannot be called, so "I want a refund" cannot become a refund of
an invented amount: the model may still pick it, and is then made to ask for what is missing
(`loop.grounding.tool_choice.ask_for`).

Which tool the caller's words speak of, and what the agent asked for, is `loop.grounding.tool_choice`.
"""

from __future__ import annotations

import copy
import json
import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any

from loop import locale
from loop.grounding._arg_kinds import (
    arg_kind,
    digits_named,
    id_shape,
    label,
    name_labels,
    name_part,
    non_null,
)
from loop.grounding._clock import same_time, time_spans_in, times_named, without_times  # noqa: F401  (re-exported)
from loop.grounding._dates import time_spans, when_values  # noqa: F401  (time_spans re-exported)
from loop.grounding._heard import (  # noqa: F401  (re-exported: what was said, read out of the caller's words)
    id_candidates,
    identifier_candidates,
    number_candidates,
    retracted_ids,
    span_pattern,
    stem,
    street_addresses,
    street_pattern,
    value_pattern,
    without_addresses,
    words_to_number,
)
from loop.grounding._listed import _named, counted_spans, counting_articles
from loop.grounding._names import (
    answered_name,
    introduced_names,
    labelled_names,
    one_name_for_two,
    own_name_words,
    proper_names,
    without_part_word,
)
from loop.grounding._pieces import example_shape, ids_of_shape, joined_to_length
from loop.grounding._schema import (  # noqa: F401  (id_digit_counts re-exported: voice reads it)
    described_among,
    description_of,
    function_of,
    id_digit_counts,
    properties,
)
from loop.grounding._unclaimed import fill_counts, is_free, without_id_pieces
from loop.grounding.speakable import join_digit_words
from loop.locale import DEFAULT_WORDS, unaccented
from loop.types import Message, ToolCall


def since_agent_spoke(messages: Sequence[Message]) -> list[Message]:
    """The caller's messages after the agent's last one: what they said this turn."""
    last_agent = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    return [m for m in messages[last_agent + 1:] if m.role == "user"]


@dataclass
class Evidence:
    """What the conversation offers to copy from."""

    said: str  # everything the caller said: amounts come from here
    heard: str  # the caller's words and the tools' results: identifiers come from here
    fresh: str  # what the caller said since the agent last spoke: free text comes from here
    done: set[str]  # signatures of calls already made: never offered again
    retracted: set[str] = field(default_factory=set)  # ids the caller corrected in their last words
    asked_name: bool = False  # the agent's last words asked for a name: "Sam Lee." opens the answer
    id_words: set[str] = field(default_factory=set)  # what the tools' identifiers are called ("postcode", "job")
    digits: dict[str, int] = field(default_factory=dict)  # identifier argument -> its length, as any tool says it
    own_name: frozenset[str] = frozenset()  # the words of the caller's own name: never an item or an address
    named_as: dict[str, list[str]] = field(default_factory=dict)  # name argument -> names said right after its words
    context: str = ""  # the agent's instructions: what they say of an identifier's shape ("two letters, four digits")
    words: ModuleType = DEFAULT_WORDS  # the conversation's language (`loop.locale`): how a name is introduced, say

    def one_counted(self, props: dict[str, Any], described: str, words: ModuleType) -> Evidence:
        """This evidence with "a"/"an" before a count argument's own noun written as 1 ("a box of ibuprofen" for
        `boxes`, "una caja" for `cajas`): the article counts one of the very thing the argument counts; and an
        article the noun cannot take as the number it sounds like ("los cajas": 2). `counting_articles`."""
        articles = counting_articles(props, described, words)

        def counted(text: str) -> str:
            for article, n in articles:
                text = article.sub(f"{n} ", text)
            return text

        return replace(self, said=counted(self.said), heard=counted(self.heard), fresh=counted(self.fresh))

    def without(self, values: Sequence[str]) -> Evidence:
        """This evidence with `values` (what an enum argument took) blanked out of the words, for the others. A
        blank is a line break: no span runs across it ("send the red roses to Jenny Hart" leaves no "send the to")."""
        if not values:
            return self

        def blank(text: str) -> str:
            for value in values:
                said = re.escape(value.replace("_", " ").strip())
                text = re.sub(rf"(?<![\w]){said}(?:s|es)?(?![\w])", "\n", text, flags=re.IGNORECASE)
            return text

        return replace(self, said=blank(self.said), heard=blank(self.heard), fresh=blank(self.fresh))

    @classmethod
    def of(cls, messages: Sequence[Message], words: ModuleType = DEFAULT_WORDS) -> Evidence:
        agent = next((m.content for m in reversed(messages) if m.role == "assistant"), "")
        return cls(said=_dictated("\n".join(m.content for m in messages if m.role == "user")),
                   heard=_dictated("\n".join(m.content for m in messages if m.role in ("user", "tool"))),
                   fresh="\n".join(m.content for m in since_agent_spoke(messages)),
                   done={c.signature for m in messages for c in m.tool_calls},
                   retracted=retracted_ids(next((m.content for m in reversed(messages) if m.role == "user"), ""),
                                           words),
                   asked_name=_asks_name(agent, words), own_name=_own_name(messages, words), words=words,
                   context=next((m.content for m in messages if m.role == "system"), ""))


def _dictated(text: str) -> str:
    """Caller turns as one where one trails off and the next goes on ("The job reference is K, four oh..." then,
    asked again, "...213."): speech-to-text's ellipsis says the words were cut, and what follows is their rest."""
    return re.sub(r"(?:\.\.\.|\u2026)\s*\n\s*(?:\.\.\.|\u2026)", " ", text)


def _asks_name(agent_said: str, words: ModuleType = DEFAULT_WORDS) -> bool:
    """The agent's words end on a question for a name (the pack's NAME_ASKED: "What name is it under?")."""
    return bool(re.search(rf"{words.NAME_ASKED}[^.!]*\?\s*$", unaccented(agent_said), re.IGNORECASE))


def _own_name(messages: Sequence[Message], language: ModuleType = DEFAULT_WORDS) -> frozenset[str]:
    """The caller's own name, as they introduced themselves or answered a question for their name."""
    words: set[str] = set()
    for before, m in zip([None, *messages], messages, strict=False):
        if m.role == "user":
            words |= own_name_words(m.content, language)
            if before is not None and before.role == "assistant" and _asks_name(before.content, language):
                words |= {w.lower() for name in answered_name(m.content, language) for w in name.split()}
    return frozenset(words)


def _name_args(props: dict[str, Any], described: str, words: ModuleType) -> list[str]:
    """The tool's arguments that hold a name."""
    return [n for n, s in props.items() if (k := arg_kind(n, s, described, words)) is not None and k.kind == "name"]


def _names_by_label(names: list[str], said: str, words: ModuleType = DEFAULT_WORDS) -> dict[str, list[str]]:
    """For each name argument, the names the caller gave right after its own words ("The surname's Hughes" for
    `owner_surname`), when the tool takes more than one name."""
    if len(names) < 2:
        return {}
    return {n: found for n in names if (found := labelled_names(said, name_labels(n), words))}


def _listed_values_named(props: dict[str, Any], ev: Evidence) -> list[str]:
    """The values the tool's arguments list (its enums) that the conversation names."""
    return [str(v) for p in props.values() for v in _named(
        [x for x in (non_null(p) or {}).get("enum", []) if isinstance(x, str)], ev.heard, ev.words)]


def id_words(name: str, words: ModuleType = DEFAULT_WORDS) -> set[str]:
    """What sets an identifier argument apart from another: `account_number` -> {"accou"}, `postcode` -> {"postc"}
    (less the pack's ID_WORDS_GENERIC, said of any identifier)."""
    return {stem(w) for w in label(name, words_of=words).split() if w not in words.ID_WORDS_GENERIC}


def _introduced_as_other(candidate: str, own: set[str], ev: Evidence) -> bool:
    """The caller named this identifier as another tool argument's ("postcode 3058" is no account number)."""
    others = ev.id_words - own
    if not others:
        return False
    text = join_digit_words(re.sub(r"\b(\d) (?=\d\b)", r"\1", ev.heard))  # "4 5 6 7", "four five six seven": 4567
    for m in re.finditer(rf"(?<![\w-]){re.escape(candidate)}(?![\w-])", text, re.IGNORECASE):
        before = {stem(w) for w in re.findall(r"[a-z]+", text[max(0, m.start() - 40): m.start()].lower())[-3:]}
        if before & others and not before & own:
            return True
    return False


def _identifiers(pattern: str, integer: bool, ev: Evidence, own: set[str] | None = None, digits: int = 0
                 ) -> list[Any]:
    """Identifiers heard, that the schema's pattern admits (in capitals if only so: "sw1a 1aa" -> "SW1A 1AA"),
    and that the caller did not name as something else ("postcode 3058" for an account number). `digits`: the
    length it has, which joins pieces of digits into one ("5 5038 810")."""
    pieces = joined_to_length(ev.heard, digits, ev.words) if digits else []
    heard = [i for i in [*identifier_candidates(ev.heard, ev.words), *pieces] if i not in ev.retracted
             and not _introduced_as_other(i, own or set(), ev)]
    if pattern:
        try:
            admits = re.compile(pattern).search
        except re.error:
            return []
        ids = [i if admits(i) else i.upper() for i in heard if admits(i) or admits(i.upper())]
    else:  # without a pattern: no one- or two-digit numbers ("2 questions"); a pair only with letters ("LS6 2AB")
        ids = [i for i in heard if (len(i) >= 3 or not i.isdigit()) and (" " not in i or re.search("[A-Za-z]", i))]
    if integer:
        return list(dict.fromkeys(int(i) for i in ids if i.isdigit()))
    return list(dict.fromkeys(ids))


def _narrow(name: str, schema: dict[str, Any], ev: Evidence, described: str = "") -> dict[str, Any] | None:
    """The property's schema narrowed to the conversation's values; None when there is none to copy. `described`:
    the tool's description, which may say how many digits an identifier has."""
    kind = arg_kind(name, schema, described, ev.words)
    if kind is None:
        return schema
    k = kind.kind
    if k in ("number", "integer"):
        values = [int(v) if v.is_integer() else v for v in counts_said(ev.said, ev.words)]
        values = [v for v in values if k == "number" or isinstance(v, int)]
        return {"enum": values} if values else None
    if k == "id":
        said_of = f"{described}\n{ev.context}"  # the tools' words, then the agent's instructions
        digits = kind.digits or digits_named(name, said_of, ev.words) or ev.digits.get(name, 0)
        letters = kind.letters or id_shape(name, said_of, ev.words)[0]  # "(3 letters, 5 digits)": 70219 is not one
        own = id_words(name, ev.words)
        if not digits and not letters and (shape := example_shape(said_of, own, ev.words)):
            found: list[Any] = ids_of_shape(ev.heard, shape, ev.words)  # "like LK19 RXT": "W F 7 2, M Z K" is WF72 MZK
        else:  # "a letter and five digits": "K, four oh 2 1 3" is K40213, read as a shape; else as heard
            shaped = letters and digits and not kind.pattern
            found = (ids_of_shape(ev.heard, "A" * letters + "9" * digits, ev.words) if shaped else []) or [
                i for i in _identifiers(kind.pattern, kind.integer, ev, own, digits if not letters else 0)
                if (not digits or sum(c.isdigit() for c in str(i)) == digits)
                and (not letters or sum(c.isalpha() for c in str(i)) == letters)]
        if kind.digits and not kind.letters:  # declared digits only: "S45127" (heard for "es 45127") is 45127
            found = list(dict.fromkeys(re.sub(r"\D", "", i) if isinstance(i, str) else i for i in found))
    elif k == "name" and ev.named_as.get(name):  # "The surname's Hughes": the surname's, whoever else is named
        found = ev.named_as[name]
    elif k == "name":  # this turn's first; then earlier turns' (a name given before the day was asked for)
        found = list(dict.fromkeys(proper_names(ev.fresh, ev.asked_name, ev.words) + proper_names(ev.said, False,
                                                                                                   ev.words)))
        if not found and ev.asked_name:  # "it's biscuit": a name however speech-to-text cased it
            found = answered_name(ev.fresh, ev.words)
        if not found:  # "a nombre de lucia fernandez": introduced as a name, however cased
            found = introduced_names(ev.fresh, ev.words) or introduced_names(ev.said, ev.words)
        others = {v for arg, values in ev.named_as.items() if arg != name for v in values}
        streets = " ".join(street_addresses(ev.said, ev.words))  # "at 21 Church Road": a place, not a name
        found = [v for v in map(without_part_word, found) if v and v not in others  # Hughes is the surname only
                 and not re.search(rf"(?<!\w){re.escape(v)}(?!\w)", streets)]
    elif k == "when":  # this turn's first, then earlier turns'; "8 Mill Street": no time
        found = list(dict.fromkeys(v for text in (ev.fresh, ev.said)
                                   for v in when_values(without_addresses(text, ev.words), kind.when, ev.words)))
    elif k == "enum":
        values = (non_null(schema) or {}).get("enum", [])
        said = _named(values, ev.said, ev.words) + times_named(values, ev.fresh, ev.words) \
            + times_named(values, ev.said, ev.words)
        # a value only a tool's result named ("18 GB of 20 GB") when the caller named one of their own ("the roaming
        # day pass") is theirs to choose, not the tool's
        found = list(dict.fromkeys(said or _named(values, ev.heard, ev.words)))
    else:
        pattern = span_pattern(ev.fresh, words=ev.words) if k == "free" else value_pattern(
            ev.fresh, address=k == "address", leave_out=ev.own_name, words=ev.words)
        if pattern is None and k == "address":  # "It's Derek Mensah, 56 Queens Road." a question before
            pattern = street_pattern(ev.said, ev.words)
        kept = {"x-kind": "address"} if k == "address" else {}  # an address read as one: a value, not any words
        return {"type": "string", "pattern": pattern, **kept} if pattern else None
    if k == "name" and (part := name_part(name)) is not None:  # first_name of "Oliver Bennett": Oliver
        found = list(dict.fromkeys(str(v).split()[part] for v in found if str(v).split()))
    return {"enum": found} if found else None


def counts_said(text: str, words: ModuleType = DEFAULT_WORDS) -> list[float]:
    """The numbers in the caller's words that may be an amount or a count: not a time of day ("five o'clock"),
    not a house number ("twenty two Baker Street"); number words of the pack `words`."""
    return number_candidates(without_times(without_addresses(text, words), words), words)


def _taken(props: dict[str, Any], free: str) -> list[str]:
    """The words other arguments hold for certain (an enum of one value): not the free-text argument `free`'s.
    Several candidates ("Jenny Hart", "Happy Anniversary") leave each to the model: one may be the message."""
    return [v for arg, p in props.items() if arg != free and len(p.get("enum") or []) == 1
            for v in p["enum"] if str(v) == v]


def _drop_repeats(name: str, props: dict[str, Any], done: set[str]) -> bool:
    """Remove already-made calls from a finite choice; True when no new call is left."""
    finite = all("enum" in p for p in props.values())
    if not finite or not props:
        return False
    if len(props) == 1:
        key, prop = next(iter(props.items()))
        prop["enum"] = [v for v in prop["enum"] if ToolCall(name, {key: v}).signature not in done]
        return not prop["enum"]
    if all(len(p["enum"]) == 1 for p in props.values()):
        return ToolCall(name, {k: p["enum"][0] for k, p in props.items()}).signature in done
    return False


_GROUNDED: OrderedDict[tuple[Any, ...], tuple[list[dict[str, Any]], dict[str, list[str]]]] = OrderedDict()


def ground(tools: Sequence[dict[str, Any]], messages: Sequence[Message], language: str = "en"
           ) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """Copies of `tools` whose top-level arguments may only take values found in the conversation, and for each
    tool left out the required arguments nothing in the conversation can fill (empty when its only possible
    call was already made, or the caller has not spoken since the agent last did: nothing to ask them).
    `language`: the conversation's (`loop.locale`). One request's plan asks this several times of the same
    inputs: the last few answers are kept (read only)."""
    key = (language, tuple(json.dumps(t, sort_keys=True) for t in tools),
           tuple((m.role, m.content, tuple(c.signature for c in m.tool_calls)) for m in messages))
    if (found := _GROUNDED.get(key)) is None:
        found = _GROUNDED[key] = _ground(tools, messages, locale.get(language))
        while len(_GROUNDED) > 16:
            _GROUNDED.popitem(last=False)
    return copy.deepcopy(found)


def _ground(tools: Sequence[dict[str, Any]], messages: Sequence[Message], words: ModuleType
            ) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    whole = Evidence.of(messages, words)
    ids = [(n, k, t) for t in tools for n, s in properties(t).items()
           if (k := arg_kind(n, s, described_among(t, tools), words)) and k.kind == "id"]
    whole.id_words = {w for n, _, _ in ids for w in id_words(n, words)}
    # "by their five-digit account number" in one tool's description holds for `account_number` in every tool
    whole.digits = {n: d for n, k, t in ids
                    if (d := k.digits or digits_named(n, description_of(t), words))}
    grounded, missing = [], {}
    for original in tools:
        tool, among = copy.deepcopy(original), described_among(original, tools)
        params = function_of(tool).get("parameters") or {}
        props = params.get("properties") or {}
        required = set(params.get("required") or [])
        unfilled = []
        ev = whole.one_counted(props, among, words)  # "a box of ..." is 1 of `boxes`
        names = _name_args(props, among, words)
        ev.named_as = _names_by_label(names, ev.said, words)
        rest = ev.without(_listed_values_named(props, ev))  # "four cheese" is the pizza, not 4 of them
        counted = counted_spans(props, ev.said, among, words)
        declared = dict(props)
        for name, schema in sorted(props.items(), key=lambda item: is_free(*item, among, words)):  # free last
            lists = "enum" in (non_null(schema) or {})
            # "three passengers" is the passengers', never a time or an address
            others = [span for arg, spans in counted.items() if arg != name for span in spans]
            if is_free(name, schema, among, words):  # "Joe Okafor." is the name, not the cake's message
                others += _taken(props, name) + [a for a in street_addresses(ev.said, words) if any(
                    (k := arg_kind(n, p, among, words)) and k.kind == "address" for n, p in declared.items())]
            narrowed = _narrow(name, schema, (ev if lists else rest).without(others), among)
            if narrowed is None and name in required:
                unfilled.append(name)
            elif narrowed is None:
                del props[name]
            else:
                props[name] = narrowed
        unfilled += without_id_pieces(declared, props, ev.said, among, required, words)  # "4 4029 187": no 4
        unfilled = fill_counts(declared, props, unfilled, ev, among, words)  # "the reading is 1345"
        for name in one_name_for_two(props, names, ev.named_as):
            if name in required:
                unfilled.append(name)
            else:
                del props[name]
        fn_name = str(function_of(tool).get("name", ""))
        if unfilled:  # worth asking the caller only when it is their words the call lacks
            missing[fn_name] = unfilled if ev.fresh else []
        elif _drop_repeats(fn_name, props, ev.done):
            missing[fn_name] = []
        else:
            grounded.append(tool)
    return grounded, missing


def ground_tools(tools: Sequence[dict[str, Any]], messages: Sequence[Message], language: str = "en"
                 ) -> list[dict[str, Any]]:
    """Only the tools that can be called with what the conversation holds, their arguments narrowed to it."""
    return ground(tools, messages, language)[0]
