"""The facts in a spoken reply, checked against what the conversation holds (`FactCheck`): a clause may state a
number, a time, a date or a status only when it came from a tool result, the prompt or (for numbers and dates) the
caller, and it never speaks the caller's words as its own. Words and sets only, no model call."""

from __future__ import annotations

import functools
import re
from types import ModuleType

from loop import locale
from loop.grounding._heard import cardinal_runs, spoken, stem, word_stem, words_to_number
from loop.grounding._scope import _STATUS, _amends, _stems, _vocabulary, _without_names, when_words
from loop.locale import DEFAULT_WORDS, unaccented
from loop.types import ModelRequest

_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")


def _numbers(text: str, words: ModuleType = DEFAULT_WORDS) -> set[float]:
    """Every number in `text`, in digits or words of the pack `words` ("$59.90", "10:30" -> 10, 30; "twenty
    five")."""
    found: set[float] = set()
    for token in _NUMBER.findall(text.replace(",", "")):
        for part in token.split(":"):
            try:
                found.add(float(part))
            except ValueError:
                continue
    said, run = spoken(words), []
    for word in [*re.findall(r"[a-z]+", text.lower().replace("-", " ")), "."]:
        if word in said.units or word in said.tens or word in (words.HUNDRED, words.THOUSAND):
            run.append(word)
            continue
        for number in cardinal_runs(run, words):  # "seven thirty" is 7 and 30, not 37
            if number != [words.ONES[1]] and (value := words_to_number(" ".join(number), words)) is not None:
                found.add(value)
        run = []
    return found


@functools.cache
def _opens_question(words: ModuleType) -> frozenset[str]:
    return frozenset(unaccented(w) for w in (*words.WH, *words.AUX))


@functools.cache
def _wh(words: ModuleType) -> frozenset[str]:
    return frozenset(unaccented(w) for w in words.WH)


def asks(text: str, words: ModuleType = DEFAULT_WORDS) -> bool:
    """Does the caller ask something ("Are there restaurants near the cinema?", "what time is yoga", "cuánto
    cuesta")? An answer to the agent's own question ("Yes, outside.", "It's 4089 3341.") does not. `words`: the
    call's pack (its question words, WH and AUX, after its QUESTION_LEAD_IN words)."""
    for sentence in re.split(r"(?<=[.!?])\s+|\n", text.strip()):
        if sentence.rstrip().endswith("?"):
            return True
        said = [w for w in _words(sentence) if w not in words.QUESTION_LEAD_IN]
        # "where's my parcel": a question word with its verb asks; an auxiliary's does not ("can't find it")
        if said and (said[0] in _opens_question(words) or unaccented(said[0].split("'")[0]) in _wh(words)):
            return True
    return False


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+(?:'[^\W_]+)?|\$", unaccented(text.lower()))


class FactCheck:
    """What a spoken reply may state, from the request's evidence. `unknown(clause)` names the first fact in the
    clause that came from nowhere (None: it may be said)."""

    def __init__(self, request: ModelRequest) -> None:
        system = next((m.content for m in request.messages if m.role == "system"), "")
        results = " ".join(m.content for m in request.messages if m.role == "tool")
        caller = [m.content for m in request.messages if m.role == "user"]
        everything = " ".join([system, results, *caller, request.scope])
        self.pack = pack = locale.get(request.language)
        self.numbers = _numbers(everything, pack)
        self.dates = set(_words(everything)) & when_words(pack)
        self.statuses = {stem(w) for w in _words(" ".join([system, results]))}
        self.results = " ".join(_words(results))
        self.latest = _words(caller[-1]) if caller else []
        self.callers = [w for w in map(_words, caller) if w]
        # what the caller spoke of that nothing the agent knows covers (no tool ran for it this turn): a reply
        # that speaks of it answers from nowhere ("Are there restaurants near the cinema?" -> "Yes, there are
        # several good restaurants near the Regent Cinema."); a change to what they asked before speaks of that
        # ("Can we make it 11 instead?")
        last_user = max((i for i, m in enumerate(request.messages) if m.role == "user"), default=-1)
        covered = any(m.role == "tool" for m in request.messages[last_user + 1:]) or (
            last_user >= 0 and _amends(request.messages[last_user].content, request))
        self.asked = last_user >= 0 and asks(request.messages[last_user].content, pack)
        when = {word_stem(w, pack) for w in when_words(pack)}  # a day or a date is a value (checked as one)
        self.uncovered = set() if covered or last_user < 0 else \
            _stems(_without_names(request.messages[last_user].content, pack), pack) - _vocabulary(request) - when
        self.caller_stems = _stems(" ".join(caller), pack)
        self.prompt_lines = [stems for line in re.split(r"[\n.;!?]+", system) if (stems := _stems(line, pack))]
        self.answered_uncovered = False

    def _from_prompt(self, clause: str) -> bool:
        """The clause's own words (two or more, beyond the caller's) all come from one sentence of the agent's
        prompt: "A repeat prescription usually takes two working days ..." tells the prompt's line, whatever word
        of the caller's ("usually") it repeats; words gathered from all over it ("a grooming brush or a nail trim"
        for a sore ear) are no line of it."""
        own = _stems(clause, self.pack) - self.caller_stems
        return len(own) >= 2 and any(own <= line for line in self.prompt_lines)

    def unknown(self, clause: str) -> str | None:
        about = _stems(clause, self.pack) & self.uncovered
        if about and self._from_prompt(clause):
            about = set()
        if about and not clause.rstrip().endswith("?"):
            self.answered_uncovered = True  # a question back to the caller is no answer; a statement is
        for value in _numbers(clause, self.pack):  # "... won by the Lakers in 2018": an answer from nowhere too
            if value not in self.numbers:
                return f"fact: a number nobody said ({value:g})"
        words = _words(clause)
        for word in words:
            if word in when_words(self.pack) and word not in self.dates:
                return f"fact: a date nobody said ({word!r})"
            if word in _STATUS and stem(word) not in self.statuses:
                return f"fact: a status no tool gave ({word!r})"
        if about and not clause.rstrip().endswith("?"):
            return f"fact: an answer about {sorted(about)[0]!r}, which nothing here covers"
        return self._echo(words)

    def echoes(self, text: str) -> str | None:
        """Is the reply so far one of the caller's turns? "whole" (they said "Yes, please." and it says "Yes,
        please."), "prefix" (so far it says "Yes," of that: wait for the next clause), None (it is its own). Manners are
        always its own (a turn of the pack's SOCIAL words: "Good morning." back)."""
        words = _words(text)
        found = None
        for said in self.callers:  # any of their turns: an earlier one comes back after a failed turn
            if not words or len(words) > len(said) or said[: len(words)] != words or set(said) <= self.pack.SOCIAL:
                continue  # "Hello." back to a "Hello." or "Goodbye." to a "Goodbye." is manners, not an echo
            if len(words) == len(said):
                return "whole"
            found = "prefix"
        return found

    def _echo(self, words: list[str]) -> str | None:
        """The caller's own words spoken as the agent's: a run of 6 of their latest words, or of 4 with their "I"
        or "my" in it (the pack's FIRST_PERSON), that no tool result holds."""
        for n in (6, 4):
            for i in range(len(words) - n + 1):
                run = words[i: i + n]
                if n == 4 and not set(run) & self.pack.FIRST_PERSON:
                    continue
                if _contains(self.latest, run) and " ".join(run) not in self.results:
                    return f"echo: the caller's words {' '.join(run)!r}"
        return None


def _contains(words: list[str], run: list[str]) -> bool:
    n = len(run)
    return any(words[i: i + n] == run for i in range(len(words) - n + 1))


def question_again(request: ModelRequest) -> str:
    """The agent's own last question, when the caller's words since are an answer to it (they asked nothing)."""
    last = request.messages[-1] if request.messages else None
    agent = next((m.content for m in reversed(request.messages) if m.role == "assistant"), "")
    if last is None or last.role != "user" or asks(last.content, locale.get(request.language)) \
            or not agent.rstrip().endswith("?"):
        return ""
    return re.split(r"(?<=[.!])\s+", agent.strip())[-1]
