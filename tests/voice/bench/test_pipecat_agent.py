"""`bench load --compare pipecat --llm-url`: the Pipecat bot gets voiceloop's agent (its prompt and tools in a file,
its tools run on an endpoint), and the callers' recordings may be chosen."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

from tests.paths import AUDIO_FIXTURES
from voice.bench._pipecat_agent import AgentForPipecat
from voice.bench.load_caller import recording_files

SYNTHETIC = AUDIO_FIXTURES / "synthetic"


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def test_the_bot_gets_the_same_prompt_and_tools_and_they_run_on_the_same_data(tmp_path: Path) -> None:
    agent = AgentForPipecat(tmp_path)
    try:
        spec = json.loads(agent.spec.read_text())
        assert "lookup_order" in [t["function"]["name"] for t in spec["tools"]] and spec["system_prompt"]
        found = _post(agent.url, {"name": "lookup_order", "arguments": {"order_id": "4567"}})["content"]
        assert "4567" in found and "shipped" in found
        bad = _post(agent.url, {"name": "lookup_order", "arguments": {}})["content"]
        assert "order_id" in bad  # the tool's own validation error, as a model would be told it
        assert "no tool" in _post(agent.url, {"name": "launch_rocket", "arguments": {}})["content"]
    finally:
        agent.close()


def test_recordings_are_folders_or_files_comma_separated() -> None:
    one, two = SYNTHETIC / "where_is_4567.wav", SYNTHETIC / "late_2020.wav"
    assert recording_files(f"{one},{two}") == [one, two]
    assert len(recording_files(SYNTHETIC)) > 10 and recording_files("/nowhere") == []
