"""The documentation site's generated parts, and the MkDocs hook that puts them in (`hooks:` in mkdocs.yml).

A page holds a marker, `<!-- generated: NAME -->`, and the build replaces it with `GENERATED[NAME]()`, made from the
code as it is, so the reference cannot go stale:

- `agent-file`: every key of an agent file, from the pydantic models `voice/agents/spec.py` validates it with
  (`AgentSpec`, `ToolEntry`, `MCPEntry`) and the policy's (`loop/policy/config.py`), each with its attribute docstring.
- `imports`: who imports whom, package by package (`scripts/import_drawing.py`).

    python scripts/docs_site.py agent-file      # print one generated part
    python scripts/docs_site.py --write         # write them into the pages that commit them (docs/agents.md)
"""

from __future__ import annotations

import enum
import re
import runpy
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# a bare marker, or one with the generated text committed after it (so the Markdown reads whole on its own too)
MARKER = re.compile(r"<!-- generated: ([a-z-]+) -->(?:\n(?:.*\n)*?<!-- end generated: \1 -->)?")
COMMITTED = ("docs/agents.md",)  # pages whose generated text is written into the Markdown (`--write`)


def _type_name(ann: Any) -> str:
    """A field's type as a reader of YAML sees it: `list of str`, `str or tool entry`, `mapping`."""
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(a) for a in args if a is not type(None))
    if origin is list:
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin is dict:
        return "mapping"
    if isinstance(ann, type) and issubclass(ann, enum.Enum):
        return " \\| ".join(m.value for m in ann)
    if ann is Any:
        return "any"
    if isinstance(ann, type) and ann.__module__ != "builtins":
        return {"ToolEntry": "tool entry", "MCPEntry": "MCP server", "PolicyConfig": "policy",
                "RuleConfig": "rule"}.get(ann.__name__, ann.__name__)
    return getattr(ann, "__name__", str(ann))


def _default(field: Any) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if value in ("", [], {}, None):
        return "—"
    if isinstance(value, enum.Enum):
        value = value.value
    if hasattr(value, "model_dump"):
        return "—"
    return f"`{value}`"


def model_table(model: type) -> str:
    """One row per field of a pydantic model: key, type, default, what it means (its attribute docstring)."""
    rows = ["| key | type | default | what it is |", "|---|---|---|---|"]
    for name, field in model.model_fields.items():
        if field.exclude:
            continue
        meaning = " ".join((field.description or "").split()).replace("|", "\\|")
        rows.append(f"| `{name}` | {_type_name(field.annotation)} | {_default(field)} | {meaning} |")
    return "\n".join(rows)


def undocumented_fields() -> list[str]:
    """Agent-file keys with no docstring: a key the reference would list without saying what it is."""
    return [f"{model.__name__}.{name}" for model in _agent_file_models().values()
            for name, field in model.model_fields.items() if not field.exclude and not field.description]


def _agent_file_models() -> dict[str, type]:
    from loop.policy.config import PolicyConfig, RuleConfig
    from voice.agents.spec import AgentSpec, MCPEntry, ToolEntry

    return {"top": AgentSpec, "tools": ToolEntry, "mcp": MCPEntry, "policy": PolicyConfig, "rules": RuleConfig}


def agent_file() -> str:
    models = _agent_file_models()
    return "\n\n".join([
        "### Top-level keys", model_table(models["top"]),
        "### `tools:` entries",
        "An entry is an import path (`module:function`, `file.py:function`, a `loop.Tool` or a list of Tools), or a "
        "mapping with `use:` and these keys:", model_table(models["tools"]),
        "### `mcp:` entries", model_table(models["mcp"]),
        "### `policy:`", model_table(models["policy"]),
        "### `policy.rules:` entries", model_table(models["rules"]),
    ])


def imports() -> str:
    drawing = runpy.run_path(str(ROOT / "scripts" / "import_drawing.py"))
    return drawing["mermaid"](drawing["imports"]())


GENERATED: dict[str, Callable[[], str]] = {"agent-file": agent_file, "imports": imports}


def fill(markdown: str) -> str:
    """`markdown` with every marker replaced by its generated text; an unknown marker is an error."""
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATED:
            raise ValueError(f"unknown generated part {name!r}: use one of {', '.join(GENERATED)}")
        return GENERATED[name]()
    return MARKER.sub(one, markdown)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs hook: every page passes through `fill`."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return fill(markdown)


def written(markdown: str) -> str:
    """`markdown` with each marker followed by its generated text and an end marker, as the committed pages hold
    it (`COMMITTED`): GitHub's reader sees the reference too, and the test suite sees when it went stale."""
    return MARKER.sub(lambda m: f"<!-- generated: {m[1]} -->\n{GENERATED[m[1]]()}\n<!-- end generated: {m[1]} -->",
                      markdown)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    if sys.argv[1] == "--write":  # python scripts/docs_site.py --write: the committed pages brought up to date
        for page in COMMITTED:
            (ROOT / page).write_text(written((ROOT / page).read_text()))
    else:
        print(GENERATED[sys.argv[1]]())
