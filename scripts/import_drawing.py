"""Draw who imports whom inside voiceloop, package by package, as a Mermaid diagram (drawn into docs/architecture.md by
scripts/docs_site.py when the site is built).

    python scripts/import_drawing.py      # the same drawing, printed

A module's package is its folder: voice/call/core.py is in `voice.call`, voice/transports/twilio/codec.py in
`voice.transports`, voice/audio.py in `voice`. `PACKAGES` orders them top down; a module may import its own
package and the packages below it, never one above. The loop's vocabulary (plain data every package shares) sits
at the bottom of `loop`. A package's `__init__.py` that defines nothing is its public face: it hands names on from
inside or below, so its imports are not arrows of the design. `tests/project/test_layering.py` checks all of this.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOP = ("loop", "voice")
# Top down. The path answers "where is X?"; this order answers "who may use whom?".
PACKAGES = (
    "voice.cli",         # the `voiceloop` command
    "voice.bench",       # measurements: bench voice, bench load, reply evaluation
    "voice.demo",        # the demo order desk, the default agent (ships in the wheel)
    "voice.testing",     # scripted audio calls and the checks a user's agent tests call
    "voice.livekit",     # voiceloop inside LiveKit Agents
    "voice.server",      # `voiceloop serve`: the ASGI app and its operator API
    "voice.transports",  # Twilio, the browser page, the local console: wire codecs and endpoints
    "voice.hosting",     # live calls: registry, admission, limits, escalations
    "voice.runtime",     # drivers that carry out the call core's commands
    "voice.observe",     # timelines and OpenTelemetry
    "voice.call",        # the sans-I/O call core
    "voice.agents",      # agent files and factories
    "voice.speech",      # VAD, STT, TTS, spoken form
    "voice",             # audio format and trace kinds
    "loop.run",          # report, settle, tenancy, the loop's subcommands
    "loop.bench",        # bench loop, bench brain
    "loop",              # the turn loop: agent, act, vet, prompt, budget, replay, prefetch
    "loop.toolsets",     # tools from elsewhere: MCP servers
    "loop.policy",       # rules, policy as data, guardrails
    "loop.models",       # model backends
    "loop.grounding",    # arguments and replies grounded in what was said
    "loop.store",        # journal and ledger, SQLite and PostgreSQL
    "loop:vocabulary",   # types, tools, events, errors, outcomes, config, approvals
    "loop.locale",       # one package per language: word lists and fixed sentences
)
VOCABULARY = ("loop.types", "loop.tools", "loop.events", "loop.errors", "loop.outcomes", "loop.config",
              "loop.approvals", "loop.repetition", "loop.commit_gate")


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


@functools.cache  # asked for every arrow; the files do not change while it runs
def is_face(module: str) -> bool:
    """A package's `__init__.py` that defines nothing of its own (a lazy `__getattr__` aside): it hands names on."""
    init = ROOT / module.replace(".", "/") / "__init__.py"
    if not init.exists():
        return False
    defined = [n for n in ast.parse(init.read_text(encoding="utf-8")).body
               if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]
    return all(n.name in ("__getattr__", "__dir__") for n in defined)


def package_of(module: str) -> str:
    """The entry of PACKAGES a module belongs to: its folder, at most two levels below the top."""
    if module in VOCABULARY:
        return "loop:vocabulary"
    parts = module.split(".")
    folder = parts if (ROOT / module.replace(".", "/") / "__init__.py").exists() else parts[:-1]
    return ".".join(folder[:2])


def modules() -> dict[str, Path]:
    return {module_name(p): p for top in TOP for p in sorted((ROOT / top).rglob("*.py"))}


def imported(path: Path, names: set[str]) -> set[str]:
    """The modules of this tree an import in the file names (`from a import b`: a.b when it is a module, else a);
    imports inside functions count too: a lazy import hides a dependency from start-up, not from the design."""
    src = module_name(path)
    package = src if path.name == "__init__.py" else src.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in names else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in names:
                target = target.rpartition(".")[0]
            if target and target != src:
                found.add(target)
    return found


def imports() -> dict[str, set[str]]:
    """Who imports whom, module by module (faces included)."""
    found = modules()
    names = set(found)
    return {name: imported(path, names) for name, path in found.items()}


def rank(package: str) -> int:
    return PACKAGES.index(package) if package in PACKAGES else -1


def upward(graph: dict[str, set[str]]) -> list[str]:
    """Arrows from a module to a package above its own (faces aside), and modules in no listed package."""
    bad = [f"{m}: in no package of PACKAGES" for m in graph if rank(package_of(m)) < 0]
    for src, deps in graph.items():
        if is_face(src):
            continue
        bad += [f"{src} -> {dst}" for dst in deps if not is_face(dst) and rank(package_of(dst)) < rank(package_of(src))]
    return sorted(bad)


def package_arrows(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    arrows: dict[str, set[str]] = defaultdict(set)
    for src, deps in graph.items():
        if is_face(src):
            continue
        for dst in deps:
            if not is_face(dst) and package_of(dst) != package_of(src):
                arrows[package_of(src)].add(package_of(dst))
    return arrows


def _node(package: str) -> str:
    return package.replace(".", "_").replace(":", "_")


def mermaid(graph: dict[str, set[str]]) -> str:
    members: dict[str, list[str]] = defaultdict(list)
    for module in sorted(graph):
        package = package_of(module)
        if not is_face(module):
            inside = module.rpartition(".")[2] if package == "loop:vocabulary" else module[len(package) + 1:]
            members[package].append(inside or "__init__")
    lines = ["```mermaid", "flowchart TB"]
    for package in PACKAGES:
        listed = ", ".join(members.get(package, [])) or "(faces only)"
        lines.append(f'  {_node(package)}["<b>{package}</b><br/>{listed}"]')
    arrows = package_arrows(graph)
    for src in PACKAGES:
        lines += [f"  {_node(src)} --> {_node(dst)}" for dst in PACKAGES if dst in arrows.get(src, ())]
    lines.append("```")
    return "\n".join(lines)


if __name__ == "__main__":
    graph = imports()
    up = upward(graph)
    print("# Who imports whom\n")
    print("Generated by `python scripts/import_drawing.py`: one box per package (a module's "
          "package is its folder), top down in the order `PACKAGES` in that script gives; an arrow means some "
          "module of the first package imports one of the second. No arrow points up"
          + (f", except: {', '.join(up)}." if up else "."))
    print()
    print(mermaid(graph))
