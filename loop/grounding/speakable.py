"""What may be said to a caller: a machine check of spoken replies, and a streaming guard for the local model.

Small models read their prompt aloud (`No tool; say: "..."`), name functions ("by using the delivery_status
function"), echo JSON or print "TypeError". `leaks()` finds that in a reply; `check_reply()` adds the facts a
reply must hold and the voice length limit (two sentences) for evaluations; `ReplyGuard` sits between a model's
text stream and the caller: it lets text through a clause at a time, ends the reply after two sentences or at a
line break, and replaces a leaking clause with an honest fallback (counted and logged by its user, so a broken
model is never hidden behind canned text).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from types import ModuleType

from loop.locale import DEFAULT_WORDS, unaccented

QUOTE = re.compile(r"\"([^\"]{8,})\"")  # a reply an agent's prompt quotes, as the caller is to hear it


def quoted_lines(system: str, words: ModuleType = DEFAULT_WORDS) -> list[tuple[str, str]]:
    """(line, reply) for each reply an agent's prompt quotes for what callers ask ('opening hours: "We're open
    ..."'), which is said as it stands (`loop.grounding._scope.prompt_answer`); not callers' words quoted before
    a tool call ('"Where is order 3141?" -> lookup_order'). And each fact a line lists for the agent to tell
    (`told_facts`), as its own line and reply."""
    quoted = [(line, quotes[-1].strip()) for line in system.splitlines()
              if "->" not in line and (quotes := QUOTE.findall(line))]
    return quoted + [(fact, fact) for line in system.splitlines() for fact in told_facts(line, words)]


def told_facts(line: str, words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """The facts a prompt's line lists for the agent to tell, after a lead that says so and a colon, one per
    semicolon or sentence ("What you may tell callers without a tool: a piano should be tuned twice a year; ..." ->
    "A piano should be tuned twice a year."): each is a reply, as a quoted one is. The lead's words: the pack's
    TOLD_FACTS_LEAD. Labelled: tests/loop/grounding/test_spoken_check.py."""
    m = re.match(rf"^\W*(?P<lead>[^:\"]{{0,80}}\b(?:{words.TOLD_FACTS_LEAD})\b[^:\"]{{0,60}}):\s*(?P<facts>[^\"]+)$",
                 line.strip(), re.IGNORECASE)
    if m is None or "->" in line:
        return []
    facts = [s.strip().rstrip(".").strip() for f in m["facts"].split(";") for s in _SENTENCE_END.split(f)]
    return [f[0].upper() + f[1:] + "." for f in facts if len(f.split()) >= 3]


def quoted_replies(system: str, words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """The replies of `quoted_lines`."""
    return [reply for _, reply in quoted_lines(system, words)]

PROMPT_NGRAM = 6  # this many consecutive words of the prompt in a reply is the prompt read aloud

_BRACKETS = re.compile(r"[{}\[\]<>`]")
_MARKDOWN = re.compile(r"\*\*|__|^\s*#|^\s*[-*•]\s|\|", re.MULTILINE)
_DIRECTIVE = re.compile(r"\bno tool\b|\b(?:say|reply|answer|respond)\s*:|->|=>|\bassistant\s*:|\buser\s*:", re.I)
_CODE_WORDS = re.compile(r"\b(?:\w+Error|Traceback|Exception|null|undefined|NaN|def|lambda|kwargs|args)\b")
_TOOL_WORDS = re.compile(r"\b(?:functions?|tool calls?|tools?|json|api|schemas?|parameters?|arguments?)\b", re.I)
_FUNCTION_WORDS = re.compile(r"\b(?:functions?|tool calls?|json)\b", re.I)
_QUOTED = re.compile(r"\"[^\"]*\"")
_SENTENCE_END = re.compile(r"(?<![a-zA-Z]\.[a-zA-Z])[.!?]+[\"')\]]*(?=\s|$)")  # not the "." of "p.m."
CLAUSE_END = re.compile(r"[,.;:!?]+[\"')\]]*\s|\n")  # where a clause is let through to the voice


@functools.cache
def _meta(words: ModuleType) -> re.Pattern[str]:
    """Talk about the conversation's machinery in the language `words` ("the caller", "This response indicates
    ...": its META_TALK)."""
    return re.compile(words.META_TALK, re.IGNORECASE)


@functools.cache
def _spoken_digits(words: ModuleType) -> re.Pattern[str]:
    """Three or more of the language's digit words in a row ("four five six seven"; "oh" is one in English)."""
    digit = "|".join(words.DIGIT_WORDS)
    return re.compile(rf"\b(?:(?:{digit})[\s,-]+){{2,}}(?:{digit})\b", re.I)


def words(text: str) -> list[str]:
    """The words of `text` as the prompt check compares them: lower case, without accents ("número" is one word,
    "numero", in any language's prompt), digits, "$" and "'" kept."""
    return re.findall(r"(?:[^\W_]|[$'])+", unaccented(text.lower()))


def prompt_ngrams(prompt: str, n: int = PROMPT_NGRAM, language: ModuleType = DEFAULT_WORDS
                  ) -> set[tuple[str, ...]]:
    """Every run of `n` consecutive words of the prompt (what a reply must never repeat), but for the replies it
    quotes for the agent to say ('opening hours: "We're open Monday to Friday ..."') and the facts it lists to
    tell (`told_facts`); a caller's words quoted before a tool call ('"Where is order 3141?" -> {...}') stay."""
    grams: set[tuple[str, ...]] = set()
    for line in prompt.splitlines():
        if "->" not in line:
            line = _QUOTED.sub(" | ", line)
            if told_facts(line, language):
                line = line.split(":", 1)[0]
        for part in line.split("|"):
            w = words(part)
            grams |= {tuple(w[i: i + n]) for i in range(len(w) - n + 1)}
    return grams


def sentences(text: str) -> int:
    """How many sentences `text` holds ("$59.90" and "e.g." inside a word do not end one)."""
    text = text.strip()
    if not text:
        return 0
    return len(_SENTENCE_END.findall(text)) + (0 if re.search(r"[.!?][\"')\]]*$", text) else 1)


def first_sentences(text: str, n: int = 2) -> str:
    """The first `n` sentences of `text`, as `sentences` counts them."""
    text = text.strip()
    ends = list(_SENTENCE_END.finditer(text))
    return text if len(ends) < n else text[: ends[n - 1].end()].strip()


def leaks(text: str, tool_names: Iterable[str] = (), prompt: str | set[tuple[str, ...]] = "",
          strict: bool = False, pack: ModuleType = DEFAULT_WORDS) -> list[str]:
    """What in `text` must never reach a caller: tool names, JSON or code, markdown, prompt text, directives, talk
    about the conversation in the reply's language (`pack`). `strict` also refuses words about tools and
    functions (for the demo's evaluation; a guard stays lenient)."""
    found = []
    lowered = text.lower()
    for name in tool_names:  # an identifier ("delivery_status"), not a plain word ("membership", "refund")
        plain_word = name.isalpha() and name.islower()
        if name and not plain_word and re.search(rf"(?<![a-z0-9_]){re.escape(name.lower())}(?![a-z0-9_])", lowered):
            found.append(f"tool name {name!r}")
    if m := _BRACKETS.search(text):
        found.append(f"bracket {m.group()!r}")
    if m := _MARKDOWN.search(text):
        found.append(f"markdown {m.group().strip()!r}")
    if m := _DIRECTIVE.search(text):
        found.append(f"prompt directive {m.group()!r}")
    if m := _CODE_WORDS.search(text):
        found.append(f"code {m.group()!r}")
    if "_" in text:
        found.append("an identifier with '_'")
    if m := (_TOOL_WORDS if strict else _FUNCTION_WORDS).search(text):  # "call the outage function": no agent says
        found.append(f"talks about tools: {m.group()!r}")
    if m := _meta(pack).search(text):  # an agent talks to the caller, never about "the caller" (its prompt's words)
        found.append(f"talks about the conversation: {m.group()!r}")
    if strict and "\n" in text.strip():
        found.append("a line break")
    if strict and (m := re.search(r"[^\x00-\u024F\u2010-\u2027]", text)):
        found.append(f"not English: {m.group()!r}")
    grams = prompt_ngrams(prompt) if isinstance(prompt, str) else prompt
    if grams:
        w = words(text)
        for i in range(len(w) - PROMPT_NGRAM + 1):
            if tuple(w[i: i + PROMPT_NGRAM]) in grams:
                found.append(f"prompt text {' '.join(w[i: i + PROMPT_NGRAM])!r}")
                break
    return found


def join_digit_words(text: str, words: ModuleType = DEFAULT_WORDS) -> str:
    """Runs of three or more spoken digits as one number: "four five six seven" -> "4567" (the digit words of
    the language `words`)."""
    return _spoken_digits(words).sub(
        lambda m: "".join(words.DIGIT_WORDS[w] for w in re.findall(r"[^\W\d_]+", m.group().lower())), text)


def _normalise(text: str) -> str:
    """Lowercase, spoken digit runs joined ("four five six seven" -> "4567"), "$20.00" -> "$20"."""
    text = join_digit_words(text)
    text = re.sub(r"(\d)\.00\b", r"\1", text)
    return " ".join(text.lower().split())


def _has(text: str, wanted: str) -> bool:
    wanted = _normalise(wanted)
    if re.fullmatch(r"[\w$.' ]+", wanted):
        return re.search(rf"(?<![\w]){re.escape(wanted)}(?![\w])", text) is not None
    return wanted in text


@dataclass
class ReplyCheck:
    """The machine check of one spoken reply: every entry of `contains` (a string, or a list of alternatives)
    must be there, nothing of `absent`, no leak, at most `max_sentences` sentences."""

    contains: Sequence[str | Sequence[str]] = ()
    absent: Sequence[str] = ()
    max_sentences: int = 2
    problems: list[str] = field(default_factory=list)

    def run(self, text: str, tool_names: Iterable[str] = (), prompt: str = "", words: ModuleType = DEFAULT_WORDS
            ) -> list[str]:
        self.problems = []
        norm = _normalise(text)
        if not text.strip():
            self.problems.append("nothing was said")
        for item in self.contains:
            options = [item] if isinstance(item, str) else list(item)
            if not any(_has(norm, o) for o in options):
                self.problems.append("missing " + " / ".join(repr(o) for o in options))
        self.problems += [f"says {a!r}" for a in self.absent if _has(norm, a)]
        self.problems += leaks(text, tool_names, prompt, strict=True, pack=words)
        if (n := sentences(text)) > self.max_sentences:
            self.problems.append(f"{n} sentences")
        return self.problems


def check_reply(text: str, contains: Sequence[str | Sequence[str]] = (), absent: Sequence[str] = (), *,
                tool_names: Iterable[str] = (), prompt: str = "", max_sentences: int = 2,
                words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """Problems with a spoken reply in the language `words` (empty: it passes)."""
    return ReplyCheck(contains, absent, max_sentences).run(text, tool_names, prompt, words)


@functools.cache
def _courtesy(words: ModuleType) -> frozenset[str]:
    """The words of the language's courtesies: its ASK_OPENER's, and COURTESY_WORDS ("of course", "happy to")."""
    return frozenset(_plain_words(words.ASK_OPENER)) | words.COURTESY_WORDS


def _plain_words(text: str) -> list[str]:
    return re.findall(r"(?:[^\W\d_]|')+", unaccented(text.lower()))


def says_nothing(text: str, words: ModuleType = DEFAULT_WORDS) -> bool:
    """Words that only open a reply ("Sure, I can help with that.", "Certainly!", "Claro, le ayudo con eso."): on
    their own they answer nothing, so a reply cut after them still needs its fallback."""
    said = _plain_words(text)
    openers = {unaccented(o) for o in words.REPLY_OPENERS}
    return bool(said) and all(w in openers or w in _courtesy(words) for w in said)


def _only_an_opener(clause: str, words: ModuleType = DEFAULT_WORDS) -> bool:
    """A clause that is only an answer's first word ("Yes,", "Certainly!", "Of course,", "Claro,")."""
    said = _plain_words(clause)
    return bool(said) and " ".join(said) in {unaccented(o) for o in words.REPLY_OPENERS}


class ReplyGuard:
    """Between a model's streamed text and the caller. Text is let through a clause at a time (the speech side
    waits for whole clauses anyway); the reply ends at a line break or after `max_sentences` sentences; a clause
    that leaks (see `leaks`) ends it, and when nothing was let through yet, `fallback` is said instead (a callable
    is asked only then). `vet(clause)` may name what else a clause must not say (a fact nobody gave:
    `loop.grounding._scope.FactCheck`); such a clause ends the reply too, and `vet_fallback` (else `fallback`) is
    said when nothing was said yet.
    `echoes(text)` tells whether the reply's opening words are the caller's own latest words ("whole", "prefix",
    None): a first clause that begins them is held until the next one shows whether the reply only repeats the
    caller ("Yes, please." back to a "Yes, please."), which is not said (`vet_fallback` is).
    `ending`: said after a reply caught mid-sentence ("To book seats for Starfall at 7.30," before "the caller
    should call the function"): the tool's data, so the caller still hears the answer.
    `fired` names what was caught (None: nothing)."""

    def __init__(self, tool_names: Iterable[str] = (), prompt: str = "", fallback: str | Callable[[], str] = "",
                 max_sentences: int = 2, vet: Callable[[str], str | None] | None = None,
                 vet_fallback: str | Callable[[], str] = "",
                 echoes: Callable[[str], str | None] | None = None, ending: str = "",
                 words: ModuleType = DEFAULT_WORDS) -> None:
        self.tool_names = [n for n in tool_names if n]
        self.grams = prompt_ngrams(prompt, language=words) if prompt else set()
        self._fallback = fallback
        self.max_sentences = max_sentences
        self.vet, self.vet_fallback, self.echoes, self.ending = vet, vet_fallback, echoes, ending
        self.words = words  # the reply's language (`loop.locale`): its openers and courtesies
        self.held = ""  # opening words that are so far the caller's own: said once the reply shows its own words
        self.pending = ""
        self.said = ""
        self.fired: str | None = None
        self.done = False

    def feed(self, delta: str) -> str:
        """Text that may be said now ("" while a clause is incomplete). Check `done` after each call."""
        if self.done:
            return ""
        self.pending += delta
        out = []
        while not self.done and (m := CLAUSE_END.search(self.pending)):
            clause, self.pending = self.pending[: m.end()], self.pending[m.end():]
            out.append(self._let(clause, newline="\n" in m.group()))
        # a leak in the clause's whole words so far is one in the clause: end it now rather than generate the rest
        # ("You should call the outage function to report ..." is caught at "function", ~10 tokens sooner)
        whole_words = self.pending if self.pending.endswith(" ") else self.pending.rpartition(" ")[0]
        if not self.done and whole_words.strip() and \
                (found := leaks(self.said + self.held + whole_words, self.tool_names, self.grams, pack=self.words)):
            out.append(self._instead(found[0], leak=True))
        return "".join(out)

    def finish(self, cut: bool = False) -> str:
        """The end of the stream: the last, unterminated clause if it may be said (or the fallback). `cut`: the
        model was stopped mid-reply, so an unfinished last clause is dropped when something was already said."""
        if self.done:
            return ""
        tail, self.pending = self.pending, ""
        if cut and self.said.strip() and not re.search(r"[.!?]['\")\]]*\s*$", tail):
            tail = ""
        out = self._let(tail, newline=False, last=True) if tail.strip() or self.held else ""
        self.done = True
        if not self.said.strip() and not out.strip() and self.fallback and self.fired is None:
            self.fired = "empty reply"
            out = self.said = self.fallback
        return out

    @property
    def fallback(self) -> str:
        """What is said instead of a reply that could not be (a callable is asked only when it is needed)."""
        if callable(self._fallback):
            self._fallback = self._fallback()
        return self._fallback

    def say(self, text: str) -> str:
        """Words the code itself decided (a question for a missing value, the scope sentence): said as they are,
        and the reply ends with them."""
        self.said += text
        self.done = True
        return text

    def _let(self, clause: str, newline: bool, last: bool = False) -> str:
        text = clause.rstrip("\n") if newline else clause
        if newline:
            self.done = bool((self.said + text).strip())  # a line break after words ends a spoken reply
        if not text.strip() and not self.held:
            return ""
        if not self.said.strip():
            text, self.held = self.held + text, ""
            if self.echoes is not None and (echo := self.echoes(text)) is not None:
                if echo == "prefix" and not (last or self.done):
                    self.held = text  # "Yes," of the caller's "Yes, please.": the next clause decides
                    return ""
                return self._instead("echo: the caller's own words")
            if self.vet is not None and not (last or self.done) and _only_an_opener(text, self.words):
                self.held = text  # "Yes," alone says nothing: the clause after it decides whether it is said
                return ""
        found = leaks(self.said + text, self.tool_names, self.grams, pack=self.words)
        vetted = self.vet(text) if self.vet is not None and not found else None
        if found or vetted:
            return self._instead(found[0] if found else vetted, leak=bool(found))
        self.said += text
        if len(_SENTENCE_END.findall(self.said)) >= self.max_sentences:
            self.done = True  # two sentences said: that is a whole spoken reply
        return text

    def _instead(self, fired: str, leak: bool = False) -> str:
        """A clause that may not be said ends the reply; when nothing was said yet, the fallback is."""
        self.fired, self.done = fired, True
        if self.said.strip() and not says_nothing(self.said, self.words):
            if self.ending and not re.search(r"[.!?][\"')\]]*\s*$", self.said):  # cut mid-sentence
                self.said += " " + self.ending
                return " " + self.ending
            return ""
        instead = self.vet_fallback() if callable(self.vet_fallback) else self.vet_fallback
        instead = self.fallback if leak or not instead else instead
        # "Sure, I can help with that." and then the leak: the courtesy alone would leave the caller with nothing
        if self.said.strip() and instead.startswith(self.said.strip()):
            instead = instead[len(self.said.strip()):].lstrip()  # the fallback opens with the same courtesy
        joined = f"{self.said.rstrip()} {instead}" if self.said.strip() else instead
        out, self.said = joined[len(self.said):], joined
        return out
