"""Tools from an MCP server (the `mcp` SDK on PyPI), over stdio or streamable HTTP, as `loop.Tool`s.

    from loop.toolsets.mcp import MCPToolset

    shop = MCPToolset(command=["python", "shop_server.py"], reads=["check_stock"])   # or url="http://.../mcp"
    agent = Agent(model, shop.tools())

or, in an agent file, `mcp: [{command: [python, shop_server.py], reads: [check_stock]}]`. A command `python` (or
`python3`) is the interpreter voiceloop runs in (`sys.executable`), with the packages installed beside it, not
whichever `python` is first on PATH. `confirm={"hold_item": "hold a {item} for {name}"}` says how the caller is
asked before a write runs, as `loop.Tool.confirm` does (without it, the question is made from the description).

The server says what its tools are; the agent says what they may do. A tool is a write (`mutates=True`,
irreversible: asked aloud before it runs) unless the agent lists it in `reads`; the server's own hints are not
trusted. Each becomes a plain `loop.Tool` with the server's input schema, so the loop validates its arguments,
vets it with the policy and guardrails, holds it to the budget and journals it like any other. A tool that ends
in an error, a server that is down and a call that takes too long are each a failed tool call with a clear
message; the call goes on.

The tools are listed once, when `tools()` is first asked for. Calls share one connection per event loop, opened on
the first call and held by a task of its own (the SDK's connection must be closed by the task that opened it); a
connection that died is opened again on the next call.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import string
import sys
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from loop.tools import Tool

INSTALL_HINT = "MCP tools need the mcp package: pip install 'voiceloop[mcp]'"


class MCPUnavailable(RuntimeError):
    """The MCP server could not be reached, or its tools could not be listed."""


class MCPToolError(RuntimeError):
    """The MCP server ran the tool and reported an error."""


def _client_module() -> Any:
    try:
        import mcp
    except ImportError as exc:
        raise MCPUnavailable(f"{INSTALL_HINT} ({exc})") from exc
    return mcp


class MCPToolset:
    """One MCP server's tools. Give `command` (stdio: the server is started as a subprocess) or `url`
    (streamable HTTP). `reads`: the tools that change nothing; `only`: use just these of the server's tools."""

    def __init__(self, *, command: Sequence[str] | None = None, url: str | None = None,
                 env: dict[str, str] | None = None, cwd: str | None = None, reads: Iterable[str] = (),
                 only: Iterable[str] | None = None, timeout_s: float = 15.0, list_timeout_s: float = 30.0,
                 confirm: Mapping[str, str] | None = None) -> None:
        if bool(command) == bool(url):
            raise ValueError("an MCP server is a command (stdio) or a url (streamable HTTP): give exactly one")
        self.command, self.url, self.env, self.cwd = list(command or []), url, env, cwd
        self.reads, self.only = frozenset(reads), (frozenset(only) if only is not None else None)
        self.confirm = dict(confirm or {})
        if asked := sorted(self.reads & set(self.confirm)):
            raise ValueError(f"confirm is how a write is asked; {', '.join(asked)} is listed in reads, which run "
                             "without asking: drop it from one of them")
        self.timeout_s, self.list_timeout_s = timeout_s, list_timeout_s
        self._tools: list[Tool] | None = None
        self._connections: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Connection] = \
            weakref.WeakKeyDictionary()

    @property
    def where(self) -> str:
        return self.url or " ".join(self.command)

    def target(self) -> Any:
        """What the SDK's `Client` connects to."""
        mcp = _client_module()
        if self.url:
            return self.url
        env = {**os.environ, **self.env} if self.env else None
        command = self.command[0]
        if command in ("python", "python3"):  # this interpreter, with voiceloop's packages (mcp): not PATH's python
            command = sys.executable
        return mcp.StdioServerParameters(command=command, args=self.command[1:], env=env, cwd=self.cwd)

    def tools(self) -> list[Tool]:
        """The server's tools as `loop.Tool`s (listed once; blocks while it lists, at most `list_timeout_s`)."""
        if self._tools is None:
            with concurrent.futures.ThreadPoolExecutor(1) as pool:  # a loop of its own, whoever is calling
                listed = pool.submit(asyncio.run, self._list()).result()
            declared = self.reads | (self.only or frozenset()) | set(self.confirm)
            if unknown := sorted(declared - {t.name for t in listed}):
                raise MCPUnavailable(f"MCP server {self.where} has no tool named {', '.join(unknown)}")
            tools = [self._tool(t) for t in listed if self.only is None or t.name in self.only]
            for tool in tools:
                _check_confirm(tool)
            self._tools = tools
        return list(self._tools)

    async def _list(self) -> list[Any]:
        mcp = _client_module()
        try:
            async with asyncio.timeout(self.list_timeout_s), mcp.Client(self.target()) as client:
                return list((await client.list_tools()).tools)
        except Exception as exc:
            raise MCPUnavailable(f"MCP server {self.where}: could not list its tools: {_why(exc)}") from exc

    def _tool(self, listed: Any) -> Tool:
        name = listed.name

        async def call(**arguments: Any) -> str:
            return await self.call(name, arguments)

        call.__name__ = name
        mutates = name not in self.reads
        return Tool(call, name=name, description=(listed.description or name).strip(),
                    args=dict(listed.input_schema or {"type": "object", "properties": {}}), mutates=mutates,
                    reversible=not mutates, timeout_s=self.timeout_s, confirm=self.confirm.get(name, ""))

    async def call(self, name: str, arguments: dict[str, Any]) -> str:
        """Run one tool on the server; its text is the result. Raises MCPToolError or MCPUnavailable."""
        loop = asyncio.get_running_loop()
        conn = self._connections.get(loop)
        if conn is None or conn.dead:
            conn = self._connections[loop] = _Connection(self)
        try:
            result = await conn.call(name, arguments)
        except (MCPUnavailable, TimeoutError):
            raise
        except Exception as exc:
            conn.close()  # the next call opens a new connection
            raise MCPUnavailable(f"MCP server {self.where} failed running {name}: {_why(exc)}") from exc
        text = _text(result)
        if getattr(result, "is_error", False):
            raise MCPToolError(f"{name} failed on the MCP server: {text or 'no detail'}")
        return text

    async def aclose(self) -> None:
        """Close this event loop's connection (the subprocess of a stdio server ends with it)."""
        conn = self._connections.pop(asyncio.get_running_loop(), None)
        if conn is not None:
            await conn.aclose()


class _Connection:
    """One open MCP client session, held by a task of its own until it is closed."""

    def __init__(self, toolset: MCPToolset) -> None:
        self.toolset = toolset
        self.client: Any = None
        self.error: BaseException | None = None
        self.ready, self.closing = asyncio.Event(), asyncio.Event()
        self.task = asyncio.ensure_future(self._hold())

    @property
    def dead(self) -> bool:
        return self.task.done()

    async def _hold(self) -> None:
        mcp = _client_module()
        try:
            async with mcp.Client(self.toolset.target()) as client:
                self.client = client
                self.ready.set()
                await self.closing.wait()
        except Exception as exc:
            self.error = exc
        finally:
            self.client = None
            self.ready.set()

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        await self.ready.wait()
        if self.client is None:
            raise MCPUnavailable(f"MCP server {self.toolset.where} is not reachable: {_why(self.error)}")
        return await self.client.call_tool(name, arguments)

    def close(self) -> None:
        self.closing.set()

    async def aclose(self) -> None:
        self.close()
        await asyncio.gather(self.task, return_exceptions=True)


def _check_confirm(tool: Tool) -> None:
    """A confirm template names only arguments the tool has (a typo would silently fall back to the description)."""
    fields = {f.split(".")[0].split("[")[0] for _, f, _, _ in string.Formatter().parse(tool.confirm) if f}
    if missing := sorted(fields - set(tool.schema.get("properties") or {})):
        raise ValueError(f"confirm for {tool.name!r} names {', '.join(missing)}, which it does not take (it takes "
                         f"{', '.join(tool.schema.get('properties') or {}) or 'no arguments'})")


def _text(result: Any) -> str:
    texts = [block.text for block in getattr(result, "content", None) or [] if getattr(block, "text", None)]
    if texts:
        return "\n".join(texts)
    structured = getattr(result, "structured_content", None)
    return json.dumps(structured, sort_keys=True) if structured is not None else ""


def _why(exc: BaseException | None) -> str:
    """The innermost cause, for a person: the SDK wraps what went wrong in exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if exc is not None else "unknown error"
