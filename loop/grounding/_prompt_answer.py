"""What the agent's prompt says for a question, when its words fit it better than any tool: the quoted reply
('opening hours: "We\'re open Monday to Friday ..."') or the fact it lists to tell, whose words (and numbers, and
money) the caller's share most (`prompt_answer`, `quoted_reply`)."""

from __future__ import annotations

import re
from types import ModuleType

from loop import locale
from loop.grounding._heard import identifier_candidates, number_candidates, word_stem
from loop.grounding._scope import (
    _answers_the_agent,
    _caller_stems,
    _fit,
    _fresh,
    _groups,
    _name_and_description,
    _related,
    _stems,
    _things_among_filler,
    price_asked,
)
from loop.grounding.speakable import quoted_lines
from loop.types import ModelRequest


def quoted_reply(request: ModelRequest) -> str:
    """The reply the agent's prompt quotes for what the caller just asked ('opening hours: "We're open Monday to
    Friday ..."' for "What time do you close on Saturday?"), or "": said when the model's own words cannot be.
    Quoted callers' words before a tool call ('"Where is order 3141?" -> ...') are no replies."""
    fresh = _fresh(request.messages)[0]
    return _best_quote(request, _related(_stems(fresh, locale.get(request.language)), _groups(request)))[1]


def _best_quote(request: ModelRequest, caller: set[str]) -> tuple[int, str]:
    """The prompt's quoted reply whose line shares most of `caller`'s stems, and how many (0, "": none). Quoted
    callers' words before a tool call ('"Where is order 3141?" -> ...') are no replies."""
    system = next((m.content for m in request.messages if m.role == "system"), "")
    best, found = 0, ""
    pack, groups = locale.get(request.language), _groups(request)
    for line, reply in quoted_lines(system, pack):
        if (score := _fit(caller, _stems(line, pack) | _amount_stems(line, pack), groups)) > best:
            best, found = score, reply
    return best, found


def prompt_answer(request: ModelRequest) -> str:
    """The reply the agent's prompt quotes for exactly what the caller asked, when their words fit that line better
    than any tool ("What time is check-out?" -> 'the stay: "... check-out is by 11 a.m. ..."', where no tool
    speaks of check-out), or "". Not for an answer to the agent's own question, an identifier, or words a tool
    shares as much ("Can I book Monday?" shares "Monday" with the hours line and "book" with the booking tool)."""
    fresh, _ = _fresh(request.messages)
    if not fresh or _names_a_thing(fresh) or _answers_the_agent(request.messages):
        return ""
    pack = locale.get(request.language)
    # their own words: "check" is no "stay" here, as it is for being in scope
    caller = _caller_stems(fresh, pack, _things_among_filler(request))
    # the words of what the agent is for (its own scope sentence: "council tax") are in every question it gets:
    # they tell no quote from a tool ("Is there any discount on the council tax?": the discount's line)
    caller = ((caller - _stems(request.scope, pack)) or caller) | _amount_stems(fresh, pack)
    groups, price = _groups(request), price_asked(fresh, pack)  # {the price's stem} for "how much", filler or not
    caller |= price
    best, found = _best_quote(request, caller)
    owns = [_stems(described := _name_and_description(t), pack) | _amount_stems(described, pack)
            for t in request.tools]
    if price:  # a tool that says no price cannot answer it
        owns = [own for own in owns if price <= _related(own, groups)]
    # one word related to the line's ("hour" for the opening hours, in "an hour late") is no fit
    return found if best > max([1, *(_fit(caller, own, groups) for own in owns)]) else ""


def _names_a_thing(said: str) -> bool:
    """The caller gave an identifier (three digits or more, or letters with digits: "3091", "NG40211"), which a
    tool looks up; "the 20 GB pack" or "at 9" is no such thing."""
    return any(len(re.sub(r"\D", "", c)) >= 3 or re.search(r"[^\W\d]", c) for c in identifier_candidates(said))


def _amount_stems(text: str, pack: ModuleType) -> set[str]:
    """What the numbers of `text` say when a question is fitted to a line: each number as itself ("twenty" and
    "20 GB" alike: "#20"), and the pack's PRICE_ASKED where it states an amount of money ("$25", "78 pounds")."""
    found = {f"#{n:g}" for n in number_candidates(text, pack)}
    symbols = pack.MONEY_SYMBOLS
    names = "|".join(n for group in symbols.values() for n in group)
    if re.search(rf"[{re.escape(''.join(symbols))}]\s?\d|\d\s*(?i:{names})\b", text):
        found.add(word_stem(pack.PRICE_ASKED, pack))
    return found
