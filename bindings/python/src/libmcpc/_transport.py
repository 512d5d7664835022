"""The caller-supplied transport: a channel the host owns, in stream form
(Transport) or request/response form (RequestTransport, Exchange)."""

from __future__ import annotations

import ctypes
import threading
from ctypes import byref, c_void_p
from typing import Optional, Union

from . import _decls, _ffi
from ._convert import _b, _check, _raise_last
from ._ffi import lib, registry
from .errors import ClosedError, McpcError, Status


def _send_py(userdata: Optional[int], data: Optional[int], length: int) -> int:
    try:
        t = registry.get(userdata)
        if t is None:
            return 1
        t.send(ctypes.string_at(data, length) if data else b"")
        return 0
    except BaseException:  # noqa: BLE001 - fails this message, not the connection
        return 1


_send_trampoline = _decls.SEND_CB(_send_py)


def _close_py(userdata: Optional[int]) -> None:
    t = registry.get(userdata)
    if t is not None:
        t.close()


_close_trampoline = _decls.CLOSE_CB(_close_py)


def _request_py(userdata: Optional[int], exchange: Optional[int], data: Optional[int], length: int) -> int:
    ex = Exchange(exchange or 0)
    try:
        t = registry.get(userdata)
        if t is None:
            ex.fail("the transport is gone")
            return 0
        t.request(ex, ctypes.string_at(data, length) if data else b"")
    except BaseException as e:  # noqa: BLE001
        ex.fail("%s: %s" % (type(e).__name__, e))  # no-op if the host consumed it
    return 0  # the exchange is consumed either way


_request_trampoline = _decls.REQUEST_CB(_request_py)


class Transport:
    """A transport whose channel the host owns (the stream form of the seam).

    Subclass it and implement :meth:`send` (and :meth:`close` if the channel needs
    closing); call :meth:`deliver` with each message the server sends, from any
    thread (typically a reader thread of your own), and :meth:`end` when the channel
    ends. Then connect with ``Client.transport(t)``.

    ``send`` and ``close`` run on an mcpc thread, one at a time, in order. ``send``
    may raise: that fails the request the message belongs to, not the connection. It
    may call :meth:`deliver` itself (also for the response to the message it sends).
    Callbacks reached through :meth:`deliver` (notifications, progress) run on the
    delivering thread.
    """

    def __init__(self) -> None:
        key = registry.add(self)  # dropped by userdata_free, once mcpc is done with us
        out = c_void_p()
        status = self._new(key, out)
        if status != Status.OK:
            raise _raise_last(status)
        self._handle: Optional[int] = out.value
        self._lock = threading.Condition(threading.Lock())
        self._delivering = 0

    def _new(self, key: int, out: c_void_p) -> int:
        return int(lib.mcpc_transport_new(_send_trampoline, _close_trampoline, key, _ffi.free_userdata, byref(out)))

    # -- implemented by the host --

    def send(self, data: bytes) -> None:
        """Sends one outgoing message: one compact JSON object, without a line end
        (frame it as the channel needs). Raise to fail it."""
        raise NotImplementedError("Transport subclasses implement send(data)")

    def close(self) -> None:
        """Closes the channel; runs once, when the client closes. Default: nothing."""

    # -- called by the host --

    def deliver(self, data: Union[bytes, str]) -> None:
        """Delivers one message from the server (exactly one JSON-RPC message, no
        framing). It is routed before this returns. Raises
        :class:`~libmcpc.ClosedError` once the client closed the transport,
        :class:`~libmcpc.ProtocolError` for a message that is not JSON-RPC (dropped; the
        connection goes on)."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        handle = self._begin()
        try:
            _check(lib.mcpc_transport_deliver(handle, data, len(data)))
        finally:
            self._end()

    def end(self, reason: Optional[str] = None) -> None:
        """The channel ended (the server went away): calls in flight and later calls
        fail with :class:`~libmcpc.TransportError` naming ``reason``. Does nothing once
        the client has closed."""
        try:
            handle = self._begin()
        except ClosedError:
            return
        try:
            status = lib.mcpc_transport_end(handle, None if reason is None else _b(reason))
            if status not in (Status.OK, Status.CLOSED):
                raise _raise_last(status)
        finally:
            self._end()

    # -- internal --

    def _begin(self) -> int:
        with self._lock:
            if self._handle is None:
                raise ClosedError("the transport was closed", Status.CLOSED)
            self._delivering += 1
            return self._handle

    def _end(self) -> None:
        with self._lock:
            self._delivering -= 1
            if not self._delivering:
                self._lock.notify_all()

    def _require(self) -> int:
        if self._handle is None:
            raise ClosedError("the transport was closed", Status.CLOSED)
        return self._handle

    def release(self) -> None:
        """Frees the host's handle once no thread is inside :meth:`deliver`; later
        deliveries raise :class:`~libmcpc.ClosedError`. Closing the client does this;
        call it for a transport that never got connected. Idempotent."""
        with self._lock:
            handle, self._handle = self._handle, None
            if handle is None:
                return
            while self._delivering:
                self._lock.wait()
        lib.mcpc_transport_free(handle)

    def __del__(self) -> None:
        # Only reached once mcpc dropped its reference (userdata_free), or if the
        # transport was never attached to a client.
        handle = getattr(self, "_handle", None)
        if handle:
            self._handle = None
            lib.mcpc_transport_free(handle)


class RequestTransport(Transport):
    """The request/response form of the seam, for hosts whose channel answers each
    request (their own HTTP client, an RPC system).

    Implement :meth:`request`: it gets each outgoing message with its
    :class:`Exchange`, which the host completes (with the response body) or fails
    exactly once, now or later, from any thread. :meth:`deliver` still works for
    messages that arrive outside any exchange.
    """

    def _new(self, key: int, out: c_void_p) -> int:
        return int(lib.mcpc_transport_new_request(_request_trampoline, _close_trampoline, key,
                                                  _ffi.free_userdata, byref(out)))

    def request(self, exchange: "Exchange", data: bytes) -> None:
        """Carries one outgoing message. An exception fails the exchange (when the
        host had not completed it)."""
        raise NotImplementedError("RequestTransport subclasses implement request(exchange, data)")

    def send(self, data: bytes) -> None:  # pragma: no cover - not used by this form
        raise NotImplementedError


class Exchange:
    """One outgoing message of a :class:`RequestTransport`. Complete it with
    :meth:`complete` or fail it with :meth:`fail`, exactly once, from any thread.
    An exchange dropped untouched is failed when it is garbage-collected."""

    def __init__(self, handle: int) -> None:
        self._handle: Optional[int] = handle or None
        self._lock = threading.Lock()
        self.expects_response: bool = bool(lib.mcpc_exchange_expects_response(handle)) if handle else False
        """True for a request, whose response the body must hold; False for
        notifications and answers to server requests (complete those with no body)."""

    def _take(self) -> Optional[int]:
        with self._lock:
            handle, self._handle = self._handle, None
            return handle

    @property
    def done(self) -> bool:
        """True once completed or failed."""
        return self._handle is None

    def complete(self, body: Union[bytes, str] = b"") -> None:
        """Completes the exchange with the response body: JSON-RPC messages, one per
        line (notifications may come before the response). Consumes the exchange even
        when it raises."""
        handle = self._take()
        if handle is None:
            raise McpcError("the exchange was already completed or failed", Status.INVALID_ARG)
        if isinstance(body, str):
            body = body.encode("utf-8")
        _check(lib.mcpc_exchange_complete(handle, body or None, len(body)))

    def fail(self, reason: Optional[str] = None) -> None:
        """Fails the exchange: its request raises :class:`~libmcpc.TransportError` naming
        ``reason``. Does nothing if already consumed."""
        handle = self._take()
        if handle is not None:
            lib.mcpc_exchange_fail(handle, None if reason is None else _b(reason))

    def __del__(self) -> None:
        if getattr(self, "_handle", None) is not None:
            self.fail("the host dropped the exchange")
