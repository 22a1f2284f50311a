"""A tool's plain data said as words ('{"job_number": "4521", "status": "waiting for parts"}' -> "Job number 4521,
status waiting for parts."): words the code chose, for when the model's own cannot be said."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from loop.grounding._arg_kinds import name_words
from loop.grounding.speakable import first_sentences, leaks
from loop.tools import tool_name
from loop.types import ModelRequest


def _plain(value: Any) -> str | None:
    """A plain value as words (None: not plain): True -> "yes", 9.0 -> "9", ["a", "b"] -> "a and b"."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str | int):
        return str(value).strip()
    if isinstance(value, list) and all(isinstance(v, str | int | float) and not isinstance(v, bool) for v in value):
        return " and ".join(map(str, value)) if value else "none"
    return None


_FLAGS = {"found", "ok", "success", "exists", "valid", "error"}  # a flag beside data that says the same in words
_NOTES = {"note", "notes", "message", "detail", "details", "info", "reason", "remark", "comment"}  # said as is
_WHAT = {"type", "name", "kind", "title", "item", "label"}  # said without its key: "double", not "type double"


def _pairs(data: dict[str, Any]) -> str | None:
    parts = []
    for key, value in data.items():
        if (said := _plain(value)) is None:
            return None
        if said:
            parts.append(said if str(key).lower() in _WHAT else f"{' '.join(name_words(str(key)))} {said}")
    return ", ".join(parts)


def spoken_data(content: str, max_words: int = 40, known: Sequence[Any] = ()) -> str:
    """A tool's plain data read out, as the model is shown it and for when its own words could not be said:
    '{"job_number": "4521", "status": "waiting for parts"}' -> "Job number 4521, status waiting for parts.";
    a list of such objects inside ("rooms": [{"type": "double", "free": 2}, ...]) reads "rooms: double, free
    2; suite, free 0". Values in `known` (the call's own arguments: the caller said them) are left out, but for
    identifiers. "" for
    anything else (deeper data, too long to say), which stays as it was."""
    try:
        data = json.loads(content)
    except ValueError:
        return ""
    if not isinstance(data, dict) or not data:
        return ""
    parts = []
    told = {str(v).strip().casefold() for v in known}
    for key, value in data.items():
        said = _plain(value)
        if said is not None and said.casefold() in told and len(data) > 1 and not re.search(r"\d{3}", said):
            continue  # "arrival June 12, nights 2": the caller's own words, back (an identifier stays: "job 4521")
        if said is None and isinstance(value, dict):
            said = _pairs(value)
        if said is None and isinstance(value, list) and all(isinstance(v, dict) for v in value):
            inner = [_pairs(v) for v in value]
            said = None if None in inner else ": " + "; ".join(i for i in inner if i)
        if said is None:
            return ""
        if isinstance(value, bool) and str(key).lower() in _FLAGS and len(data) > 2:
            continue  # "found no": the note beside it says what that means ("no such job")
        if said and str(key).lower() in _NOTES:
            parts.append(said)  # "no such job", not "note no such job"
        elif said:
            parts.append(f"{' '.join(name_words(str(key)))}{'' if said.startswith(':') else ' '}{said}")
    text = ", ".join(parts)
    if not text or len(text.split()) > max_words or re.search(r"[{}\[\]<>_`*#|]", text):
        return ""
    return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")  # "at 5 p.m.", not "p.m.."


def results_said(request: ModelRequest) -> str:
    """The last tool result as it may be said (itself, up to 40 words; its data as words; its first sentences),
    else "" (the loop then says what was done): a booking's own words, with its reference number."""
    last = request.messages[-1] if request.messages else None
    if last is None or last.role != "tool" or leaks(last.content, [tool_name(t) for t in request.tools]):
        return ""
    text = last.content.strip()
    plain = len(text.split()) <= 40 and not text.startswith(("{", "["))
    return spoken_data(text) or (text if plain else first_sentences(text))
