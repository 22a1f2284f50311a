"""The documentation site (mkdocs.yml, docs/) builds strictly, so a broken link, a missing anchor or a stale name
in the API reference fails here; what it says about call scripts and the tree is held to the code; the README
stays a guide."""

from __future__ import annotations

import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT
from voice.testing import reply_checks, scripted_call

DOCS = ROOT / "docs"
SITE = runpy.run_path(str(ROOT / "scripts" / "docs_site.py"))


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="the dev extra brings mkdocs (pip install -e '.[dev]')")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    agents = (tmp_path / "site" / "agents" / "index.html").read_text()
    assert "prompt_file" in agents and "<!-- generated" not in agents  # the agent-file reference was generated
    assert "flowchart TB" in (tmp_path / "site" / "architecture" / "index.html").read_text()
    assert "Agent" in (tmp_path / "site" / "reference" / "loop" / "index.html").read_text()


def test_every_agent_file_key_says_what_it_is() -> None:
    """The generated reference lists every field of the agent file's models; each must have a docstring."""
    assert SITE["undocumented_fields"]() == []
    table = SITE["agent_file"]()
    from voice.agents.spec import AgentSpec, ToolEntry

    for model in (AgentSpec, ToolEntry):
        for name, field in model.model_fields.items():
            assert field.exclude or f"| `{name}` |" in table, name


def test_an_unknown_generated_part_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown generated part 'nope'"):
        SITE["fill"]("<!-- generated: nope -->")


def _key_tables(page: str) -> dict[str, set[str]]:
    """Each `<!-- keys: NAME -->` marker and the keys in the first column of the table that follows it."""
    tables = {}
    for match in re.finditer(r"<!-- keys: (\w+) -->\n((?:\|.*\n)+)", page):
        rows = match.group(2).splitlines()[2:]
        tables[match.group(1)] = {re.match(r"\| `([a-z_]+)` \|", row).group(1) for row in rows}  # type: ignore[union-attr]
    return tables


def test_the_call_script_page_lists_exactly_the_keys_the_code_takes() -> None:
    tables = _key_tables((DOCS / "call-scripts.md").read_text())
    code = {name: getattr(scripted_call, name) for name in
            ("SCRIPT_KEYS", "CALLER_KEYS", "NOISE_KEYS", "AGENT_KEYS", "MODEL_KEYS", "EXPECT_KEYS")}
    code["REPLY_KEYS"] = reply_checks.REPLY_KEYS
    assert {name: set(keys) for name, keys in code.items()} == tables
    assert reply_checks.TURN_REPLY_KEYS < reply_checks.REPLY_KEYS


def test_a_misspelt_call_script_key_is_refused_in_one_line(tmp_path: Path) -> None:
    script = tmp_path / "call.yaml"
    script.write_text("caller:\n  - {audio: a.wav, at: 0.5, gain: 6}\n")
    with pytest.raises(ValueError, match=r"unknown key caller: gain: use at, audio, gain_db") as err:
        scripted_call.Fixture.load(script)
    assert "\n" not in str(err.value)
    script.write_text("caller: []\nexpect: {}\nrepyl: {}\n")
    with pytest.raises(ValueError, match="unknown key repyl"):
        scripted_call.Fixture.load(script)
    script.write_text("caller: []\nexpect: {}\nx-eval: {half: dev}\n")  # the author's own notes: never read
    assert scripted_call.Fixture.load(script).data["x-eval"] == {"half": "dev"}


def _named_paths(page: str) -> list[tuple[str, list[Path]]]:
    """Every file or folder a page names in backticks, with the folders named on the same line (for a bare
    `agent.py` in the row of `loop/`, or `codec.py` beside `voice/transports/`)."""
    found = []
    for line in page.splitlines():
        names = [n for n in re.findall(r"`([\w./-]+)`", line) if "/" in n or n.endswith(".py")]
        folders = [ROOT / n for n in names if "/" in n and (ROOT / n).is_dir()]
        found += [(name, folders) for name in names]
    return found


def test_every_path_the_architecture_page_names_exists() -> None:
    named = _named_paths((DOCS / "architecture.md").read_text())
    missing = [name for name, folders in named if not (ROOT / name).exists()
               and ("/" in name.rstrip("/") or not any(next(f.rglob(name.rstrip("/")), None) for f in folders))]
    assert len(named) > 50 and missing == []


def test_the_readme_is_a_guide_and_its_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    assert links and [link for link in links if not (ROOT / link).exists()] == []
    for page in ("call-scripts.md", "agents.md", "getting-started.md", "benchmarks.md"):
        assert f"docs/{page}" in readme


def test_the_agent_file_reference_committed_in_the_markdown_is_up_to_date() -> None:
    """docs/agents.md holds the generated agent-file reference itself (a reader of the Markdown saw only a marker:
    set 6's author); it must be what the code generates now (`python scripts/docs_site.py --write`)."""
    from pathlib import Path

    for page in SITE["COMMITTED"]:
        text = (Path(__file__).resolve().parents[2] / page).read_text()
        stale = "out of date: run python scripts/docs_site.py --write"
        assert "<!-- end generated:" in text and SITE["written"](text) == text, stale

