"""A real third-party server: the Python `mcp` SDK (mcp==1.30.0, FastMCP), over
stdio and Streamable HTTP (tests/bindings/mcp_server.py)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import List

import pytest

import libmcpc

from conftest import MCP_SERVER, Server


def check_server(c: libmcpc.Client) -> None:
    info = c.server_info()
    assert info["serverInfo"]["name"] == "mcpc-binding-tests"
    assert info["instructions"] == "Tools for the mcpc binding tests."
    tools = {t["name"]: t for t in c.tools()}
    assert set(tools) == {"echo", "add", "fail", "sleep"}
    assert tools["add"]["inputSchema"]["required"] == ["a", "b"]
    assert tools["add"]["outputSchema"]["properties"]["sum"]["type"] == "integer"

    assert c.call("echo", {"text": "hi ☃"}).text == "hi ☃"
    r = c.call("add", {"a": 2, "b": 40})
    assert r.structured == {"a": 2, "b": 40, "sum": 42}
    assert json.loads(r.text) == r.structured

    with pytest.raises(libmcpc.ToolError) as e:
        c.call("fail", {"message": "deliberate"})
    assert e.value.result.is_error and "deliberate" in e.value.result.text

    progress: List[float] = []
    r = c.call("sleep", {"seconds": 0.3}, on_progress=lambda p, total, m: progress.append(p))
    assert r.structured == {"result": "slept 0.3s"}
    assert progress == [1.0, 2.0, 3.0]

    t0 = time.monotonic()
    with pytest.raises(libmcpc.TimeoutError):
        c.call("sleep", {"seconds": 10}, timeout=0.3)
    assert time.monotonic() - t0 < 3

    cancel = libmcpc.Cancel()
    threading.Timer(0.2, cancel.trigger).start()
    with pytest.raises(libmcpc.CancelledError):
        c.call("sleep", {"seconds": 10}, cancel=cancel)
    # mcp 1.30 may still answer the cancelled request; the client drops it and goes on.
    assert c.call("echo", {"text": "after"}).text == "after"


def test_stdio(mcp_python: str) -> None:
    with libmcpc.Client.stdio([mcp_python, MCP_SERVER], timeout=30) as c:
        check_server(c)


def test_http(mcp_http: Server) -> None:
    with libmcpc.Client.http(mcp_http.url, timeout=30) as c:
        check_server(c)


def test_async_stdio_and_task_cancel(mcp_python: str) -> None:
    async def main() -> None:
        async with await libmcpc.Client.stdio_async([mcp_python, MCP_SERVER], timeout=30) as c:
            rs = await asyncio.gather(*(c.call_async("add", {"a": i, "b": i}) for i in range(20)))
            assert [r.structured["sum"] for r in rs] == [2 * i for i in range(20)]
            task = asyncio.ensure_future(c.call_async("sleep", {"seconds": 10}))
            await asyncio.sleep(0.3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert (await c.call_async("echo", {"text": "still"})).text == "still"

    asyncio.run(asyncio.wait_for(main(), 60))


def test_async_http(mcp_http: Server) -> None:
    async def main() -> None:
        async with await libmcpc.Client.http_async(mcp_http.url, timeout=30) as c:
            tools = await c.tools_async()
            assert len(tools) == 4
            with pytest.raises(libmcpc.ToolError):
                await c.call_async("fail", {})

    asyncio.run(asyncio.wait_for(main(), 60))


def test_pinned_older_protocol(mcp_python: str) -> None:
    with libmcpc.Client.stdio([mcp_python, MCP_SERVER], protocol_version="2025-03-26", timeout=30) as c:
        assert c.protocol_version == "2025-03-26"
        assert c.call("add", {"a": 1, "b": 1}).structured["sum"] == 2
