"""The import drawing, checked from the source: loop/ sits below voice/ with no arrow up, the CLI and the
transports are at the edge, and no two modules import each other, directly or around a circle.

Imports inside functions count too: a lazy import hides a dependency from start-up, not from the design.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("loop", "voice")
# Modules that turn the program's pieces into commands and sockets; nothing below them may import them.
EDGE_PREFIXES = ("voice.cli", "voice.server", "voice.console", "voice.livekit_worker", "voice.transports")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(f): f for pkg in PACKAGES for f in sorted((ROOT / pkg).rglob("*.py"))}


def _imported_names(name: str, path: Path) -> set[str]:
    """Every module name an import statement in the file mentions (`from a import b` gives a and a.b)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against this module's package
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: {d for d in _imported_names(name, path) if d in modules and d != name}
            for name, path in modules.items()}


def _is_edge(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in EDGE_PREFIXES)


def test_loop_imports_nothing_from_voice() -> None:
    offenders = {name: sorted(d for d in _imported_names(name, path) if d == "voice" or d.startswith("voice."))
                 for name, path in _modules().items() if name.split(".")[0] == "loop"}
    assert not {k: v for k, v in offenders.items() if v}, "loop/ must not depend on voice/"


def test_only_the_edge_imports_the_cli_and_the_transports() -> None:
    graph = _graph()
    offenders = {name: sorted(d for d in deps if _is_edge(d)) for name, deps in graph.items() if not _is_edge(name)}
    assert not {k: v for k, v in offenders.items() if v}, f"below the edge ({EDGE_PREFIXES}) but imports it"


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
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_brain_bench_gets_the_demo_agent_from_the_voice_side() -> None:
    from examples.order_desk.desk import order_desk_brain
    from loop.brain_bench import case_request, load_cases

    setup = order_desk_brain()
    request = case_request(setup.assembler(lambda text: len(text) // 4), {"say": "Where is order 4567?"})
    assert {t["function"]["name"] for t in request.tools} >= {"lookup_order", "issue_refund"}
    assert setup.policy_text and setup.policy_text in request.messages[0].content
    assert setup.eval_set is not None and load_cases(setup.eval_set)


def test_the_import_drawing_has_no_arrow_pointing_up_a_layer() -> None:
    import runpy

    drawing = runpy.run_path(str(Path(__file__).resolve().parent.parent / "scripts" / "import_drawing.py"))
    graph = drawing["imports"]()
    assert graph["voice.session"] and not any(m.startswith("voice") for m in graph.get("loop.agent", ()))
    assert drawing["upward"](graph) == []
