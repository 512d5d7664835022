"""The connect functions' keyword options: one definition (libmcpc/_options.py) gives
the sync and asyncio forms the same keywords, and those keywords are the public API."""

from __future__ import annotations

import asyncio
import inspect

import pytest

import libmcpc

COMMON = {"timeout", "protocol_version", "negotiation", "client_info", "on_notification", "log_level", "on_log",
          "validate_output", "max_pages", "max_message_size", "extensions", "on_elicitation", "elicitation_modes",
          "on_sampling", "sampling_tools", "roots", "on_roots"}
STDIO = COMMON | {"env", "clear_env", "cwd", "stderr", "close_grace", "restart"}
HTTP = COMMON | {"headers", "bearer", "token", "cacert", "ca_pem", "standalone_stream", "oauth", "proxy", "no_proxy",
                 "proxy_credentials", "http_transport", "http_version"}


def keywords(fn: object) -> dict:
    params = inspect.signature(fn).parameters.values()  # type: ignore[arg-type]
    return {p.name: p.default for p in params if p.kind == p.KEYWORD_ONLY}


@pytest.mark.parametrize("name,expected", [("stdio", STDIO), ("http", HTTP), ("transport", COMMON)])
def test_sync_and_async_connects_take_the_same_keywords(name: str, expected: set) -> None:
    sync, asy = getattr(libmcpc.Client, name), getattr(libmcpc.Client, name + "_async")
    assert set(keywords(sync)) == expected
    assert keywords(sync) == keywords(asy)
    assert inspect.iscoroutinefunction(asy)


def test_a_host_takes_the_same_options() -> None:
    own = {"on_event", "resolver", "variables", "env_policy", "concurrency"}
    for host in (libmcpc.Host, libmcpc.AsyncHost):
        assert set(keywords(host)) == STDIO | HTTP | own
        assert set(keywords(host.add_stdio)) == STDIO
        assert set(keywords(host.add_http)) == HTTP
    assert keywords(libmcpc.Host) == keywords(libmcpc.AsyncHost)
    assert keywords(libmcpc.Host)["stderr"] == "discard"


def test_defaults_are_kept() -> None:
    kw = keywords(libmcpc.Client.stdio)
    assert kw["stderr"] == "discard" and kw["clear_env"] is False and kw["validate_output"] is False
    assert kw["timeout"] is None
    assert keywords(libmcpc.Client.http)["standalone_stream"] is False


def test_an_option_of_another_transport_is_refused() -> None:
    with pytest.raises(TypeError, match="options for another transport: bearer"):
        libmcpc.Client.stdio(["python3"], bearer="x")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'nonsense'"):
        libmcpc.Client.http("http://127.0.0.1:1/mcp", nonsense=1)  # type: ignore[call-arg]
    t = libmcpc.Transport()
    try:
        with pytest.raises(TypeError, match="options for another transport: cwd"):
            asyncio.run(libmcpc.Client.transport_async(t, cwd="/"))  # type: ignore[call-arg]
    finally:
        t.release()


def test_a_bad_value_frees_the_options_and_raises() -> None:
    with pytest.raises(ValueError, match="http_version must be"):
        libmcpc.Client.http("http://127.0.0.1:1/mcp", http_version="3")
    with pytest.raises(ValueError, match="stderr must be"):
        libmcpc.Client.stdio(["python3"], stderr="loud")
    with pytest.raises(TypeError, match="expected a callable"):
        libmcpc.Client.stdio(["python3"], on_log="not callable")  # type: ignore[arg-type]
