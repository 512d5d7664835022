"""Host and AsyncHost (many servers behind one handle) against the demo server and the
loopback HTTP fixture: configuration files, servers started together with failed
ones leaving the rest running, the catalog under qualified names, routed calls,
states and events, the resolver, and the asyncio form."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

import libmcpc

from conftest import DEMO, PYTHON, REPO, Server, assert_registry_empty, demo_argv, interrupted

Report = Tuple[libmcpc.HostEvent, Optional[str], Optional[libmcpc.ServerState], Any]


def write_config(tmp_path: Path, config: Dict[str, Any], name: str = "mcp.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(config))
    return path


def demo_server(*extra: str, **fields: Any) -> Dict[str, Any]:
    return {"command": PYTHON, "args": [DEMO, *extra], **fields}


def two_and_a_failing_one(tmp_path: Path) -> Path:
    """Servers "a", "x.y" and "x_y" (whose echo tools would share a name), and one
    whose command does not exist."""
    return write_config(tmp_path, {"mcpServers": {
        "a": demo_server(excludeTools=["fail"]),
        "x.y": demo_server(includeTools=["echo", "fail"]),
        "x_y": demo_server(includeTools=["echo", "add"]),
        "missing": {"command": "/nonexistent/mcpc-no-such-server"},
    }})


def test_config_start_catalog_and_routing(tmp_path: Path) -> None:
    reports: List[Report] = []
    with libmcpc.Host(timeout=20, on_event=lambda *r: reports.append(r)) as host:
        assert host.add_config(two_and_a_failing_one(tmp_path)) == 4
        assert [s["state"] for s in host.status()] == ["added"] * 4
        host.start()

        states = {s["name"]: s for s in host.status()}
        assert {n: s["state"] for n, s in states.items()} == {
            "a": libmcpc.ServerState.READY, "missing": "failed", "x.y": "ready", "x_y": "ready"}
        assert states["missing"]["error"]["status"] == "MCPC_ERR_SPAWN"
        assert states["a"]["tools"] == 25  # as listed: before the exclude list

        catalog = host.tools()
        assert "a__echo" in catalog.names and "a__fail" not in catalog.names  # excluded
        assert not any(n.startswith("missing__") for n in catalog.names)
        assert catalog.get("x_y__add") == libmcpc.HostTool("x_y__add", "x_y", catalog.get("x_y__add").tool)
        assert catalog.get("x_y__add").tool["name"] == "add"
        assert len(catalog) == 24 + 2 + 2 and catalog[0].server == "a"
        (collision,) = catalog.collisions
        assert (collision.name, collision.kept, collision.renamed) == ("x_y__echo", "x.y", "x_y")
        assert collision.renamed_to.startswith("x_y__echo_") and collision.renamed_to in catalog.names

        assert host.call("a__add", {"a": 2, "b": 3}).structured == {"sum": 5}
        assert host.call(collision.renamed_to, {"text": "renamed"}).text == "renamed"
        with pytest.raises(libmcpc.ToolError) as tool_error:
            host.call("x_y__fail", {"message": "routed failure"})
        assert tool_error.value.result.text == "routed failure"
        with pytest.raises(libmcpc.TimeoutError):
            host.call("a__slow", {"ms": 5000}, timeout=0.2)
        for unknown in ("a__fail", "missing__echo", "nobody__echo"):
            with pytest.raises(libmcpc.UnknownNameError) as e:
                host.call(unknown, {})
            assert e.value.status == libmcpc.Status.UNKNOWN_NAME and isinstance(e.value, LookupError)
            assert unknown in e.value.message

        host.remove("a")
        with pytest.raises(libmcpc.UnknownNameError):
            host.remove("a")
        with pytest.raises(libmcpc.UnknownNameError):
            host.call("a__echo", {"text": "gone"})
        assert not any(n.startswith("a__") for n in host.tools().names)
        assert host.call("x_y__add", {"a": 1, "b": 1}).structured == {"sum": 2}

    changes = [(s, st) for ev, s, st, _ in reports if ev is libmcpc.HostEvent.SERVER_STATE]
    assert changes.count(("missing", libmcpc.ServerState.FAILED)) == 1
    assert {s for s, st in changes if st == "ready"} == {"a", "x.y", "x_y"}
    assert {s for s, st in changes if st == "starting"} == {"a", "x.y", "x_y", "missing"}
    settled = [d for ev, _, _, d in reports if ev == "settled"]
    # Prompts are named as tools are: x.y's and x_y's greet collide too.
    assert settled == [{"servers": {"ready": 3, "failed": 1}, "tools": 28, "prompts": 3, "collisions": 2}]
    assert any(ev is libmcpc.HostEvent.CATALOG_CHANGED for ev, *_ in reports)
    failed_detail = next(d for ev, s, st, d in reports if st == "failed")
    assert failed_detail.startswith('MCPC_ERR_SPAWN: cannot start "/nonexistent/mcpc-no-such-server"')
    assert host.closed
    with pytest.raises(libmcpc.ClosedError):
        host.tools()
    assert_registry_empty()


def test_a_saved_catalog_and_lazy_starts(tmp_path: Path) -> None:
    path = write_config(tmp_path, {"mcpServers": {"a": demo_server(), "b": demo_server(includeTools=["add"])}})
    with libmcpc.Host(timeout=20) as host:
        host.add_config(path)
        host.start()
        saved = host.tools()
    with libmcpc.Host(timeout=20) as host:
        host.set_lazy()
        host.add_config(path)
        assert host.load_catalog(saved) == len(saved) == 26
        host.start()
        assert {s["name"]: s["state"] for s in host.status()} == {"a": libmcpc.ServerState.IDLE, "b": "idle"}
        assert host.tools().json == saved.json  # whole, before any server runs
        assert host.call("b__add", {"a": 1, "b": 2}).structured == {"sum": 3}
        assert {s["name"]: s["state"] for s in host.status()} == {"a": "idle", "b": "ready"}
        with pytest.raises(libmcpc.McpcError):
            host.load_catalog("[1]")
        with pytest.raises(TypeError):
            host.load_catalog(7)  # type: ignore[arg-type]


def test_a_malformed_config_names_the_file_the_server_and_the_field(tmp_path: Path) -> None:
    with libmcpc.Host() as host:
        bad = write_config(tmp_path, {"mcpServers": {"ok": demo_server(), "w": demo_server(timeout="soon")}})
        with pytest.raises(libmcpc.ConfigError) as e:
            host.add_config(bad)
        assert e.value.status == libmcpc.Status.CONFIG and e.value.status_name == "MCPC_ERR_CONFIG"
        assert str(bad) in e.value.message and '"w"' in e.value.message and '"timeout"' in e.value.message
        unset = write_config(tmp_path, {"mcpServers": {"u": demo_server("${MCPC_HOST_TEST_UNSET}")}}, "unset.json")
        with pytest.raises(libmcpc.ConfigError, match=r'server "u": field "args" \$\{MCPC_HOST_TEST_UNSET\} is not set'):
            host.add_config(unset)
        with pytest.raises(libmcpc.ConfigError, match="nonexistent"):
            host.add_config(tmp_path / "nonexistent.json")
        assert host.status() == []  # all or none

        ok = write_config(tmp_path, {"mcpServers": {"ok": demo_server()}}, "ok.json")
        assert host.add_config(ok) == 1
        with pytest.raises(libmcpc.InvalidArgumentError, match='"ok"'):
            host.add_config(ok)  # a name already added
        with pytest.raises(libmcpc.InvalidArgumentError):
            host.add_stdio("ok", demo_argv())


def test_the_resolvers_value_reaches_the_server_and_no_message(tmp_path: Path, http_fixture: Server) -> None:
    asked: List[Tuple[str, str, Optional[str]]] = []
    log = tmp_path / "resolved.log"
    secret = "s3cr3t-from-the-resolver"

    def resolve(kind: str, reference: str, prompt: Optional[str]) -> Optional[str]:
        asked.append((kind, reference, prompt))
        return {"logfile": str(log), "op://vault/token": secret}.get(reference)

    with libmcpc.Host(timeout=20, resolver=resolve) as host:
        # VS Code's form: an input, asked with its description; it lands in the argv.
        vscode = write_config(tmp_path, {
            "servers": {"w": {"type": "stdio", "command": PYTHON, "args": [DEMO, "--log", "${input:logfile}"]}},
            "inputs": [{"id": "logfile", "description": "Where the server logs"}]}, "vscode.json")
        # Any other scheme is a secret reference, asked whole; it lands in a header.
        remote = write_config(tmp_path, {"mcpServers": {"h": {
            "url": http_fixture.url, "headers": {"Authorization": "Bearer ${op://vault/token}"}}}}, "remote.json")
        assert host.add_config(vscode) == 1 and host.add_config(remote) == 1
        assert asked == [("input", "logfile", "Where the server logs"), ("secret", "op://vault/token", None)]
        host.start()
        assert host.call("w__echo", {"text": "logged"}).text == "logged"
        assert host.call("h__echo", {"text": "authorized"}).text == "authorized"
        assert '"logged"' in log.read_text()
        posts = [json.loads(line) for line in http_fixture.log_text().splitlines() if '"POST"' in line]
        assert posts and all(p["headers"].get("authorization") == "Bearer " + secret for p in posts)

        # Refused for another field: the message names it, never the value.
        bad = write_config(tmp_path, {"mcpServers": {"b": {
            "url": http_fixture.url, "headers": {"Authorization": "Bearer ${op://vault/token}"},
            "timeout": "soon"}}}, "bad.json")
        with pytest.raises(libmcpc.ConfigError) as e:
            host.add_config(bad)
        assert '"timeout"' in e.value.message and secret not in e.value.message and secret not in repr(e.value)

        # No value: the file is refused naming the variable.
        unknown = write_config(tmp_path, {"mcpServers": {"n": demo_server("${op://vault/other}")}}, "n.json")
        with pytest.raises(libmcpc.ConfigError, match=r"op://vault/other"):
            host.add_config(unknown)


@pytest.mark.parametrize("answer,says", [
    ("x" * 9000, "is 9000 bytes, more than the 8191 that fit"),
    ("nul\0inside", "holds a NUL"),
    (b"bytes", "a bytes, not a str"),
])
def test_a_value_the_resolver_cannot_give_is_refused_and_said(tmp_path: Path, answer: Any, says: str) -> None:
    path = write_config(tmp_path, {"mcpServers": {"a": demo_server("${op://vault/long}")}})
    with libmcpc.Host(resolver=lambda kind, ref, prompt: answer) as host:
        with pytest.raises(libmcpc.ConfigError) as e:
            host.add_config(path)
        assert says in e.value.message and "${op://vault/long}" in e.value.message
        assert "xxxxxxxx" not in e.value.message and "nul" not in e.value.message
        assert host.status() == []


def test_an_exception_in_the_resolver_refuses_the_file_and_is_the_cause(tmp_path: Path) -> None:
    def resolve(kind: str, reference: str, prompt: Optional[str]) -> str:
        raise KeyError("the vault is locked")

    path = write_config(tmp_path, {"mcpServers": {"a": demo_server("${op://vault/item}")}})
    with libmcpc.Host(resolver=resolve) as host:
        with pytest.raises(libmcpc.ConfigError, match=r"the resolver raised KeyError for \$\{op://vault/item\}") as e:
            host.add_config(path)
        assert isinstance(e.value.__cause__, KeyError)
        host.set_resolver(None)  # now nobody answers: "not set", with no note
        with pytest.raises(libmcpc.ConfigError) as e2:
            host.add_config(path)
        assert "resolver" not in e2.value.message
    assert_registry_empty()


def test_settings_variables_env_policy_concurrency(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="env_policy"):
        libmcpc.Host(env_policy="everything")
    with pytest.raises(ValueError, match="concurrency"):
        libmcpc.Host(concurrency=0)
    with pytest.raises(TypeError, match="on_event"):
        libmcpc.Host(on_event="not callable")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="options for another transport: bearer"):
        libmcpc.Host().add_stdio("a", demo_argv(), bearer="x")  # type: ignore[call-arg]
    path = write_config(tmp_path, {"servers": {"w": {"type": "stdio", "command": PYTHON,
                                                     "args": ["${workspaceFolder}/server.py"]}}})
    with libmcpc.Host(variables={"workspaceFolder": str(REPO / "demo")}, env_policy=["PATH", "HOME"],
                      concurrency=1, timeout=20) as host:
        host.set_env_policy("pass_all")
        host.set_env_policy("no_secrets")
        host.set_concurrency(2)
        assert host.add_config(path) == 1
        host.start()
        assert host.call("w__echo", {"text": "ws"}).text == "ws"


def test_a_servers_own_options_are_laid_over_the_hosts() -> None:
    notes: List[str] = []
    with libmcpc.Host(timeout=20, on_notification=lambda method, params: notes.append(method)) as host:
        # Options of its own (env): the host's notification callback still applies.
        host.add_stdio("own", demo_argv("--fault", "notify-during-call"), env={"MCPC_HOST_TEST": "1"})
        host.add_http("far", "http://127.0.0.1:9/mcp", timeout=2)  # refused when it starts
        host.start()
        host.call("own__echo", {"text": "x"})
        assert host.status()[1]["state"] == libmcpc.ServerState.FAILED
    assert "notifications/message" in notes


def test_a_required_server_that_fails_fails_the_start(tmp_path: Path) -> None:
    path = write_config(tmp_path, {"mcpServers": {
        "ok": demo_server(), "must": {"command": "/nonexistent/mcpc-no-such-server", "required": True}}})
    with libmcpc.Host(timeout=20) as host:
        host.add_config(path)
        with pytest.raises(libmcpc.SpawnError, match='required server "must"'):
            host.start()
        assert host.call("ok__echo", {"text": "still"}).text == "still"


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_the_event_callback_may_read_the_host_and_its_exceptions_stay_in_python() -> None:
    seen: Dict[str, Any] = {}

    def on_event(event: libmcpc.HostEvent, server: Optional[str], state: Any, detail: Any) -> None:
        if event is libmcpc.HostEvent.SETTLED:
            seen["tools"] = len(host.tools())
            seen["states"] = [s["state"] for s in host.status()]
            try:
                host.start()
            except libmcpc.McpcError as e:
                seen["nested"] = e
        raise RuntimeError("a bug in the callback")

    with libmcpc.Host(timeout=20, on_event=on_event) as host:
        host.add_stdio("a", demo_argv())
        host.start()
        assert host.call("a__echo", {"text": "on"}).text == "on"
    assert seen["tools"] == 25 and seen["states"] == ["ready"]
    assert isinstance(seen["nested"], libmcpc.WouldDeadlockError)


def test_close_ends_a_call_in_flight() -> None:
    host = libmcpc.Host(timeout=30)
    host.add_stdio("a", demo_argv())
    host.start()
    assert isinstance(interrupted(lambda: host.call("a__slow", {"ms": 30000}), host.close), libmcpc.ClosedError)
    host.close()  # idempotent
    assert "closed" in repr(host)


def test_prompts_and_the_name_format() -> None:
    changes: List[Report] = []
    with libmcpc.Host(timeout=20, on_event=lambda *r: changes.append(r)) as host:
        host.add_stdio("a", demo_argv())
        host.add_stdio("b", demo_argv("--era=modern"))
        with pytest.raises(libmcpc.InvalidArgumentError, match=r"\[A-Za-z0-9_-\]"):
            host.set_name_format("a.{name}")
        with pytest.raises(libmcpc.InvalidArgumentError):
            host.set_name_format("{server}")  # no {name}
        host.set_name_format("mcp__{server}__{name}")
        host.start()

        prompts = host.prompts()
        assert prompts.names == ["mcp__a__greet", "mcp__b__greet"] and prompts.collisions == []
        assert prompts[0] == libmcpc.HostPrompt("mcp__a__greet", "a", prompts[0].prompt)
        greet_b = prompts.get("mcp__b__greet")
        assert greet_b is not None and greet_b.prompt["name"] == "greet" and prompts.get("greet") is None
        assert "mcp__b__echo" in host.tools().names
        got = host.get_prompt("mcp__b__greet", {"who": "Python"})
        with libmcpc.Client.stdio(demo_argv("--era=modern")) as b:
            assert got == b.get_prompt("greet", {"who": "Python"})  # as the server sent it
        assert "Say hello to Python." in json.dumps(got["messages"])
        with pytest.raises(libmcpc.UnknownNameError, match="no prompt named") as e:
            host.get_prompt("a__greet")  # the default's name, not this format's
        assert e.value.status == libmcpc.Status.UNKNOWN_NAME
        with pytest.raises(TypeError):
            host.get_prompt("mcp__a__greet", ["who"])  # type: ignore[arg-type]

        # Bare names: the second server's tool and prompt are renamed, and listed.
        before = sum(ev is libmcpc.HostEvent.CATALOG_CHANGED for ev, *_ in changes)
        host.set_name_format("{name}")
        assert sum(ev is libmcpc.HostEvent.CATALOG_CHANGED for ev, *_ in changes) == before + 1
        prompts = host.prompts()
        (collision,) = prompts.collisions
        assert (collision.name, collision.kept, collision.renamed) == ("greet", "a", "b")
        assert collision.renamed_to.startswith("greet_") and prompts.names == ["greet", collision.renamed_to]
        assert host.call("echo", {"text": "bare"}).text == "bare"
        host.set_name_format(None)
        assert "Say hello to you." in json.dumps(host.get_prompt("a__greet", {"who": "you"}))
    with pytest.raises(libmcpc.ClosedError):
        host.prompts()


def test_resources_routed_by_uri() -> None:
    with libmcpc.Host(timeout=20) as host:
        host.add_stdio("apps", demo_argv("--apps"))
        host.add_stdio("apps2", demo_argv("--apps", "--era=modern"))  # the same URIs
        host.add_stdio("plain", demo_argv())
        host.start()
        listed = host.resources()
        clock = listed.get("ui://demo/clock.html")
        assert clock is not None and clock.server == "apps" and clock.resource["uri"] == clock.uri
        assert libmcpc.ResourceCollision("ui://demo/clock.html", "apps", "apps2") in listed.collisions
        assert {r.server for r in listed} == {"apps"} and len(listed) == len(listed.uris)
        assert all(isinstance(t, libmcpc.HostTemplate) for t in listed.templates)

        read = host.read_resource("ui://demo/clock.html")
        assert isinstance(read, libmcpc.ResourceContents) and len(read.contents) == 1
        assert read.contents[0].uri == "ui://demo/clock.html" and "<html" in (read.contents[0].text or "").lower()
        with pytest.raises(libmcpc.UnknownNameError):
            host.read_resource("res://nobody")


def test_async_host_prompts_and_resources() -> None:
    async def main() -> None:
        async with libmcpc.AsyncHost(timeout=20) as host:
            host.add_stdio("apps", demo_argv("--apps"))
            await host.start()
            host.set_name_format("{server}_{name}")
            assert host.prompts().names == ["apps_greet"] and host.resources().uris
            got, read = await asyncio.gather(host.get_prompt("apps_greet", {"who": "asyncio"}),
                                             host.read_resource("ui://demo/clock.html"))
            assert "Say hello to asyncio." in json.dumps(got) and len(read.contents) == 1
            with pytest.raises(libmcpc.UnknownNameError):
                await host.get_prompt("apps__greet")
            with pytest.raises(libmcpc.UnknownNameError):
                await host.read_resource("res://nobody")

    asyncio.run(asyncio.wait_for(main(), 60))
    assert_registry_empty()


def test_async_host(tmp_path: Path) -> None:
    log = tmp_path / "demo.log"
    path = write_config(tmp_path, {"mcpServers": {"a": demo_server("--log", str(log)),
                                                  "b": demo_server("${op://vault/arg}"),
                                                  "missing": {"command": "/nonexistent/mcpc-no-such-server"}}})
    reports: List[Tuple[Report, bool]] = []

    async def main() -> None:
        loop_thread = threading.get_ident()

        def on_event(*report: Any) -> None:
            reports.append((report, threading.get_ident() == loop_thread))

        async def resolve(kind: str, reference: str, prompt: Optional[str]) -> str:
            assert threading.get_ident() == loop_thread
            await asyncio.sleep(0)
            return "--era=legacy"

        async with libmcpc.AsyncHost(timeout=20, on_event=on_event, resolver=resolve) as host:
            assert await host.add_config(path) == 3
            await host.start()
            # The settled report is delivered before start() returns to the loop.
            assert reports[-1][0][0] is libmcpc.HostEvent.SETTLED
            assert [s["state"] for s in host.status()] == ["ready", "ready", "failed"]
            results = await asyncio.gather(*(host.call("b__add", {"a": i, "b": i}) for i in range(5)))
            assert [r.structured["sum"] for r in results] == [0, 2, 4, 6, 8]
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(host.call("a__slow", {"ms": 30000}), 0.3)
            with pytest.raises(libmcpc.UnknownNameError):
                await host.call("missing__echo", {})
            await host.remove("b")
            assert "b__add" not in host.tools().names
        assert host.closed

    asyncio.run(asyncio.wait_for(main(), 60))
    assert reports and all(on_loop for _, on_loop in reports)
    assert any(r[2] == "failed" and r[1] == "missing" for r, _ in reports)
    deadline = time.monotonic() + 5
    while '"event":"cancelled"' not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert '"event":"cancelled"' in log.read_text()  # cancelling the task cancelled the call
    assert_registry_empty()


def test_async_host_needs_a_running_loop() -> None:
    with pytest.raises(RuntimeError):
        libmcpc.AsyncHost()
