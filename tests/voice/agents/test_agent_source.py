"""`--agent`: an agent file validated before anything loads, a user's factory with its own model (or the
command's), and every command that runs calls accepting it."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from loop import ScriptedModel, ToolCall
from loop.testing import Conversation
from voice.agents.looping_script import LoopingScript
from voice.agents.source import DEFAULT_AGENT, load_agent
from voice.agents.spec import AgentConfigError, AgentSpec, resolve_ref
from voice.audio import load_audio, write_wav
from voice.cli import build_parser, main
from voice.testing.scripted_call import FIXTURES

FACTORY = '''
from loop import Agent, LoopConfig, ScriptedModel, Tool, ToolCall

BUILT = []


def count_wheels(kind: str) -> str:
    """How many wheels a vehicle has"""
    return f"A {kind} has {2 if kind == 'bike' else 4} wheels."


def build(call_id: str, data_dir):
    BUILT.append((call_id, str(data_dir)))
    model = ScriptedModel([ToolCall("count_wheels", {"kind": "bike"}), "A bike has two wheels."])
    return Agent(model=model, tools=[Tool(count_wheels)], config=LoopConfig.profile("voice"),
                 system_prompt="You know vehicles.")
'''


def write_agent_file(folder: Path, body: str) -> Path:
    path = folder / "agent.yaml"
    path.write_text(textwrap.dedent(body))
    return path


def test_an_agent_file_with_a_tool_beside_it(tmp_path: Path) -> None:
    (tmp_path / "weather_tools.py").write_text("def forecast(city: str) -> str:\n"
                                               "    '''Tomorrow's weather'''\n    return f'Sun in {city}.'\n")
    path = write_agent_file(tmp_path, """
        name: weather
        prompt_file: prompt.md
        tools: [weather_tools:forecast]
        policy: {default: ALLOW, rules: [{name: no.mars, tool: forecast, decision: DENY, when: {city: {eq: Mars}}}]}
        loop: {max_output_tokens: 99}
        greeting: Weather line.
        stt: base
    """)
    (tmp_path / "prompt.md").write_text("You tell the weather.\n")
    source = load_agent(str(path))
    assert source.greeting == "Weather line." and source.engine("stt", None, "tiny.en") == "base"
    assert source.engine("stt", "tiny.en", "x") == "tiny.en"  # the command's choice wins
    script = [ToolCall("forecast", {"city": "Mars"}), ToolCall("forecast", {"city": "Oslo"}), "Sunny in Oslo."]
    agent = source.maker(tmp_path / "data", lambda _id: ScriptedModel(script))("c1")
    assert agent.config.max_output_tokens == 99 and agent.assembler.system == "You tell the weather."
    assert agent.tools["forecast"].schema["required"] == ["city"]
    turn = Conversation(agent).say_sync("Weather on Mars, then Oslo?")
    turn.expect.verdict("no.mars", "DENY").executed("forecast").called("forecast", city="oslo").said("Oslo")


@pytest.mark.parametrize(("body", "message"), [
    ("profile: spaceship", "unknown loop profile 'spaceship'"),
    ("loop: {max_output_tokenz: 5}", "max_output_tokenz"),
    ("model: gpt-9", "unknown --llm 'gpt-9'"),
    ("tts: robot", "unknown --tts 'robot'"),
    ("promt: hi", "promt"),
    ("system_prompt: a\nprompt_file: b.md", "not both"),
    ("prompt_file: missing.md", "prompt_file missing.md is not a file"),
    ("policy: {rules: [{name: r, tool: x, decision: MAYBE}]}", "policy.rules.0.decision"),
])
def test_a_bad_agent_file_names_the_file_and_the_field(tmp_path: Path, body: str, message: str) -> None:
    path = write_agent_file(tmp_path, body)
    with pytest.raises(AgentConfigError, match=re.escape(str(path))) as err:
        AgentSpec.load(path)
    assert message in str(err.value)


@pytest.mark.parametrize(("tools", "message"), [
    ("[nosuchmodule_xyz:f]", "cannot import nosuchmodule_xyz"),
    ("[json:nothing_here]", "json has no attribute 'nothing_here'"),
    ("[json]", "not an import path"),
    ("[json:__doc__]", "expected a function, a loop.Tool or a list of Tools"),
    ("[loop.locale:get, loop.locale:get]", "two tools are named get"),
    ("[json:dumps]", "parameter 'obj' has no type"),
])
def test_bad_tool_import_paths_are_clear_errors(tmp_path: Path, tools: str, message: str) -> None:
    source = load_agent(str(write_agent_file(tmp_path, f"tools: {tools}")))
    with pytest.raises(AgentConfigError, match=re.escape(message)):
        source.maker(tmp_path)


def test_a_factory_gets_the_call_id_and_keeps_its_own_model_unless_told(tmp_path: Path) -> None:
    (tmp_path / "wheels_agent.py").write_text(FACTORY)
    source = load_agent(str(tmp_path / "wheels_agent.py") + ":build")
    agent = source.maker(tmp_path / "data")("call-7")
    assert isinstance(agent.model, ScriptedModel)
    Conversation(agent).say_sync("How many wheels on a bike?").expect.executed("count_wheels").said("two wheels")
    other = source.maker(tmp_path / "data", lambda _id: ScriptedModel(["Hi."]))("call-8")  # --llm over its own
    Conversation(other).say_sync("Hello?").expect.not_called().said("Hi.")
    built = resolve_ref(f"{tmp_path / 'wheels_agent.py'}:BUILT")
    assert built == [("call-7", str(tmp_path / "data")), ("call-8", str(tmp_path / "data"))]


def test_a_factory_must_return_an_agent(tmp_path: Path) -> None:
    (tmp_path / "not_agent.py").write_text("def build():\n    return 42\n")
    maker = load_agent(f"{tmp_path / 'not_agent.py'}:build").maker(tmp_path)
    with pytest.raises(AgentConfigError, match=r"returned int, not a loop\.Agent"):
        maker("c")


def test_the_default_agent_is_the_order_desk_from_its_file(tmp_path: Path) -> None:
    source = load_agent(None)
    assert source.ref == DEFAULT_AGENT and source.name == "order_support"
    maker = source.maker(tmp_path)
    agent = maker("c1")
    assert {"lookup_order", "issue_refund"} <= set(agent.tools) and maker.state.order("4567")["city"] == "Lisbon"
    assert isinstance(agent.model, LoopingScript)  # no model chosen: the looping acknowledgement


@pytest.mark.parametrize("command", [["call", "x.wav"], ["serve"], ["console"], ["livekit"], ["bench", "voice"]])
def test_every_command_that_runs_calls_takes_agent(command: list[str]) -> None:
    args = build_parser().parse_args([*command, "--agent", "mypkg.agent:build"])
    assert args.agent == "mypkg.agent:build"


def test_call_with_a_factory_and_a_bare_recording_of_two_turns(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's factory module in the working directory; two caller turns on one recording both complete."""
    (tmp_path / "wheels_agent.py").write_text(FACTORY.replace(
        'ScriptedModel([ToolCall("count_wheels", {"kind": "bike"}), "A bike has two wheels."])',
        'ScriptedModel([ToolCall("count_wheels", {"kind": "bike"}), "A bike has two wheels.", "Goodbye!"])'))
    monkeypatch.chdir(tmp_path)
    speech = load_audio(FIXTURES / "recordings/speech/goforward.wav")
    gap = np.zeros(16000 * 6, np.int16)
    write_wav(tmp_path / "two.wav", np.concatenate([speech, gap, speech]))
    code = main(["call", str(tmp_path / "two.wav"), "--agent", "wheels_agent:build", "--tts", "espeak",
                 "--out", str(tmp_path / "out"), "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and len(summary["turns"]) == 2
    assert [t["outcome"] for t in summary["turns"]] == ["COMPLETED", "COMPLETED"]
    transcript = (tmp_path / "out" / "transcript.txt").read_text()
    assert "count_wheels" in transcript and "Goodbye!" in transcript


def test_a_bare_recording_with_the_default_agent_never_runs_out_of_script(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture) -> None:
    speech = load_audio(FIXTURES / "recordings/speech/goforward.wav")
    write_wav(tmp_path / "two.wav", np.concatenate([speech, np.zeros(16000 * 6, np.int16), speech]))
    code = main(["call", str(tmp_path / "two.wav"), "--tts", "espeak", "--out", str(tmp_path / "out"), "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and [t["outcome"] for t in summary["turns"]] == ["COMPLETED", "COMPLETED"]
    assert "couldn't finish" not in (tmp_path / "out" / "transcript.txt").read_text()


def test_llm_script_keeps_a_factorys_own_script_and_replaces_its_llm(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`--llm script` means no LLM: a factory's own ScriptedModel plays; a factory's LLM gives way to the looping
    acknowledgement (never contacted: nothing listens at its URL)."""
    (tmp_path / "wheels_agent_llm.py").write_text(FACTORY)
    (tmp_path / "remote_agent.py").write_text(FACTORY.replace(
        "model = ScriptedModel(", "model = OpenAICompatModel('http://127.0.0.1:9/v1', 'm') or ScriptedModel(").replace(
        "from loop import", "from loop.models.openai import OpenAICompatModel\nfrom loop import"))
    monkeypatch.chdir(tmp_path)
    speech = load_audio(FIXTURES / "recordings/speech/goforward.wav")
    write_wav(tmp_path / "one.wav", speech)
    for agent, out in (("wheels_agent_llm:build", "own"), ("remote_agent:build", "remote")):
        code = main(["call", str(tmp_path / "one.wav"), "--agent", agent, "--llm", "script",
                     "--tts", "espeak", "--out", str(tmp_path / out), "--json"])
        assert code == 0
    own, remote = ((tmp_path / out / "transcript.txt").read_text() for out in ("own", "remote"))
    assert "count_wheels" in own and "two wheels" in own and "Thanks, I heard you" not in own
    assert "Thanks, I heard you" in remote and "count_wheels" not in remote


def test_llm_script_keeps_an_agent_files_own_script(tmp_path: Path) -> None:
    """`--llm script` (model_source's choice, as serve, console and livekit make it) with an agent file that has a
    `script:`: its own replies, not the looping acknowledgement; one without a script gets the acknowledgement."""
    from voice.hosting.registry import model_source

    (tmp_path / "own").mkdir()
    (tmp_path / "plain").mkdir()
    own = load_agent(str(write_agent_file(tmp_path / "own", "script: [Our own reply.]\nmodel: local\n")))
    plain = load_agent(str(write_agent_file(tmp_path / "plain", "system_prompt: Hi.\n")))
    agent = own.maker(tmp_path / "d1", model_source(None, "script"))("c1")  # model: local is not loaded either
    assert [b[0].text for b in agent.model.blocks] == ["Our own reply."]  # type: ignore[attr-defined]
    other = plain.maker(tmp_path / "d2", model_source(None, "script"))("c2")
    assert "Thanks, I heard you" in other.model.blocks[0][0].text  # type: ignore[attr-defined]


def test_the_reply_checks_hold_each_agent_to_its_own_instructions() -> None:
    """A reply that reads the appointment line's prompt aloud is a leak for that agent, not for the order desk."""
    from examples.appointments import AGENT_FILE
    from voice.testing.reply_checks import check_call

    spec = AgentSpec.load(AGENT_FILE)
    trace = [{"kind": "caller_turn_ended", "t": 1.0, "text": "Anything on Friday?"},
             {"kind": "agent_said", "t": 2.0, "part": "reply",
              "text": "Never make up a free time or a booking, so let me look."}]
    own = check_call(None, trace, [0.5], instructions=(spec.prompt(), spec.policy.text))
    assert any("leaked instruction" in p for p in own), own
    assert not check_call(None, trace, [0.5])  # the demo's instructions say nothing like it


def test_livekit_jobs_get_the_agent_through_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`voiceloop livekit --agent ...` hands the choice to its job processes, which build their calls from it."""
    pytest.importorskip("livekit.agents")
    import livekit.agents

    from examples.appointments import AGENT_FILE
    from voice.livekit import worker as livekit_worker
    ran: list[object] = []
    monkeypatch.setattr(livekit.agents.cli, "run_app", ran.append)
    monkeypatch.setenv("LIVEKIT_URL", "ws://127.0.0.1:1")
    monkeypatch.setattr("sys.argv", list(sys.argv))  # the command hands LiveKit its own argv
    for name in ("VOICELOOP_AGENT", "VOICELOOP_DATA", "VOICELOOP_STT", "VOICELOOP_TTS", "VOICELOOP_GREETING",
                 "VOICELOOP_SCRIPT", "VOICELOOP_LLM", "VOICELOOP_MAX_CALLS"):
        monkeypatch.setenv(name, "")  # recorded, so what the command sets is undone after the test
        monkeypatch.delenv(name)
    args = build_parser().parse_args(["livekit", "--agent", str(AGENT_FILE), "--tts", "espeak", "--data-dir",
                                      str(tmp_path), "start"])
    assert livekit_worker.cmd_livekit(args) == 0 and len(ran) == 1
    ctx = livekit_worker.shared_context.__wrapped__()  # what a job process builds (uncached here)
    assert ctx.factory.session_config.greeting == "Hello, Smile Dental, how can I help?"
    agent = ctx.factory.make_agent("job-1")
    assert "book_appointment" in agent.tools and (tmp_path / "appointments.db").exists()


@pytest.mark.parametrize(("extra", "greeting"), [([], "Hello, Smile Dental, how can I help?"),
                                                 (["--greeting", "Hi there."], "Hi there.")])
def test_serve_builds_its_calls_from_the_agent_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                    extra: list[str], greeting: str) -> None:
    from examples.appointments import AGENT_FILE
    from voice.server import app as server
    served: list[object] = []

    async def capture(ctx: object, announce: object) -> None:
        served.append(ctx)

    monkeypatch.setattr(server, "serve_until_stopped", capture)
    args = build_parser().parse_args(["serve", "--agent", str(AGENT_FILE), "--tts", "espeak", "--token", "t",
                                      "--data-dir", str(tmp_path), *extra])
    assert args.func(args) == 0
    (ctx,) = served
    assert ctx.factory.session_config.greeting == greeting  # type: ignore[attr-defined]
    agent = ctx.factory.make_agent("call-1")  # type: ignore[attr-defined]
    assert {"free_slots", "book_appointment", "opening_hours"} <= set(agent.tools)
    assert isinstance(agent.model, LoopingScript)  # the file's own `script:` (no --llm, no --script)
    assert agent.model.blocks[0][0].text.startswith("I can help with appointments")
    assert (tmp_path / "appointments.db").exists()


def test_an_agent_file_or_a_factory_builds_one_agent_to_try(tmp_path: Path) -> None:
    """`load_agent(ref).build()`: one `loop.Agent` as a call gets it (a new user's first check, set 5 and set 6
    outside authors both went looking for it); its toolset's data in the folder given; a model given replaces the
    agent's own."""
    scripted = ScriptedModel(["Hello."])
    garage = load_agent("examples/garage/agent.yaml").build(data_dir=tmp_path / "garage", model=scripted)
    assert "repair_status" in garage.tools and garage.tools["repair_status"].name == "repair_status"
    assert garage.model is scripted and (tmp_path / "garage").is_dir()
    (tmp_path / "wheels_agent.py").write_text(FACTORY)
    wheels = load_agent(str(tmp_path / "wheels_agent.py") + ":build").build()  # a factory keeps its own model
    Conversation(wheels).say_sync("How many wheels on a bike?").expect.executed("count_wheels").said("two wheels")
