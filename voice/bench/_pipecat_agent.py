"""The agent `voiceloop serve` runs, for the Pipecat bot too (`bench load --compare pipecat --llm-url URL`): the same
system prompt and tool schemas in a JSON file the bot reads, and a small HTTP endpoint on which the bot's function
handler runs the same tools on the same seeded data (`POST /tool {"name", "arguments"}` -> `{"content"}`), so both
servers make the same model requests about the same things. The bot still never imports voiceloop.

Pipecat has no confirmation step: a write it is asked for runs at once. Use recordings that ask for reads
(`--recordings`), where both answer with a tool call and a reply."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from voice.agents.source import load_agent


class AgentForPipecat:
    """The default agent's prompt and tools in `folder/pipecat_agent.json`, its tools served on a local port."""

    def __init__(self, folder: Path) -> None:
        agent = load_agent(None).maker(folder / "pipecat_agent_data")("pipecat-bench")
        self.tools = dict(agent.tools)
        self.spec = folder / "pipecat_agent.json"
        self.spec.write_text(json.dumps({"system_prompt": agent.assembler.system,
                                         "tools": [t.openai_schema() for t in self.tools.values()]}, indent=1))
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self.server.serve_forever, name="pipecat-tools", daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/tool"

    def warm(self, llm_url: str) -> float:
        """One request with the agent's prompt and tools, so the model server holds their prefix before the
        first measured call of either server (a cold 0.5B server took 8 s over it); seconds it took."""
        spec = json.loads(self.spec.read_text())
        body = json.dumps({"model": "standin", "max_tokens": 1, "tools": spec["tools"], "messages": [
            {"role": "system", "content": spec["system_prompt"]}, {"role": "user", "content": "Hello."}]}).encode()
        request = urllib.request.Request(llm_url.rstrip("/") + "/chat/completions", data=body,
                                         headers={"Content-Type": "application/json"})
        started = time.monotonic()
        with urllib.request.urlopen(request, timeout=120) as response:
            response.read()
        return time.monotonic() - started

    def run_tool(self, name: str, arguments: dict[str, Any]) -> str:
        tool = self.tools.get(name)
        if tool is None:
            return f"There is no tool called {name}."
        try:
            result = tool.fn(**tool.validate(arguments))
            if asyncio.iscoroutine(result):
                result = asyncio.run(result)
        except Exception as exc:  # the tool's own error, as the model would be told it
            return f"{type(exc).__name__}: {exc}"
        return result if isinstance(result, str) else json.dumps(result, default=str)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                content = owner.run_tool(str(body.get("name", "")), dict(body.get("arguments") or {}))
                data = json.dumps({"content": content}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
