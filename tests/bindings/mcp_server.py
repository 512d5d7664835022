#!/usr/bin/env python3
"""A third-party MCP server for the binding tests, built on the Python `mcp` SDK
(pinned mcp==1.30.0 by mk/bindings.mk; FastMCP).

Usage:
    python mcp_server.py                  stdio
    python mcp_server.py --http           Streamable HTTP on 127.0.0.1, a free port:
                                          prints "PORT <n>" once listening, serves
                                          /mcp, and exits when its stdin closes.
    --json-response                       (HTTP) application/json answers, not SSE

Tools:
    echo(text)            text content only
    add(a: int, b: int)   structuredContent {"a", "b", "sum"} (has an outputSchema)
    fail(message)         raises, so the result has isError: true
    sleep(seconds)        sleeps in 0.1 s steps, reporting progress when asked; logs
                          "sleep interrupted" to stderr when cancelled
"""

import argparse
import asyncio
import socket
import sys
import threading

from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel

ap = argparse.ArgumentParser()
ap.add_argument("--http", action="store_true")
ap.add_argument("--json-response", action="store_true")
args = ap.parse_args()

server = FastMCP("mcpc-binding-tests", instructions="Tools for the mcpc binding tests.",
                 json_response=args.json_response)


class Sum(BaseModel):
    a: int
    b: int
    sum: int


@server.tool(structured_output=False)
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> Sum:
    """Add two integers."""
    return Sum(a=a, b=b, sum=a + b)


@server.tool()
def fail(message: str = "deliberate failure") -> str:
    """Always fails."""
    raise ValueError(message)


@server.tool()
async def sleep(seconds: float = 5.0, ctx: Context = None) -> str:
    """Sleep, reporting progress; cancellable."""
    steps = max(1, int(seconds * 10))
    try:
        for i in range(steps):
            await asyncio.sleep(seconds / steps)
            await ctx.report_progress(i + 1, steps)
    except BaseException:
        print("sleep interrupted", file=sys.stderr, flush=True)
        raise
    return "slept %gs" % seconds


if not args.http:
    server.run("stdio")
else:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    uv = uvicorn.Server(uvicorn.Config(server.streamable_http_app(), log_level="warning", lifespan="on"))

    def stop_on_eof() -> None:
        sys.stdin.read()
        uv.should_exit = True

    threading.Thread(target=stop_on_eof, daemon=True).start()
    # The socket already listens: connections wait in its backlog until uvicorn
    # (after the app's lifespan startup) accepts them.
    print("PORT %d" % sock.getsockname()[1], flush=True)
    uv.run(sockets=[sock])
