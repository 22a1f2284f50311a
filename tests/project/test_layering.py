"""The layering, checked from the source: each module's package is its folder, packages are ordered top down
(`scripts/import_drawing.py` `PACKAGES`), and no module imports a package above its own; loop/ imports nothing
from voice/; no two modules import each other, directly or around a circle; every module is in a listed package.

Imports inside functions count too: a lazy import hides a dependency from start-up, not from the design.
"""

from __future__ import annotations

import ast
import re
import runpy

import pytest

from tests.paths import ROOT

DRAWING = runpy.run_path(str(ROOT / "scripts" / "import_drawing.py"))
GRAPH: dict[str, set[str]] = DRAWING["imports"]()
package_of = DRAWING["package_of"]


def test_loop_imports_nothing_from_voice() -> None:
    offenders = {m: sorted(d for d in deps if d.split(".")[0] == "voice") for m, deps in GRAPH.items()
                 if m.split(".")[0] == "loop"}
    assert not {k: v for k, v in offenders.items() if v}, "loop/ must not depend on voice/"


def test_voice_and_loop_import_nothing_from_the_examples_or_the_tests() -> None:
    """The wheel installs voice and loop only: what they import must be in it."""
    import ast

    offenders = []
    for name, path in DRAWING["modules"]().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            offenders += [f"{name} -> {t}" for t in targets if t.split(".")[0] in ("examples", "tests")]
    assert offenders == []


def test_no_module_imports_a_package_above_its_own() -> None:
    assert DRAWING["upward"](GRAPH) == []


@pytest.mark.parametrize(("package", "never"), [
    ("voice.call", ("voice.runtime", "voice.server", "voice.transports", "voice.livekit", "voice.bench",
                    "voice.hosting", "voice.testing", "voice.cli", "voice.observe")),
    ("voice.speech", ("voice.call", "voice.runtime", "voice.server", "voice.transports", "voice.livekit",
                      "voice.agents")),
    ("voice.runtime", ("voice.server", "voice.transports", "voice.hosting", "voice.livekit", "voice.bench")),
    ("voice.transports", ("voice.server", "voice.livekit", "voice.bench", "voice.testing")),
    ("loop.store", ("loop", "loop.models", "loop.policy", "loop.run")),
    ("loop.models", ("loop", "loop.store", "loop.policy", "loop.run", "loop.bench")),
])
def test_package_boundaries(package: str, never: tuple[str, ...]) -> None:
    """The boundaries the architecture rests on, spelled out (the ordering implies them; this names them)."""
    crossing = sorted(f"{m} -> {d}" for m, deps in GRAPH.items() if package_of(m) == package
                      and not DRAWING["is_face"](m) for d in deps
                      if package_of(d) in never and not DRAWING["is_face"](d))
    assert crossing == []


def test_a_module_of_a_new_folder_must_be_placed() -> None:
    assert DRAWING["rank"]("voice.nowhere") < 0
    assert package_of("voice.transports.twilio.codec") == "voice.transports"
    assert package_of("loop.types") == "loop:vocabulary" and package_of("loop.agent") == "loop"
    assert package_of("voice.audio") == "voice" and package_of("voice.cli") == "voice.cli"
    assert DRAWING["upward"]({"voice.speech.stt": {"voice.call.core"}}) == ["voice.speech.stt -> voice.call.core"]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles() -> None:
    assert _cycles(GRAPH) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_brain_bench_gets_the_demo_agent_from_the_voice_side() -> None:
    from loop.bench.brain import case_request, load_cases
    from voice.demo.order_desk import order_desk_brain

    setup = order_desk_brain()
    request = case_request(setup.assembler(lambda text: len(text) // 4), {"say": "Where is order 4567?"})
    assert {t["function"]["name"] for t in request.tools} >= {"lookup_order", "issue_refund"}
    assert setup.policy_text and setup.policy_text in request.messages[0].content
    assert setup.eval_set is not None and load_cases(setup.eval_set)


def test_no_module_imports_another_packages_private_module() -> None:
    """A module whose name starts with `_` is its package's own (`loop.grounding._scope`); other packages use what
    the package's public modules export (`loop.grounding.phase`), so the embedded model's adapter reaches the
    grounding through the phase every model shares."""
    crossing = sorted(f"{m} -> {d}" for m, deps in GRAPH.items() for d in deps
                      if d.rsplit(".", 1)[-1].startswith("_") and not d.endswith("__")
                      and package_of(d) != package_of(m))
    assert crossing == []


# Modules that still read English's words by name, each with what is left to move (issue 38). The list may only
# shrink: a module not on it that names a language fails, and so does one on it that no longer does.
STILL_ENGLISH = {
}


def test_no_module_outside_the_packs_names_a_language_but_those_still_moving() -> None:
    """A module takes the call's language pack (or `loop.locale.DEFAULT_WORDS`), never `loop.locale.en` by name."""
    import ast

    naming = set()
    for name, path in DRAWING["modules"]().items():
        if name.startswith("loop.locale"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            packs = node.module in ("loop.locale.en", "loop.locale.es")
            if packs or (node.module == "loop.locale" and any(a.name in ("en", "es") for a in node.names)):
                naming.add(name)
    assert sorted(naming - set(STILL_ENGLISH)) == [], "take the call's pack instead of naming a language"
    assert sorted(set(STILL_ENGLISH) - naming) == [], "moved: take it off STILL_ENGLISH"


# Modules that still write a language's words as literals in a word list or a regular expression, each with what is
# left to move into the packs (issue 38). The list may only shrink, as STILL_ENGLISH did.
STILL_WORDED = {
}


def _pack_words() -> set[str]:
    """Every word (or phrase) the packs list: the strings of their tuples, sets and dictionaries' keys."""
    from loop import locale

    words = set()
    for language in locale.LANGUAGES:
        for name, value in vars(locale.get(language)).items():
            listed = value if isinstance(value, tuple | frozenset | set | list) else value if isinstance(value, dict) \
                else ()
            words |= {w for w in listed if name.isupper() and isinstance(w, str) and re.fullmatch(r"[a-zñ' ]{3,}", w)}
    return words


def _worded(tree: ast.AST, words: set[str]) -> set[str]:
    """The pack words a module writes as a word list (a literal tuple, set, list or dict of 3 or more strings, most
    of them the packs' words) or as alternatives of a regular expression it matches (2 or more)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        items = node.keys if isinstance(node, ast.Dict) else node.elts if isinstance(
            node, ast.Set | ast.Tuple | ast.List) else []
        strings = [e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        listed = [s for s in strings if s in words]
        if len(listed) >= 3 and len(listed) >= 0.6 * len(strings):
            found |= set(listed)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MATCHERS \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            alternatives = {w for pair in _ALTERNATIVE.findall(node.args[0].value) for w in pair if w in words}
            found |= alternatives if len(alternatives) >= 2 else set()
    return found


_MATCHERS = ("compile", "search", "match", "fullmatch", "sub", "finditer", "findall", "split")
_ALTERNATIVE = re.compile(r"(?<![a-z\\])([a-z' ]{3,})(?=[|)?])|(?<=[|(:])([a-z' ]{3,})")


def test_no_module_outside_the_packs_writes_their_words_but_those_still_moving() -> None:
    """A word a caller says is read from the call's pack, never written in a module as a literal list or pattern
    (docstrings and comments are neither, so they may quote the words)."""
    words = _pack_words()
    worded = {name for name, path in DRAWING["modules"]().items() if not name.startswith("loop.locale")
              and _worded(ast.parse(path.read_text(encoding="utf-8")), words)}
    assert sorted(worded - set(STILL_WORDED)) == [], "move the words into loop/locale's packs"
    assert sorted(set(STILL_WORDED) - worded) == [], "moved: take it off STILL_WORDED"


def test_the_word_finder_finds_a_word_list_and_a_pattern_and_not_a_docstring() -> None:
    words = {"half", "past", "quarter", "dollars", "cents"}
    assert _worded(ast.parse('X = {"half", "past", "quarter"}'), words) == {"half", "past", "quarter"}
    assert _worded(ast.parse('re.compile(r"(?:half|past) (?:dollars|cents)")'), words) == words - {"quarter"}
    assert _worded(ast.parse('"""half past quarter dollars"""\nX = ("a", "b", "half")'), words) == set()
