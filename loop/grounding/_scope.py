"""Say only what is known, for any agent: what it is for, whether the caller's words are about that, and a check
of the facts in a spoken reply against what the conversation holds. No model call: words and sets only.

- `scope_sentence`: the agent's own `scope` sentence, else one built from its tools' names ("Sorry, I can only
  help with orders, deliveries and refunds here.");
- `out_of_scope`: the caller's words share nothing with the agent's tools, prompt or conversation so far, and are
  not a greeting, thanks, an answer to the agent's question or an identifier ("What is the capital of France?");
- `out_of_scope` also holds a question for something the prompt lists as not the agent's, word for word ("no new
  boiler quotes"); what the prompt says for a question in scope is `loop.grounding._prompt_answer`'s.
The check of the facts in a spoken reply is `loop.grounding._facts.FactCheck`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import Any

from loop import locale
from loop.grounding._arg_kinds import name_words
from loop.grounding._heard import identifier_candidates, spoken, stem, word_stem, written_words
from loop.grounding.speakable import QUOTE as _QUOTE
from loop.locale import DEFAULT_WORDS, unaccented
from loop.types import Message, ModelRequest

_VERBS = {"get", "check", "look", "lookup", "find", "search", "list", "show", "fetch", "read", "issue", "update",
          "change", "set", "create", "make", "add", "remove", "delete", "cancel", "book", "reserve", "place",
          "submit", "send", "report", "transfer", "request", "schedule", "reschedule", "track", "query", "view",
          "open", "close", "start", "stop", "pay", "modify", "edit", "amend", "log", "raise", "file", "give", "tell",
          "do", "run", "call", "confirm", "describe", "explain", "say", "see", "hand", "escalate", "is", "has"}
_DROP = {"status", "info", "information", "details", "detail", "by", "for", "of", "to", "the", "a", "an", "and",
         "with", "from", "my", "your", "new", "all", "current", "latest", "free", "available", "open", "on", "in",
         "at", "data", "record", "records", "lookup", "id", "number"}
_HANDOVER = {"human", "person", "agent", "operator", "staff", "someone", "manager", "supervisor", "representative"}
_THE = {"menu", "weather", "news"}  # said with "the": "help with the menu"
_UNCOUNTED = {"availability", "information", "weather", "balance", "menu", "news", "stock", "service", "parking",
              "pricing", "billing", "support", "mail", "hours", "insurance", "feedback", "status"}
_STATUS = {"shipped", "dispatched", "delivered", "delayed", "processing", "processed", "ready", "fixed", "repaired",
           "completed", "finished", "open", "closed", "available", "unavailable", "booked", "reserved", "confirmed",
           "cancelled", "canceled", "restored", "resolved", "sunny", "raining", "rainy", "rain", "cloudy", "snow",
           "snowing", "stormy", "windy", "forecast", "temperature", "degrees", "approved", "refunded", "paid",
           "overdue", "pending", "waiting", "vacant", "sold", "expired", "scheduled", "arrived", "outage", "outages"}


@functools.cache
def _filler(words: ModuleType) -> frozenset[str]:
    """The words that say nothing about a topic in the language `words`: its request's words (REQUEST_WORDS), and
    its FILLER."""
    return spoken(words).request | words.FILLER


@functools.cache
def when_words(words: ModuleType) -> frozenset[str]:
    """Words that name a day (the pack's WEEKDAYS, MONTHS, DAYS_NAMED): a value, not a topic or a name."""
    return frozenset({*words.WEEKDAYS, *words.MONTHS, *words.DAYS_NAMED})


def _plural(word: str) -> str:
    if word in _UNCOUNTED or (word.endswith("s") and not word.endswith("ss")):
        return word
    if re.search(r"[^aeiou]y$", word):
        return word[:-1] + "ies"
    return word + ("es" if re.search(r"(?:s|x|z|ch|sh)$", word) else "s")


def _topic(tool: dict[str, Any]) -> str | None:
    """`lookup_order` -> "orders", `delivery_status` -> "deliveries", `transfer_to_human` -> None (a hand-over)."""
    words = [w for w in name_words(str((tool.get("function") or tool).get("name", ""))) if w not in _VERBS | _DROP]
    if len(words) > 1 and words[0] == "order":  # order_pizza: the verb
        words = words[1:]
    if not words or set(words) & _HANDOVER:
        return None
    return ("the " if words[-1] in _THE else "") + " ".join([*words[:-1], _plural(words[-1])])


@functools.cache
def _listed_else(words: ModuleType) -> re.Pattern[str]:
    """A line of the prompt that lists what the agent is not for (the pack's ELSE_LISTED)."""
    return re.compile(words.ELSE_LISTED, re.IGNORECASE)


def scope_sentence(request: ModelRequest) -> str:
    """What the agent is for, in one sentence: its own `scope`, else the reply its prompt quotes for anything else
    ('anything else (the weather, ...): "Sorry, I can only help with repairs here."'), else one built from its
    tools."""
    if request.scope.strip():
        return request.scope.strip()
    system = next((m.content for m in request.messages if m.role == "system"), "")
    said = locale.get(request.language)
    for line in system.splitlines():
        if "->" not in line and _listed_else(said).search(line) and (quotes := _QUOTE.findall(line)):
            return quotes[-1].strip()
    topics = list(dict.fromkeys(t for t in map(_topic, request.tools) if t))
    words = {t: {stem(w) for w in t.split()} for t in topics}  # "rooms" is said in "room availability"
    topics = [t for t in topics if not any(u != t and words[t] <= words[u] for u in topics)]
    if not topics:
        return said.NO_SCOPE
    listed = topics[0] if len(topics) == 1 else ", ".join(topics[:-1]) + said.AND + topics[-1]
    return said.SCOPE.format(things=listed)


def topic_stems(text: str, stop: frozenset[str], words: ModuleType = DEFAULT_WORDS, shortest: int = 3,
                joined: bool = True) -> set[str]:
    """The stems of the words of `text` that may say what it is about: lower case, accents folded ("cuánto" is one
    word), but the words of `stop` (the pack's words that say nothing of it) and those shorter than `shortest`
    letters. `joined`: a contraction is one word ("don't": the pack's FILLER lists them whole) and so is a phrasal
    verb ("check out": its COMPOUND_VERBS), as a caller's topic is read; else letters only ("when's" is "when"), as
    a tool's words are (`loop.grounding.tool_choice`). The one tokeniser of what words are about."""
    folded = unaccented(text.lower()).replace("_", " ")
    said = re.findall(r"[a-z][a-z']+", _compounds(folded, words)) if joined else re.findall(r"[a-z]+", folded)
    written = written_words(text)
    return {word_stem(written.get(w, w), words) for w in said if len(w) >= shortest and w not in stop}


def _stems(text: str, language: ModuleType = DEFAULT_WORDS) -> set[str]:
    return topic_stems(text, _filler(language), language)


Groups = tuple[frozenset[str], ...]  # stems of words said for the same thing


@functools.cache
def related_groups(language: str = "en", agent: tuple[tuple[str, ...], ...] = ()) -> Groups:
    """The stems of the words that say the same thing: the language's (its pack's RELATED_WORDS: asking when,
    asking how much) and the agent's own (`Agent(related=...)`: "fix" and "garage" for a repair)."""
    pack = locale.get(language)
    return tuple(frozenset(stem for w in group for stem in _entry_stems(w, pack))
                 for group in [*pack.RELATED_WORDS, *agent])


def _entry_stems(entry: str, pack: ModuleType) -> set[str]:
    """A related entry's stems as a caller's words are read: "drop off" as the one word "dropoff", "not working" as
    "working" (its filler said nothing); a single word as it is."""
    return _stems(entry, pack) if re.search(r"[\s-]", entry.strip()) else {word_stem(entry, pack)}


def _groups(request: ModelRequest) -> Groups:
    return related_groups(request.language, request.related)


def _related(stems: set[str], groups: Groups) -> set[str]:
    out = set(stems)
    for group in groups:
        if stems & group:
            out |= group
    return out


def _schema_words(schema: Any) -> Iterable[str]:
    """Property names, descriptions and enum values of a tool's parameters, nested ones too."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "properties" and isinstance(value, dict):
                yield from (str(k) for k in value)
            if key in ("description", "enum", "examples"):
                yield str(value)
            yield from _schema_words(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _schema_words(item)


@functools.cache
def _negative(words: ModuleType) -> re.Pattern[str]:
    return re.compile(words.NEGATIVE, re.IGNORECASE)


def _prompt_topics(system: str, words: ModuleType = DEFAULT_WORDS) -> str:
    """The prompt's sentences that say what the agent does, not what it does not ("anything but their orders,
    like the weather" names the weather as out of scope: the pack's NEGATIVE)."""
    return " ".join(s for s in re.split(r"(?<=[.!?:])\s+|\n", system) if not _negative(words).search(s))


def _vocabulary(request: ModelRequest) -> set[str]:
    parts = [request.scope, *(w for c in request.cues.values() for w in c)]
    pack = locale.get(request.language)
    for tool in request.tools:
        fn = tool.get("function") or tool
        parts += [str(fn.get("name", "")), str(fn.get("description", "")), *_schema_words(fn.get("parameters"))]
    for m in request.messages:
        if m.role == "system":
            parts.append(_prompt_topics(m.content, pack))
        elif m.role in ("tool", "assistant"):
            parts.append(m.content)
    return _related(topic_stems(" ".join(parts), frozenset(), pack), _groups(request))


@functools.cache
def _compound(words: ModuleType) -> re.Pattern[str] | None:
    verbs, particles = words.COMPOUND_VERBS, words.COMPOUND_PARTICLES
    return re.compile(rf"\b({verbs})[- ]({particles})\b") if verbs else None


def _compounds(text: str, words: ModuleType = DEFAULT_WORDS) -> str:
    """"check out" / "check-out" -> "checkout": one word, not the request word "check" (the pack's
    COMPOUND_VERBS and COMPOUND_PARTICLES; none in a language without phrasal verbs)."""
    compound = _compound(words)
    return text if compound is None else compound.sub(r"\1\2", text)


def _excluded(request: ModelRequest, vocabulary: set[str]) -> set[str]:
    """What the prompt lists as not the agent's ('anything else (taxis, restaurants, the weather): "Sorry..."'),
    less what its tools and topics are about."""
    system = next((m.content for m in request.messages if m.role == "system"), "")
    pack = locale.get(request.language)
    listed = " ".join(_QUOTE.sub(" ", line) for line in system.splitlines() if _listed_else(pack).search(line))
    return _stems(listed, pack) - vocabulary


def _excluded_items(request: ModelRequest) -> list[set[str]]:
    """The things of two words or more the prompt lists as not the agent's, one by one, as stems ("You cannot help
    with anything else: no new boiler quotes, no plumbing" -> {new, boile, quote}): a caller who says every word of
    one (or a word for the same thing) asks for it."""
    system = next((m.content for m in request.messages if m.role == "system"), "")
    pack, items = locale.get(request.language), []
    joins = f"{re.escape(pack.AND.strip())}|{re.escape(pack.OR.strip())}"
    for line in system.splitlines():
        if "->" in line or not (m := _listed_else(pack).search(line)):
            continue
        for part in re.split(rf"[,;:()]|\b(?:{joins})\b", _QUOTE.sub(" ", line[m.end():])):
            if len(stems := _stems(part, pack)) >= 2:  # one word alone ("insurance") is `out_of_scope`'s count
                items.append(stems)
    return items


def _fresh(messages: Sequence[Message]) -> tuple[str, Message | None]:
    """What the caller said since the agent last spoke, and the agent's last message."""
    at = max((i for i, m in enumerate(messages) if m.role in ("assistant", "tool")), default=-1)
    words = " ".join(m.content for m in messages[at + 1:] if m.role == "user")
    return words, messages[at] if at >= 0 and messages[at].role == "assistant" else None


def _answers_the_agent(messages: Sequence[Message]) -> bool:
    """The caller's words answer what the agent just did: it asked a question, or its last step was a tool result
    with no words after it (a confirmation the caller changed: "Yes, but make it $30.")."""
    _, last_agent = _fresh(messages)
    at = max((i for i, m in enumerate(messages) if m.role in ("assistant", "tool")), default=-1)
    return (last_agent is not None and last_agent.content.rstrip().endswith("?")) or (
        at >= 0 and messages[at].role == "tool")


def _without_names(text: str, words: ModuleType = DEFAULT_WORDS) -> str:
    """The words but names and places ("Ana Silva.", "the capital of France"), which say nothing about a topic;
    days and months stay ("on Saturday": `when_words`)."""
    def keep(m: re.Match[str]) -> str:
        return m.group() if m.group().lower() in when_words(words) else " "

    return re.sub(r"(?<=\w )[A-Z][\w']*|^[A-Z][\w']*(?= [A-Z])", keep, text)


@functools.cache
def _change_opening(language: str) -> re.Pattern[str]:
    """A change said first thing (the pack's ANSWER_CHANGE within the first three words: "actually make it three",
    "um, Friday instead")."""
    change = "|".join(locale.get(language).ANSWER_CHANGE)
    return re.compile(rf"^\W*(?:[\w']+\W+){{0,2}}(?:{change})\b")


def _amends(fresh: str, request: ModelRequest) -> bool:
    """The caller changes what they asked before ("Actually make it three seats, my sister's coming too."): about
    the conversation by construction, whatever its words, once there is something before it to change."""
    earlier = [m for m in request.messages[:-1] if m.role == "user"]
    return bool(earlier) and bool(_change_opening(request.language).search(unaccented(fresh.lower())))


@functools.cache
def _greets(words: ModuleType) -> frozenset[str]:
    """A word that greets or thanks (the pack's SALUTATIONS and CLOSING_CUES): such a turn is never out of scope."""
    return frozenset(words.SALUTATIONS) | frozenset(words.CLOSING_CUES)


def out_of_scope(request: ModelRequest) -> bool:
    """The caller asked about something the agent is not for: their words since the agent last spoke share no word
    with its tools, its prompt's topics or the conversation's tool results (or no more than with what the prompt
    lists as anything else), and they are not a greeting, thanks, the answer to a question the agent asked, or an
    identifier."""
    if not request.messages or request.messages[-1].role != "user":
        return False
    fresh, _ = _fresh(request.messages)
    pack = locale.get(request.language)
    words = set(re.findall(r"[a-z']+", unaccented(fresh.lower())))
    if words & _greets(pack) or identifier_candidates(fresh) or _answers_the_agent(request.messages) \
            or _amends(fresh, request):
        return False
    vocabulary = _vocabulary(request)  # "Check-out" is no name at a hotel:
    things = _things_among_filler(request)  # "the fine" at a parking desk
    caller = _caller_stems(_without_names(fresh, pack), pack, things) | (
        _caller_stems(fresh, pack, things) & vocabulary)
    if not caller:
        return False
    if any(item <= _related(caller, _groups(request)) for item in _excluded_items(request)):
        return True  # "How much would a new combi boiler cost?": "no new boiler quotes", every word of it
    about = {w for w in caller if _related({w}, _groups(request)) & vocabulary}
    elsewhere = {w for w in caller & _excluded(request, vocabulary) if w not in about}
    return not about or len(elsewhere) >= len(about)  # "Do you sell used cars?": selling is listed, cars are not


def _fit(caller: set[str], own: set[str], groups: Groups) -> int:
    """How well words (`own`'s stems) fit the caller's: 2 a word of theirs, 1 a word for the same thing ("close"
    for "open", "cost" for "price": `groups`)."""
    return sum(2 if w in own else 1 if _related({w}, groups) & own else 0 for w in caller)


def price_asked(said: str, pack: ModuleType) -> set[str]:
    """{the stem of the pack's PRICE_ASKED} when `said` asks how much (a word of its group in RELATED_WORDS, filler
    or not: "how much are they?"), else {}."""
    price = word_stem(pack.PRICE_ASKED, pack)
    return {price} if price in _related(topic_stems(said, frozenset(), pack), related_groups(pack.LANGUAGE)) else set()


def _caller_stems(said: str, pack: ModuleType, things: set[str]) -> set[str]:
    """The stems of the caller's words that may say what they ask about: the pack's filler left out, but for a
    filler word the agent's own words make a thing (`things`, `_things_among_filler`: "the fine" at a parking
    desk)."""
    return _stems(said, pack) | (topic_stems(said, frozenset(), pack) & things)


def _things_among_filler(request: ModelRequest) -> set[str]:
    """The stems of the pack's filler words whose plural the agent's prompt or tools say ("Parking fines and
    appeals are handled online": "fine" names a thing there, not "that's fine")."""
    pack = locale.get(request.language)
    system = next((m.content for m in request.messages if m.role == "system"), "")
    text = " ".join([system, *(_name_and_description(t) for t in request.tools)])
    said = set(re.findall(r"[a-z]+", unaccented(text.lower())))
    return {word_stem(w, pack) for w in _filler(pack) if f"{w}s" in said or f"{w}es" in said}


def _name_and_description(tool: dict[str, Any]) -> str:
    fn = tool.get("function") or tool
    return f"{fn.get('name', '')} {fn.get('description', '')}"


def closest_reads(reads: Sequence[dict[str, Any]], request: ModelRequest) -> list[dict[str, Any]]:
    """Of reads the caller's words fill alike (one job number fills `repair_status` and `price_quote`), those
    whose name and description share most with the caller's words ("how much ..." -> the price, with the words
    for the same thing: `related_groups`); all of them when their words tell none apart."""
    said = _fresh(request.messages)[0].lower()
    pack = locale.get(request.language)
    caller = {word_stem(w, pack) for w in re.findall(r"[a-z']{3,}", said) if w not in spoken(pack).request}
    groups = _groups(request)

    def score(tool: dict[str, Any]) -> int:
        fn = tool.get("function") or tool
        return _fit(caller, _stems(f"{fn.get('name', '')} {fn.get('description', '')}".replace("_", " "), pack), groups)

    best = max(map(score, reads), default=0)
    return [t for t in reads if score(t) == best] if best else list(reads)
