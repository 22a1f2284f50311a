"""What kind of value a tool argument holds, read from its JSON schema alone (any agent, no naming convention).

`arg_kind(name, schema)` tells `loop.grounding.arguments` what the argument may be filled with:

- `id`: an identifier (a job number, a booking reference, a postcode, an account number): only an identifier-like
  value the caller or a tool said, matching the schema's `pattern` when it has one. Recognised from a `pattern`
  that admits only digits or letters with digits, from "number"/"digits"/"code"/"reference"/"id" in the name or
  the description, from an integer-typed `*_number`, or from an example that is digits;
- `number` / `integer`: an amount or a count the caller said;
- `name`: a person's or a place's name (capitalised words);
- `when`: a time or a date, in the caller's words ("Tuesday", "10 a.m.");
- `address`: a span that starts on a number or a capitalised word;
- `free`: a reason, a note, a message: any span of the caller's words;
- `text`: anything else (an item, a dish): a span of the caller's words that is not the request itself;
- `enum`: one of the schema's values the conversation named;
- None: left as the schema says (booleans, formats, nested values, patterns that admit plain words).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from loop.locale import DEFAULT_WORDS, argument_names, unaccented

# An argument's name says what it holds. The words of an identifier's, a count's, a person's, a free text's and a
# time's are the packs' (`loop.locale.argument_names`: English's for every language, as code is written, and the
# agent's language's own); these others are still English's alone.
# the part of a person's name an argument holds ("first_name" of "Oliver Bennett" is Oliver): tests/data/name_parts.tsv
_GIVEN_NAME = {"first", "given", "forename", "firstname", "givenname"}
_FAMILY_NAME = {"last", "surname", "family", "lastname", "familyname"}
_PLACE = {"city", "town", "country", "state", "region", "company", "county", "village", "suburb"}
_THING_NAMES = {"item", "product", "dish", "pizza", "menu", "file", "tool", "service", "plan", "room", "event",
                "model", "brand", "part", "drink", "meal"}
_ADDRESS = {"address", "street", "location", "destination", "pickup", "dropoff", "where", "house", "road"}
_DATE = {"date", "day", "weekday", "checkin", "checkout", "arrival", "departure", "night"}
_PLAIN_WORDS = ("hello", "my repair", "check on my repair please", "yes", "a")  # no identifier looks like these


@dataclass(frozen=True)
class Kind:
    kind: str
    pattern: str = ""  # an identifier's own pattern, which every candidate must match
    integer: bool = False  # an identifier typed as an integer: its candidates are digits only
    when: str = ""  # for a time or a date: "time" (an hour), "date" (a day), "" (either)
    digits: int = 0  # an identifier described as "the 8-digit account number": how many digits it has
    letters: int = 0  # an identifier declared with letters before its digits (`identifier(letters=2, digits=8)`)


def name_words(name: str) -> list[str]:
    """`job_number` / `bookingRef` / `check-in` -> ["job", "number"] / ["booking", "ref"] / ["check", "in"]."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").replace("-", " ")
    return spaced.lower().split()


def non_null(schema: dict[str, Any]) -> dict[str, Any] | None:
    """`str | None` as pydantic writes it (`anyOf: [{type: string}, {type: null}]`) -> the string schema."""
    options = schema.get("anyOf") or schema.get("oneOf")
    if not isinstance(options, list):
        return schema
    real = [o for o in options if isinstance(o, dict) and o.get("type") != "null"]
    if len(real) != 1 or len(real) == len(options):
        return None
    merged = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf", "default")}
    return {**real[0], **merged}


def is_id_pattern(pattern: str) -> bool:
    """A pattern that needs a digit and admits no plain words ("^[0-9]{6}$", "^JOB-\\d+$", a postcode's)."""
    if not re.search(r"\\d|0-9", pattern):
        return False
    try:
        compiled = re.compile(pattern)
    except re.error:
        return False
    return not any(compiled.search(w) or compiled.search(w.upper()) for w in _PLAIN_WORDS)


def _looks_like_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool) and bool(
        re.fullmatch(r"[A-Za-z0-9 -]*\d[A-Za-z0-9 -]*", str(value).strip())) and len(str(value).strip()) >= 3


def _examples(schema: dict[str, Any]) -> list[Any]:
    found = schema.get("examples") or []
    found = list(found) if isinstance(found, list) else [found]
    return found + ([schema["example"]] if "example" in schema else [])


@dataclass(frozen=True)
class _Described:
    """What a tool's description says of an argument in one language (the pack's ID_DESCRIBED, ID_CALLED,
    COUNT_DESCRIBED), read once per pack (`_described`)."""

    id: re.Pattern[str]  # an identifier ("the booking reference")
    called: re.Pattern[str]  # the word an identifier is called by ("ticket" of "the ticket number"): group 1
    counting: re.Pattern[str]  # a count ("how many seats")


@functools.cache
def _described(words: ModuleType) -> _Described:
    return _Described(*(re.compile(p, re.IGNORECASE) for p in (words.ID_DESCRIBED, words.ID_CALLED,
                                                                  words.COUNT_DESCRIBED)))


def _is_id(words: list[str], schema: dict[str, Any], pack: ModuleType = DEFAULT_WORDS) -> bool:
    described, names, said = str(schema.get("description", "")), argument_names(pack), _described(pack)
    if any(w in names["count"] for w in words) or said.counting.search(described):
        return False
    named = any(w in names["id"] or w.endswith("code") for w in words)
    examples = _examples(schema)
    return named or bool(said.id.search(described)) or bool(examples and all(map(_looks_like_id, examples)))


def _string_kind(words: list[str], schema: dict[str, Any], pack: ModuleType = DEFAULT_WORDS) -> str:
    last, names = words[-1] if words else "", argument_names(pack)
    if set(words) & names["free"]:
        return "free"
    if set(words) & _ADDRESS:
        return "address"
    if _is_id(words, schema, pack):
        return "id"
    person = names["person"]  # "name" itself ("nombre") may be a thing's as well ("pizza_name")
    if last in _PLACE or (last in person and not set(words[:-1]) & _THING_NAMES) or set(words) & (
            person - names["name"]):
        return "name"
    if set(words) & names["when"] or "".join(words) in names["when"]:
        return "when"
    return "text"


_DECLARED = {"id": "id", "name": "name", "item": "text", "address": "address", "when": "when", "date": "when",
             "time": "when", "amount": "number", "count": "integer", "free": "free"}


def declared_kind(schema: dict[str, Any]) -> Kind | None:
    """The kind the tool's author declared (`loop.kinds`: `x-kind` in the schema), or None."""
    declared = str(schema.get("x-kind", ""))
    if declared not in _DECLARED:
        return None
    when = declared if declared in ("date", "time") else ""
    return Kind(_DECLARED[declared], pattern=str(schema.get("pattern", "")) if declared == "id" else "",
                integer=declared == "id" and schema.get("type") == "integer", when=when,
                digits=int(schema.get("x-digits") or 0), letters=int(schema.get("x-letters") or 0))


def arg_kind(name: str, schema: dict[str, Any], described: str = "", words: ModuleType = DEFAULT_WORDS) -> Kind | None:
    """The kind of value the argument `name` holds (see the module's docstring), or None to leave it as is. A kind
    the tool declares (`loop.kinds`) wins over what its name and schema suggest; `described`, the tool's
    description, may name a plain string argument as an identifier ("by its five-digit ticket number" for
    `ticket`)."""
    kind = _schema_kind(name, schema, words)
    if kind is not None and kind.kind == "text" and described and (digits := _named_as_id(name, described, words)):
        return Kind("id", digits=max(digits, 0))
    return kind


def name_labels(name: str) -> list[str]:
    """The words a caller may say before the value of the name argument `name`: its own words less "name", and for
    a part of a name every word for that part ("surname" for `last_name`, "first" for `forename`)."""
    own = [w for w in name_words(name) if w not in ("name", "the", "of")]
    part = name_part(name)
    said_of_part = _GIVEN_NAME if part == 0 else _FAMILY_NAME if part == -1 else set()
    return list(dict.fromkeys([*own, *sorted(said_of_part)]))


NAME_PART_WORDS = frozenset(_GIVEN_NAME | _FAMILY_NAME)


def name_part(name: str) -> int | None:
    """Which word of a full name the argument `name` holds: 0 (the first: `first_name`, `given_name`), -1 (the
    last: `last_name`, `surname`), None (the whole name)."""
    words = set(name_words(name)) | {"".join(name_words(name))}
    return 0 if words & _GIVEN_NAME else -1 if words & _FAMILY_NAME else None


def _named_as_id(name: str, described: str, words: ModuleType) -> int:
    """Does the tool's description call the argument a number, a code or a reference ("the ticket number", "a
    5-digit ticket")? Its digit count when it gives one, -1 when it gives none, 0 when it is not named so."""
    own = {w[:5] for w in name_words(name)}
    if digits := digits_named(name, described, words):
        return digits
    for m in _described(words).called.finditer(described):
        if m.group(1).lower()[:5] in own:
            return -1
    return 0


def _schema_kind(name: str, schema: dict[str, Any], pack: ModuleType = DEFAULT_WORDS) -> Kind | None:
    schema = non_null(schema)
    if schema is not None and (declared := declared_kind(schema)) is not None:
        return declared
    if schema is None or any(k in schema for k in ("const", "format", "anyOf", "oneOf", "$ref", "allOf")):
        return None
    if "enum" in schema:
        return Kind("enum") if all(isinstance(v, str) for v in schema["enum"]) else None
    words = name_words(name)
    if "pattern" in schema:
        return Kind("id", pattern=str(schema["pattern"])) if is_id_pattern(str(schema["pattern"])) else None
    digits = _digit_count(str(schema.get("description", "")), pack)
    kind = schema.get("type")
    if kind in ("number", "integer"):
        # a house number is part of an address, said as a number ("at number 14"), not an identifier dictated
        if kind == "integer" and _is_id(words, schema, pack) and not set(words) & {"amount", "price", "total",
                                                                                   *_ADDRESS}:
            return Kind("id", integer=True, digits=digits)
        return Kind(kind)
    if kind != "string":
        return None
    kind = _string_kind(words, schema, pack)
    if kind == "when":
        joined = {*words, "".join(words)}
        return Kind(kind, when="time" if joined & {"time", "hour"} else "date" if joined & _DATE else "")
    return Kind(kind, digits=digits if kind == "id" else 0)


@dataclass(frozen=True)
class _Counted:
    """How one language says an identifier's digits and letters, read from its pack once (`_counted`)."""

    count_words: dict[str, int]  # the numbers a count of digits is said in: the pack's ONES to twelve
    digits: re.Pattern[str]  # "8-digit", "four-digit", "cinco cifras", with up to three words after it
    shape: re.Pattern[str]  # "3 letters, 5 digits", "tres letras y cinco cifras"
    named: frozenset[str]  # words of an identifier's name that say it is one, not which (ID_NAMED)


@functools.cache
def _counted(words: ModuleType) -> _Counted:
    count_words = {w: i for i, w in enumerate(words.ONES[:13])}
    count = r"(\d{1,2}|" + "|".join(count_words) + r")"

    def noun(nouns: tuple[str, ...]) -> str:
        return "(?:" + "|".join(sorted(nouns, key=len, reverse=True)) + ")"

    digits, letters = noun(words.DIGIT_NOUNS), noun(words.LETTER_NOUNS)
    return _Counted(count_words, re.compile(rf"\b{count}[- ]{digits}\b((?:[ -]+[a-z]+){{0,3}})", re.IGNORECASE),
                    re.compile(rf"\b{count}[ -]{letters}\b[^.;)]{{0,12}}?\b{count}[ -]{digits}\b", re.IGNORECASE),
                    frozenset(words.ID_NAMED))


def _count(word: str, counted: _Counted) -> int:
    return int(word) if word.isdigit() else counted.count_words[word.lower()]


def _digit_count(described: str, words: ModuleType = DEFAULT_WORDS) -> int:
    """"the 8-digit account number" / "its four-digit postcode" / "de cinco cifras" -> 8 / 4 / 5; 0 when the
    description does not say."""
    counted = _counted(words)
    m = counted.digits.search(unaccented(described))
    return 0 if m is None else _count(m.group(1), counted)


def id_shape(name: str, text: str, words: ModuleType = DEFAULT_WORDS) -> tuple[int, int]:
    """The letters and digits a tool's description gives the identifier `name` ("by its file reference (3
    letters, 5 digits)" for `file_reference` -> (3, 5)); (0, 0) when it gives no such shape."""
    counted, text = _counted(words), unaccented(text)
    own = {w[:5] for w in name_words(name) if w not in counted.named}
    for m in counted.shape.finditer(text):
        # the words just before it name what it is: "the policy number (two letters and six digits)" is no claim
        # number's, though "make a claim" comes a few words earlier
        before = {w[:5] for w in re.findall(r"[a-z]+", text[max(0, m.start() - 40): m.start()].lower())[-4:]}
        if own and own <= before:
            return _count(m.group(1), counted), _count(m.group(2), counted)
    return 0, 0


def digits_named(name: str, text: str, words: ModuleType = DEFAULT_WORDS) -> int:
    """How many digits a tool's description gives the argument `name` ("by their five-digit account number"
    for `account_number`, "file reference (3 letters, 5 digits)", "su número de reserva de cinco cifras" for
    `numero_reserva`); 0 when it does not. Words of the pack `words` (accent-folded)."""
    if shape := id_shape(name, text, words)[1]:
        return shape
    counted, text = _counted(words), unaccented(text)
    own = {w[:5] for w in name_words(name) if w not in counted.named}
    for m in counted.digits.finditer(text):
        if own & {w[:5] for w in re.findall(r"[a-z]+", m.group(2).lower())}:
            return _count(m.group(1), counted)
        # "by the last four digits" for `last_four`: the argument's name is the words that count the digits
        before = re.findall(r"[a-z]+", text[max(0, m.start() - 30): m.start()].lower())[-2:]
        if own and own <= {w[:5] for w in [*before, m.group(1).lower()]}:
            return _count(m.group(1), counted)
    return 0


def label(name: str, schema: dict[str, Any] | None = None, described: str = "", context: str = "",
          words_of: ModuleType = DEFAULT_WORDS) -> str:
    """How to ask a caller for the argument: `order_id` -> "order number", `booking_ref` -> "booking reference",
    `account` (an identifier) -> "account number". `context`: the agent's instructions, read only for how many
    digits (and letters) an identifier has. `words_of`: the language asked in (`loop.locale`), whose `label` says
    the argument's name words with what is read here of it."""
    kind = arg_kind(name, schema, described, words_of) if schema is not None else None
    said_of = f"{described}\n{context}"
    is_id = kind is not None and kind.kind == "id"
    digits = (kind.digits or digits_named(name, said_of, words_of)) if kind is not None and is_id else 0
    # the tool's own word on its shape wins over what the instructions seem to say of it
    declared = kind is not None and bool(kind.letters or (non_null(schema or {}) or {}).get("x-digits"))
    shape = ((kind.letters, kind.digits) if declared else id_shape(name, said_of, words_of)) if (
        kind is not None and is_id) else (0, 0)
    return str(words_of.label(name_words(name), kind.kind if kind is not None else "", digits, shape))
