"""Which call scripts `voiceloop bench voice` plays, and what each is called in its report.

By default every call script in audio_fixtures/ (for a real model, without the script-only ones). `--calls` picks
by name (a call script in audio_fixtures/, as before), by path (a user's own call script), or by folder (every
call script under it, e.g. `examples/hotel/calls`, or `examples` for every example agent's calls).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import yaml

from voice.testing.scripted_call import FIXTURES

# Their expectations hang on the scripted reply's length (a long reply to cut into, to backchannel over).
SCRIPT_ONLY = frozenset({"backchannel", "barge_in", "noise_no_interrupt"})
_SUFFIXES = (".yaml", ".yml")


def is_call_script(path: Path) -> bool:
    """A YAML mapping with a `caller:` list (an agent file or an eval set is not one)."""
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and isinstance(data.get("caller"), list)


def _script_only(path: Path, llm: str) -> bool:
    return llm != "script" and path.resolve().parent == FIXTURES.resolve() and path.stem in SCRIPT_ONLY


def bench_paths(llm: str, only: Sequence[str] = ()) -> list[Path]:
    """Every fixture (`script`), or every fixture where a real model makes sense; `only` picks names, files and
    folders (see the module docstring). Raises ValueError naming what it could not find."""
    every = sorted(FIXTURES.glob("*.yaml"))
    if not only:
        if not every:
            raise ValueError(f"no call scripts in {FIXTURES}: run from a voiceloop checkout, set VOICELOOP_FIXTURES "
                             "to a folder of them, or name your own with --calls")
        return [p for p in every if not _script_only(p, llm)]
    by_name = {p.stem: p for p in every}
    chosen: list[Path] = []
    problems: list[str] = []
    for item in only:
        path = Path(item)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix in _SUFFIXES and is_call_script(p))
            chosen += [p for p in found if not _script_only(p, llm)]
            if not found:
                problems.append(f"{item} (a folder without call scripts)")
        elif path.is_file():
            if path.suffix not in _SUFFIXES or not is_call_script(path):
                problems.append(f"{item} (not a call script: a YAML file with a caller: list)")
            chosen.append(path)
        elif item in by_name:
            chosen.append(by_name[item])
        else:
            problems.append(item)
    if problems:
        raise ValueError(f"no such call script(s): {', '.join(problems)}; give a name from audio_fixtures/, "
                         "a call script's path or a folder of them")
    unique: dict[Path, Path] = {}  # a call named twice (by a file and by its folder) runs once
    for p in chosen:
        unique.setdefault(p.resolve(), p)
    return list(unique.values())


def call_label(path: Path) -> str:
    """A call's name in the report, the CSV and the trace folder: its file name, with its agent's folder for a
    call script in an agent's `calls/` folder ("hotel/thanks_bye" for examples/hotel/calls/thanks_bye.yaml)."""
    path = path.resolve()
    return f"{path.parent.parent.name}/{path.stem}" if path.parent.name == "calls" else path.stem


def call_labels(paths: Sequence[Path]) -> list[str]:
    """`call_label` of each, made unique within one run by the folder of any two that would share a name."""
    labels = [call_label(p) for p in paths]
    return [f"{p.resolve().parent.name}/{label}" if labels.count(label) > 1 else label
            for p, label in zip(paths, labels, strict=True)]
