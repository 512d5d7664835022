"""Fixtures: the demo server (stdio), the loopback HTTP fixture, and the third-party
server built on the Python `mcp` SDK (tests/bindings/mcp_server.py).

Environment:
    MCPC_REPO               the repository root (default: found from this file)
    MCPC_PYTHON             the Python that runs the demo server and the HTTP fixture
                            (default: this interpreter)
    MCPC_TEST_MCP_PYTHON    a Python with mcp==1.30.0 installed (make test-python makes one);
                            without it the third-party tests are skipped, unless
    MCPC_REQUIRE_MCP=1      which makes its absence a failure.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator, List

import pytest

import libmcpc

REPO = Path(os.environ.get("MCPC_REPO") or Path(__file__).resolve().parents[3])
PYTHON = os.environ.get("MCPC_PYTHON") or sys.executable
DEMO = str(REPO / "demo" / "server.py")
HTTP_FIXTURE = str(REPO / "tests" / "fixtures" / "http_server.py")
MCP_SERVER = str(REPO / "tests" / "bindings" / "mcp_server.py")


def demo_argv(*extra: str) -> List[str]:
    return [PYTHON, DEMO, *extra]


@pytest.fixture
def demo() -> List[str]:
    """argv of the demo server."""
    return demo_argv()


@pytest.fixture
def client() -> Iterator[libmcpc.Client]:
    with libmcpc.Client.stdio(demo_argv(), timeout=20) as c:
        yield c


class Server:
    """A server process that prints "PORT n" once listening and exits when its stdin
    closes (the HTTP fixture, and mcp_server.py --http)."""

    def __init__(self, argv: List[str], log: "Path | None" = None) -> None:
        self.log = log
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=str(REPO))
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode()
        if not line.startswith("PORT "):
            self.stop()
            raise RuntimeError("server did not start: %r" % line)
        self.port = int(line.split()[1])
        self.url = "http://127.0.0.1:%d/mcp" % self.port

    def log_text(self) -> str:
        return self.log.read_text() if self.log and self.log.exists() else ""

    def stop(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()


@pytest.fixture
def http_fixture(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Server]:
    """The loopback HTTP fixture; parametrize indirectly with extra arguments."""
    extra = list(getattr(request, "param", []))
    log = tmp_path / "http.log"
    s = Server([PYTHON, HTTP_FIXTURE, "--port", "0", "--log", str(log), *extra], log)
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="session")
def mcp_python() -> str:
    py = os.environ.get("MCPC_TEST_MCP_PYTHON")
    if not py:
        if os.environ.get("MCPC_REQUIRE_MCP") == "1":
            pytest.fail("MCPC_TEST_MCP_PYTHON is not set (a Python with mcp==1.30.0)")
        pytest.skip("MCPC_TEST_MCP_PYTHON is not set (make test-python sets it)")
    return py


@pytest.fixture
def mcp_http(mcp_python: str) -> Iterator[Server]:
    s = Server([mcp_python, MCP_SERVER, "--http"])
    try:
        yield s
    finally:
        s.stop()


class PipeChild:
    """A demo server started by the test itself, with pipes, for the seam tests."""

    def __init__(self, argv: List[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=str(REPO))
        self.write_lock = threading.Lock()

    def write_line(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        with self.write_lock:
            self.proc.stdin.write(data + b"\n")
            self.proc.stdin.flush()

    def read_line(self) -> bytes:
        assert self.proc.stdout is not None
        return self.proc.stdout.readline()

    def close_stdin(self) -> None:
        if self.proc.stdin and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except OSError:
                pass

    def wait(self) -> int:
        self.close_stdin()
        try:
            return self.proc.wait(timeout=10)
        finally:
            if self.proc.stdout:
                self.proc.stdout.close()


def assert_registry_empty(limit: float = 10.0) -> None:
    """Every Python object handed to the library as userdata was released. Some are
    released on an mcpc thread after the call that made them returned (a cancelled
    connect completes once its server is gone), so this waits a little."""
    from libmcpc import _ffi

    deadline = time.monotonic() + limit
    while len(_ffi.registry) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(_ffi.registry) == 0


def interrupted(call: Callable[[], Any], interrupt: Callable[[], Any]) -> BaseException:
    """What `call` raises on a thread of its own when `interrupt` runs during it (a
    close, a channel's end); the call must end within 8 s of the interrupt."""
    errors: List[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.2)
    t0 = time.monotonic()
    interrupt()
    t.join(10)
    assert not t.is_alive() and time.monotonic() - t0 < 8
    assert len(errors) == 1, errors
    return errors[0]
