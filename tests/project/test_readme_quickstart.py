"""The README's "Your own agent in thirty lines", run as a reader would: its `shop.py` written to a fresh
folder, its caller line spoken by espeak-ng, `voiceloop call` on that recording, `voiceloop serve` taking a
phone call (Twilio Media Streams) to the same agent, and its "Testing your agent" snippet (the asked write, its
declared identifier and its file in `data_dir`)."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from streamdouble.scenario import Scenario, Wait, WaitFor
from streamdouble.session import Session
from streamdouble.session import SessionConfig as CallerConfig

from tests.paths import ROOT
from tests.voice.server.test_server import watch_calls
from tests.voice.transports.twilio.test_twilio import say
from voice.audio import load_audio, write_wav
from voice.transports.twilio.webhook import twilio_stream_key

README = (ROOT / "README.md").read_text()
SECTION = README[README.index("## Your own agent"):README.index("### Testing your agent")]
TESTING = README[README.index("### Testing your agent"):]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "VOICELOOP_TOKEN": ""}


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", SECTION, re.S)


def commands() -> list[list[str]]:
    lines = [line.split("#", 1)[0].strip() for line in blocks("bash")[0].splitlines()]
    return [shlex.split(line) for line in lines if line]


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """shop.py and caller.wav in a folder of their own, made by the README's own lines."""
    (python,) = blocks("python")
    assert python.startswith("# shop.py") and len(python.strip().splitlines()) <= 32  # "about thirty lines"
    (tmp_path / "shop.py").write_text(python)
    speak = next(c for c in commands() if c[0] == "espeak-ng")
    subprocess.run(speak, cwd=tmp_path, check=True)
    return tmp_path


def voiceloop(args: list[str]) -> list[str]:
    assert args[0] == "voiceloop"
    return [sys.executable, "-m", "voice.cli", *args[1:]]


def test_the_testing_snippet_runs_against_the_quickstart_agent(shop: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's own test of shop.py: the write is asked (ASK), runs once approved, and leaves its file in the
    agent's data_dir; a refusal leaves nothing."""
    snippet = re.findall(r"```python\n(.*?)```", TESTING, re.S)[0]
    monkeypatch.syspath_prepend(str(shop))
    data = tmp_path / "agent_data"
    data.mkdir()
    exec(compile(snippet, "README.md#testing", "exec"), {"tmp_path": data})
    assert (data / "holds.tsv").read_text().count("helmet") == 1
    declined = snippet.replace("approve=True", "approve=False").split("turn.expect")[0]
    (data / "holds.tsv").unlink()
    namespace = {"tmp_path": data}
    exec(compile(declined, "README.md#testing-declined", "exec"), namespace)
    namespace["turn"].expect.called("hold_item").verdict("hold_item", "ASK").executed()
    assert not (data / "holds.tsv").exists()


def test_the_quickstart_agent_answers_a_recording(shop: Path) -> None:
    call = next(c for c in commands() if c[:2] == ["voiceloop", "call"])
    done = subprocess.run([*voiceloop(call), "--tts", "espeak"], cwd=shop, env=ENV, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    transcript = (shop / "out" / "shop" / "transcript.txt").read_text()
    assert "helmet" in transcript.lower()  # Whisper heard the caller
    assert 'check_stock({"item": "helmet"}) [ALLOW default] -> ok' in transcript
    assert "agent:  Hello, Spokes bike shop. How can I help?" in transcript  # build.greeting is said first
    assert "We have four helmets in stock." in transcript and (shop / "out" / "shop" / "agent.wav").stat().st_size


async def test_the_quickstart_agent_takes_a_phone_call_through_serve(shop: Path) -> None:
    serve = next(c for c in commands() if c[:2] == ["voiceloop", "serve"])
    serve = [a for a in serve if a not in ("--llm", "local")]  # the agent's own scripted model, no weights
    write_wav(shop / "caller16k.wav", load_audio(shop / "caller.wav"))
    proc = await asyncio.create_subprocess_exec(
        *voiceloop(serve), "--port", "0", "--tts", "espeak", "--data-dir", str(shop / "data"), cwd=shop, env=ENV,
        stdout=asyncio.subprocess.PIPE, stderr=(shop / "serve.log").open("w"))
    try:
        port, token = 0, ""  # the operator's credential: the operator API, and what the Twilio stream key derives from
        async with asyncio.timeout(120):
            while not (port and token):
                line = (await proc.stdout.readline()).decode()
                assert line, (shop / "serve.log").read_text()[-2000:]
                port = int(m.group(1)) if (m := re.search(r"127\.0\.0\.1:(\d+)/", line)) else port
                token = m.group(1) if (m := re.search(r"operator API token: (\S+)", line)) else token
        cfg = CallerConfig(custom_parameters={"key": twilio_stream_key(token)}, response_timeout_s=60)
        greeting = [WaitFor("audio", 60), WaitFor("quiet", 20)]  # a caller lets the shop's greeting finish
        # `audio` and `quiet` count from the greeting's audio: the answer is waited for with a few seconds of line
        steps = [*greeting, say(shop / "caller16k.wav"), Wait(6.0), WaitFor("quiet", 20)]
        seen: set[str] = set()
        result, _ = await asyncio.gather(
            Session(f"ws://127.0.0.1:{port}/twilio", scenario=Scenario("shop", steps), config=cfg).run(),
            watch_calls(port, token, seen, 1))
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}",
                                     headers={"Authorization": f"Bearer {token}"}) as client:
            events = (await client.get(f"/api/calls/{seen.pop()}/events")).json()["events"]
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 30)
    assert not result.violations and result.time_to_first_audio_s is not None
    assert [e["call"]["name"] for e in events if e["kind"] == "loop.tool_result"] == ["check_stock"]
    said = " ".join(e["text"] for e in events if e["kind"] == "agent_said")
    assert said.startswith("Hello, Spokes bike shop.") and "We have four helmets in stock." in said  # build.greeting
