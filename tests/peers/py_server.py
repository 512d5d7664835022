#!/usr/bin/env python3
"""A small MCP server on the Python `mcp` package, for mcpc's peer tests.

Runs on mcp 2.x (`MCPServer`; it speaks 2026-07-28 as well as the older
revisions) and on mcp 1.x (`FastMCP`, up to 2025-11-25): the SDK does the
protocol, this file only adds tools and test plumbing.

  stdio:  python py_server.py
  HTTP:   python py_server.py --http [--port 0]   prints "PORT n", serves http://127.0.0.1:n/mcp
  HTTPS:  ... --http --certfile server.pem --keyfile server.key
  HTTP+SSE (2024-11-05; mcp 1.x): ... --http --sse, serves http://127.0.0.1:n/sse
  HTTP/2 (mcp 2.x): ... --http --hypercorn [--certfile ... --keyfile ...]: served by
          hypercorn, which speaks h2 (ALPN over TLS; prior knowledge without TLS)
          as well as HTTP/1.1
Options: --stateless (no Mcp-Session-Id), --json-response (application/json, no SSE),
         --extra-tools N (filler_01..N), --page-size N (tools/list pages of N tools,
         nextCursor = the next offset), --log FILE (HTTP: one JSON line per request:
         HTTP method, status, JSON-RPC method and id, session and MCP headers, the
         HTTP version and the client's port, which names its connection).
Tools: echo(text) text only; big(size) a text of `size` bytes (with --big only); add(a, b) structuredContent {"a","b","sum"};
       fail(message) raises, so the result has isError; sleep(seconds) sleeps in
       0.25 s steps, sends progress when asked, and writes "sleep started" and,
       when cancelled, "sleep interrupted" to stderr.
"""
import argparse
import asyncio
import socket
import sys

try:  # mcp >= 2: FastMCP became MCPServer
    from mcp.server.mcpserver import Context, MCPServer

    V2 = True
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import Context, FastMCP

    V2 = False
import mcp.types as types
from pydantic import BaseModel

from http_log import logged

ap = argparse.ArgumentParser()
ap.add_argument("--http", action="store_true")
ap.add_argument("--host", default="127.0.0.1")
ap.add_argument("--port", type=int, default=0)
ap.add_argument("--certfile")
ap.add_argument("--keyfile")
ap.add_argument("--stateless", action="store_true")
ap.add_argument("--json-response", action="store_true")
ap.add_argument("--sse", action="store_true")  # mcp 1.x: the HTTP+SSE transport of 2024-11-05
ap.add_argument("--extra-tools", type=int, default=0)
ap.add_argument("--page-size", type=int, default=0)
ap.add_argument("--log")
ap.add_argument("--hypercorn", action="store_true")
ap.add_argument("--big", action="store_true")
ap.add_argument("--announce", action="store_true")
args = ap.parse_args()

http_opts = dict(stateless_http=args.stateless, json_response=args.json_response)
if V2:
    srv = MCPServer("mcpc-peer-py")
else:
    srv = FastMCP("mcpc-peer-py", host=args.host, port=args.port, **http_opts)


class Sum(BaseModel):
    a: int
    b: int
    sum: int


@srv.tool(structured_output=False)
def echo(text: str) -> str:
    """Returns the text unchanged, as text content only."""
    return text


def big(size: int) -> str:
    """Returns a text of `size` bytes (a, b, c, ... repeated), for large results."""
    return "".join(chr(97 + i % 26) for i in range(size))


if args.big:
    srv.tool(structured_output=False)(big)


@srv.tool()
def add(a: int, b: int) -> Sum:
    """Adds two integers; the sum also comes back as structuredContent."""
    return Sum(a=a, b=b, sum=a + b)


@srv.tool()
def fail(message: str = "deliberate failure") -> str:
    """Always raises: the result has isError true."""
    raise ValueError(message)


@srv.tool()
async def sleep(seconds: float = 5.0, ctx: Context = None) -> str:
    """Sleeps in 0.25 s steps, reporting progress; for cancellation and timeouts."""
    steps = max(1, int(seconds * 4))
    print(f"sleep started ({seconds}s)", file=sys.stderr, flush=True)
    try:
        for i in range(steps):
            await asyncio.sleep(seconds / steps)
            await ctx.report_progress(i + 1, steps)
    except BaseException:  # cancellation arrives as CancelledError
        print(f"sleep interrupted ({seconds}s)", file=sys.stderr, flush=True)
        raise
    return f"slept {seconds}s"


def add_filler(i):
    def filler() -> str:
        return f"filler {i}"

    srv.add_tool(filler, name=f"filler_{i:02d}", description=f"Filler tool {i}, for pagination")


for n in range(1, args.extra_tools + 1):
    add_filler(n)

if args.page_size > 0:  # the SDK never paginates tools/list: replace the handler

    def page(cursor, tools):
        start = int(cursor or 0)
        end = start + args.page_size
        return types.ListToolsResult(tools=tools[start:end], nextCursor=str(end) if end < len(tools) else None)

    if V2:

        async def list_tools_v2(ctx, params):
            return page(params.cursor, await srv.list_tools())

        srv._lowlevel_server.add_request_handler("tools/list", types.PaginatedRequestParams, list_tools_v2)
    else:

        @srv._mcp_server.list_tools()
        async def list_tools_v1(req: types.ListToolsRequest) -> types.ListToolsResult:
            return page(req.params.cursor if req.params else None, await srv.list_tools())


async def announce(ctx: Context = None) -> str:
    """Sends notifications/tools/list_changed outside any request: over HTTP it goes
    to the standalone GET stream (and nowhere when none is open)."""
    await ctx.session.send_tool_list_changed()
    return "announced"


if args.announce:
    srv.tool()(announce)


if not args.http:
    srv.run("stdio")
else:
    import uvicorn

    if args.sse:
        app = srv.sse_app()  # GET /sse, POST /messages/
    elif V2:
        app = srv.streamable_http_app(host=args.host, **http_opts)
    else:
        app = srv.streamable_http_app()
    if args.log:
        app = logged(app, args.log)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    sock.listen(128)  # connections wait in the backlog until uvicorn serves them
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    if args.hypercorn:
        import hypercorn.asyncio
        import hypercorn.config

        config = hypercorn.config.Config()
        config.bind = [f"fd://{sock.fileno()}"]
        config.certfile, config.keyfile = args.certfile, args.keyfile
        config.graceful_timeout = 1
        config.loglevel = "WARNING"
        config.h2_max_concurrent_streams = 128
        asyncio.run(hypercorn.asyncio.serve(app, config))
        sys.exit(0)
    config = uvicorn.Config(
        app,
        log_level="warning",
        ssl_certfile=args.certfile,
        ssl_keyfile=args.keyfile,
        timeout_graceful_shutdown=1,
    )
    uvicorn.Server(config).run(sockets=[sock])
