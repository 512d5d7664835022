#!/usr/bin/env python3
"""A tasks server on FastMCP 4.1 and fastmcp-tasks 4.1, for mcpc's peer tests: the
tasks extension of 2026-07-28 (io.modelcontextprotocol/tasks), done by the package;
this file only adds tools and test plumbing. The client opts in per request (the
extension in the request's client capabilities): with it, the server makes a task
of every task-capable tool; without it, an optional tool runs at once and a required
one is refused with -32021. It speaks 2026-07-28 only.

  HTTP:   python tasks_server.py [--port 0]   prints "PORT n", serves http://127.0.0.1:n/mcp
  stdio:  python tasks_server.py --stdio
Options: --log FILE (HTTP: one JSON line per request, see http_log.py: its time,
         JSON-RPC method and id, the taskId of its params, the MCP headers).
Tools: slow_report(topic, seconds=2) sleeps, then "report on TOPIC after Ns"; a task
       when the client declares the extension, polled every 500 ms (pollIntervalMs).
       must_task(n=3) always a task: 2n after 1 s; polled every 500 ms too.
       ask_color() asks "Favourite colour?" from inside the task (its input request
       comes in tasks/get, the answer goes back with tasks/update), then says
       "colour: C (ACTION)".
       echo(text) never a task.
Needs: the venv of requirements-fastmcp.txt (install.sh makes it: venv-fastmcp).
"""
import argparse
import asyncio
import socket
from datetime import timedelta

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

from http_log import logged

ap = argparse.ArgumentParser()
ap.add_argument("--stdio", action="store_true")
ap.add_argument("--port", type=int, default=0)
ap.add_argument("--log")
args = ap.parse_args()

mcp = FastMCP("mcpc-peer-tasks")
mcp.add_extension(TasksExtension())  # memory:// store, its worker in this process
# The package has clients poll every 5 s by default: 500 ms keeps the tests short.
POLL = timedelta(milliseconds=500)
FAST = TaskConfig(mode="optional", poll_interval=POLL)


@mcp.tool(task=FAST)
async def slow_report(topic: str, seconds: float = 2.0) -> str:
    """Sleeps `seconds`, then reports; a task when the client declares the extension."""
    await asyncio.sleep(seconds)
    return f"report on {topic} after {seconds}s"


@mcp.tool(task=TaskConfig(mode="required", poll_interval=POLL))
async def must_task(n: int = 3) -> int:
    """Always a task; a client without the extension gets -32021."""
    await asyncio.sleep(1)
    return n * 2


@mcp.tool(task=FAST)
async def ask_color(ctx: Context) -> str:
    """Asks for a colour while running as a task. A task cannot await ctx.elicit():
    it returns an InputRequiredResult, and runs again with the answers."""
    answers = ctx.input_responses
    if not answers:
        schema = {"type": "object", "properties": {"colour": {"type": "string"}}, "required": ["colour"]}
        params = mcp_types.ElicitRequestFormParams(message="Favourite colour?", requested_schema=schema)
        return mcp_types.InputRequiredResult(input_requests={"colour": mcp_types.ElicitRequest(params=params)})
    r = answers["colour"]
    return f"colour: {(r.content or {}).get('colour')} ({r.action})"


@mcp.tool
def echo(text: str) -> str:
    """Returns the text; never a task."""
    return text


if args.stdio:
    mcp.run(transport="stdio", show_banner=False)
else:
    from starlette.middleware import Middleware

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)  # connections wait in the backlog until the server serves them
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    middleware = [Middleware(logged, args.log)] if args.log else None
    mcp.run(
        transport="http",
        host="127.0.0.1",
        port=sock.getsockname()[1],
        sockets=[sock],
        middleware=middleware,
        show_banner=False,
        log_level="WARNING",
        uvicorn_config={"timeout_graceful_shutdown": 1},
    )
