"""Spoken approval: ask the way a person would (reading the answer: `voice.call.answers`).

The question is written text ("Just to confirm: refund $20 on order 4567?"): the transcript shows it as
written and the spoken form (`voice.speech.spoken`) reads it aloud ("... twenty dollars on order four five six
seven?"). It comes from the tool's own `confirm` template, else from its description and arguments.
"""

from __future__ import annotations

import functools
import re
from types import ModuleType
from typing import Any

from loop import ToolCall
from loop.locale import DEFAULT_WORDS
from loop.tools import Tool

# ---- the question --------------------------------------------------------------------------------

_MONEY_KEY = re.compile(r"(^|_)(amount|price|total|cost|fee|refund|credit|charge|usd|dollars?)($|_)")
_DOLLAR_HINT = re.compile(r"dollar|\$|usd", re.I)
_PREAMBLE = re.compile(r"^(?:use (?:this|it) to|used to|this tool|tool to|call (?:this|it) to|a tool to)\s+", re.I)
_FIRST_CLAUSE = re.compile(r"[.;:\n(]|\s-\s")
_HIDDEN_KEYS = re.compile(r"^_|idempotency")


def confirmation_question(call: ToolCall, tool: Tool | None = None, words: ModuleType = DEFAULT_WORDS) -> str:
    """One short question naming the action and what identifies it: "Just to confirm: refund $20 on order 4567?"
    (`words`: the language's sentences, `loop.locale`)."""
    return words.CONFIRM.format(action=action_phrase(call, tool, words))


def action_phrase(call: ToolCall, tool: Tool | None = None, words: ModuleType = DEFAULT_WORDS) -> str:
    """The tool's `confirm` template filled in, else a phrase derived from its description and arguments, in the
    language `words` (its determiners and joining words)."""
    values = {key: written_value(key, value, tool, words) for key, value in call.arguments.items()
              if value is not None and value != "" and not _HIDDEN_KEYS.search(key)}
    template = getattr(tool, "confirm", "") if tool is not None else ""
    if template:
        try:
            shown = _money_bare(template, values, words)
            return _articles_agreed(template, shown, words).format_map(shown)
        except (KeyError, IndexError, ValueError, AttributeError):
            pass  # the call lacks an argument the template names: say what we do know
    description = tool.description if tool is not None and tool.description != tool.name else ""
    return derived_phrase(verb_phrase(description, call.name, words), values, tool, words)


def _articles_agreed(template: str, values: dict[str, str], words: ModuleType) -> str:
    """`template` with the article before each value as the value's first sound wants it ("book a {visit}" with
    "annual service": "book an annual service"): the pack's `article_for`, None in a language without the rule."""
    def agreed(m: re.Match[str]) -> str:
        value = values.get(m[3], "")
        chosen = words.article_for(m[2], value) if value else None
        return f"{m[1]}{chosen or m[2]} {{{m[3]}}}"
    return re.sub(r"(^|\s)(\w+) \{(\w+)\}", agreed, template)


def _money_bare(template: str, values: dict[str, str], words: ModuleType) -> dict[str, str]:
    """`values` with an amount written bare where the template itself names its currency ("pay {amount} pounds",
    "£{amount}"): "pay 414 pounds", never "pay $414 pounds"."""
    names = "|".join(n for group in words.MONEY_SYMBOLS.values() for n in group)
    values = dict(values)
    for key, value in values.items():
        symbol = next((s for s in words.MONEY_SYMBOLS if value.startswith(s)), None)
        if symbol and re.search(rf"[{re.escape(''.join(words.MONEY_SYMBOLS))}]\{{{key}\}}|\{{{key}\}}\s+(?i:{names})\b",
                                template):
            values[key] = value[len(symbol):]
    return values


def _currency(tool: Tool | None, words: ModuleType) -> str:
    """The currency the tool's own words name (a symbol or a name in its confirmation, its description or its
    arguments' descriptions: "pay {amount} pounds" is "£"), else the pack's first."""
    symbols = words.MONEY_SYMBOLS
    if tool is not None:
        described = " ".join(str(p.get("description", "")) for p in tool.schema.get("properties", {}).values())
        text = f"{getattr(tool, 'confirm', '') or ''} {tool.description} {described}".lower()
        for symbol, names in symbols.items():
            if symbol in text or re.search(rf"\b(?:{'|'.join(names)})\b", text):
                return symbol
    return next(iter(symbols))


def written_value(key: str, value: Any, tool: Tool | None, words: ModuleType = DEFAULT_WORDS) -> str:
    """An argument as a person would write it: money with the currency the tool names ("$20", "£19.99"), lists
    joined, the rest as text."""
    if isinstance(value, bool):
        return str(words.BOOLEAN_WORDS[value])
    if _is_money(key, tool) and (amount := _amount(value, words)) is not None:
        symbol = _currency(tool, words)
        return f"{symbol}{amount:,.0f}" if amount == int(amount) else f"{symbol}{amount:,.2f}"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value).strip()


def _amount(value: Any, words: ModuleType) -> float | None:
    """A money value as a number: "$1,250" or "£20" is one, "20 dollars" or "twelve" is not (it is said as is)."""
    try:
        return float(re.sub(rf"[{re.escape(''.join(words.MONEY_SYMBOLS))},]", "", str(value)))
    except ValueError:
        return None


def _is_money(key: str, tool: Tool | None) -> bool:
    if _MONEY_KEY.search(key.lower()):
        return True
    properties = tool.schema.get("properties", {}) if tool is not None else {}
    return bool(_DOLLAR_HINT.search(str(properties.get(key, {}).get("description", ""))))


def verb_phrase(description: str, name: str, words: ModuleType = DEFAULT_WORDS) -> str:
    """"Refunds money for an order. Irreversible." -> "refund money for an order"; no description: the name."""
    phrase = _PREAMBLE.sub("", _FIRST_CLAUSE.split(description.strip(), maxsplit=1)[0].strip())
    if not phrase:
        phrase = name.replace("_", " ").replace("-", " ").strip()
    said = words.as_asked(phrase).split()  # "Refunds money" -> "Refund money": a question, not a doc line
    if said and not (len(said[0]) > 1 and said[0][1].isupper()):
        said[0] = said[0].lower()  # keep acronyms ("SMS the caller")
    return " ".join(said)


@functools.cache
def _money_named(words: ModuleType) -> re.Pattern[str]:
    """What a description calls the money an action moves ("the money", "a payment": the pack's MONEY_NAMED)."""
    return re.compile(words.MONEY_NAMED)


def _articles(words: ModuleType) -> str:
    return "|".join(d for d in words.DETERMINERS if d not in ("money", "all"))


def derived_phrase(phrase: str, values: dict[str, str], tool: Tool | None, words: ModuleType = DEFAULT_WORDS) -> str:
    """Put each argument where the phrase mentions it ("an order" -> "order 4567"), else after it, joined by the
    language's words (`words.ACTION_JOINS`: "with", "and", "to", "of", "for")."""
    with_, and_, to, of, for_ = words.ACTION_JOINS
    money_tail, id_tail, extras = "", "", []
    for key, value in values.items():
        if _is_money(key, tool) and value[:1] in words.MONEY_SYMBOLS:
            phrase, placed = _money_named(words).subn(lambda _m, v=value: v, phrase, count=1)
            money_tail += "" if placed else f" {of} {value}"
        elif key == "id" or key.endswith("_id"):
            entity = key[:-3].replace("_", " ") if key != "id" else words.ACTION_ITEM
            phrase, placed = _name_entity(phrase, entity, value, words)
            id_tail += "" if placed else f" {for_} {entity} {value}"
        else:
            extras.append((key.replace("_", " "), value))
    phrase += money_tail + id_tail
    verb = phrase.split(maxsplit=1)[0].lower() if phrase else ""
    joiner = with_
    for label, value in extras:
        named = re.compile(rf"\b(?:{_articles(words)})\s+{re.escape(label)}\b", re.I)
        if named.search(phrase):
            phrase = named.sub(lambda _m, v=value: v, phrase, count=1)  # "going to a city" -> "going to Phoenix"
        elif verb in words.SETTING_VERBS and re.search(rf"\b{re.escape(label)}\b", phrase):
            phrase += f" {to} {value}"  # "change the delivery address of order 4567 to 1 Rua Nova"
        else:
            phrase += f" {joiner} {label} {value}"
            joiner = and_
    return phrase



def _name_entity(phrase: str, entity: str, value: str, words: ModuleType = DEFAULT_WORDS) -> tuple[str, int]:
    """"change the address of an order" + order 4567 -> "change the address of order 4567"."""
    pattern = re.compile(rf"\b(?:(?:{_articles(words)})\s+)?{re.escape(entity)}(?P<poss>'s)?\b", re.I)
    return pattern.subn(lambda m: f"{entity} {value}{m['poss'] or ''}", phrase, count=1)
