"""What a spoken reply must and must never contain, checked by machine.

    check_reply("Order 4567 has shipped to Lisbon.", {"contains": ["shipped", "Lisbon"]})  # -> []
    check_reply('No tool; say: "Sorry."', {})  # -> ['leaked instruction: "No tool" in ...', ...]

`expect` (all keys optional, as written in a call script's `reply:` section):

- `contains`: facts the reply must state. Each item is a fragment, or a list of fragments of which any one will
  do (`["20", "twenty"]`). Fragments match case-insensitively on word boundaries ("20" is not found in "2020");
  a fragment starting with `re:` is a regular expression.
- `never`: fragments (same syntax) this reply must not contain, on top of `DEFAULT_NEVER`.
- `max_sentences`: the voice length limit (default 2; `null` for none).

`DEFAULT_NEVER` is what no spoken reply may ever contain: tool or function names, JSON and braces, markdown,
error names, and the agent's own instructions (prompt and policy text, tool-result boilerplate). Any of these is
a leak, and a leak fails the call whatever else is right.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

MAX_SENTENCES = 2
REPLY_KEYS = frozenset({"contains", "never", "max_sentences", "turns"})  # a call script's `reply:`
TURN_REPLY_KEYS = frozenset({"contains", "never", "max_sentences"})  # each of its `turns:`
NGRAM = 6  # this many consecutive words shared with the instructions is the instructions read aloud

# (what it is, pattern): case-insensitive unless the pattern says otherwise
DEFAULT_NEVER: tuple[tuple[str, str], ...] = (
    ("tool name", r"\b[a-z]+_[a-z0-9_]+\b"),  # lookup_order, issue_refund, order_id, any snake_case identifier
    ("leaked instruction", r"\bno tool\b"),
    ("tool talk", r"\b(tools?|functions?|tool calls?|arguments?)\b"),
    ("JSON or braces", r"[{}\[\]<>]"),
    ("JSON", r"\"\w+\"\s*:"),
    ("markdown", r"\*|`|__|^\s*#|^\s*[-+]\s|\|"),
    ("arrow", r"->|=>"),
    ("leaked instruction", r"\b(say|ask for it|for example)\s*:"),
    ("leaked instruction", r"\bfor example\b"),
    ("leaked instruction", r"\bthe (caller|user)('s)?\b"),
    ("leaked instruction", r"\b(system prompt|instructions?)\b"),
    ("leaked instruction", r"\b(denied|blocked) by\b|\bdo not (retry|guess)\b|\bavailable tools\b"),
    ("leaked instruction", r"\btool (returned|result)\b|\bno data\b|\bno results matched\b"),
    ("policy rule", r"\brefund\.\w+|(?-i:\b(ALLOW|DENY|ASK)\b)"),
    ("error text", r"(?-i:\b\w*(Error|Exception)\b|\bNone\b)|\btraceback\b|\bnull\b"),
)

# Quoted example replies in the instructions are meant to be said; they are not read against the reply.
_QUOTED = re.compile(r"\"[^\"]*\"")


def check_reply(text: str, expect: Mapping[str, Any] | None = None, *,
                instructions: Iterable[str] | None = None, own_words: Iterable[str] = ()) -> list[str]:
    """Every problem with one spoken reply, as readable lines; empty when it is fine."""
    expect = expect or {}
    problems = find_leaks(text, expect.get("never", ()), instructions=instructions, own_words=own_words)
    for item in expect.get("contains", ()):
        options = [item] if isinstance(item, str) else list(item)
        if not any(found(o, text) for o in options):
            problems.append(f"missing {' or '.join(repr(o) for o in options)} in {text!r}")
    limit = expect.get("max_sentences", MAX_SENTENCES)
    if limit is not None and (n := count_sentences(text)) > limit:
        problems.append(f"too long for voice: {n} sentences (at most {limit}) in {text!r}")
    return problems


def find_leaks(text: str, never: Iterable[str | Sequence[str]] = (), *,
               instructions: Iterable[str] | None = None, own_words: Iterable[str] = ()) -> list[str]:
    """What must never be spoken: the default list, the extra fragments in `never`, and any run of `NGRAM`
    words taken from the agent's instructions, when given (its prompt and policy text), unless every word in it
    longer than three letters is the agent's own to say (`own_words`: its tools' argument names and listed values
    and the words its questions are made of: "Could you tell me the town, the date and the time?" beside a prompt
    that lists them too)."""
    problems: list[str] = []
    for label, pattern in DEFAULT_NEVER:
        if m := re.search(pattern, text, re.IGNORECASE | re.MULTILINE):
            problems.append(f"{label}: {m.group(0)!r} in {text!r}")
    for item in never:
        for frag in [item] if isinstance(item, str) else item:
            if found(frag, text):
                problems.append(f"must not say {frag!r}: {text!r}")
    own = {w.lower() for w in own_words}
    shared = {g for g in _ngrams(text) & _instruction_ngrams(tuple(instructions or ()))
              if any(len(w) > 3 and w not in own for w in g)}
    if shared:
        problems.append(f"leaked instruction: {' '.join(sorted(shared)[0])!r} in {text!r}")
    return problems


def count_sentences(text: str) -> int:
    """Sentences as a listener hears them: ., ? or ! followed by a space or the end ("$59.90" is not two), but not
    by a lower-case word ("at 6 p.m. today" is one), nor the dot of "p.m." ("6:15 p.m. 25 seats left" is one)."""
    return sum(1 for s in re.split(r"(?<![a-zA-Z]\.[a-zA-Z])[.?!]+(?=\s+[^a-z\s]|\s*$)", text) if re.search(r"\w", s))


def found(fragment: str, text: str) -> bool:
    """Is `fragment` said in `text` (case-insensitive, on word boundaries, a word's plural too; `re:` a regex)?"""
    if fragment.startswith("re:"):
        return re.search(fragment[3:], text, re.IGNORECASE) is not None
    frag = " ".join(fragment.split())
    left = r"(?<!\w)" if frag[:1].isalnum() else ""
    # a word's plural or possessive is the word ("mattress" in "Mattresses are taken"); a number is whole, or the
    # ordinal written with it ("15" in "the 15th of each month", never in "150")
    right = r"(?:e?s|'s)?(?!\w)" if frag[-1:].isalpha() else r"(?:st|nd|rd|th)?(?!\w)" if frag[-1:].isdigit() \
        else r"(?!\w)" if frag[-1:].isalnum() else ""
    return re.search(left + re.escape(frag) + right, " ".join(text.split()), re.IGNORECASE) is not None


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9$']+", text.lower())


def _ngrams(text: str) -> set[tuple[str, ...]]:
    words = _words(text)
    return {tuple(words[i:i + NGRAM]) for i in range(len(words) - NGRAM + 1)}


@lru_cache(maxsize=8)
def _instruction_ngrams(texts: tuple[str, ...]) -> frozenset[tuple[str, ...]]:
    """N-grams of the instructions with their quoted examples removed: an example reply ("Sorry, I can only
    help with your orders.") is meant to be said; the words around it are not."""
    grams: set[tuple[str, ...]] = set()
    for text in texts:
        for line in text.splitlines():
            grams |= _ngrams(_QUOTED.sub(" | ", line))
    # a run of values ("1 p.m., 3 p.m."), which a tool's result also says, is no prose read out
    return frozenset(g for g in grams if "|" not in g and sum(len(w) > 2 and w.isalpha() for w in g) >= 2)


def spoken_turns(trace: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """What the agent said after each caller turn, from a call's trace (`caller_turn_ended` and `agent_said`
    entries): `[{"t", "caller", "reply": [...], "other": [(part, text), ...]}]`. Speech before the first caller
    turn (the greeting) is left out, and so is a turn the caller went on with (`caller_went_on`): its answer was
    withdrawn before they could react to it, and the whole turn's answer follows."""
    out: list[dict[str, Any]] = []
    for e in trace:
        if e.get("kind") == "caller_went_on" and out:
            out.pop()
        elif e.get("kind") == "caller_turn_ended":
            out.append({"t": e.get("t", 0.0), "caller": e.get("text", ""), "reply": [], "other": []})
        elif e.get("kind") == "agent_said" and out:
            if e.get("part") == "reply":
                out[-1]["reply"].append(e["text"])
            else:
                out[-1]["other"].append((e.get("part", ""), e["text"]))
    return out


def check_call(spec: Mapping[str, Any] | None, trace: Sequence[Mapping[str, Any]],
               turn_starts: Sequence[float], instructions: Sequence[str] | None = None,
               own_words: Iterable[str] = ()) -> list[str]:
    """A whole call against a script's `reply:` section.

    `spec` holds `contains`/`never`/`max_sentences` for the reply to the call's last turn, `never` for every
    reply, and optionally `turns: [{contains, never, max_sentences}, ...]`, one per turn the agent answered
    (`turn_starts`: each turn's start time, e.g. from `TurnRecord.started_s`). Every reply is held to the
    default leak list and the length limit; approval questions and other session lines only to the leak list.
    `instructions`: the agent's prompt and policy text, never to be read aloud (no such check when not given);
    `own_words`: what the agent's questions may name besides (`find_leaks`).
    """
    own_words = frozenset(own_words)
    spec = dict(spec or {})
    per_turn = list(spec.pop("turns", None) or [])
    call_never = list(spec.get("never", ()))
    answers = spoken_turns(trace)
    problems: list[str] = []
    for a in answers:  # each caller turn's answer: never a leak, never too long
        label = f"reply to {a['caller']!r}"
        text = " ".join(a["reply"])
        if text:
            limits = {"never": call_never, "max_sentences": spec.get("max_sentences", MAX_SENTENCES)}
            problems += [f"{label}: {p}"
                         for p in check_reply(text, limits, instructions=instructions, own_words=own_words)]
        for part, said in a["other"]:
            problems += [f"{label} ({part}): {p}"
                         for p in find_leaks(said, call_never, instructions=instructions, own_words=own_words)]
    starts = list(turn_starts)
    texts = [" ".join(r for x in _within(answers, starts, i) for r in x["reply"]) for i in range(len(starts))]
    if per_turn and len(per_turn) != len(texts):
        problems.append(f"the script expects replies to {len(per_turn)} turn(s); the agent answered {len(texts)}")
    wanted = [dict(t) for t in per_turn] if per_turn else ([{}] * (len(texts) - 1) + [
        {k: v for k, v in spec.items() if k == "contains"}] if texts else [])
    if not texts and (spec.get("contains") or per_turn):
        problems.append("the agent never answered")
    for i, (text, want) in enumerate(zip(texts, wanted, strict=False)):
        if not want:
            continue
        if not text.strip():
            problems.append(f"turn {i}: no spoken reply (expected {want.get('contains')})")
            continue
        want = {"max_sentences": None, **want}  # length is checked per answer above
        want["never"] = list(want.get("never", ()))
        problems += [f"turn {i}: {p}" for p in check_reply(text, want, instructions=instructions, own_words=own_words)
                     if not _default_leak(p)]
    return list(dict.fromkeys(problems))


def said_in_call(spec: Mapping[str, Any] | None, trace: Sequence[Mapping[str, Any]]) -> list[str]:
    """A call's `says` facts (`contains`: each said somewhere in the call, in any of the agent's words after the
    caller first spoke) and `never` fragments (said nowhere): what an outside set's caller expects to hear, checked
    over the whole call, not its last reply (which is often a goodbye)."""
    spec = spec or {}
    said = " ".join([*(r for a in spoken_turns(trace) for r in a["reply"]),
                     *(text for a in spoken_turns(trace) for _, text in a["other"])])
    problems = []
    for item in spec.get("contains", ()):
        options = [item] if isinstance(item, str) else list(item)
        if not any(found(o, said) for o in options):
            problems.append(f"never said {' or '.join(repr(o) for o in options)}")
    for item in spec.get("never", ()):
        for frag in [item] if isinstance(item, str) else item:
            if found(frag, said):
                problems.append(f"said {frag!r}")
    return problems


def _within(answers: list[dict[str, Any]], starts: list[float], i: int) -> list[dict[str, Any]]:
    """The answers of turn `i`: caller turns that ended from its start up to the next turn's start."""
    lo = starts[i] - 1e-3  # trace times are rounded to the millisecond
    hi = starts[i + 1] - 1e-3 if i + 1 < len(starts) else float("inf")
    return [a for a in answers if lo <= a["t"] < hi]


def _default_leak(problem: str) -> bool:
    """Leaks are reported once per answer (above), not again per turn."""
    return not (problem.startswith("missing ") or problem.startswith("must not say ")
                or problem.startswith("too long"))
