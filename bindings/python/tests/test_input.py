"""Input for the server: elicitation, sampling and roots handlers, against
tests/fixtures/input_server.py (both protocol generations) and the demo server's
wants_input (2026-07-28), for Client, the asyncio client, Host and AsyncHost.

input_server.py answers a call with what the client answered: before 2026-07-28 the
whole response message ({"result": ...} or {"error": ...}), under it the
inputResponses ({"k": ...}); a refused request fails a 2026-07-28 call with
INPUT_REQUIRED."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any, Dict, List

import pytest

import libmcpc

from conftest import PYTHON, REPO, assert_registry_empty, demo_argv

INPUT_SERVER = str(REPO / "tests" / "fixtures" / "input_server.py")
ERAS = ["legacy", "modern"]
PARIS = {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "test-model"}


def input_argv(era: str) -> List[str]:
    return [PYTHON, INPUT_SERVER, "--era=" + era]


def answered(client: libmcpc.Client, tool: str, era: str) -> Dict[str, Any]:
    """What the client answered to `tool`'s request, as the server saw it: the
    response message before 2026-07-28, the input response under it (as a response
    message's result, so both read alike)."""
    data = json.loads(client.call(tool).text)
    return data if era == "legacy" else {"result": data["k"]}


def caps(client: libmcpc.Client) -> Dict[str, Any]:
    result: Dict[str, Any] = json.loads(client.call("caps").text)
    return result


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


@pytest.mark.parametrize("era", ERAS)
def test_form_accepted_and_request_read(era: str) -> None:
    requests: List[libmcpc.InputRequest] = []

    def on_elicitation(request: libmcpc.InputRequest) -> libmcpc.Elicitation:
        requests.append(request)
        return libmcpc.Elicitation.accept({"name": "Ann"})

    with libmcpc.Client.stdio(input_argv(era), timeout=20, on_elicitation=on_elicitation) as c:
        # Only the kinds with a handler are declared, in the default form mode only.
        assert caps(c) == {"elicitation": {"form": {}}}
        # The schema's default fills in age.
        assert answered(c, "form", era) == {"result": {"action": "accept", "content": {"age": 7, "name": "Ann"}}}
    (r,) = requests
    assert r.kind is libmcpc.InputKind.FORM and r.kind == "form"
    assert (r.method, r.server, r.host_server, r.message) == ("elicitation/create", "input-server", None,
                                                              "Who are you?")
    assert r.schema is not None and r.schema["required"] == ["name"] and r.url is None
    assert r.params["message"] == "Who are you?"
    assert_registry_empty()


@pytest.mark.parametrize("era", ERAS)
def test_declined_cancelled_and_dict_answers(era: str) -> None:
    answers = iter([libmcpc.Elicitation.decline(), None, {"action": "accept", "content": {"name": "Bo"}}])
    with libmcpc.Client.stdio(input_argv(era), timeout=20, on_elicitation=lambda r: next(answers)) as c:
        assert answered(c, "form", era) == {"result": {"action": "decline"}}
        assert answered(c, "form", era) == {"result": {"action": "cancel"}}  # None: dismissed
        assert answered(c, "form", era)["result"]["content"] == {"age": 7, "name": "Bo"}


@pytest.mark.parametrize("era", ERAS)
def test_url_mode(era: str) -> None:
    urls: List[Any] = []

    def on_elicitation(request: libmcpc.InputRequest) -> libmcpc.Elicitation:
        urls.append((request.kind, request.url, request.schema))
        return libmcpc.Elicitation.accept()

    with libmcpc.Client.stdio(input_argv(era), timeout=20, on_elicitation=on_elicitation,
                              elicitation_modes=("form", "url")) as c:
        assert caps(c) == {"elicitation": {"form": {}, "url": {}}}
        assert answered(c, "url", era) == {"result": {"action": "accept"}}
    assert urls == [(libmcpc.InputKind.URL, "https://example.com/consent", None)]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("answer", ["raise", "long", "misfit", "wrong_type"])
def test_a_failing_handler_fails_the_request(era: str, answer: str) -> None:
    """An exception in the handler (or an answer mcpc refuses) answers the request with
    mcpc_input_fail: the server gets an error (a 2026-07-28 call fails), and the client
    goes on."""
    expected = {"raise": "no user here", "long": "x" * 1000, "misfit": "name", "wrong_type": "not int"}[answer]

    def on_elicitation(request: libmcpc.InputRequest) -> Any:
        if answer == "raise":
            raise RuntimeError("no user here")
        if answer == "long":
            raise ValueError("x" * 5000)
        if answer == "misfit":
            return libmcpc.Elicitation.accept({"name": 5})  # the schema wants a string
        return 42

    with libmcpc.Client.stdio(input_argv(era), timeout=20, on_elicitation=on_elicitation,
                              on_sampling=lambda r: PARIS) as c:
        if era == "legacy":
            error = json.loads(c.call("form").text)["error"]
            assert error["code"] == -1 and expected in error["message"]
            assert len(error["message"]) <= 1000
        else:
            with pytest.raises(libmcpc.McpcError) as info:
                c.call("form")
            assert info.value.status == libmcpc.Status.INPUT_REQUIRED
        # The client goes on.
        assert answered(c, "sampling", era)["result"]["model"] == "test-model"
    assert_registry_empty()


@pytest.mark.parametrize("era", ERAS)
def test_sampling_answered(era: str) -> None:
    requests: List[libmcpc.InputRequest] = []

    def on_sampling(request: libmcpc.InputRequest) -> Dict[str, Any]:
        requests.append(request)
        return PARIS

    with libmcpc.Client.stdio(input_argv(era), timeout=20, on_sampling=on_sampling, sampling_tools=True) as c:
        assert caps(c) == {"sampling": {"tools": {}}}
        assert answered(c, "sampling", era) == {"result": PARIS}
    (r,) = requests
    assert r.kind is libmcpc.InputKind.SAMPLING and r.method == "sampling/createMessage"
    assert r.params["messages"][0]["content"]["text"] == "capital of France?"
    assert r.message is None and r.schema is None


@pytest.mark.parametrize("era", ERAS)
def test_roots_listed_and_changed(era: str, tmp_path: Path) -> None:
    with libmcpc.Client.stdio(input_argv(era), timeout=20, roots=[tmp_path, "file:///srv/data"]) as c:
        assert caps(c) == {"roots": {"listChanged": True} if era == "legacy" else {}}
        assert answered(c, "roots", era) == {"result": {"roots": [
            {"uri": tmp_path.as_uri(), "name": tmp_path.name}, {"uri": "file:///srv/data", "name": "data"}]}}
        c.roots_changed()
        seen = c.call("seen").text
        # Before 2026-07-28 the server hears of it; under it the server asks each time.
        assert ("notifications/roots/list_changed" in seen) == (era == "legacy")


@pytest.mark.parametrize("era", ERAS)
def test_on_roots_asked_each_time(era: str, tmp_path: Path) -> None:
    current = [str(tmp_path)]
    with libmcpc.Client.stdio(input_argv(era), timeout=20, on_roots=lambda r: list(current)) as c:
        assert answered(c, "roots", era)["result"]["roots"] == [{"uri": tmp_path.as_uri(), "name": tmp_path.name}]
        current[:] = [{"uri": "file:///w", "name": "work"}]
        c.roots_changed()
        assert answered(c, "roots", era)["result"]["roots"] == [{"uri": "file:///w", "name": "work"}]


def test_roots_changed_needs_roots_and_bad_options() -> None:
    with libmcpc.Client.stdio(input_argv("legacy"), timeout=20) as c:
        assert caps(c) == {}
        with pytest.raises(libmcpc.NotSupportedError):
            c.roots_changed()
    with pytest.raises(ValueError):
        libmcpc.Client.stdio(input_argv("legacy"), roots=["/tmp"], on_roots=lambda r: [])
    with pytest.raises(ValueError):
        libmcpc.Client.stdio(input_argv("legacy"), on_elicitation=lambda r: None, elicitation_modes=("sms",))
    with pytest.raises(TypeError):
        libmcpc.Client.stdio(input_argv("legacy"), on_sampling="not callable")
    assert_registry_empty()


@pytest.mark.parametrize("era", ERAS)
def test_async_handlers_run_on_the_loop(era: str) -> None:
    async def main() -> None:
        loop_thread = threading.get_ident()
        threads: List[int] = []

        async def on_elicitation(request: libmcpc.InputRequest) -> libmcpc.Elicitation:
            threads.append(threading.get_ident())
            await asyncio.sleep(0)  # a coroutine that yields to the loop
            return libmcpc.Elicitation.accept({"name": "Cy"})

        async def on_sampling(request: libmcpc.InputRequest) -> Dict[str, Any]:
            threads.append(threading.get_ident())
            raise LookupError("no model")

        async with await libmcpc.Client.stdio_async(input_argv(era), timeout=20, on_elicitation=on_elicitation,
                                                     on_sampling=on_sampling) as c:
            result = await c.call_async("form")
            data = json.loads(result.text)
            assert (data["result"] if era == "legacy" else data["k"])["content"]["name"] == "Cy"
            if era == "legacy":
                assert "no model" in json.loads((await c.call_async("sampling")).text)["error"]["message"]
            else:
                with pytest.raises(libmcpc.McpcError):
                    await c.call_async("sampling")
        assert threads == [loop_thread, loop_thread]

    run(main())
    assert_registry_empty()


def test_async_handler_on_a_blocking_client_fails_the_request() -> None:
    async def on_elicitation(request: libmcpc.InputRequest) -> libmcpc.Elicitation:
        return libmcpc.Elicitation.accept({"name": "never"})

    with libmcpc.Client.stdio(input_argv("legacy"), timeout=20, on_elicitation=on_elicitation) as c:
        assert "async handler" in json.loads(c.call("form").text)["error"]["message"]


def test_host_names_the_server_that_asks() -> None:
    """The host's handler serves every server (those with options of their own too),
    and each request names its server."""
    asked: List[Any] = []

    def on_elicitation(request: libmcpc.InputRequest) -> libmcpc.Elicitation:
        asked.append((request.host_server, request.server))
        return libmcpc.Elicitation.accept({"name": request.host_server})

    with libmcpc.Host(timeout=20, on_elicitation=on_elicitation) as host:
        host.add_stdio("one", demo_argv("--era=modern"))
        host.add_stdio("two", demo_argv("--era=modern"), timeout=15)  # its own options, the host's handler
        host.start()
        assert host.call("one__wants_input").text == "hello one"
        assert host.call("two__wants_input").text == "hello two"
    assert [a[0] for a in asked] == ["one", "two"]
    assert all(isinstance(a[1], str) and a[1] for a in asked)
    assert_registry_empty()


def test_a_hosts_servers_layer_their_own_roots(tmp_path: Path) -> None:
    with libmcpc.Host(timeout=20, roots=[tmp_path]) as host:
        host.add_stdio("plain", input_argv("legacy"))
        host.add_stdio("own", input_argv("legacy"), on_roots=lambda r: ["file:///own"])  # replaces the host's
        host.start()
        assert json.loads(host.call("plain__roots").text)["result"]["roots"][0]["uri"] == tmp_path.as_uri()
        assert json.loads(host.call("own__roots").text)["result"]["roots"] == [{"uri": "file:///own", "name": "own"}]


def test_async_host_with_an_async_handler() -> None:
    async def main() -> List[str]:
        names: List[str] = []

        async def on_elicitation(request: libmcpc.InputRequest) -> libmcpc.Elicitation:
            assert request.host_server is not None
            names.append(request.host_server)
            return libmcpc.Elicitation.accept({"name": request.host_server.upper()})

        async with libmcpc.AsyncHost(timeout=20, on_elicitation=on_elicitation) as host:
            host.add_stdio("alpha", demo_argv("--era=modern"))
            host.add_stdio("beta", demo_argv("--era=modern"))
            await host.start()
            results = await asyncio.gather(host.call("alpha__wants_input"), host.call("beta__wants_input"))
            assert [r.text for r in results] == ["hello ALPHA", "hello BETA"]
        return names

    assert sorted(run(main())) == ["alpha", "beta"]
    assert_registry_empty()
