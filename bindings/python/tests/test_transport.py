"""The caller-supplied transport implemented in Python: the stream form
(libmcpc.Transport) and the request/response form (libmcpc.RequestTransport), relaying to a
demo server that the test starts itself."""

from __future__ import annotations

import asyncio
import gc
import threading
from typing import List, Optional

import pytest

import libmcpc

from conftest import assert_registry_empty, interrupted, PipeChild, demo_argv


class PipeTransport(libmcpc.Transport):
    """Lines over a child's pipes, with a reader thread that delivers."""

    def __init__(self, child: PipeChild) -> None:
        super().__init__()
        self.child = child
        self.sent: List[bytes] = []
        self.closed = threading.Event()
        self.fail_next = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def send(self, data: bytes) -> None:
        if self.fail_next and b'"tools/call"' in data:  # not a notification still on its way
            self.fail_next = False
            raise OSError("refused by the test")
        self.sent.append(data)
        self.child.write_line(data)

    def close(self) -> None:
        self.closed.set()
        self.child.close_stdin()

    def _read(self) -> None:
        while True:
            line = self.child.read_line()
            if not line:
                break
            try:
                self.deliver(line.rstrip(b"\n"))
            except libmcpc.ClosedError:
                break
        self.end("the server closed its stdout")


def test_stream_transport() -> None:
    child = PipeChild(demo_argv())
    t = PipeTransport(child)
    with libmcpc.Client.transport(t, timeout=20) as c:
        assert c.call("echo", {"text": "over the seam"}).text == "over the seam"
        assert len(c.tools()) == 25
        seen: List[float] = []
        c.call("slow", {"ms": 100}, on_progress=lambda p, total, m: seen.append(p))
        assert seen == [1, 2, 3, 4]
        with pytest.raises(libmcpc.ToolError):
            c.call("fail")
        with pytest.raises(libmcpc.TimeoutError):
            c.call("slow", {"ms": 5000}, timeout=0.1)
        t.fail_next = True
        with pytest.raises(libmcpc.TransportError) as e:  # that message only
            c.call("echo", {"text": "a"})
        assert "send" in str(e.value) or "transport" in str(e.value).lower()
        assert c.call("echo", {"text": "b"}).text == "b"
    assert t.closed.is_set()
    t.reader.join(10)
    assert child.wait() == 0
    assert t.sent[0].startswith(b"{") and b"\n" not in t.sent[0]
    with pytest.raises(libmcpc.ClosedError):
        t.deliver(b'{"jsonrpc":"2.0","method":"x"}')
    del t, c
    gc.collect()
    assert_registry_empty()


def test_deliver_protocol_error_and_end() -> None:
    child = PipeChild(demo_argv())
    t = PipeTransport(child)
    c = libmcpc.Client.transport(t, timeout=20)
    with pytest.raises(libmcpc.ProtocolError):
        t.deliver(b"this is not json")
    assert c.call("echo", {"text": "x"}).text == "x"

    error = interrupted(lambda: c.call("slow", {"ms": 30000}), lambda: t.end("the test ended the channel"))
    assert isinstance(error, libmcpc.TransportError) and "the test ended the channel" in str(error)
    c.close()
    child.wait()
    t.reader.join(10)


def test_async_over_the_seam() -> None:
    async def main() -> None:
        child = PipeChild(demo_argv())
        t = PipeTransport(child)
        async with await libmcpc.Client.transport_async(t, timeout=20) as c:
            results = await asyncio.gather(*(c.call_async("echo", {"text": str(i)}) for i in range(50)))
            assert [r.text for r in results] == [str(i) for i in range(50)]
        child.wait()

    asyncio.run(main())


class ExchangeTransport(libmcpc.RequestTransport):
    """Each request is one exchange: write it, read lines up to its response (the
    demo server answers requests in order here, one at a time)."""

    def __init__(self, child: PipeChild, later: bool = False) -> None:
        super().__init__()
        self.child = child
        self.later = later
        self.lock = threading.Lock()
        self.drop_next = False
        self.count = 0

    def request(self, exchange: libmcpc.Exchange, data: bytes) -> None:
        self.count += 1
        if self.drop_next and b'"tools/call"' in data:
            self.drop_next = False
            raise RuntimeError("dropped by the test")
        if self.later:  # complete from another thread
            threading.Thread(target=self._exchange, args=(exchange, data)).start()
        else:
            self._exchange(exchange, data)

    def _exchange(self, exchange: libmcpc.Exchange, data: bytes) -> None:
        with self.lock:
            self.child.write_line(data)
            if not exchange.expects_response:
                exchange.complete()
                return
            body = b""
            while True:
                line = self.child.read_line()
                if not line:
                    exchange.fail("the server went away")
                    return
                body += line
                if b'"method"' not in line:  # the response (after any notifications)
                    break
            exchange.complete(body)

    def close(self) -> None:
        self.child.close_stdin()


@pytest.mark.parametrize("later", [False, True], ids=["inline", "from-another-thread"])
def test_request_transport(later: bool) -> None:
    child = PipeChild(demo_argv())
    t = ExchangeTransport(child, later)
    with libmcpc.Client.transport(t, timeout=20) as c:
        assert c.call("add", {"a": 1, "b": 2}).structured == {"sum": 3}
        seen: List[float] = []
        c.call("slow", {"ms": 100}, on_progress=lambda p, total, m: seen.append(p))
        assert seen == [1, 2, 3, 4]
        assert len(c.tools()) == 25
        t.drop_next = True
        with pytest.raises(libmcpc.TransportError) as e:
            c.call("echo", {"text": "x"})
        assert "dropped by the test" in str(e.value)
        assert c.call("echo", {"text": "y"}).text == "y"
    assert t.count >= 10
    child.wait()


def test_exchange_completed_twice() -> None:
    done: List[Optional[BaseException]] = []

    class Twice(ExchangeTransport):
        def request(self, exchange: libmcpc.Exchange, data: bytes) -> None:
            self._exchange(exchange, data)
            try:
                exchange.complete(b"")
                done.append(None)
            except libmcpc.McpcError as e:
                done.append(e)

    child = PipeChild(demo_argv())
    with libmcpc.Client.transport(Twice(child), timeout=20) as c:
        assert c.call("echo", {"text": "x"}).text == "x"
    child.wait()
    assert done and all(isinstance(e, libmcpc.McpcError) for e in done)


def test_transport_subclass_must_implement_send() -> None:
    class Lazy(libmcpc.Transport):
        pass

    t = Lazy()
    with pytest.raises(libmcpc.TransportError):  # send() raises NotImplementedError: the handshake fails
        libmcpc.Client.transport(t, timeout=2)
    t.release()
    t.release()  # idempotent
    with pytest.raises(libmcpc.ClosedError):
        t.deliver(b"{}")
    del t
    gc.collect()
    assert_registry_empty()
