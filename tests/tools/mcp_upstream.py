"""An external MCP server for the tests, run as its own process: ``python -m tests.tools.mcp_upstream PORT [sse]``.

The official SDK's ``MCPServer`` (FastMCP's 2.x name), stateful with streamed
answers as most servers out there are. ``whoami`` echoes the headers it got,
``slow`` sleeps, ``fail`` raises.
"""

from __future__ import annotations

import logging
import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("upstream")


@server.tool()
def echo(text: str) -> dict:
    """Echo the text back."""
    return {"echo": text}


@server.tool()
def whoami(ctx: Context) -> dict:
    """The headers this call came with."""
    headers = ctx.request_context.request.headers
    return {"api_key": headers.get("x-api-key", ""), "tenant": headers.get("x-tenant", "")}


@server.tool()
async def slow(seconds: float) -> dict:
    """Answer after a while."""
    await anyio.sleep(seconds)
    return {"slept": seconds}


@server.tool()
def fail() -> dict:
    """Always fails."""
    raise ValueError("the upstream broke")


@server.tool()
def delete_everything() -> dict:
    """What no agent should get."""
    return {"deleted": "everything"}


if __name__ == "__main__":
    logging.disable(logging.CRITICAL)  # the SDK logs each failed call with a rich traceback: seconds on a busy CPU
    port = int(sys.argv[1])
    if sys.argv[2:] == ["sse"]:
        server.run("sse", host="127.0.0.1", port=port)
    else:
        server.run("streamable-http", host="127.0.0.1", port=port)
