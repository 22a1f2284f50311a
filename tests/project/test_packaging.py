"""Packaging as a new user meets it: a wheel built from this tree holds `voice` and `loop` only (the demo order
desk, the default agent, as package data), installed into a fresh virtualenv it runs `voiceloop call` with the
default agent and with an example agent file from the repository, with the scripted model; a missing extra is
named; `./run demo --llm script` builds no llama.cpp; nothing points outside the repository."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

from tests.paths import ROOT

ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def run(cmd: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout[-1500:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`pip wheel --no-deps --no-build-isolation` on a copy of the tree (the build leaves nothing here)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for name in ("loop", "voice", "examples", "tests"):  # what is in the tree; the wheel takes what it declares
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.db"))
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp / "dist"),
         str(src)], tmp)
    (built,) = (tmp / "dist").glob("voiceloop-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with the wheel installed; its dependencies come from this test's environment through
    a .pth line (offline), never this source tree."""
    env = tmp_path_factory.mktemp("venv") / "env"
    run([sys.executable, "-m", "venv", "--without-pip", str(env)], env.parent)
    purelib = Path(run([str(env / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                       env.parent).stdout.strip())
    (purelib / "shared_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run([sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "install", "--no-deps", "--no-index",
         "-q", str(wheel)], env.parent)
    return env


def test_the_wheel_holds_voice_and_loop_with_the_web_page_and_the_default_agent(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in ("voice/web/index.html", "voice/agents/spec.py", "loop/testing.py", "voice/testing/__init__.py",
                     "voice/demo/order_support.yaml", "voice/demo/order_desk.py", "voice/demo/tool_choice_eval.yaml",
                     "voice/demo/reply_eval.yaml", "loop/models/llama/model.py", "voice/cli/__main__.py"):
        assert required in names, f"{required} is not in the wheel"
    tops = {n.split("/")[0] for n in names if not n.startswith("voiceloop-")}
    assert tops == {"voice", "loop"}, f"the wheel installs more than voice and loop: {sorted(tops)}"


def test_the_installed_wheel_runs_a_call_offline(venv: Path, tmp_path: Path) -> None:
    python, voiceloop = venv / "bin" / "python", venv / "bin" / "voiceloop"
    where = run([str(python), "-c", "import voice, voice.demo as d; print(voice.__file__); "
                 "print(d.AGENT_FILE)"], tmp_path).stdout.split()
    assert all(str(venv) in w for w in where), f"imported from outside the venv: {where}"
    # an example agent file of the repository, its toolset a Python file beside it: no `examples` package needed
    script = ROOT / "examples" / "appointments" / "calls" / "book_tuesday.yaml"
    done = run([str(voiceloop), "call", str(script), "--llm", "script", "--tts", "espeak", "--out",
                str(tmp_path / "out")], tmp_path)
    assert "outcome: COMPLETED" in done.stdout and "book_appointment" in done.stdout
    # the demo's own call script from this repository, with the default agent (the order desk) from the wheel
    done = run([str(voiceloop), "call", str(ROOT / "audio_fixtures" / "refund_approved.yaml"), "--tts", "espeak",
                "--out", str(tmp_path / "demo")], tmp_path)
    assert "issue_refund" in done.stdout and "outcome: COMPLETED" in done.stdout


def test_a_missing_extra_is_named_not_a_traceback(tmp_path: Path) -> None:
    """`voiceloop --help` with only the core dependencies (starlette, numpy & co. made unimportable)."""
    blocker = textwrap.dedent("""
        import sys
        from importlib.abc import MetaPathFinder
        BLOCKED = {"numpy", "starlette", "uvicorn", "soxr", "onnxruntime", "faster_whisper", "ctranslate2"}
        class Block(MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in BLOCKED:
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        sys.meta_path.insert(0, Block())
        from voice.cli import main
        sys.exit(main(["--help"]))
    """)
    done = subprocess.run([sys.executable, "-c", blocker], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**ENV, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "pip install 'voiceloop[voice]'" in done.stderr


def test_the_scripted_model_needs_no_compiled_binding(tmp_path: Path) -> None:
    """`voiceloop call --llm script` with llama_cpp unimportable (as on a machine that never built it)."""
    blocked = textwrap.dedent(f"""
        import sys
        from importlib.abc import MetaPathFinder
        class Block(MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "llama_cpp":
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        sys.meta_path.insert(0, Block())
        from voice.cli import main
        sys.exit(main(["call", {str(ROOT / "audio_fixtures" / "refund_approved.yaml")!r}, "--llm", "script",
                       "--tts", "espeak", "--out", {str(tmp_path)!r}]))
    """)
    done = subprocess.run([sys.executable, "-c", blocked], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**ENV, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "outcome: COMPLETED" in done.stdout


def test_run_demo_with_the_scripted_model_skips_the_llama_build() -> None:
    function = (ROOT / "run").read_text().split("needs_llm() {", 1)[1].split("\n}\n", 1)[0]
    probe = f"needs_llm() {{{function}\n}}\n" + "".join(
        f'needs_llm {args} && echo yes || echo no\n' for args in
        ("", "--llm script", "--llm=script", "--llm openai", "--llm script --llm local", "--out x"))
    answers = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert answers == ["yes", "no", "no", "no", "yes", "yes"]
    run_text = (ROOT / "run").read_text()
    assert 'if needs_llm "$@"; then install_llm' in run_text
    assert "libportaudio2" in run_text and "console" in run_text.split("pip\" install --progress-bar off -e", 1)[1]


def test_the_project_refers_to_nothing_outside_itself() -> None:
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    offenders = []
    for name in files:
        path = ROOT / name
        if path.suffix not in (".py", ".md", ".sh", ".toml", ".yaml", ".yml", ".tsv", ".txt", ".js", ".html") \
                and name != "run":
            continue
        text = path.read_text(errors="replace")
        offenders += [f"{name}: {needle}" for needle in ("DESIGN.md", "../shared", "/work/") if needle in text
                      and name != "tests/project/test_packaging.py"]
    assert not offenders


def test_nothing_at_run_time_reads_the_repository_through_its_own_path() -> None:
    """An installed wheel has no tests/ or audio_fixtures/ beside it: code may find its own package data from
    `__file__`, never climb out of its package to the repository's folders."""
    offenders = []
    for path in sorted([*ROOT.glob("voice/**/*.py"), *ROOT.glob("loop/**/*.py")]):
        depth = len(path.relative_to(ROOT).parts) - 1  # folders between the repository root and the file
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "__file__" not in line:
                continue
            # parents[N] and N+1 `.parent`s name the same folder; parents[depth] is the repository itself
            ups = [int(k) for k in re.findall(r"parents\[(\d+)\]", line)] + [line.count(".parent") - 1]
            if max(ups) >= depth or "tests" in line or "audio_fixtures" in line:
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == []
