"""Tasks from Python: a call followed to its end, the preference, the task callback,
detaching and resuming (from a new client over HTTP: the task outlives the
connection), against the demo server and the HTTP fixture with --tasks."""

from __future__ import annotations

import asyncio
import json
from typing import Iterator, List, Optional

import pytest

import libmcpc

from conftest import HTTP_FIXTURE, PYTHON, Server, demo_argv

TASKS = "io.modelcontextprotocol/tasks"


@pytest.fixture(params=["legacy", "modern"])
def tasks_client(request: pytest.FixtureRequest) -> Iterator[libmcpc.Client]:
    with libmcpc.Client.stdio(demo_argv("--tasks", "--era", request.param), timeout=20,
                              extensions={TASKS: {}}) as c:
        yield c


def test_followed_with_status_changes(tasks_client: libmcpc.Client) -> None:
    seen: List[str] = []

    def on_task(status: str, message: Optional[str], reference: str) -> None:
        seen.append(status)
        assert json.loads(reference)["originalOperation"] == "tools/call"

    r = tasks_client.call("task_report", {"topic": "py", "ms": 200}, task="prefer", on_task=on_task)
    assert r.text == "report on py"
    assert seen == ["working", "completed"]
    # allow: an optional tool runs at once (no callback); forbid refuses a required one.
    seen.clear()
    assert tasks_client.call("task_report", {"topic": "now", "ms": 0}, task="forbid", on_task=on_task).text == "report on now"
    assert seen == []
    with pytest.raises((libmcpc.RpcError, libmcpc.McpcError)):
        tasks_client.call("task_required", {"topic": "x"}, task="forbid")
    with pytest.raises(ValueError):
        tasks_client.call("echo", {"text": "x"}, task="sometimes")


def test_generic_request_and_timeout(tasks_client: libmcpc.Client) -> None:
    r = tasks_client.request("tools/call", {"name": "task_required", "arguments": {"topic": "g", "ms": 10}})
    assert r["content"][0]["text"] == "report on g"
    with pytest.raises(libmcpc.TimeoutError):
        tasks_client.call("task_report", {"topic": "n", "fault": "never"}, task="prefer", task_timeout=0.5)


def test_detach_then_resume(tasks_client: libmcpc.Client) -> None:
    with pytest.raises(libmcpc.TaskDetachedError) as e:
        tasks_client.call("task_report", {"topic": "later", "ms": 300}, task="prefer", on_task=lambda *a: True)
    ref = e.value.reference
    assert ref and json.loads(ref)["taskId"]
    assert tasks_client.resume_task(ref)["content"][0]["text"] == "report on later"
    with pytest.raises(libmcpc.InvalidArgumentError):
        tasks_client.resume_task(json.dumps(dict(json.loads(ref), endpointId="elsewhere")))


def test_async_call_follows_a_task(tasks_client: libmcpc.Client) -> None:
    async def main() -> str:
        r = await tasks_client.call_async("task_required", {"topic": "aio", "ms": 100})
        return r.text

    assert asyncio.run(main()) == "report on aio"


def test_resumed_from_another_client_over_http() -> None:
    """The modern HTTP fixture keeps its tasks across connections: a task detached by
    one client is resumed by a new one."""
    server = Server([PYTHON, HTTP_FIXTURE, "--port", "0", "--era", "modern", "--tasks"])
    try:
        with libmcpc.Client.http(server.url, timeout=20, extensions={TASKS: {}}) as first:
            with pytest.raises(libmcpc.TaskDetachedError) as e:
                first.call("task_report", {"topic": "handoff", "ms": 300}, on_task=lambda *a: True)
        with libmcpc.Client.http(server.url, timeout=20, extensions={TASKS: {}}) as second:
            result = second.resume_task(e.value.reference or "")
        assert result["content"][0]["text"] == "report on handoff"
    finally:
        server.stop()
