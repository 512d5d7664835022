"""The blocking API against the demo server over stdio."""

from __future__ import annotations

import gc
import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any, List, Optional, Tuple

import pytest

import libmcpc

from conftest import assert_registry_empty, interrupted, REPO, demo_argv


def test_version_and_library() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", libmcpc.version())
    cargo = (REPO / "Cargo.toml").read_text()
    m = re.search(r'^\[package\][^\[]*?^version\s*=\s*"([^"]+)"', cargo, re.M | re.S)
    assert m and libmcpc.version() == m.group(1)
    assert libmcpc.__version__ == libmcpc.version()
    assert os.path.exists(libmcpc.library_path)
    if os.environ.get("MCPC_EXPECT_BUNDLED") == "1":  # make test-python: the wheel's own copy
        assert Path(libmcpc.library_path).parent == Path(libmcpc.__file__).parent
    pyproject = (REPO / "bindings" / "python" / "pyproject.toml").read_text()
    assert re.search(r'^version = "%s"$' % re.escape(libmcpc.version()), pyproject, re.M)


def test_info_tools_and_results(client: libmcpc.Client) -> None:
    assert client.protocol_version in ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2026-07-28")
    info = client.server_info()
    assert "mcpc-demo" in json.dumps(info)

    tools = client.tools()
    assert [t["name"] for t in tools[:5]] == ["echo", "add", "fail", "slow", "multi"]
    assert len(tools) == 25 and tools[-1]["name"] == "item_19"
    add = tools[1]
    assert add["inputSchema"]["properties"] == {"a": {"type": "number"}, "b": {"type": "number"}}
    assert add["outputSchema"]["required"] == ["sum"]

    r = client.call("add", {"a": 2, "b": 3})
    assert r.structured == {"sum": 5}
    assert r.text == '{"sum":5}' and r.texts == ['{"sum":5}']
    assert not r.is_error
    assert r.raw["structuredContent"] == {"sum": 5}
    assert json.loads(r.json) == r.raw

    r = client.call("echo", {"text": "héllo \u2603"})
    assert r.text == "héllo \u2603" and r.structured is None

    r = client.call("multi")
    assert r.texts == ["one", "two"] and r.text == "one\ntwo"
    assert [c["type"] for c in r.content] == ["text", "image", "text"]

    r = client.call("echo", {"text": "nul\x00inside"})
    assert r.text == "nul\x00inside"


def test_tool_error_carries_result(client: libmcpc.Client) -> None:
    with pytest.raises(libmcpc.ToolError) as e:
        client.call("fail", {"message": "boom"})
    assert e.value.status == libmcpc.Status.TOOL
    assert e.value.status_name == "MCPC_ERR_TOOL"
    assert e.value.result.is_error and e.value.result.text == "boom"
    assert isinstance(e.value, libmcpc.McpcError)


def test_rpc_error_code(client: libmcpc.Client) -> None:
    with pytest.raises(libmcpc.RpcError) as e:
        client.call("no-such-tool", {})
    assert e.value.rpc_code == -32602
    assert "Unknown tool" in str(e.value)
    assert e.value.status_name == "MCPC_ERR_RPC"


def test_invalid_arguments(client: libmcpc.Client) -> None:
    with pytest.raises(TypeError):
        client.call("echo", "not a dict")  # type: ignore[arg-type]
    with pytest.raises(libmcpc.InvalidArgumentError) as e:
        client.call("echo", [1, 2])  # type: ignore[arg-type]
    assert isinstance(e.value, ValueError)
    with pytest.raises(ValueError):
        client.call("echo", {"text": "x"}, timeout=-1)
    with pytest.raises(ValueError):
        client.call("echo", {"x": float("nan")})
    with pytest.raises(TypeError):
        libmcpc.Client.stdio("python3 demo/server.py")  # type: ignore[arg-type]
    with pytest.raises(libmcpc.InvalidArgumentError):
        libmcpc.Client.stdio([])
    with pytest.raises(libmcpc.InvalidArgumentError):
        libmcpc.Client.stdio(demo_argv(), protocol_version="1999-01-01")
    with pytest.raises(ValueError):
        libmcpc.Client.stdio(demo_argv(), stderr="nowhere")
    # Still usable.
    assert client.call("echo", {"text": "ok"}).text == "ok"


def test_connect_failures() -> None:
    with pytest.raises(libmcpc.SpawnError) as e:
        libmcpc.Client.stdio(["/nonexistent/mcpc-test-server"])
    assert isinstance(e.value, libmcpc.TransportError) and isinstance(e.value, ConnectionError)
    with pytest.raises(libmcpc.HandshakeError) as h:
        libmcpc.Client.stdio(demo_argv("--fault", "init-error"), timeout=10)
    assert h.value.rpc_code == -32603
    with pytest.raises(libmcpc.InsecureUrlError):
        libmcpc.Client.http("http://example.com/mcp")


def test_timeout(client: libmcpc.Client) -> None:
    t0 = time.monotonic()
    with pytest.raises(libmcpc.TimeoutError) as e:
        client.call("slow", {"ms": 10000}, timeout=0.2)
    assert time.monotonic() - t0 < 3
    assert isinstance(e.value, TimeoutError)  # the builtin, too
    assert "slow" in str(e.value)
    assert client.call("echo", {"text": "after"}).text == "after"


def test_client_default_timeout() -> None:
    # The default bounds the start too: long enough for a Python server on a busy machine.
    with libmcpc.Client.stdio(demo_argv(), timeout=1.5) as c:
        with pytest.raises(libmcpc.TimeoutError):
            c.call("slow", {"ms": 10000})
        assert c.call("slow", {"ms": 2000}, timeout=10).structured["slept_ms"] == 2000  # a call overrides it


def test_cancel_from_another_thread(tmp_path: Path) -> None:
    log = tmp_path / "demo.log"
    with libmcpc.Client.stdio(demo_argv("--log", str(log)), timeout=20) as c:
        cancel = libmcpc.Cancel()
        assert not cancel.triggered
        threading.Timer(0.1, cancel.trigger).start()
        t0 = time.monotonic()
        with pytest.raises(libmcpc.CancelledError) as e:
            c.call("slow", {"ms": 20000}, cancel=cancel)
        assert time.monotonic() - t0 < 5
        assert cancel.triggered and e.value.status == libmcpc.Status.CANCELLED
        # A triggered handle stays triggered. (With a fast tool the response may
        # race the cancel, so this uses a slow one.)
        t0 = time.monotonic()
        with pytest.raises(libmcpc.CancelledError):
            c.call("slow", {"ms": 5000}, cancel=cancel)
        assert time.monotonic() - t0 < 2
        assert c.call("echo", {"text": "x"}, cancel=libmcpc.Cancel()).text == "x"
    events = [json.loads(line) for line in log.read_text().splitlines() if '"event"' in line]
    assert any(ev.get("event") == "cancelled" for ev in events)


def test_progress(client: libmcpc.Client) -> None:
    seen: List[Tuple[float, Optional[float], Optional[str]]] = []
    threads = set()

    def on_progress(progress: float, total: Optional[float], message: Optional[str]) -> None:
        seen.append((progress, total, message))
        threads.add(threading.get_ident())

    r = client.call("slow", {"ms": 200}, on_progress=on_progress)
    assert r.structured == {"slept_ms": 200, "cancelled": False}
    assert [p for p, _, _ in seen] == [1, 2, 3, 4]
    assert all(t == 4 for _, t, _ in seen)
    assert threading.get_ident() not in threads  # an mcpc thread
    assert_registry_empty()  # nothing kept once the call returned


def test_progress_restarts_timeout(client: libmcpc.Client) -> None:
    # 400 ms of work with progress every 100 ms: fits a 250 ms timeout only when
    # each progress notification restarts it.
    r = client.call("slow", {"ms": 400}, timeout=0.25, on_progress=lambda *a: None,
                    reset_timeout_on_progress=True, max_total=5)
    assert r.structured["slept_ms"] == 400
    with pytest.raises(libmcpc.TimeoutError):
        client.call("slow", {"ms": 400}, timeout=0.25, on_progress=lambda *a: None)


def test_callbacks_stderr_notifications_env(tmp_path: Path) -> None:
    lines: List[bytes] = []
    notes: List[Tuple[str, Any]] = []
    with libmcpc.Client.stdio(demo_argv(), env={"MCPC_DEMO_FAULT": "stderr-flood"}, stderr=lines.append,
                           timeout=20) as c:
        c.call("echo", {"text": "x"})
    assert len([line for line in lines if line.startswith(b"stderr flood")]) == 1024 * 1024 // 64
    assert all(not line.endswith(b"\n") for line in lines[:10])

    def on_note(method: str, params: Any) -> None:
        notes.append((method, params))

    with libmcpc.Client.stdio(demo_argv("--fault", "notify-during-call"), on_notification=on_note) as c:
        c.call("echo", {"text": "x"})
    assert ("notifications/message", {"level": "info", "data": "hello"}) in notes
    assert any(m == "notifications/tools/list_changed" for m, _ in notes)
    assert_registry_empty()  # the callbacks were released with the clients


def test_cwd_and_clear_env(tmp_path: Path) -> None:
    # The server runs from another directory: the script path must be absolute.
    with libmcpc.Client.stdio(demo_argv(), cwd=tmp_path, clear_env=True, env={"PATH": os.environ.get("PATH", "")}) as c:
        assert c.call("echo", {"text": "elsewhere"}).text == "elsewhere"


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_server_stderr_callback_exception_does_not_break_client() -> None:
    def bad(line: bytes) -> None:
        raise RuntimeError("callback bug")

    with libmcpc.Client.stdio(demo_argv(), env={"MCPC_DEMO_FAULT": "stderr-flood"}, stderr=bad) as c:
        assert c.call("echo", {"text": "still"}).text == "still"


def test_close_and_closed(demo: List[str]) -> None:
    c = libmcpc.Client.stdio(demo)
    assert not c.closed
    c.close()
    c.close()  # idempotent
    assert c.closed
    with pytest.raises(libmcpc.ClosedError):
        c.call("echo", {"text": "x"})
    with pytest.raises(libmcpc.ClosedError):
        c.tools()
    assert "closed" in repr(c)


def test_close_while_a_call_is_in_flight(demo: List[str]) -> None:
    c = libmcpc.Client.stdio(demo)
    assert isinstance(interrupted(lambda: c.call("slow", {"ms": 30000}), c.close), libmcpc.ClosedError)


def test_many_threads_share_one_client(client: libmcpc.Client) -> None:
    results: List[str] = []
    lock = threading.Lock()

    def worker(i: int) -> None:
        for j in range(25):
            r = client.call("echo", {"text": "%d-%d" % (i, j)})
            with lock:
                results.append(r.text)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == sorted("%d-%d" % (i, j) for i in range(8) for j in range(25))


def test_garbage_collected_client_stops_its_server(tmp_path: Path) -> None:
    c = libmcpc.Client.stdio(demo_argv(), timeout=10)
    c.call("echo", {"text": "x"})
    del c
    gc.collect()
    # Nothing to assert directly beyond not hanging or crashing; the registry is clean.
    assert_registry_empty()


def test_exceptions_pickle() -> None:
    import pickle

    e = libmcpc.RpcError("boom", libmcpc.Status.RPC, -32602)
    e2 = pickle.loads(pickle.dumps(e))
    assert type(e2) is libmcpc.RpcError and e2.rpc_code == -32602 and str(e2) == "boom"


def test_restart_starts_a_dead_server_again() -> None:
    argv = demo_argv("--fault=exit-on-crash")
    with libmcpc.Client.stdio(argv, restart=(1, 0.02), timeout=20) as c:
        first = c.call("echo", {"text": "pid"}).text
        with pytest.raises(libmcpc.ServerExitedError) as e:
            c.call("echo", {"text": "crash"})
        assert isinstance(e.value, libmcpc.TransportError)
        assert c.call("echo", {"text": "pid"}).text != first
        # The one restart is spent: the next death is final.
        with pytest.raises(libmcpc.TransportError) as final:
            c.call("echo", {"text": "crash"})
        assert not isinstance(final.value, libmcpc.ServerExitedError)
    with pytest.raises(ValueError):
        libmcpc.Client.stdio(argv, restart=(-1, 0.1))
    with pytest.raises(TypeError):
        libmcpc.Client.http("http://127.0.0.1:1/mcp", restart=(1, 0.1))  # type: ignore[call-arg]


def test_extensions_declared_and_offered(tmp_path: Path) -> None:
    """Declared extensions reach the server in both generations; the server's come back."""
    for era in ("legacy", "modern"):
        log = tmp_path / ("ext-%s.log" % era)
        exts = {"io.modelcontextprotocol/tasks": {}, "dev.example/x": {"a": [3]}, "dev.example/y": None}
        with libmcpc.Client.stdio(demo_argv("--era", era, "--log", str(log)), timeout=20,
                                  extensions=exts) as c:
            offered = c.server_extensions()
            assert offered and offered["dev.mcpc/demo"] == {"logs": "the extensions a client declares"}
            c.call("echo", {"text": "x"})
        events = [json.loads(line) for line in log.read_text().splitlines() if '"client-extensions"' in line]
        assert events and events[0]["extensions"] == {"io.modelcontextprotocol/tasks": {}, "dev.example/x": {"a": [3]},
                                                      "dev.example/y": {}}
    for bad in ({"no-slash": {}}, {"dev.example/x": [1]}, {"dev.example/x": "[1]"}):
        with pytest.raises(libmcpc.McpcError) as e:
            libmcpc.Client.stdio(demo_argv(), timeout=20, extensions=bad)
        assert e.value.status == libmcpc.Status.INVALID_ARG

