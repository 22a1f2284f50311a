"""Tools from a real MCP server (tests/mcp_shop_server.py, the `mcp` SDK's own server) over stdio and streamable
HTTP: they are listed with their schemas, a tool is a write that needs a yes unless the agent declares it a read,
and every call goes through the loop's vetting, budget and journal; a failing tool or a dead server is a failed
call with a clear message, never a dead run."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loop import Agent, ApprovalAnswer, LoopConfig, RunOutcome, ScriptedModel, ToolCall
from loop.events import EventKind
from loop.toolsets.mcp import MCPToolset, MCPUnavailable
from tests.paths import TESTS
from voice.agents.spec import AgentSpec

SERVER = TESTS / "mcp_shop_server.py"
STDIO = [sys.executable, str(SERVER)]


def shop(**kwargs: object) -> MCPToolset:
    return MCPToolset(command=STDIO, reads=["check_stock", "held_items", "price_of"], **kwargs)  # type: ignore[arg-type]


def run(agent: Agent, goal: str, toolset: MCPToolset) -> object:
    async def go() -> object:
        try:
            return await agent.run(goal)
        finally:
            await toolset.aclose()  # this event loop's connection (and the stdio server's subprocess)
    return asyncio.run(go())


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(SERVER), "http", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("the MCP server never listened")
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(timeout=10)


def test_the_servers_tools_are_listed_with_their_schemas_and_only_declared_reads_are_reads() -> None:
    tools = {t.name: t for t in shop().tools()}
    assert set(tools) == {"check_stock", "hold_item", "held_items", "price_of"}
    assert tools["check_stock"].schema["required"] == ["item"]
    assert not tools["check_stock"].mutates and tools["hold_item"].mutates and not tools["hold_item"].reversible
    assert tools["hold_item"].description == "Put an item aside for the caller to pick up"


def test_a_read_runs_and_is_journaled_like_any_tool(tmp_path: Path) -> None:
    model = ScriptedModel([ToolCall("check_stock", {"item": "helmet"}), "We have four helmets."])
    toolset = shop()
    agent = Agent(model, toolset.tools(), config=LoopConfig.profile("voice"), journal_path=str(tmp_path / "runs.db"))
    result = run(agent, "Any helmets?", toolset)
    assert result.outcome is RunOutcome.COMPLETED  # type: ignore[attr-defined]
    assert result.trajectory[0].content == "We have 4 helmets in stock."  # type: ignore[attr-defined]
    assert agent.journal is not None
    kinds = [e.kind for e in agent.journal.events(result.run_id)]  # type: ignore[attr-defined]
    assert EventKind.VERDICT in kinds and EventKind.TOOL_RESULT in kinds


def test_a_tool_not_declared_a_read_needs_a_yes_and_without_one_changes_nothing() -> None:
    toolset = shop()
    tools = toolset.tools()
    model = ScriptedModel([ToolCall("hold_item", {"item": "helmet", "name": "Sam"}), "I could not do that."])
    agent = Agent(model, tools, config=LoopConfig.profile("voice"))
    result = run(agent, "Hold a helmet for Sam", toolset)
    assert [o.status.value for o in result.trajectory] == []  # type: ignore[attr-defined]
    assert "needs approval" in result.messages[2].content  # type: ignore[attr-defined]
    asked: list[str] = []
    yes = Agent(ScriptedModel([ToolCall("hold_item", {"item": "helmet", "name": "Sam"}), "Done."]), tools,
                config=LoopConfig.profile("voice"),
                approver=lambda call, verdict: asked.append(call.name) or ApprovalAnswer(True, "caller said yes"))
    then = Agent(ScriptedModel([ToolCall("held_items", {}), "Held."]), tools, config=LoopConfig.profile("voice"))

    async def both() -> tuple:
        try:  # one event loop: one connection to the server, whose holds last as long as it does
            return await yes.run("Hold a helmet for Sam"), await then.run("What is on hold?")
        finally:
            await toolset.aclose()

    held, listed = asyncio.run(both())
    assert asked == ["hold_item"] and held.trajectory[0].content.startswith("Done: a helmet is on hold for Sam")
    assert listed.trajectory[0].content == "helmet for Sam"


def test_a_tool_that_fails_on_the_server_is_a_failed_call_and_the_run_goes_on() -> None:
    model = ScriptedModel([ToolCall("price_of", {"item": "bell"}), "Sorry, I don't have that price."])
    toolset = shop()
    result = run(Agent(model, toolset.tools(), config=LoopConfig.profile("voice")), "How much is a bell?", toolset)
    obs = result.trajectory[0]  # type: ignore[attr-defined]
    assert obs.status.value == "error" and "no price list for bell" in obs.content
    assert result.outcome is RunOutcome.COMPLETED  # type: ignore[attr-defined]


def test_streamable_http_serves_the_same_tools(http_url: str) -> None:
    toolset = MCPToolset(url=http_url, reads=["check_stock"], only=["check_stock", "hold_item"])
    assert sorted(t.name for t in toolset.tools()) == ["check_stock", "hold_item"]
    model = ScriptedModel([ToolCall("check_stock", {"item": "bell"}), "We have four bells."])
    result = run(Agent(model, toolset.tools(), config=LoopConfig.profile("voice")), "Bells?", toolset)
    assert result.trajectory[0].content == "We have 4 bells in stock."  # type: ignore[attr-defined]


def test_a_server_that_is_not_there_is_named_in_a_clear_error() -> None:
    with pytest.raises(MCPUnavailable, match="could not list its tools"):
        MCPToolset(command=[sys.executable, "-c", "import sys; sys.exit(3)"], list_timeout_s=10).tools()
    with pytest.raises(MCPUnavailable, match="no tool named nope"):
        MCPToolset(command=STDIO, reads=["nope"]).tools()
    with pytest.raises(ValueError, match="exactly one"):
        MCPToolset()


def test_an_agent_file_names_an_mcp_server(tmp_path: Path) -> None:
    agent_file = tmp_path / "agent.yaml"
    agent_file.write_text(f"name: shop\nmcp:\n  - command: [{sys.executable!r}, {str(SERVER)!r}]\n"
                          "    reads: [check_stock]\n    only: [check_stock, hold_item]\n")
    tools, _ = AgentSpec.load(agent_file).build_tools(tmp_path)
    assert {t.name: t.mutates for t in tools} == {"check_stock": False, "hold_item": True}


def test_a_python_command_runs_in_voiceloops_own_interpreter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`command: [python, server.py]` from `.venv/bin/voiceloop`: the server must see voiceloop's packages (mcp),
    whatever `python` PATH finds first; here PATH finds a `python` that cannot even import mcp."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python").write_text("#!/bin/sh\necho 'No module named mcp' >&2\nexit 1\n")
    (fake / "python").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ.get('PATH', '')}")
    for python in ("python", "python3"):
        assert MCPToolset(command=[python, str(SERVER)]).target().command == sys.executable
    assert MCPToolset(command=["node", "server.js"]).target().command == "node"  # any other command as given
    tools = MCPToolset(command=["python", str(SERVER)], reads=["check_stock"]).tools()
    assert "check_stock" in {t.name for t in tools}


def test_an_agent_file_says_how_an_mcp_write_is_asked(tmp_path: Path) -> None:
    """`confirm:` per MCP tool, as for a Python tool: the caller hears the template, not a question made from the
    server's docstring; a confirm for a read, for a tool the server lacks, or naming an argument the tool does not
    take is refused at load, in one line."""
    from voice.agents.spec import AgentConfigError
    from voice.call.approval import confirmation_question

    def load(extra: str) -> list[Any]:
        agent_file = tmp_path / "agent.yaml"
        agent_file.write_text(f"mcp:\n  - command: [python, {str(SERVER)!r}]\n    reads: [check_stock]\n{extra}")
        return AgentSpec.load(agent_file).build_tools(tmp_path)[0]

    tools = {t.name: t for t in load('    confirm: {hold_item: "put a {item} aside for {name}"}\n')}
    question = confirmation_question(ToolCall("hold_item", {"item": "helmet", "name": "Sam"}), tools["hold_item"])
    assert "put a helmet aside for Sam" in question and "pick up" not in question
    for bad, words in (('{check_stock: "check {item}"}', "listed in reads"), ('{nope: "x"}', "no tool named nope"),
                       ('{hold_item: "hold {colour}"}', "names colour")):
        with pytest.raises(AgentConfigError, match=words) as caught:
            load(f"    confirm: {bad}\n")
        assert "\n" not in str(caught.value)
