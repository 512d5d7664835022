"""The asyncio API (on mcpc's async C API) against the demo server."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any, List, Optional, Tuple

import pytest

import libmcpc

from conftest import assert_registry_empty, demo_argv


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def test_call_async_and_tools_async() -> None:
    async def main() -> None:
        async with await libmcpc.Client.stdio_async(demo_argv(), timeout=20) as c:
            tools = await c.tools_async()
            assert len(tools) == 25 and tools[0]["name"] == "echo"
            r = await c.call_async("add", {"a": 40, "b": 2})
            assert r.structured == {"sum": 42}
            with pytest.raises(libmcpc.ToolError) as e:
                await c.call_async("fail", {"message": "async boom"})
            assert e.value.result.text == "async boom"
            with pytest.raises(libmcpc.RpcError) as r2:
                await c.call_async("nope", {})
            assert r2.value.rpc_code == -32602
            with pytest.raises(libmcpc.InvalidArgumentError):
                await c.call_async("echo", [1])  # type: ignore[arg-type]
        assert c.closed

    run(main())
    assert_registry_empty()


def test_many_calls_in_flight() -> None:
    async def main() -> None:
        with libmcpc.Client.stdio(demo_argv(), timeout=30) as c:
            results = await asyncio.gather(*(c.call_async("echo", {"text": str(i)}) for i in range(300)))
            assert [r.text for r in results] == [str(i) for i in range(300)]

    run(main())


def test_task_cancel_cancels_the_request(tmp_path: Path) -> None:
    log = tmp_path / "demo.log"

    async def main() -> None:
        with libmcpc.Client.stdio(demo_argv("--log", str(log)), timeout=30) as c:
            task = asyncio.ensure_future(c.call_async("slow", {"ms": 30000}))
            await asyncio.sleep(0.2)
            t0 = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert time.monotonic() - t0 < 2
            # wait_for cancels the same way.
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(c.call_async("slow", {"ms": 30000}), 0.2)
            # The client goes on.
            assert (await c.call_async("echo", {"text": "after"})).text == "after"

    run(main())
    deadline = time.monotonic() + 5
    cancelled: List[str] = []
    while time.monotonic() < deadline and len(cancelled) < 2:
        cancelled = [ln for ln in log.read_text().splitlines() if '"event":"cancelled"' in ln]
        time.sleep(0.05)
    assert len(cancelled) == 2  # the server got notifications/cancelled for both


def test_library_timeout_and_cancel_handle() -> None:
    async def main() -> None:
        with libmcpc.Client.stdio(demo_argv(), timeout=30) as c:
            with pytest.raises(libmcpc.TimeoutError):
                await c.call_async("slow", {"ms": 30000}, timeout=0.2)
            cancel = libmcpc.Cancel()
            asyncio.get_running_loop().call_later(0.1, cancel.trigger)
            with pytest.raises(libmcpc.CancelledError):
                await c.call_async("slow", {"ms": 30000}, cancel=cancel)

    run(main())


def test_progress_runs_on_the_loop() -> None:
    seen: List[Tuple[float, Optional[float]]] = []
    loop_thread: List[int] = []

    async def main() -> None:
        loop_thread.append(threading.get_ident())

        def on_progress(p: float, total: Optional[float], message: Optional[str]) -> None:
            assert threading.get_ident() == loop_thread[0]
            seen.append((p, total))

        with libmcpc.Client.stdio(demo_argv(), timeout=30) as c:
            r = await c.call_async("slow", {"ms": 200}, on_progress=on_progress)
            await asyncio.sleep(0)  # let the last progress callbacks run
            assert r.structured["slept_ms"] == 200

    run(main())
    assert [p for p, _ in seen] == [1, 2, 3, 4]
    assert_registry_empty()


def test_close_completes_calls_in_flight() -> None:
    async def main() -> None:
        c = libmcpc.Client.stdio(demo_argv(), timeout=30)
        task = asyncio.ensure_future(c.call_async("slow", {"ms": 30000}))
        await asyncio.sleep(0.1)
        await c.aclose()
        with pytest.raises(libmcpc.ClosedError):
            await task
        with pytest.raises(libmcpc.ClosedError):
            await c.call_async("echo", {"text": "x"})

    run(main())


def test_connect_async_errors_and_cancel() -> None:
    async def main() -> None:
        with pytest.raises(libmcpc.SpawnError):
            await libmcpc.Client.stdio_async(["/nonexistent/server"])
        with pytest.raises(libmcpc.HandshakeError):
            await libmcpc.Client.stdio_async(demo_argv("--fault", "init-error"), timeout=10)
        with pytest.raises(libmcpc.InsecureUrlError):
            await libmcpc.Client.http_async("http://example.com/mcp")
        with pytest.raises(TypeError):
            await libmcpc.Client.stdio_async(demo_argv(), bearer="x")
        # A handshake that never completes (the server ignores initialize? no: a
        # command that never answers), cancelled by its task.
        task = asyncio.ensure_future(libmcpc.Client.stdio_async(["sleep", "30"], timeout=30))
        await asyncio.sleep(0.2)
        t0 = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.monotonic() - t0 < 5

    run(main())


def test_notifications_during_async_call() -> None:
    notes: List[Tuple[str, Any]] = []

    async def main() -> None:
        c = await libmcpc.Client.stdio_async(demo_argv("--fault", "notify-during-call"),
                                          on_notification=lambda m, p: notes.append((m, p)))
        async with c:
            await c.call_async("echo", {"text": "x"})

    run(main())
    assert any(m == "notifications/message" for m, _ in notes)


def test_results_are_plain_data() -> None:
    async def main() -> libmcpc.CallResult:
        async with await libmcpc.Client.stdio_async(demo_argv()) as c:
            return await c.call_async("multi")

    r = run(main())
    assert r.texts == ["one", "two"]
    assert json.loads(r.json)["content"][1]["type"] == "image"
