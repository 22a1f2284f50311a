"""A real MCP server for the tests (the `mcp` SDK's MCPServer): a shop's stock (a read), holds (a write the agent
must be asked about) and a tool that fails. `python tests/mcp_shop_server.py` speaks stdio;
`python tests/mcp_shop_server.py http PORT` serves streamable HTTP on 127.0.0.1:PORT/mcp."""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("shop")
HELD: list[str] = []


@server.tool()
def check_stock(item: str) -> str:
    """How many of an item the shop has"""
    return f"We have 4 {item}s in stock."


@server.tool()
def hold_item(item: str, name: str) -> str:
    """Put an item aside for the caller to pick up"""
    HELD.append(f"{item} for {name}")
    return f"Done: a {item} is on hold for {name} until six."


@server.tool()
def held_items() -> str:
    """What is on hold"""
    return "; ".join(HELD) or "nothing is on hold"


@server.tool()
def price_of(item: str) -> str:
    """The price of an item"""
    raise ToolError(f"no price list for {item}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
