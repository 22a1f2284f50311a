"""Which tools the caller's words speak of, and what the agent asked them for: the choices around grounding.

- `about_tool`, `named_writes`: the tools the caller's words since the agent last spoke name or share words with;
- `asked_for`, `answered_ask`, `ask_for`: the question the agent asked for a tool's missing arguments, and whether
  the caller's answer completes that call;
- `fresh_reads`, `uncued`, `unnamed_id_writes`: the tools a turn may call at all (a read its words fill, a tool
  whose cue words were said, a write of identifiers only when it was named).

What each argument may hold is `loop.grounding.arguments`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from loop import locale
from loop.approvals import not_approved_reason
from loop.grounding._arg_kinds import arg_kind, label, non_null
from loop.grounding._facts import asks
from loop.grounding._heard import spoken, stem, word_stem, written_words
from loop.grounding._schema import description_of, properties, required_of
from loop.grounding._scope import price_asked, topic_stems
from loop.grounding.arguments import ground, id_words, since_agent_spoke
from loop.locale import DEFAULT_WORDS, unaccented
from loop.tools import tool_name
from loop.types import Message

MAX_CHOICES_SAID = 5  # a question for one listed argument says its choices when there are no more than these


def asked_for(tools: Sequence[dict[str, Any]], messages: Sequence[Message], writes: frozenset[str] = frozenset(),
              language: str = "en") -> dict[str, list[str]]:
    """The tools whose missing arguments the agent's last words asked for (`ask_for`), with what each lacked then,
    once the caller has answered ("Could you tell me the order number?" - "It's 4567.")."""
    if not messages or messages[-1].role != "user":
        return {}
    at = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "assistant"), None)
    if at is None or messages[at].tool_calls:
        return {}
    _, lacked = ground(tools, messages[:at], language)  # what each tool lacked when the agent asked
    words = locale.get(language)  # the question was asked in the call's language
    system = next((m.content for m in messages if m.role == "system"), "")
    asked = _question_in_force(messages, at, words)
    found = {tool_name(t): lacked[tool_name(t)] for t in tools
             if lacked.get(tool_name(t)) and asked.endswith(_question(lacked[tool_name(t)], t, words, system))}
    # the call the caller's request had already filled in part ("the roaming day pass": add_data_pack's pack) is
    # the one the question was for; else, a read and a write lacking it alike, the answer is for the read
    began = {n: v for n, v in found.items() if set(_required(n, tools)) - set(v)}
    reads = {n: v for n, v in found.items() if n not in writes}
    return began or reads or found


def _question_in_force(messages: Sequence[Message], at: int, words: ModuleType) -> str:
    """The agent's words at `at`; when the caller cut them off while it asked its question again ("Sorry," of
    "Sorry, I didn't catch that. Could you tell me the day?"), the question they had heard before, which is what
    their answer answers."""
    said = messages[at].content.strip()
    before = next((m.content.strip() for m in reversed(messages[:at]) if m.role == "assistant" and m.content.strip()),
                  "")
    question = re.split(r"(?<=[.!?])\s+", before)[-1]
    again = f"{words.NOT_CAUGHT} {question}"
    if said and not said.endswith("?") and question.endswith("?") and again.startswith(said) and said != again:
        return before
    return said


def _required(name: str, tools: Sequence[dict[str, Any]]) -> list[str]:
    return required_of(next((t for t in tools if tool_name(t) == name), {}))


def answered_ask(tools: Sequence[dict[str, Any]], messages: Sequence[Message], grounded: Sequence[dict[str, Any]],
                 writes: frozenset[str] = frozenset(), language: str = "en") -> list[dict[str, Any]]:
    """The grounded tools whose missing arguments the agent's last words asked for, now filled with values (not a
    call that also took a loose span of words): that answer completes the call, not a new topic."""
    asked = asked_for(tools, messages, writes, language)
    return [t for t in grounded if tool_name(t) in asked and _filled_by_values(t, asked[tool_name(t)])]


def fresh_reads(tools: Sequence[dict[str, Any]], messages: Sequence[Message], writes: frozenset[str],
                language: str = "en") -> list[dict[str, Any]]:
    """Reads that the caller's words since the agent last spoke fill on their own ("Which city is order 1234 going
    to?" fills lookup_order). A read the model names but cannot fill yields to these rather than asking the
    caller for what they were asking about (a write still asks: the caller must say how much to refund)."""
    if not messages or messages[-1].role != "user":
        return []
    fresh = [*(m for m in messages if m.role == "system"), *since_agent_spoke(messages)]  # the instructions too

    def others(tool: dict[str, Any]) -> list[dict[str, Any]]:
        return [t for t in tools if tool_name(t) != tool_name(tool)]

    # a read that needs nothing is called only for words that set it apart: "my pizza is late" is no question
    # for the menu, though the menu lists pizzas (so does the order they wait for)
    words = locale.get(language)
    # "Do you take old mattresses?": a read of the caller's own words, asked of by a word only it has
    question = asks(" ".join(m.content for m in since_agent_spoke(messages)), words)
    return [t for t in ground(tools, fresh, language)[0] if tool_name(t) not in writes
            and (_filled_by_values(t) or ((_no_arguments(t) or (question and _filled_by_values(t, required_of(t))))
                                          and about_tool(t, messages, others(t), words)))]


def id_reads_elsewhere(tools: Sequence[dict[str, Any]], messages: Sequence[Message], writes: frozenset[str],
                       tool: dict[str, Any], language: str = "en") -> bool:
    """The caller's words since the agent spoke fill a read that takes an identifier, and `tool` has no place for
    one: "booking number 48215, can you check it?" is about that booking, not `book_taxi(address, time, ...)`,
    which would drop the number they dictated."""
    if takes_id(tool):
        return False
    filled = {tool_name(read) for read in fresh_reads(tools, messages, writes, language)} - {tool_name(tool)}
    return any(takes_id(t) for t in tools if tool_name(t) in filled)  # as declared: a filled one holds its values


def id_holders(tools: Sequence[dict[str, Any]], grounded: Sequence[dict[str, Any]],
               missing: Mapping[str, Sequence[str]], messages: Sequence[Message],
               words: ModuleType = DEFAULT_WORDS) -> list[dict[str, Any]]:
    """The grounded tools that hold, in a declared identifier, one the caller said since the agent spoke, and that
    their words speak of: "a claim ... my policy number's HG318840" fills `report_claim(policy_number)`; a tool
    that lacks its own identifier (`claim_status`, six digits) gives way to them rather than ask for a number
    the caller did not mean (a write is still asked for the caller's yes)."""
    fresh = re.sub(r"[^0-9a-z]", "", " ".join(m.content for m in since_agent_spoke(messages)).lower())
    by_name = {tool_name(t): t for t in tools}

    def holds_fresh_id(tool: dict[str, Any]) -> bool:
        held = properties(tool)  # grounded: each identifier's values
        return any(str(v).lower() in fresh and re.search(r"\d", str(v))
                   for n in id_args(by_name.get(tool_name(tool), tool)) for v in held.get(n, {}).get("enum") or [])

    return [t for t in grounded if tool_name(t) not in missing and holds_fresh_id(t)
            and about_tool(by_name.get(tool_name(t), t), messages, (), words)]


def id_args(tool: dict[str, Any]) -> list[str]:
    """The tool's arguments that are identifiers (declared, or read from its schema), as the tool declares them."""
    described = description_of(tool)
    return [name for name, schema in (properties(tool) or {}).items()
            if (kind := arg_kind(name, non_null(schema) or {}, described)) is not None and kind.kind == "id"]


def lacks_id(tool: dict[str, Any], lacking: Sequence[str]) -> bool:
    """One of the arguments `tool` lacks is an identifier."""
    return bool(set(id_args(tool)) & set(lacking))


def takes_id(tool: dict[str, Any]) -> bool:
    """One of the tool's arguments is an identifier."""
    return bool(id_args(tool))


def fuller_writes(tools: Sequence[dict[str, Any]], grounded: Sequence[dict[str, Any]], reads: Sequence[dict[str, Any]],
                  messages: Sequence[Message], writes: frozenset[str], words: ModuleType = DEFAULT_WORDS
                  ) -> list[dict[str, Any]]:
    """Grounded writes that hold more of the caller's values than any read their words fill, and that their words
    speak of by a word no other tool has: "Can you bring parcel SB48207315 on Tuesday instead?" fills
    `track_parcel(code)` and `rearrange_delivery(code, day)`; only the write has a place for the Tuesday. (A write
    is still asked for the caller's yes.)"""
    def held(tool: dict[str, Any]) -> int:
        return sum(1 for schema in properties(tool).values() if "enum" in schema or "pattern" in schema)

    most = max(map(held, reads), default=0)
    by_name = {tool_name(t): t for t in tools}  # as declared: a grounded one holds values, not kinds
    # "I'm chasing ticket 318204, the one about my laptop charger": the ticket they dictated is a read's, and
    # open_ticket(name, device, problem) has no place for it, however much else it holds
    return [t for t in grounded if tool_name(t) in writes and held(t) > most
            and about_tool(t, messages, [o for o in tools if tool_name(o) != tool_name(t)], words)
            and not id_reads_elsewhere(tools, messages, writes, by_name.get(tool_name(t), t), words.LANGUAGE)]


def _no_arguments(tool: dict[str, Any]) -> bool:
    """A read that needs nothing ("When are you open?" -> opening_hours())."""
    return not required_of(tool)


def _filled_by_values(tool: dict[str, Any], asked: Sequence[str] = ()) -> bool:
    """Every required argument is a value the caller said (an id, an amount, a name, a street address read as
    one, whenever it was said), not any span of words; or, for an argument the agent asked for (`asked`), the span
    of the caller's answer ("Could you tell me the address?" - "It should go to 8 Quay Street.")."""
    props, required = properties(tool), required_of(tool)
    return bool(required) and all("enum" in (p := props.get(r, {})) or ("pattern" in p and (
        r in asked or p.get("x-kind") == "address")) for r in required)


def sole_value(schema: dict[str, Any]) -> Any:
    """The one value a grounded argument admits (an enum of one, or a pattern of one literal span such as
    `^(8( Quay( Street)))$`), else None."""
    if len(schema.get("enum") or []) == 1:
        return schema["enum"][0]
    pattern = schema.get("pattern")
    if not pattern or "enum" in schema:
        return None
    inner = pattern.removeprefix("^").removesuffix("$").replace("(", "").replace(")", "")
    if re.search(r"(?<!\\)[?*+|\[\]{}.]", inner):
        return None
    return re.sub(r"\\(.)", r"\1", inner) or None


def uncued(tools: Sequence[dict[str, Any]], messages: Sequence[Message], cues: dict[str, tuple[str, ...]]
            ) -> list[dict[str, Any]]:
    """`tools` without those whose cue words (`Tool.cues`) the caller has not said since the agent last spoke."""
    if not cues:
        return list(tools)
    fresh = " ".join(m.content for m in since_agent_spoke(messages)).lower()

    def heard(words: tuple[str, ...]) -> bool:
        return any(re.search(rf"\b{re.escape(w.lower())}\b", fresh) for w in words)

    return [t for t in tools if tool_name(t) not in cues or heard(cues[tool_name(t)])]


def _stems(text: str, words: ModuleType = DEFAULT_WORDS) -> set[str]:
    """What words of `text` a tool is told by: of four letters or more, but the pack's STOP_WORDS ("when's" is
    "when")."""
    return topic_stems(text, frozenset(words.STOP_WORDS), words, shortest=4, joined=False)


@functools.cache
def _number_stems(words: ModuleType) -> frozenset[str]:
    """The stems of a number's words in the language `words`: its number words and what counts digits
    (DIGIT_NOUNS)."""
    said = spoken(words)
    return frozenset(word_stem(w, words)
                     for w in [*said.units, *said.tens, words.HUNDRED, words.THOUSAND, *words.DIGIT_NOUNS])


def _tool_stems(tool: dict[str, Any], words: ModuleType = DEFAULT_WORDS) -> set[str]:
    """What a tool is about: its name, its description, its arguments' names and the values an argument lists
    ("four cheese" is one of place_order's pizzas)."""
    fn = tool.get("function") or tool
    props = (fn.get("parameters") or {}).get("properties") or {}
    listed = [str(v) for p in props.values() for v in (non_null(p) or {}).get("enum", []) if isinstance(v, str)]
    return _stems(" ".join([str(fn.get("name", "")), str(fn.get("description", "")), *props, *listed]), words)


def about_tool(tool: dict[str, Any], messages: Sequence[Message], besides: Sequence[dict[str, Any]] = (),
               words: ModuleType = DEFAULT_WORDS, by_name: bool = False) -> bool:
    """The caller's words since the agent last spoke share a word with the tool's name or description ("refund",
    "order"): asking them for the tool's missing arguments makes sense only then, not after a stray remark.
    `besides`: words these tools share do not count ("cancel my booking" is about cancel_booking, not book_room).
    `by_name`: with the tool's name only ("book a court" for book_court, not "the club" of its description)."""
    fresh = " ".join(m.content for m in since_agent_spoke(messages))
    own = _stems(str((tool.get("function") or tool).get("name", "")), words) if by_name else _tool_stems(tool, words)
    # "how much are they?" is about a tool whose words say a price
    shared = (_stems(fresh, words) | price_asked(fresh, words)) & own - _number_stems(words)  # "four cheese" is no
    for other in besides:  # "four-digit order number"
        shared -= _tool_stems(other, words)
    return bool(shared)


def ask_for(arguments: Sequence[str], tool: Mapping[str, Any] | None = None, words: ModuleType = DEFAULT_WORDS,
            messages: Sequence[Message] = ()) -> str:
    """A spoken question for missing arguments: ["order_id", "amount"] -> "Sure, I can help with that. Could you
    tell me the order number and the amount?"; with the tool's schema, an identifier reads as one ("account" -> "the
    account number"). Once the agent has asked such a question in `messages`, the next ones are the question alone;
    the same question again right after the caller's answer says it did not catch it (a caller hearing the same
    words twice takes the line for a machine that did not listen)."""
    system = next((m.content for m in messages if m.role == "system"), "")  # what it says of an id's shape
    question = _question(arguments, tool, words, system)
    said = [m.content for m in messages if m.role == "assistant" and m.content.strip()]
    if said and said[-1].rstrip().endswith(question):
        return f"{words.NOT_CAUGHT} {question}"
    asked_before = any(words.ASK_FOR.split("{")[0] in text for text in said)
    return question if asked_before else f"{words.ASK_OPENER} {question}"


def _question(arguments: Sequence[str], tool: Mapping[str, Any] | None, words: ModuleType, system: str = "") -> str:
    props = (((tool or {}).get("function") or tool or {}).get("parameters") or {}).get("properties") or {}
    described = description_of(dict(tool or {}))
    names = [words.the(label(a, props.get(a), described, system, words)) for a in arguments]
    choices = [str(v) for v in (non_null(props.get(arguments[0], {})) or {}).get("enum") or []] if names else []
    if len(names) == 1 and 2 <= len(choices) <= MAX_CHOICES_SAID:  # "the size: small, medium or large"
        names = [f"{names[0]}: {words.SEPARATOR.join(choices[:-1])}{words.OR}{choices[-1]}"]
    listed = words.AND.join(names) if len(names) < 3 else words.SEPARATOR.join(names[:-1]) + words.AND + names[-1]
    return str(words.ASK_FOR.format(things=listed))


def unnamed_id_writes(tools: Sequence[dict[str, Any]], messages: Sequence[Message], writes: frozenset[str],
                      language: str = "en") -> list[dict[str, Any]]:
    """`tools` without the writes that take only identifiers (`report_outage(account_number)`,
    `cancel_booking(booking_reference)`) and whose name the caller has not said since the agent last spoke: an
    identifier says which thing, not what to do with it ("Account 51877. Why is my power off?" is no report;
    "my booking, the reference is 3091" no cancellation), unless the agent had just asked for it."""
    asked = asked_for(tools, messages, writes, language)

    def id_only(tool: dict[str, Any]) -> bool:
        required, props = required_of(tool), properties(tool)
        return bool(required) and all((k := arg_kind(r, props.get(r, {}), description_of(tool))) is not None
                                      and k.kind == "id"
                                      for r in required)

    named = set(named_writes(tools, messages, writes, words=locale.get(language)))
    return [t for t in tools if tool_name(t) not in writes or not id_only(t) or tool_name(t) in named | set(asked)
            or _only_one_for(t, tools, messages, locale.get(language))]


def _only_one_for(write: dict[str, Any], tools: Sequence[dict[str, Any]], messages: Sequence[Message],
                  words: ModuleType) -> bool:
    """No other tool takes an identifier, and the caller's request (their words since the agent last did more than
    ask) speaks of `write` in words no other tool has ("take my son out of his lessons": withdraw's "take a swimmer
    out"): the identifier they give can be for nothing else."""
    others = [t for t in tools if tool_name(t) != tool_name(write)]
    return not any(takes_id(t) for t in others) and about_tool(write, _open_request(messages), others, words)


def _open_request(messages: Sequence[Message]) -> list[Message]:
    """The conversation with the agent's questions since it last did something (a call, an answer) left out, so
    that the caller's words since then read as one request ("I need to take my son out." - "Could you tell me the
    stage?" - "The enrolment number is 30418.")."""
    did = max((i for i, m in enumerate(messages) if m.role == "tool" or (
        m.role == "assistant" and (m.tool_calls or not m.content.rstrip().endswith("?")))), default=-1)
    return [*messages[:did + 1], *(m for m in messages[did + 1:] if m.role == "user")]


def made_writes(messages: Sequence[Message], writes: frozenset[str]) -> set[str]:
    """The writes run since the caller last spoke (approved, or tried and failed; not one they declined): another
    call of one waits for their words, as its approval did. The 0.5B proposed the booking the caller had just
    approved a second time, and the run ended as a loop ("I did book ..., but I couldn't finish the rest")."""
    at = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    ran = {m.tool_call_id for m in messages[at + 1:] if m.role == "tool" and not_approved_reason(m.content) is None}
    return {c.name for m in messages[at + 1:] for c in m.tool_calls if c.id in ran and c.name in writes}


def without_made_writes(tools: Sequence[dict[str, Any]], messages: Sequence[Message], writes: frozenset[str]
                        ) -> list[dict[str, Any]]:
    """`tools` without the writes made since the caller last spoke (`made_writes`)."""
    made = made_writes(messages, writes)
    return [t for t in tools if tool_name(t) not in made]


def named_writes(tools: Sequence[dict[str, Any]], messages: Sequence[Message], writes: frozenset[str],
                 as_verb: bool = False, verb_only: bool = False, words: ModuleType = DEFAULT_WORDS) -> list[str]:
    """The writes the caller named since the agent last spoke, by the word of the name that sets each apart from
    the reads ("report" of `report_outage`, "cancel" of `cancel_booking`; not "booking", which a read shares).
    `as_verb`: the word itself or a verb's form of it (the pack's `verb_keys`: "can you report it?", Spanish
    "resérveme"), so "my booking" does not name `book_room`; `verb_only`: by the name's first word only ("book" of
    `book_seats`, not "seats"). Else by the word's stem in the language `words` (`word_stem`: "anúleme" names
    `cancelar_reserva`)."""
    text = " ".join(m.content for m in since_agent_spoke(messages))
    said, written = re.findall(r"[a-z]+", unaccented(text.lower())), written_words(text)
    fresh = {k for w in said for k in words.verb_keys(written.get(w, w))} if as_verb else \
        {word_stem(written.get(w, w), words) for w in said}

    def name_stems(tool: dict[str, Any]) -> set[str]:  # verb_only: its first word ("book" of book_seats)
        named = [w for w in re.split(r"[_\W]+", tool_name(tool).lower()) if w]
        if not as_verb:
            return {word_stem(w, words) for w in (named[:1] if verb_only else named) if len(w) > 2}
        verb = set(words.verb_keys(named[0], said=False)) if named and len(named[0]) > 2 else set()
        return verb | {w for w in ([] if verb_only else named[1:]) if len(w) > 2}

    reads = set().union(*(name_stems(t) for t in tools if tool_name(t) not in writes))
    return [tool_name(t) for t in tools if tool_name(t) in writes and (name_stems(t) - reads or name_stems(t)) & fresh]


def labels_asked(said: str, asked: dict[str, list[str]], words: ModuleType = DEFAULT_WORDS) -> bool:
    """The caller's answer names an identifier the agent asked for ("Enrolment number is 341," to "the five-digit
    enrolment number?"): a value that fits it badly is still theirs for it, no other call's count."""
    heard = {stem(w) for w in re.findall(r"[^\W\d_]+", said.lower())}
    return any((own := id_words(arg, words)) and own <= heard for lacks in asked.values() for arg in lacks)
