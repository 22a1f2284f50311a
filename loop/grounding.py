"""Ground tool arguments in the conversation: a small local model may only copy values, never invent them.

Small models invent arguments ("order 12345", "123 Main St", "New York"). Before generating, each tool's JSON
schema is narrowed to what the conversation actually contains, and the grammar built from it makes anything
else impossible to emit:

- numbers (`number`/`integer`): an amount the caller said, in digits or spoken ("$15", "35.50", "twenty dollars",
  "twelve dollars and fifty cents"); a bare number of 4+ digits ("order 4567") is an identifier, not an amount;
- identifiers (string properties named `id` / `*_id`, or described as digits): a token with a digit, or a run of
  spoken digits ("four five six seven" -> "4567"), from the caller's words or the tools' results, but not one the
  caller just took back ("order 1234, sorry, I mean 7788");
- names (properties called city, country, name, `*_name`, ...): a run of capitalised words the caller said since
  the agent last spoke, other than a sentence's first word ("Is anything delayed for Austin?" -> "Austin");
- other free strings: a span of at most 8 consecutive words the caller said since the agent last spoke.
Enums, patterns, formats, booleans and nested values stay as the schema says. A call already made with the same
arguments is not offered again.

A tool whose required argument has no candidate cannot be called, so "I want a refund" cannot become a refund of
an invented amount: the model may still pick it, and is then made to ask for what is missing (`ask_for`).
"""

from __future__ import annotations

import copy
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from loop.qwen_format import tool_name
from loop.types import Message, ToolCall

_UNIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
               "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TEN_WORDS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_UNITS = {w: i for i, w in enumerate(_UNIT_WORDS)}
_TENS = {w: 10 * (i + 2) for i, w in enumerate(_TEN_WORDS)}
_DIGITS = {**{w: str(i) for i, w in enumerate(_UNIT_WORDS[:10])}, "oh": "0"}
_SCALE = {"hundred", "thousand", "dollars", "dollar", "bucks", "cents", "cent", "and", "a"}
_NUM_RE = re.compile(r"(\$)?(?<![\w.])(\d+(?:,\d{3})*(\.\d+)?)(?!\w)( ?(?:dollars?|bucks|euros?|pounds?|%|percent))?",
                     re.IGNORECASE)
_ID_RE = re.compile(r"[A-Za-z0-9-]*\d[A-Za-z0-9-]*")  # a whole token with a digit: not "$600", not "35.50"
_MAX_SPAN_WORDS = 8
_CORRECTION = re.compile(r"\b(?:i mean|i meant|actually|make that|rather|correction|sorry,? no|no,? sorry|no,? wait)\b",
                         re.IGNORECASE)
_NAME_PROPS = {"city", "town", "country", "state", "region", "name", "company", "person"}
_PRONOUNS = {"I", "I'm", "I'd", "I've", "I'll"}
_VOCATIVE = re.compile(r",\s*[A-Z][\w'-]*\s*$")  # a name after the last comma, closing the sentence


def words_to_number(text: str) -> float | None:
    """'twenty' -> 20, 'one hundred' -> 100, 'twelve dollars and fifty cents' -> 12.5, '$35.50' -> 35.5."""
    cleaned = text.lower().replace(",", "").replace("$", "").strip()
    try:
        return float(cleaned)
    except ValueError:
        pass
    dollars, cents, current, seen = 0.0, 0.0, 0.0, False
    for word in re.findall(r"[a-z]+|\d+(?:\.\d+)?", cleaned.replace("-", " ")):
        if word in _UNITS or word in _TENS:
            current += _UNITS.get(word, 0) + _TENS.get(word, 0)
        elif re.fullmatch(r"\d+(?:\.\d+)?", word):
            current += float(word)
        elif word == "hundred":
            current = (current or 1) * 100
        elif word == "thousand":
            dollars, current = (dollars + (current or 1)) * 1000, 0
        elif word in ("cents", "cent"):
            cents, current = current, 0
        elif word in ("dollars", "dollar", "bucks"):
            dollars, current = dollars + current, 0
        else:
            continue
        seen = True
    return dollars + current + cents / 100 if seen else None


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower().replace("-", " "))


def number_candidates(text: str) -> list[float]:
    """Every amount in `text`: digits ("$15", "35.50", "600 dollars", "12"), and runs of spoken number words."""
    # a bare 4+ digit number ("order 4567") names something; an amount has a unit, decimals or few digits
    found = [float(m.group(2).replace(",", "")) for m in _NUM_RE.finditer(text)
             if m.group(1) or m.group(3) or m.group(4) or len(m.group(2)) < 4]
    run: list[str] = []
    for word in [*_words(text), "."]:
        if word in _UNITS or word in _TENS or word in ("hundred", "thousand") or (run and word in _SCALE):
            run.append(word)
            continue
        while run and run[-1] in ("and", "a"):
            run.pop()
        if run and (value := words_to_number(" ".join(run))) is not None:
            found.append(value)
        run = []
    return list(dict.fromkeys(found))


def id_candidates(text: str) -> list[str]:
    """Identifiers in `text`: tokens with a digit, and runs of 3+ spoken digits ("four five six seven")."""
    tokens = (t.strip(".,!?;:()#\"'") for t in text.split())
    found = [t for t in tokens if _ID_RE.fullmatch(t)]
    # Whisper often writes a number read digit by digit as "4 5 6 7": that is one identifier
    found += [m.replace(" ", "") for m in re.findall(r"\b\d(?: \d\b){2,}", text)]
    run: list[str] = []
    for word in [*_words(text), "."]:
        if word in _DIGITS:
            run.append(_DIGITS[word])
            continue
        if len(run) >= 3:
            found.append("".join(run))
        run = []
    return list(dict.fromkeys(f for f in found if f))


def retracted_ids(text: str) -> set[str]:
    """Identifiers the speaker took back: "order 1234, sorry, no, I mean 7788" retracts 1234 (an id said only
    before the last correction, when another id follows it)."""
    marks = list(_CORRECTION.finditer(text))
    if not marks:
        return set()
    before, after = text[: marks[-1].start()], text[marks[-1].end():]
    later = set(id_candidates(after))
    return set(id_candidates(before)) - later if later else set()


def _span_words(text: str) -> list[str]:
    """Words with the characters a span may hold; a trailing comma is kept (it may join two words)."""
    return [w for w in (re.sub(r"[^\w'&/#,-]", "", w) for w in text.split()) if w.strip(",")]


def proper_names(text: str) -> list[str]:
    """Runs of capitalised words that do not open a sentence ("deliveries to New York" -> "New York")."""
    names: list[str] = []
    for sentence in re.split(r"[.!?\n]+", text):
        sentence = _VOCATIVE.sub("", sentence)  # "glad to see you again, Phil": whom they talk to, not a place
        run: list[str] = []
        for i, raw in enumerate(sentence.split()):
            word = re.sub(r"[^\w'&-]", "", raw)
            capital = bool(word) and word[0].isupper() and i > 0 and word not in _PRONOUNS
            if capital:
                run.append(word)
            if run and (not capital or raw.endswith(",")):
                names.append(" ".join(run))
                run = []
        if run:
            names.append(" ".join(run))
    return list(dict.fromkeys(names))


def span_pattern(text: str, max_words: int = _MAX_SPAN_WORDS) -> str | None:
    """A regex matching any run of up to `max_words` consecutive words of `text`: no other punctuation than a
    comma between two words ("12 High Street, Leeds")."""
    words = _span_words(text)
    if not words:
        return None
    starts = []
    for i in range(len(words)):
        tail = words[i: i + max_words]
        pattern = ""
        for before, w in reversed(list(itertools.pairwise(tail))):
            comma = "(,)?" if before.endswith(",") else ""
            pattern = f"({comma} {w.rstrip(',')}{pattern})?"
        starts.append(tail[0].strip(",") + pattern)
    return "^(" + "|".join(starts) + ")$"


def _kind(name: str, schema: dict[str, Any]) -> str | None:
    if any(k in schema for k in ("enum", "const", "pattern", "format", "anyOf", "oneOf", "$ref")):
        return None
    kind = schema.get("type")
    if kind in ("number", "integer"):
        return kind
    if kind != "string":
        return None
    described = str(schema.get("description", "")).lower()
    if name == "id" or name.endswith("_id") or "digits" in described:
        return "id"
    return "name" if name in _NAME_PROPS or name.endswith("_name") else "text"


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

    @classmethod
    def of(cls, messages: Sequence[Message]) -> Evidence:
        return cls(said="\n".join(m.content for m in messages if m.role == "user"),
                   heard="\n".join(m.content for m in messages if m.role in ("user", "tool")),
                   fresh="\n".join(m.content for m in since_agent_spoke(messages)),
                   done={c.signature for m in messages for c in m.tool_calls},
                   retracted=retracted_ids(next((m.content for m in reversed(messages) if m.role == "user"), "")))


def _narrow(name: str, schema: dict[str, Any], ev: Evidence) -> dict[str, Any] | None:
    """The property's schema narrowed to the conversation's values; None when there is none to copy."""
    kind = _kind(name, schema)
    if kind in ("number", "integer"):
        values = [int(v) if v.is_integer() else v for v in number_candidates(ev.said)]
        values = [v for v in values if kind == "number" or isinstance(v, int)]
        return {"enum": values} if values else None
    if kind == "id":
        ids = [i for i in id_candidates(ev.heard) if i not in ev.retracted]
        return {"enum": ids} if ids else None
    if kind == "name":
        names = proper_names(ev.fresh)
        return {"enum": names} if names else None
    if kind == "text":
        pattern = span_pattern(ev.fresh)
        return {"type": "string", "pattern": pattern} if pattern else None
    return schema


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


def ground(tools: Sequence[dict[str, Any]], messages: Sequence[Message]
           ) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """Copies of `tools` whose top-level arguments may only take values found in the conversation, and for each
    tool left out the required arguments nothing in the conversation can fill (empty when its only possible
    call was already made, or the caller has not spoken since the agent last did: nothing to ask them)."""
    ev = Evidence.of(messages)
    grounded, missing = [], {}
    for tool in tools:
        tool = copy.deepcopy(tool)
        fn = tool.get("function") or tool
        params = fn.get("parameters") or {}
        props = params.get("properties") or {}
        required = set(params.get("required") or [])
        unfilled = []
        for name, schema in list(props.items()):
            narrowed = _narrow(name, schema, ev)
            if narrowed is None and name in required:
                unfilled.append(name)
            elif narrowed is None:
                del props[name]
            else:
                props[name] = narrowed
        if unfilled:  # worth asking the caller only when it is their words the call lacks
            missing[str(fn.get("name", ""))] = unfilled if ev.fresh else []
        elif _drop_repeats(str(fn.get("name", "")), props, ev.done):
            missing[str(fn.get("name", ""))] = []
        else:
            grounded.append(tool)
    return grounded, missing


def ground_tools(tools: Sequence[dict[str, Any]], messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Only the tools that can be called with what the conversation holds, their arguments narrowed to it."""
    return ground(tools, messages)[0]


def answered_ask(tools: Sequence[dict[str, Any]], messages: Sequence[Message],
                 grounded: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The grounded tools whose missing arguments the agent's last words asked for (`ask_for`), once the caller
    has answered: "Could you tell me the order number?" - "It's 4567." completes that call, not a new topic."""
    if not messages or messages[-1].role != "user":
        return []
    at = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "assistant"), None)
    if at is None or messages[at].tool_calls:
        return []
    _, lacked = ground(tools, messages[:at])  # what each tool lacked when the agent asked
    asked = messages[at].content.strip()
    found = []
    for tool in grounded:  # a call the question asked for all of (not one that also took a loose span of words)
        fn = tool.get("function") or tool
        need = lacked.get(str(fn.get("name", "")))
        if need and ask_for(need) == asked and set(need) == set((fn.get("parameters") or {}).get("required") or []):
            found.append(tool)
    return found


def fresh_reads(tools: Sequence[dict[str, Any]], messages: Sequence[Message], writes: frozenset[str]
                ) -> list[dict[str, Any]]:
    """Reads that the caller's words since the agent last spoke fill on their own ("Which city is order 1234 going
    to?" fills lookup_order). A read the model names but cannot fill yields to these rather than asking the
    caller for what they were asking about (a write still asks: the caller must say how much to refund)."""
    if not messages or messages[-1].role != "user":
        return []
    fresh = since_agent_spoke(messages)
    return [t for t in ground(tools, fresh)[0] if tool_name(t) not in writes and _filled_by_values(t)]


def _filled_by_values(tool: dict[str, Any]) -> bool:
    """Every required argument is a value the caller said (an id, an amount, a name), not any span of words."""
    params = (tool.get("function") or tool).get("parameters") or {}
    required = params.get("required") or []
    return bool(required) and all("enum" in (params.get("properties") or {}).get(r, {}) for r in required)


def uncued(tools: Sequence[dict[str, Any]], messages: Sequence[Message], cues: dict[str, tuple[str, ...]]
            ) -> list[dict[str, Any]]:
    """`tools` without those whose cue words (`Tool.cues`) the caller has not said since the agent last spoke."""
    if not cues:
        return list(tools)
    fresh = " ".join(m.content for m in since_agent_spoke(messages)).lower()

    def heard(words: tuple[str, ...]) -> bool:
        return any(re.search(rf"\b{re.escape(w.lower())}\b", fresh) for w in words)

    return [t for t in tools if tool_name(t) not in cues or heard(cues[tool_name(t)])]


_STOP = {"about", "with", "from", "that", "this", "your", "what", "have", "they", "them", "there", "their", "would",
         "could", "should", "will", "just", "like", "want", "please", "tell", "give", "need"}


def _stems(text: str) -> set[str]:
    return {w[:5] for w in re.findall(r"[a-z]{4,}", text.lower().replace("_", " ")) if w not in _STOP}


def about_tool(tool: dict[str, Any], messages: Sequence[Message]) -> bool:
    """The caller's words since the agent last spoke share a word with the tool's name or description ("refund",
    "order"): asking them for the tool's missing arguments makes sense only then, not after a stray remark."""
    fresh = " ".join(m.content for m in since_agent_spoke(messages))
    fn = tool.get("function") or tool
    return bool(_stems(fresh) & _stems(f"{fn.get('name', '')} {fn.get('description', '')}"))


_CLOSING_CUES = {"thanks", "thank", "bye", "goodbye", "cheers"}
_CLOSING_WORDS = _CLOSING_CUES | {
    "you", "so", "much", "very", "that's", "thats", "that", "is", "was", "all", "it", "good", "great", "ok", "okay",
    "perfect", "brilliant", "lovely", "wonderful", "awesome", "excellent", "have", "a", "nice", "day", "for", "now",
    "your", "help", "the", "alright", "fine", "no", "nothing", "else", "i'm", "im", "done", "then", "see", "ya",
    "later", "take", "care", "appreciate", "really", "and", "oh", "right", "yes", "yeah", "many", "again", "bye-bye",
}


def closing_remark(text: str) -> bool:
    """"Great, thanks, that's all. Bye!": thanks or a goodbye and nothing else, which no tool answers."""
    words = re.findall(r"[a-z'-]+|\d", text.lower())
    return bool(words) and bool(_CLOSING_CUES & set(words)) and all(w in _CLOSING_WORDS for w in words)


def ask_for(arguments: Sequence[str]) -> str:
    """A spoken question for missing arguments: ["order_id", "amount"] -> "... the order number and the amount?"."""
    names = [" ".join("number" if w == "id" else w for w in a.split("_")) for a in arguments]
    listed = " and ".join(f"the {n}" for n in names) if len(names) < 3 else (
        ", ".join(f"the {n}" for n in names[:-1]) + f" and the {names[-1]}")
    return f"Sure, I can help with that. Could you tell me {listed}?"
