"""A new user's mistakes, each answered in one line that names the fix (at load where it can be known then, before
any speech model or audio), with a non-zero exit: the `voiceloop` entry called in-process, or as a process with a
timeout where hanging is the failure."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from loop.models.openai import OpenAICompatModel
from tests.paths import ROOT
from voice.agents.source import load_agent
from voice.agents.spec import AgentSpec
from voice.cli import main
from voice.testing.scripted_call import FIXTURES

WAV = FIXTURES / "recordings/speech/goforward.wav"
UNTYPED = '''
from loop import Agent, ScriptedModel, Tool


def check_stock(item):
    """How many of an item the shop has"""
    return "4"


def build(call_id: str) -> Agent:
    return Agent(model=ScriptedModel(["Hi."]), tools=[Tool(check_stock)])
'''


def one_line(err: str) -> str:
    """The one line a mistake gets, after any progress lines; fails on a traceback."""
    assert "Traceback" not in err, err
    lines = [line for line in err.strip().splitlines() if not line.startswith("loading ")]
    assert len(lines) == 1, err
    return lines[0]


def test_a_tool_without_type_hints_fails_at_load_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "untyped_shop.py").write_text(UNTYPED)
    (tmp_path / "untyped.yaml").write_text("tools: [untyped_shop:check_stock]\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LIVEKIT_URL", "ws://127.0.0.1:9")  # never reached: the agent fails first
    for agent in ("untyped_shop:build", "untyped.yaml"):
        for command in (["call", str(WAV)], ["serve", "--data-dir", "data"], ["livekit", "--data-dir", "data"]):
            tail = ["start"] if command[0] == "livekit" else ["--tts", "espeak"]
            assert main([*command, "--agent", agent, *tail]) == 2, command
            err = capsys.readouterr().err
            line = one_line(err)
            assert "check_stock" in line and "'item' has no type" in line and "annotate it" in line
            assert "loading the speech stack" not in err  # known at load: no model was loaded for it


def test_llm_openai_without_its_url_says_what_to_set(capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VOICELOOP_LLM_URL", raising=False)
    assert main(["call", str(WAV), "--llm", "openai", "--tts", "espeak"]) == 2
    err = capsys.readouterr().err
    line = one_line(err)
    assert line.startswith("voiceloop call: --llm openai: VOICELOOP_LLM_URL is not set") and "export" in line
    assert "loading the speech stack" not in err


def test_llm_openai_with_the_server_down_names_the_url_at_load(capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOICELOOP_LLM_URL", "http://127.0.0.1:9/v1")  # the discard port: nothing listens
    monkeypatch.setenv("VOICELOOP_LLM_MODEL", "m")
    assert main(["call", str(WAV), "--llm", "openai", "--tts", "espeak"]) == 2
    err = capsys.readouterr().err
    line = one_line(err)
    assert "no server answers at http://127.0.0.1:9/v1" in line and "VOICELOOP_LLM_URL" in line
    assert "loading the speech stack" not in err


def test_a_model_that_fails_during_the_call_fails_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The server went away after the check at load: every turn fails, the message names the URL, exit 1."""
    monkeypatch.setenv("VOICELOOP_LLM_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("VOICELOOP_LLM_MODEL", "m")
    monkeypatch.setattr(OpenAICompatModel, "unreachable", lambda self, timeout_s=3.0: None)
    monkeypatch.setattr(OpenAICompatModel, "_delay", lambda self, attempt, failure: 0.01)  # retries, not waits
    code = main(["call", str(WAV), "--llm", "openai", "--tts", "espeak", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "voiceloop call: model m: Model 'm' at http://127.0.0.1:9/v1/chat/completions unavailable" in err


def test_livekit_console_says_what_to_run_instead_and_never_hangs() -> None:
    run = subprocess.run([sys.executable, "-m", "voice.cli", "livekit", "--agent", "shop.yaml", "console"],
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 2
    assert "voiceloop console --agent shop.yaml" in one_line(run.stderr)


class NoSoundCard:
    """sounddevice on a machine without a sound card: PortAudio lists no device."""

    PortAudioError = OSError

    def query_devices(self) -> list[dict[str, Any]]:
        return []

    def InputStream(self, **kwargs: Any) -> Any:  # sounddevice's names
        raise AssertionError("no stream may be opened without a device")

    OutputStream = InputStream


class OneMicNoSpeaker(NoSoundCard):
    def query_devices(self) -> list[dict[str, Any]]:
        return [{"name": "mic", "max_input_channels": 1, "max_output_channels": 0}]


def test_console_without_a_sound_card_says_so_before_talk_now(capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from voice.transports import console

    for sd, missing in ((NoSoundCard(), "no input device found"), (OneMicNoSpeaker(), "no output device found")):
        monkeypatch.setattr(console, "import_sounddevice", lambda sd=sd: sd)
        assert main(["console", "--tts", "espeak"]) == 2
        captured = capsys.readouterr()
        assert missing in one_line(captured.err) and "voiceloop call" in captured.err
        assert "talk now" not in captured.out + captured.err and "loading" not in captured.err


BENCH_OPTIONS = {"loop": "--no-journal", "voice": "--calls", "brain": "--eval-set", "load": "--steps"}


@pytest.mark.parametrize("bench", sorted(BENCH_OPTIONS))
def test_each_bench_has_its_own_help(bench: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["bench", bench, "--help"])
    assert done.value.code == 0
    help_text = capsys.readouterr().out
    assert help_text.startswith(f"usage: voiceloop bench {bench} ")
    for other, option in BENCH_OPTIONS.items():
        assert (option in help_text) == (other == bench), (bench, option)
    with pytest.raises(SystemExit):  # and another bench's option is refused, not silently ignored
        main(["bench", bench, BENCH_OPTIONS["load" if bench == "loop" else "loop"]])


def test_tools_by_dotted_import_path_as_the_readme_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bakery.py").write_text('def check_bread(kind: str) -> str:\n    """Bread left"""\n    return "2"\n')
    (tmp_path / "agent.yaml").write_text("name: bakery\ntools: [bakery.check_bread, 'bakery:check_bread']\n")
    monkeypatch.chdir(tmp_path)
    spec = AgentSpec.load(tmp_path / "agent.yaml")
    with pytest.raises(Exception, match="two tools are named check_bread"):  # both spellings found the function
        spec.build_tools(tmp_path)
    (tmp_path / "agent.yaml").write_text("tools: [bakery.check_bread]\n")
    tools, _ = AgentSpec.load(tmp_path / "agent.yaml").build_tools(tmp_path)
    assert [t.name for t in tools] == ["check_bread"]
    assert load_agent("loop.models.openai.OpenAICompatModel.from_env").factory == OpenAICompatModel.from_env
    with pytest.raises(ValueError, match="cannot import nowhere"):
        AgentSpec.model_validate({"tools": ["nowhere.thing"]}).build_tools(tmp_path)


def test_an_agent_file_without_a_name_is_named_after_the_file(tmp_path: Path) -> None:
    (tmp_path / "garage").mkdir()
    (tmp_path / "garage" / "agent.yaml").write_text("system_prompt: Hi.\n")
    (tmp_path / "shop.yaml").write_text("system_prompt: Hi.\nname: ''\n")
    (tmp_path / "named.yaml").write_text("name: front_desk\n")
    assert load_agent(str(tmp_path / "garage" / "agent.yaml")).name == "garage"
    assert load_agent(str(tmp_path / "shop.yaml")).name == "shop"
    assert load_agent(str(tmp_path / "named.yaml")).name == "front_desk"


SHOP = '''
from loop import Agent, LoopConfig, ScriptedModel, Tool, ToolCall
from voice import run_app

with open("imported.txt", "a") as seen:  # a second import of this file would show here
    seen.write(__name__ + "\\n")


def check_stock(item: str) -> str:
    """How many of an item the shop has"""
    return f"We have 4 {item}s in stock."


def build(call_id: str) -> Agent:
    script = [ToolCall("check_stock", {"item": "helmet"}), "We have four helmets in stock."]
    return Agent(model=ScriptedModel(script), config=LoopConfig.profile("voice"), tools=[Tool(check_stock)])


if __name__ == "__main__":
    run_app(build)
'''


def test_a_users_agent_module_runs_itself(tmp_path: Path) -> None:
    """`python shop.py call caller.wav` (and console, serve, livekit) through `voice.run_app`."""
    (tmp_path / "shop.py").write_text(textwrap.dedent(SHOP))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    usage = subprocess.run([sys.executable, "shop.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=60)
    assert usage.returncode == 2 and "console|serve|call|livekit" in one_line(usage.stderr)
    run = subprocess.run([sys.executable, "shop.py", "call", str(WAV), "--tts", "espeak", "--out", "out"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    transcript = (tmp_path / "out" / "transcript.txt").read_text()
    assert "check_stock" in transcript and "four helmets" in transcript
    assert (tmp_path / "imported.txt").read_text().split() == ["__main__"] * 2  # the running script, not a copy
