"""Toolsets: tools that come from somewhere else, as `loop.Tool`s that go through the same vetting, budget and
journal as any tool. `mcp` (an MCP server over stdio or streamable HTTP) is the one shipped."""
