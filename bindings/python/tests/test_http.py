"""Streamable HTTP against the loopback fixture (tests/fixtures/http_server.py)."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import threading
from pathlib import Path
from typing import List, Optional

import pytest

import libmcpc

from conftest import HTTP_FIXTURE, PYTHON, REPO, Server


def log_requests(server: Server) -> List[dict]:
    return [json.loads(line) for line in server.log_text().splitlines() if line.strip()]


@pytest.mark.parametrize("http_fixture", [["--mode", "json"], ["--mode", "sse"]], indirect=True, ids=["json", "sse"])
def test_http_basics(http_fixture: Server) -> None:
    with libmcpc.Client.http(http_fixture.url, headers={"X-Mcpc-Test": "py"}, bearer="secret-token",
                          timeout=20) as c:
        assert "mcpc-http-fixture" in json.dumps(c.server_info())
        tools = c.tools()
        assert len(tools) == 25 and tools[1]["outputSchema"]["required"] == ["sum"]
        assert c.call("add", {"a": 2, "b": 3}).structured == {"sum": 5}
        with pytest.raises(libmcpc.ToolError) as e:
            c.call("fail", {"message": "http boom"})
        assert e.value.result.text == "http boom"
        with pytest.raises(libmcpc.RpcError) as r:
            c.call("nope", {})
        assert r.value.rpc_code == -32602
        with pytest.raises(libmcpc.TimeoutError):
            c.call("slow", {"ms": 10000}, timeout=0.2)
    posts = [r for r in log_requests(http_fixture) if r.get("method") == "POST"]
    assert posts and all(p["headers"].get("x-mcpc-test") == "py" for p in posts)
    assert all(p["headers"].get("authorization") == "Bearer secret-token" for p in posts)
    assert any(r.get("event") == "session-deleted" for r in log_requests(http_fixture))


@pytest.mark.parametrize("http_fixture", [["--mode", "sse", "--fault", "auth"]], indirect=True)
def test_token_callback_refreshes_after_401(http_fixture: Server) -> None:
    asked: List[Optional[str]] = []

    def token(www_authenticate: Optional[str]) -> Optional[str]:
        asked.append(www_authenticate)
        return "good-token" if www_authenticate is not None else "stale-token"

    with libmcpc.Client.http(http_fixture.url, token=token, timeout=20) as c:
        seen: List[float] = []
        r = c.call("slow", {"ms": 100}, on_progress=lambda p, t, m: seen.append(p))
        assert r.text == "slept 100 ms" and seen == [1, 2, 3, 4]
    assert asked[0] is None and "invalid_token" in (asked[1] or "")


@pytest.mark.parametrize("http_fixture", [["--fault", "auth"]], indirect=True)
def test_auth_errors(http_fixture: Server) -> None:
    with pytest.raises(libmcpc.AuthError) as e:
        libmcpc.Client.http(http_fixture.url, bearer="wrong", timeout=10)
    assert isinstance(e.value, libmcpc.HttpError) and "wrong" not in str(e.value)

    def broken(www: Optional[str]) -> Optional[str]:
        raise RuntimeError("token service down")

    with pytest.raises(libmcpc.AuthError):
        libmcpc.Client.http(http_fixture.url, token=broken, timeout=10)


@pytest.mark.parametrize("http_fixture", [["--fault", "status-500"]], indirect=True)
def test_http_status_error(http_fixture: Server) -> None:
    with libmcpc.Client.http(http_fixture.url, timeout=10) as c:
        with pytest.raises(libmcpc.HttpError) as e:
            c.call("echo", {"text": "x"})
        assert "500" in str(e.value)


def test_http_async(http_fixture: Server) -> None:
    async def main() -> None:
        async with await libmcpc.Client.http_async(http_fixture.url, timeout=20) as c:
            rs = await asyncio.gather(*(c.call_async("add", {"a": i, "b": 1}) for i in range(20)))
            assert [r.structured["sum"] for r in rs] == [i + 1 for i in range(20)]
            task = asyncio.ensure_future(c.call_async("slow", {"ms": 30000}))
            await asyncio.sleep(0.2)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(main())


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not shutil.which("openssl"):
        pytest.skip("openssl is not installed")
    d = tmp_path_factory.mktemp("certs")
    subprocess.run(["sh", str(REPO / "tests" / "fixtures" / "make_certs.sh"), str(d)], check=True,
                   stdout=subprocess.DEVNULL)
    return d


def test_https_with_cacert(certs: Path) -> None:
    s = Server([PYTHON, HTTP_FIXTURE, "--port", "0", "--tls", str(certs / "server.pem"), str(certs / "server.key")])
    try:
        url = "https://127.0.0.1:%d/mcp" % s.port
        with pytest.raises(libmcpc.TlsError):
            libmcpc.Client.http(url, timeout=10)
        with libmcpc.Client.http(url, cacert=certs / "ca.pem", timeout=10) as c:
            assert c.call("echo", {"text": "tls"}).text == "tls"
        with libmcpc.Client.http(url, ca_pem=(certs / "ca.pem").read_text(), timeout=10) as c:
            assert len(c.tools()) == 25
    finally:
        s.stop()


def test_legacy_sse_transport() -> None:
    s = Server([PYTHON, str(REPO / "tests" / "fixtures" / "legacy_sse_server.py")])
    try:
        url = "http://127.0.0.1:%d/sse" % s.port
        with libmcpc.Client.http(url, timeout=10) as c:  # found by the fallback
            assert c.protocol_version == "2024-11-05"
            assert c.call("echo", {"text": "old"}).text == "old"
        with libmcpc.Client.http(url, http_transport="sse", timeout=10) as c:
            assert len(c.tools()) == 2
        with pytest.raises(libmcpc.HandshakeError):
            libmcpc.Client.http(url, http_transport="streamable", timeout=10)
        with pytest.raises(ValueError):
            libmcpc.Client.http(url, http_transport="h3", timeout=10)
    finally:
        s.stop()


def _tinyproxy(tmp: Path, auth: str) -> "tuple[subprocess.Popen[bytes], int]":
    """tinyproxy on a free loopback port with Basic authentication `auth` ("user pass")."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    conf = tmp / "tinyproxy.conf"
    conf.write_text('Port %d\nListen 127.0.0.1\nLogFile "%s"\nLogLevel Info\nBasicAuth %s\n'
                    % (port, tmp / "proxy.log", auth))
    proc = subprocess.Popen(["tinyproxy", "-d", "-c", str(conf)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    for _ in range(500):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port
        except OSError:
            threading.Event().wait(0.01)
    proc.kill()
    raise RuntimeError("tinyproxy did not start")


def test_through_a_proxy(certs: Path, tmp_path: Path) -> None:
    if not shutil.which("tinyproxy"):
        pytest.fail("tinyproxy is not installed (make test installs it through .ci/run)")
    s = Server([PYTHON, HTTP_FIXTURE, "--port", "0", "--tls", str(certs / "server.pem"), str(certs / "server.key")])
    proxy, port = _tinyproxy(tmp_path, "u pw")
    try:
        url = "https://127.0.0.1:%d/mcp" % s.port
        p = "http://127.0.0.1:%d" % port
        with libmcpc.Client.http(url, cacert=certs / "ca.pem", proxy=p, proxy_credentials=("u", "pw"),
                                 timeout=10) as c:
            assert c.call("echo", {"text": "via"}).text == "via"
        with pytest.raises(libmcpc.ProxyAuthError):
            libmcpc.Client.http(url, cacert=certs / "ca.pem", proxy=p, timeout=10)
        with libmcpc.Client.http(url, cacert=certs / "ca.pem", proxy=p, no_proxy="127.0.0.1", timeout=10) as c:
            assert c.call("echo", {"text": "direct"}).text == "direct"
        assert "CONNECT 127.0.0.1:%d" % s.port in (tmp_path / "proxy.log").read_text()
    finally:
        proxy.kill()
        proxy.wait()
        s.stop()


@pytest.mark.parametrize("http_fixture", [["--mode", "json"]], indirect=True)
def test_http_version(http_fixture: Server) -> None:
    # The fixture speaks HTTP/1.1 only: "1.1" and "auto" reach it, HTTP/2 with prior
    # knowledge does not.
    for version in ("1.1", "auto"):
        with libmcpc.Client.http(http_fixture.url, http_version=version, timeout=10) as c:
            assert c.call("echo", {"text": version}).text == version
    with pytest.raises(libmcpc.TransportError):
        libmcpc.Client.http(http_fixture.url, http_version="2-prior-knowledge", timeout=10)
    with pytest.raises(ValueError):
        libmcpc.Client.http(http_fixture.url, http_version="3", timeout=10)
