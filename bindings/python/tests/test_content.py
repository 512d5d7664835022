"""Resources, prompts, completions and requests by method name, against the input
fixture (tests/fixtures/input_server.py) in both protocol generations."""

from __future__ import annotations

import asyncio
from typing import Iterator

import pytest

import libmcpc

from conftest import PYTHON, REPO, demo_argv

INPUT = str(REPO / "tests" / "fixtures" / "input_server.py")


@pytest.fixture(params=["modern", "legacy"])
def client(request: pytest.FixtureRequest) -> Iterator[libmcpc.Client]:
    with libmcpc.Client.stdio([PYTHON, INPUT, "--era=" + request.param], timeout=20) as c:
        yield c


def test_listings(client: libmcpc.Client) -> None:
    assert [r["uri"] for r in client.resources()] == ["res://1", "res://2"]
    with pytest.raises(libmcpc.ListingError):
        client.resource_templates()
    with pytest.raises(libmcpc.ListingError):
        client.prompts()


def test_read_text_and_blob(client: libmcpc.Client) -> None:
    one = client.read_resource("res://1")
    assert len(one.contents) == 1
    c = one.contents[0]
    assert (c.uri, c.mime_type, c.text, c.blob, c.meta) == ("res://1", "text/plain", "one", None, {"k": 1})
    two = client.read_resource("res://two")
    assert two.contents[0].blob == bytes(range(256)) and two.contents[0].text is None
    assert two.contents[1].text == "second"
    assert "blob" in two.raw["contents"][0]
    assert client.read_resource("res://nul").contents[0].text == "a\0b"


def test_read_refusals(client: libmcpc.Client) -> None:
    with pytest.raises(libmcpc.ProtocolError, match="not base64"):
        client.read_resource("res://notb64")
    with pytest.raises(libmcpc.RpcError) as e:
        client.read_resource("res://missing")
    assert e.value.rpc_code == -32002


def test_prompt_and_completion(client: libmcpc.Client) -> None:
    p = client.get_prompt("greet", {"who": "ada"})
    assert p["messages"][0]["content"]["text"] == "hello ada"
    assert [m["content"]["type"] for m in p["messages"]][1:] == ["image", "audio", "resource_link", "resource"]
    with pytest.raises(libmcpc.InvalidArgumentError):
        client.get_prompt("greet", {"who": 1})  # type: ignore[dict-item]
    assert client.complete("greet", "who", "al")["values"] == ["alice", "albert"]
    done = client.complete({"type": "ref/prompt", "name": "greet"}, "who", "b", context={"x": "y"})
    assert done["values"] == ["bob", 'ctx={"x": "y"}']
    with pytest.raises(libmcpc.ProtocolError, match="more than 100"):
        client.complete({"type": "ref/resource", "uri": "res://{id}"}, "id", "")


def test_subscriptions(client: libmcpc.Client) -> None:
    if client.protocol_version == "2026-07-28":
        # One subscriptions/listen carries the set; a URI left out of its
        # acknowledgement is not subscribed.
        client.subscribe_resource("res://1")
        assert '"open": {"' in client.call("listens").text
        with pytest.raises(libmcpc.NotSupportedError, match="did not acknowledge"):
            client.subscribe_resource("res://refused")
        client.unsubscribe_resource("res://1")
        assert '"open": {}' in client.call("listens").text
        return
    client.subscribe_resource("res://1")
    client.unsubscribe_resource("res://1")
    assert "resources/unsubscribe res://1" in client.call("seen").text


def test_generic_request(client: libmcpc.Client) -> None:
    assert "tools" in client.request("tools/list", {})
    with pytest.raises(libmcpc.RpcError):
        client.request("no/such/method")
    client.notify("notifications/custom", {"a": 1})
    assert "notifications/custom" in client.call("seen").text


def test_async_forms(client: libmcpc.Client) -> None:
    async def main() -> None:
        r = await client.read_resource_async("res://1")
        assert r.contents[0].text == "one"
        p, c = await asyncio.gather(client.get_prompt_async("greet"), client.complete_async("greet", "who", ""))
        assert p["messages"][0]["content"]["text"] == "hello nobody"
        assert c["values"] == ["alice", "albert", "bob"]
        assert len(await client.resources_async()) == 2
        assert "tools" in await client.request_async("tools/list")

    asyncio.run(main())


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_log_messages(era: str) -> None:
    import threading

    got = []
    done = threading.Event()

    def on_log(level: str, logger: "str | None", data: object) -> None:
        got.append((level, logger, data))
        if len(got) == 2:
            done.set()

    with libmcpc.Client.stdio([PYTHON, INPUT, "--era=" + era], timeout=20, log_level="info", on_log=on_log) as c:
        assert c.call("log").text == "logged 2"
        assert done.wait(10)
        assert got == [("info", None, "two"), ("error", None, {"n": 3})]
        c.set_log_level("debug")
        assert c.call("log").text == "logged 3"
        with pytest.raises(libmcpc.InvalidArgumentError):
            c.set_log_level("loud")


def test_output_schema_checks() -> None:
    with libmcpc.Client.stdio([PYTHON, INPUT, "--era=legacy"], timeout=20, validate_output=True) as c:
        c.tools()
        assert c.call("shaped").structured == {"n": 1}
        with pytest.raises(libmcpc.OutputSchemaError) as e:
            c.call("misshaped")
        assert e.value.result.structured == {"n": "one"}  # type: ignore[attr-defined]


def test_lists_are_kept(client: libmcpc.Client) -> None:
    before = int(client.call("lists").text)
    client.tools()
    client.tools()
    assert int(client.call("lists").text) == before + 1
    client.tools(fresh=True)
    assert int(client.call("lists").text) == before + 2


def test_skills_listed_and_read_only_once_verified() -> None:
    for era in ("legacy", "modern"):
        with libmcpc.Client.stdio(demo_argv("--era", era), timeout=20) as c:
            skills = c.skills()
            assert [s["frontmatter"]["name"] for s in skills] == ["demo-greeting"]
            md = c.read_skill_file("skill://demo-greeting/SKILL.md")
            assert "name: demo-greeting" in (md.contents[0].text or "")
            assert c.skill("skill://demo-greeting/SKILL.md")["uri"] == "skill://demo-greeting/SKILL.md"
            children = c.skill_directory("skill://demo-greeting")
            assert any(ch.get("mimeType") == "inode/directory" for ch in children)
            with pytest.raises(libmcpc.IntegrityError):
                c.read_skill_file("skill://demo-greeting/scripts/run.sh")
    with libmcpc.Client.stdio(demo_argv("--fault", "skill-bad-size"), timeout=20) as c:
        c.skills()
        with pytest.raises(libmcpc.IntegrityError) as e:
            c.read_skill_file("skill://demo-greeting/SKILL.md")
        assert e.value.status == libmcpc.Status.INTEGRITY



def test_mcp_apps_views_and_policy() -> None:
    """MCP Apps: the tools' views, the model's tools, a view with its policy, and a
    view refused for its MIME type or a policy source that could break out."""
    ext = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
    for era in ("legacy", "modern"):
        with libmcpc.Client.stdio(demo_argv("--apps", "--era", era), timeout=20, extensions=ext) as c:
            views = c.tool_views()
            assert views["show_clock"] == {"uri": "ui://demo/clock.html", "visibility": ["model", "app"]}
            assert views["clock_tick"]["visibility"] == ["app"]
            names = [t["name"] for t in c.tools(model_only=True)]
            assert "show_clock" in names and "clock_tick" not in names and "echo" in names
            v = c.read_ui_view("ui://demo/clock.html")
            assert "<title>Demo clock</title>" in v.html
            assert v.csp.startswith("default-src 'none'; script-src 'self' 'unsafe-inline' https://cdn.example.com")
            assert v.allow == "clipboard-write" and v.domain == "demo-clock.example.com"
            assert v.prefers_border is True and v.meta is not None and "csp" in v.meta
            plain = c.read_ui_view("ui://demo/plain.html")
            assert plain.meta is None and plain.prefers_border is None and plain.allow == ""
            with pytest.raises(libmcpc.ProtocolError):
                c.read_ui_view("ui://demo/wrong-mime.html")
            with pytest.raises(libmcpc.ProtocolError):
                c.read_ui_view("ui://demo/inject.html")
            reply = c.relay_ui('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"clock_tick"}}')
            assert reply is not None and '"12:01"' in reply and '"id":3' in reply
            refused = c.relay_ui('{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"model_only"}}')
            assert refused is not None and "-32602" in refused
            with pytest.raises(libmcpc.NotSupportedError):
                c.relay_ui('{"jsonrpc":"2.0","id":5,"method":"ui/initialize","params":{}}')
            with pytest.raises(libmcpc.InvalidArgumentError):
                c.relay_ui("[1]")
