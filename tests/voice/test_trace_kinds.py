"""Every trace kind written anywhere in voice/, and every kind the browser page listens for, is a `TraceKind`:
a renamed or misspelt kind fails here instead of silently never matching."""

from __future__ import annotations

import ast
import re

import pytest

from loop.events import EventKind
from tests.paths import ROOT
from voice.trace import FORWARDED_LOOP_EVENTS, TRANSPORT_PREFIX, TraceKind, loop_trace_kind, transport_trace_kind

VOICE = ROOT / "voice"
# Calls whose first argument is a trace kind: session._trace(kind), speculation's trace(kind), Call.note(kind).
TRACE_WRITERS = {"_trace": "", "trace": "", "note": TRANSPORT_PREFIX}


def _written_kinds() -> dict[str, str]:
    """Every literal kind passed to a trace writer in voice/, with where it is."""
    found = {}
    for path in sorted(VOICE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            first = node.args[0]
            if name in TRACE_WRITERS and isinstance(first, ast.Constant) and isinstance(first.value, str):
                found[TRACE_WRITERS[name] + first.value] = f"{path.relative_to(VOICE.parent)}:{node.lineno}"
    return found


def test_every_kind_written_in_voice_is_a_trace_kind() -> None:
    written = _written_kinds()
    assert len(written) >= 5  # the scan does see literal kinds (the call core writes TraceKind members)
    unknown = {kind: where for kind, where in written.items() if kind not in set(TraceKind)}
    assert not unknown, f"add these to voice.trace.TraceKind: {unknown}"


def test_every_kind_the_browser_page_handles_is_a_trace_kind() -> None:
    source = (VOICE / "web" / "app.js").read_text(encoding="utf-8")
    block = source[source.index("const EVENTS = {"):]
    block = block[: block.index("\n};")]
    handled = re.findall(r"^  '?([\w.]+)'?\(", block, flags=re.MULTILINE)
    assert "barge_in" in handled and "loop.tool_result" in handled
    assert set(handled) <= set(TraceKind), set(handled) - set(TraceKind)


def test_loop_events_in_the_trace_keep_their_journal_names() -> None:
    assert {loop_trace_kind(k) for k in FORWARDED_LOOP_EVENTS} == {k for k in TraceKind if k.startswith("loop.")}
    assert loop_trace_kind(EventKind.VERDICT) is TraceKind.LOOP_VERDICT == "loop.verdict"
    assert transport_trace_kind("closed") is TraceKind.TRANSPORT_CLOSED
    with pytest.raises(ValueError):
        loop_trace_kind(EventKind.MODEL_DELTA)  # journal only: never in a call's trace
