"""The client, results, cancellation and the caller-supplied transport."""

from __future__ import annotations

import asyncio
import atexit
import ctypes
import json
import math
import os
import threading
import weakref
from ctypes import byref, c_char_p, c_size_t, c_void_p
from dataclasses import dataclass, field
from typing import (
    Any,
    Callable,
    Dict,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from . import _ffi
from ._content import ContentMixin
from ._ffi import lib, registry
from ._oauth import OAuth
from .errors import ClosedError, McpcError, Status, error_for

__all__ = [
    "CallResult",
    "Cancel",
    "Client",
    "Exchange",
    "RequestTransport",
    "Transport",
    "version",
]

PathLike = Union[str, "os.PathLike[str]"]
ProgressCallback = Callable[[float, Optional[float], Optional[str]], None]
"""on_progress(progress, total or None, message or None)."""
NotificationCallback = Callable[[str, Optional[Dict[str, Any]]], None]
"""on_notification(method, params or None)."""
LogCallback = Callable[[str, Optional[str], Any], None]
"""on_log(level, logger or None, data): one log message of the server."""
StderrCallback = Callable[[bytes], None]
"""stderr(line): one line the server wrote to stderr, without its line end."""
TokenCallback = Callable[[Optional[str]], Optional[str]]
"""token(www_authenticate): the bearer token; www_authenticate is None for the first
token and the server's WWW-Authenticate value after a 401. None means "no token"."""


def version() -> str:
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return _ffi.text(lib.mcpc_version())


def _b(s: Union[str, bytes, "os.PathLike[str]"]) -> bytes:
    if isinstance(s, bytes):
        return s
    return os.fspath(s).encode("utf-8", errors="surrogateescape")


def _ms(seconds: Optional[float], what: str) -> int:
    """Seconds (None: 0, the default) to whole milliseconds, rounded up."""
    if seconds is None:
        return 0
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise TypeError("%s must be a number of seconds, not %r" % (what, type(seconds).__name__))
    if seconds != seconds or seconds <= 0:
        raise ValueError("%s must be a positive number of seconds, got %r" % (what, seconds))
    if math.isinf(seconds):
        return 2**62
    return max(1, math.ceil(round(seconds * 1000, 6)))  # 0.2 s is 200 ms, not 201


def _raise_last(status: int) -> "McpcError":
    """The exception for a status just returned on this thread (reads the last error)."""
    message = _ffi.text(lib.mcpc_last_error_message())
    rpc = lib.mcpc_last_error_rpc_code()
    return error_for(status, message, rpc or None, _ffi.text(lib.mcpc_status_name(status)))


def _check(status: int) -> None:
    if status != Status.OK:
        raise _raise_last(status)


# ---- results ---------------------------------------------------------------------


@dataclass(frozen=True)
class CallResult:
    """The result of a tool call, copied out of the library.

    ``structured`` is the parsed ``structuredContent`` (None when absent), ``text``
    the text blocks joined with newlines, ``texts`` each text block, ``raw`` the whole
    ``CallToolResult`` as parsed JSON (content blocks of every type are kept),
    ``is_error`` the tool's ``isError``. Tool output is untrusted data.
    """

    raw: Dict[str, Any]
    structured: Any
    text: str
    texts: List[str]
    is_error: bool
    json: str = field(repr=False)

    @property
    def content(self) -> List[Dict[str, Any]]:
        """The content blocks, as the server sent them."""
        content = self.raw.get("content")
        return content if isinstance(content, list) else []


def _result_from(ptr: int) -> CallResult:
    """Copies a result and frees it."""
    try:
        raw_json = _ffi.text(lib.mcpc_result_json(ptr))
        structured_json = lib.mcpc_result_structured_json(ptr)
        n = c_size_t(0)
        p = lib.mcpc_result_text(ptr, byref(n))
        joined = ctypes.string_at(p, n.value).decode("utf-8", errors="replace") if p else ""
        texts = []
        for i in range(lib.mcpc_result_text_count(ptr)):
            p = lib.mcpc_result_text_at(ptr, i, byref(n))
            texts.append(ctypes.string_at(p, n.value).decode("utf-8", errors="replace") if p else "")
        return CallResult(
            raw=json.loads(raw_json) if raw_json else {},
            structured=json.loads(structured_json) if structured_json is not None else None,
            text=joined,
            texts=texts,
            is_error=bool(lib.mcpc_result_is_error(ptr)),
            json=raw_json,
        )
    finally:
        lib.mcpc_result_free(ptr)


def _tools_from(ptr: int) -> List[Dict[str, Any]]:
    """Copies a tool list and frees it."""
    try:
        out = c_void_p()
        _check(lib.mcpc_tool_list_to_json(ptr, byref(out)))
        tools = json.loads(_ffi.take_string(out.value))
        return tools if isinstance(tools, list) else []
    finally:
        lib.mcpc_tool_list_free(ptr)


# ---- cancellation ----------------------------------------------------------------


class Cancel:
    """A cancellation handle (mcpc_cancel_t). Pass it as ``cancel=`` to calls and call
    :meth:`trigger` from any thread: every call carrying it sends
    ``notifications/cancelled`` and raises :class:`~libmcpc.CancelledError`. Once
    triggered it stays triggered; make a new one for the next call."""

    def __init__(self) -> None:
        handle = lib.mcpc_cancel_new()
        if not handle:
            raise MemoryError("mcpc_cancel_new failed")
        self._handle: Optional[int] = handle

    def trigger(self) -> None:
        """Cancels every call carrying this handle. Idempotent; any thread."""
        lib.mcpc_cancel_trigger(self._handle)

    cancel = trigger

    @property
    def triggered(self) -> bool:
        """True once :meth:`trigger` was called."""
        return bool(lib.mcpc_cancel_is_triggered(self._handle))

    def __del__(self) -> None:
        # Calls still using the handle keep their own reference.
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            lib.mcpc_cancel_free(handle)


# ---- per-call options --------------------------------------------------------------


def _progress_py(userdata: Optional[int], progress: float, total: float, message: Optional[bytes]) -> None:
    fn = registry.get(userdata)
    if fn is not None:
        fn(progress, total if total >= 0 else None, message.decode("utf-8", "replace") if message is not None else None)


_progress_trampoline = _ffi.PROGRESS_CB(_progress_py)


def _call_opts(timeout: Optional[float], cancel: Optional[Cancel], progress_key: Optional[int],
               reset_timeout_on_progress: bool = False, max_total: Optional[float] = None) -> _ffi.CallOpts:
    opts = _ffi.new_call_opts()
    opts.timeout_ms = _ms(timeout, "timeout")
    if cancel is not None:
        if not isinstance(cancel, Cancel):
            raise TypeError("cancel must be a libmcpc.Cancel")
        opts.cancel = cancel._handle
    if progress_key is not None:
        opts.on_progress = _progress_trampoline
        opts.progress_userdata = progress_key
    opts.reset_timeout_on_progress = bool(reset_timeout_on_progress)
    opts.max_total_ms = _ms(max_total, "max_total")
    return opts


def _arguments_json(arguments: Optional[Mapping[str, Any]]) -> Optional[bytes]:
    if arguments is None:
        return None
    if isinstance(arguments, (str, bytes)):
        raise TypeError("arguments must be a mapping (it is serialised to JSON), not a string")
    return json.dumps(arguments, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


# ---- client options ---------------------------------------------------------------


def _stderr_py(userdata: Optional[int], line: Optional[int], length: int) -> None:
    fn = registry.get(userdata)
    if fn is not None:
        fn(ctypes.string_at(line, length) if line else b"")


_stderr_trampoline = _ffi.STDERR_CB(_stderr_py)


def _notification_py(userdata: Optional[int], method: Optional[bytes], params: Optional[bytes]) -> None:
    fn = registry.get(userdata)
    if fn is not None:
        fn(_ffi.text(method), json.loads(params) if params is not None else None)


_notification_trampoline = _ffi.NOTIFICATION_CB(_notification_py)


def _log_py(userdata: Optional[int], level: Optional[bytes], logger: Optional[bytes], data: Optional[bytes]) -> None:
    fn = registry.get(userdata)
    if fn is not None:
        fn(_ffi.text(level), _ffi.text(logger) if logger is not None else None, json.loads(data) if data else None)


_log_trampoline = _ffi.LOG_CB(_log_py)


def _token_py(userdata: Optional[int], www: Optional[bytes], buf: Optional[int], size: int) -> int:
    try:
        fn = registry.get(userdata)
        if fn is None or not buf:
            return 1
        token = fn(www.decode("utf-8", "replace") if www is not None else None)
        if token is None:
            return 1
        return _ffi.put_string(buf, size, token)
    except BaseException:  # noqa: BLE001 - an exception means "no token"
        return 1


_token_trampoline = _ffi.TOKEN_CB(_token_py)


class _Options:
    """An mcpc_options_t being built; freed after the connect call copied it."""

    def __init__(self) -> None:
        self.handle = lib.mcpc_options_new()
        if not self.handle:
            raise MemoryError("mcpc_options_new failed")

    def free(self) -> None:
        handle, self.handle = self.handle, None
        if handle:
            lib.mcpc_options_free(handle)

    def __enter__(self) -> "_Options":
        return self

    def __exit__(self, *exc: object) -> None:
        self.free()

    def callback(self, setter: Callable[..., int], trampoline: Any, fn: Callable[..., Any]) -> None:
        if not callable(fn):
            raise TypeError("expected a callable, got %r" % (fn,))
        key = registry.add(fn)  # popped by userdata_free, which runs exactly once
        _check(setter(self.handle, trampoline, key, _ffi.free_userdata))


_STDERR_MODES = {"discard": 0, "inherit": 1}
_NEGOTIATION = {"auto": 0, "legacy": 1}


def _build_options(
    *,
    # every transport
    timeout: Optional[float] = None,
    protocol_version: Optional[str] = None,
    negotiation: Optional[str] = None,
    client_info: Optional[Tuple[str, str]] = None,
    on_notification: Optional[NotificationCallback] = None,
    max_pages: Optional[int] = None,
    max_message_size: Optional[int] = None,
    log_level: Optional[str] = None,
    on_log: Optional[LogCallback] = None,
    validate_output: bool = False,
    # stdio
    env: Optional[Mapping[str, Optional[str]]] = None,
    clear_env: bool = False,
    cwd: Optional[PathLike] = None,
    stderr: Union[str, StderrCallback] = "discard",
    close_grace: Optional[Tuple[float, float]] = None,
    restart: Optional[Tuple[int, float]] = None,
    # HTTP
    headers: Optional[Mapping[str, str]] = None,
    bearer: Optional[str] = None,
    token: Optional[TokenCallback] = None,
    cacert: Union[None, PathLike, Sequence[PathLike]] = None,
    ca_pem: Union[None, str, bytes] = None,
    standalone_stream: bool = False,
    oauth: Optional[OAuth] = None,
    proxy: Optional[str] = None,
    no_proxy: Optional[str] = None,
    proxy_credentials: Optional[Tuple[str, str]] = None,
    http_transport: Optional[str] = None,
    http_version: Optional[str] = None,
) -> _Options:
    """An mcpc_options_t with these settings (the caller frees it)."""
    o = _Options()
    try:
        h = o.handle
        if timeout is not None:
            _check(lib.mcpc_options_set_timeout_ms(h, _ms(timeout, "timeout")))
        if negotiation is not None:
            if negotiation not in _NEGOTIATION:
                raise ValueError("negotiation must be 'auto' or 'legacy'")
            if not hasattr(lib, "mcpc_options_set_negotiation"):
                raise NotImplementedError("this libmcpc has no negotiation setting")
            _check(lib.mcpc_options_set_negotiation(h, _NEGOTIATION[negotiation]))
        if protocol_version is not None:
            _check(lib.mcpc_options_set_protocol_version(h, _b(protocol_version)))
        if client_info is not None:
            name, ver = client_info
            _check(lib.mcpc_options_set_client_info(h, _b(name), _b(ver)))
        if on_notification is not None:
            o.callback(lib.mcpc_options_set_notification_callback, _notification_trampoline, on_notification)
        if log_level is not None:
            _check(lib.mcpc_options_set_log_level(h, _b(log_level)))
        if validate_output:
            _check(lib.mcpc_options_set_validate_output(h, True))
        if on_log is not None:
            o.callback(lib.mcpc_options_set_log_callback, _log_trampoline, on_log)
        if max_pages is not None:
            _check(lib.mcpc_options_set_max_pages(h, max_pages))
        if max_message_size is not None:
            _check(lib.mcpc_options_set_max_message_size(h, max_message_size))

        if clear_env:
            _check(lib.mcpc_options_clear_env(h))
        for name, value in (env or {}).items():
            _check(lib.mcpc_options_set_env(h, _b(name), None if value is None else _b(value)))
        if cwd is not None:
            _check(lib.mcpc_options_set_cwd(h, _b(cwd)))
        if callable(stderr):
            o.callback(lib.mcpc_options_set_stderr_callback, _stderr_trampoline, stderr)
        elif stderr in _STDERR_MODES:
            _check(lib.mcpc_options_set_stderr(h, _STDERR_MODES[stderr]))
        else:
            raise ValueError("stderr must be 'discard', 'inherit' or a callable taking bytes")
        if restart is not None:
            times, backoff = restart
            if not isinstance(times, int) or times < 0:
                raise ValueError("restart must be (times, backoff seconds) with times >= 0")
            _check(lib.mcpc_options_set_restart(h, times, _ms(backoff, "restart")))
        if close_grace is not None:
            after_stdin, after_term = close_grace
            _check(lib.mcpc_options_set_close_grace_ms(h, _ms(after_stdin, "close_grace"),
                                                       _ms(after_term, "close_grace")))

        for name, value in (headers or {}).items():
            _check(lib.mcpc_options_add_header(h, _b(name), _b(value)))
        if bearer is not None:
            _check(lib.mcpc_options_set_bearer_token(h, _b(bearer)))
        if token is not None:
            o.callback(lib.mcpc_options_set_token_callback, _token_trampoline, token)
        if cacert is not None:
            files = [cacert] if isinstance(cacert, (str, bytes, os.PathLike)) else list(cacert)
            for f in files:
                _check(lib.mcpc_options_add_ca_file(h, _b(f)))
        if ca_pem is not None:
            pem = _b(ca_pem)
            _check(lib.mcpc_options_add_ca_pem(h, pem, len(pem)))
        if standalone_stream:
            _check(lib.mcpc_options_set_standalone_stream(h, True))
        if http_transport is not None:
            if http_transport not in _HTTP_TRANSPORTS:
                raise ValueError("http_transport must be 'auto', 'streamable' or 'sse'")
            _check(lib.mcpc_options_set_http_transport(h, _HTTP_TRANSPORTS[http_transport]))
        if http_version is not None:
            if http_version not in _HTTP_VERSIONS:
                raise ValueError("http_version must be 'auto', '1.1' or '2-prior-knowledge'")
            _check(lib.mcpc_options_set_http_version(h, _HTTP_VERSIONS[http_version]))
        if proxy is not None:
            _check(lib.mcpc_options_set_proxy(h, _b(proxy)))
        if no_proxy is not None:
            _check(lib.mcpc_options_set_no_proxy(h, _b(no_proxy)))
        if proxy_credentials is not None:
            user, password = proxy_credentials
            _check(lib.mcpc_options_set_proxy_credentials(h, _b(user), _b(password)))
        if oauth is not None:
            if not isinstance(oauth, OAuth):
                raise TypeError("oauth must be a libmcpc.OAuth")
            oauth._attach(h, _check)
    except BaseException:
        o.free()
        raise
    return o


_STDIO_ONLY = ("env", "clear_env", "cwd", "stderr", "close_grace", "restart")
_HTTP_ONLY = ("headers", "bearer", "token", "cacert", "ca_pem", "standalone_stream", "oauth", "proxy", "no_proxy",
              "proxy_credentials", "http_transport", "http_version")
_HTTP_TRANSPORTS = {"auto": 0, "streamable": 1, "sse": 2}
_HTTP_VERSIONS = {"auto": 0, "1.1": 1, "2-prior-knowledge": 2}


def _only(kind: str, options: Mapping[str, Any], refused: Sequence[str]) -> None:
    bad = [k for k in refused if k in options]
    if bad:
        raise TypeError("%s: options for another transport: %s" % (kind, ", ".join(bad)))


def _argv(argv: Sequence[PathLike]) -> Tuple[Any, int]:
    if isinstance(argv, (str, bytes)):
        raise TypeError("argv must be a sequence of strings, such as ['python3', 'server.py']")
    items = [_b(a) for a in argv]
    arr = (c_char_p * max(1, len(items)))(*items)
    return arr, len(items)


# ---- async plumbing ---------------------------------------------------------------


class _Pending:
    """An asyncio future waiting for a completion callback on an mcpc thread."""

    __slots__ = ("loop", "future", "convert", "progress_key", "orphan")

    def __init__(self, loop: asyncio.AbstractEventLoop, convert: Callable[[int], Any],
                 orphan: Optional[Callable[[Any], None]] = None) -> None:
        self.loop = loop
        self.future: "asyncio.Future[Any]" = loop.create_future()
        self.convert = convert
        self.progress_key: Optional[int] = None
        self.orphan = orphan  # disposes of a value nobody awaits any more

    def complete(self, status: int, value: Optional[int], error: Optional[bytes]) -> None:
        """Runs on the mcpc thread: converts (and frees) the value at once, then
        settles the future on its loop."""
        if self.progress_key is not None:
            registry.pop(self.progress_key)
        outcome: Any
        try:
            if status == Status.OK:
                outcome = self.convert(value) if value else None
            else:
                rpc = lib.mcpc_last_error_rpc_code()  # valid during the callback
                result = self.convert(value) if (value and status == Status.TOOL) else None
                outcome = error_for(status, _ffi.text(error), rpc or None,
                                    _ffi.text(lib.mcpc_status_name(status)), result)
        except BaseException as e:  # noqa: BLE001 - handed to the awaiting task
            outcome = e
        try:
            self.loop.call_soon_threadsafe(self._settle, outcome)
        except RuntimeError:  # the loop is closed: nobody is waiting
            self._dispose(outcome)

    def _settle(self, outcome: Any) -> None:
        if self.future.done():  # the awaiting task was cancelled meanwhile
            self._dispose(outcome)
        elif isinstance(outcome, BaseException):
            self.future.set_exception(outcome)
        else:
            self.future.set_result(outcome)

    def _dispose(self, outcome: Any) -> None:
        if self.orphan is not None and outcome is not None and not isinstance(outcome, BaseException):
            self.orphan(outcome)


def _make_done(cb_type: Any) -> Any:
    def done(userdata: Optional[int], status: int, value: Optional[int], error: Optional[bytes]) -> None:
        pending = registry.pop(userdata)
        if pending is not None:
            pending.complete(status, value, error)

    return cb_type(done)


# Module-level, so they live as long as the module (see _ffi).
_connect_done = _make_done(_ffi.CONNECT_DONE_CB)
_list_done = _make_done(_ffi.LIST_DONE_CB)
_call_done = _make_done(_ffi.CALL_DONE_CB)


def _start_op(start: Callable[[int, Any], int], pending: _Pending) -> int:
    """Starts an async C operation: start(userdata, out_op) -> status. Returns the op
    handle; raises (and no callback will run) when it could not start."""
    key = registry.add(pending)
    op = c_void_p()
    status = start(key, byref(op))
    if status != Status.OK:
        error = _raise_last(status)
        registry.pop(key)
        if pending.progress_key is not None:
            registry.pop(pending.progress_key)
        raise error
    return op.value or 0


async def _finish_op(op: int, pending: _Pending) -> Any:
    """Awaits a started operation; cancelling the awaiting task cancels it."""
    try:
        return await pending.future
    except asyncio.CancelledError:
        lib.mcpc_op_cancel(op)  # the completion reports CANCELLED unless it had won
        raise
    finally:
        lib.mcpc_op_free(op)


def _async_progress(loop: asyncio.AbstractEventLoop, fn: ProgressCallback) -> ProgressCallback:
    """Runs an async call's progress callback on its event loop."""

    def relay(progress: float, total: Optional[float], message: Optional[str]) -> None:
        try:
            loop.call_soon_threadsafe(fn, progress, total, message)
        except RuntimeError:  # loop closed
            pass

    return relay


def _close_orphan(client: "Client") -> None:
    """A client that connected after its awaiting task was cancelled."""
    threading.Thread(target=client.close, daemon=True).start()


# ---- the client -------------------------------------------------------------------

_live_clients: "weakref.WeakSet[Client]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    # Close what is still open while the interpreter can still run callbacks.
    for client in list(_live_clients):
        try:
            client.close()
        except Exception:  # noqa: BLE001
            pass


class Client(ContentMixin):
    """A connected MCP client (mcpc_client_t).

    Make one with :meth:`stdio`, :meth:`http` or :meth:`transport` (or
    ``await`` their ``*_async`` forms), use it as a context manager (also
    ``async with``), or call :meth:`close`. Thread-safe: any number of threads may
    call it at once; their requests share its one connection. Blocking calls release
    the GIL.

    Times are in seconds (floats). ``timeout`` on a connect function is the default
    for connecting, each listing and each call (60 s when not given); ``timeout`` on a
    call overrides it.
    """

    def __init__(self, handle: int, transport: "Optional[Transport]" = None) -> None:
        """Wraps a client handle from the C API, owned from here on. Use the
        constructors below instead."""
        self._handle: Optional[int] = handle
        self._transport = transport
        self._lock = threading.Condition(threading.Lock())
        self._busy = 0
        self._closing = False
        _live_clients.add(self)

    # -- connecting --

    @classmethod
    def stdio(
        cls,
        argv: Sequence[PathLike],
        *,
        timeout: Optional[float] = None,
        env: Optional[Mapping[str, Optional[str]]] = None,
        clear_env: bool = False,
        cwd: Optional[PathLike] = None,
        stderr: Union[str, StderrCallback] = "discard",
        close_grace: Optional[Tuple[float, float]] = None,
        restart: Optional[Tuple[int, float]] = None,
        protocol_version: Optional[str] = None,
        negotiation: Optional[str] = None,
        client_info: Optional[Tuple[str, str]] = None,
        on_notification: Optional[NotificationCallback] = None,
        log_level: Optional[str] = None,
        on_log: Optional[LogCallback] = None,
        validate_output: bool = False,
        max_pages: Optional[int] = None,
        max_message_size: Optional[int] = None,
    ) -> "Client":
        """Starts ``argv[0]`` (looked up in PATH) with the other arguments as a child
        process and connects to it over stdio. The server belongs to the client:
        closing the client stops and reaps it.

        ``env`` sets variables in the server's environment (a value of None removes
        one); ``clear_env`` starts it from an empty environment; ``cwd`` is its working
        directory. ``stderr`` is ``"discard"`` (the default), ``"inherit"``, or a
        callable that gets each line as bytes. ``close_grace`` is (seconds after stdin
        closes, seconds after SIGTERM) before SIGKILL. ``restart`` is (times, backoff
        seconds): a server that dies is started again, at most that many times, the
        first after the backoff and each next after twice the wait before it; calls in
        flight when it died raise :class:`~libmcpc.ServerExitedError` (they may be
        made again), later calls wait for the new process. ``protocol_version`` pins a
        version; ``client_info`` is (name, version); ``on_notification(method,
        params)`` gets server notifications the client does not handle itself.

        Callbacks run on mcpc threads: they must not block for long, and blocking
        calls on a client from inside one raise :class:`~libmcpc.WouldDeadlockError`.
        """
        arr, n = _argv(argv)
        o = _build_options(timeout=timeout, env=env, clear_env=clear_env, cwd=cwd, stderr=stderr,
                           close_grace=close_grace, restart=restart, protocol_version=protocol_version,
                           negotiation=negotiation,
                           client_info=client_info, on_notification=on_notification, log_level=log_level, on_log=on_log, validate_output=validate_output, max_pages=max_pages,
                           max_message_size=max_message_size)
        with o:
            out = c_void_p()
            _check(lib.mcpc_client_connect_stdio(arr, n, o.handle, byref(out)))
        return cls(out.value or 0)

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Optional[Mapping[str, str]] = None,
        bearer: Optional[str] = None,
        token: Optional[TokenCallback] = None,
        cacert: Union[None, PathLike, Sequence[PathLike]] = None,
        ca_pem: Union[None, str, bytes] = None,
        standalone_stream: bool = False,
        oauth: Optional[OAuth] = None,
        proxy: Optional[str] = None,
        no_proxy: Optional[str] = None,
        proxy_credentials: Optional[Tuple[str, str]] = None,
        http_transport: Optional[str] = None,
        http_version: Optional[str] = None,
        timeout: Optional[float] = None,
        protocol_version: Optional[str] = None,
        negotiation: Optional[str] = None,
        client_info: Optional[Tuple[str, str]] = None,
        on_notification: Optional[NotificationCallback] = None,
        log_level: Optional[str] = None,
        on_log: Optional[LogCallback] = None,
        validate_output: bool = False,
        max_pages: Optional[int] = None,
        max_message_size: Optional[int] = None,
    ) -> "Client":
        """Connects to a Streamable HTTP endpoint: ``https://``, or ``http://`` on
        loopback only (anything else raises :class:`~libmcpc.InsecureUrlError` before
        connecting). TLS is always verified, against the system's roots plus
        ``cacert`` (PEM file paths) and ``ca_pem`` (PEM text).

        ``headers`` go on every request; ``bearer`` sends ``Authorization: Bearer``;
        ``token(www_authenticate)`` is asked for the token first (with None) and again
        after a 401 (with the server's ``WWW-Authenticate``), on an mcpc thread, and may
        block to refresh it. ``standalone_stream`` opens the optional GET stream for
        server notifications. ``oauth`` (a :class:`~libmcpc.OAuth`) authorizes with
        OAuth 2.1 when the server asks for it, replacing ``bearer`` and ``token``; a
        login it needs runs during this call. ``proxy`` (a URL, or ``"none"``), ``no_proxy``
        (curl's list) and ``proxy_credentials`` (``(user, password)``) override the
        environment's ``https_proxy``/``http_proxy``/``all_proxy``/``no_proxy``, which
        are followed otherwise (never for loopback). ``http_transport`` is ``"auto"``
        (Streamable HTTP, then the HTTP+SSE transport of 2024-11-05 when the server
        refuses the POST with 400, 404 or 405), ``"streamable"`` or ``"sse"`` (the URL
        is then the event stream's, such as ``.../sse``). ``http_version`` is ``"auto"``
        (HTTP/2 for ``https://`` when the server offers it by ALPN, else HTTP/1.1),
        ``"1.1"`` (HTTP/2 off) or ``"2-prior-knowledge"`` (HTTP/2 from the first byte:
        h2c for ``http://``, only ``h2`` offered over TLS). Other arguments as for
        :meth:`stdio`.
        """
        o = _build_options(headers=headers, bearer=bearer, token=token, cacert=cacert, ca_pem=ca_pem,
                           standalone_stream=standalone_stream, oauth=oauth, proxy=proxy, no_proxy=no_proxy,
                           proxy_credentials=proxy_credentials, http_transport=http_transport, http_version=http_version, timeout=timeout, protocol_version=protocol_version,
                           negotiation=negotiation, client_info=client_info, on_notification=on_notification, log_level=log_level, on_log=on_log, validate_output=validate_output,
                           max_pages=max_pages, max_message_size=max_message_size)
        with o:
            out = c_void_p()
            _check(lib.mcpc_client_connect_http(_b(url), o.handle, byref(out)))
        return cls(out.value or 0)

    @classmethod
    def transport(
        cls,
        transport: "Transport",
        *,
        timeout: Optional[float] = None,
        protocol_version: Optional[str] = None,
        negotiation: Optional[str] = None,
        client_info: Optional[Tuple[str, str]] = None,
        on_notification: Optional[NotificationCallback] = None,
        log_level: Optional[str] = None,
        on_log: Optional[LogCallback] = None,
        validate_output: bool = False,
        max_pages: Optional[int] = None,
        max_message_size: Optional[int] = None,
    ) -> "Client":
        """Connects over a caller-supplied :class:`Transport`, running the handshake
        through it; the host delivers the server's messages from its own thread
        meanwhile. Closing the client closes the transport (its ``close()`` runs) and
        releases it: a transport serves one client."""
        if not isinstance(transport, Transport):
            raise TypeError("transport must be a libmcpc.Transport")
        o = _build_options(timeout=timeout, protocol_version=protocol_version, negotiation=negotiation,
                           client_info=client_info, on_notification=on_notification, log_level=log_level, on_log=on_log, validate_output=validate_output, max_pages=max_pages,
                           max_message_size=max_message_size)
        with o:
            out = c_void_p()
            _check(lib.mcpc_client_connect_transport(transport._require(), o.handle, byref(out)))
        return cls(out.value or 0, transport)

    # -- connecting without blocking --

    @classmethod
    async def stdio_async(cls, argv: Sequence[PathLike], **options: Any) -> "Client":
        """As :meth:`stdio` (same keyword arguments), awaiting the handshake without
        blocking the event loop. Cancelling the awaiting task stops the handshake and
        the server."""
        _only("stdio", options, _HTTP_ONLY)
        arr, n = _argv(argv)
        with _build_options(**options) as o:
            return await cls._connect_async(
                lambda key, op: lib.mcpc_client_connect_stdio_async(arr, n, o.handle, _connect_done, key, op))

    @classmethod
    async def http_async(cls, url: str, **options: Any) -> "Client":
        """As :meth:`http` (same keyword arguments), without blocking the event loop."""
        _only("http", options, _STDIO_ONLY)
        burl = _b(url)
        with _build_options(**options) as o:
            return await cls._connect_async(
                lambda key, op: lib.mcpc_client_connect_http_async(burl, o.handle, _connect_done, key, op))

    @classmethod
    async def transport_async(cls, transport: "Transport", **options: Any) -> "Client":
        """As :meth:`transport` (same keyword arguments), without blocking the event loop."""
        _only("transport", options, _STDIO_ONLY + _HTTP_ONLY)
        if not isinstance(transport, Transport):
            raise TypeError("transport must be a libmcpc.Transport")
        handle = transport._require()
        with _build_options(**options) as o:
            return await cls._connect_async(
                lambda key, op: lib.mcpc_client_connect_transport_async(handle, o.handle, _connect_done, key, op),
                transport)

    @classmethod
    async def _connect_async(cls, start: Callable[[int, Any], int],
                             transport: "Optional[Transport]" = None) -> "Client":
        pending = _Pending(asyncio.get_running_loop(), lambda h: cls(h, transport), _close_orphan)
        op = _start_op(start, pending)  # the options are copied here
        client: Client = await _finish_op(op, pending)
        return client

    # -- information --

    def _enter(self) -> int:
        with self._lock:
            if self._handle is None or self._closing:
                raise ClosedError("the client is closed", Status.CLOSED)
            self._busy += 1
            return self._handle

    def _leave(self) -> None:
        with self._lock:
            self._busy -= 1
            if self._busy == 0:
                self._lock.notify_all()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._handle is None or self._closing

    @property
    def protocol_version(self) -> str:
        """The protocol version in use, such as "2025-11-25"."""
        h = self._enter()
        try:
            return _ffi.text(lib.mcpc_client_protocol_version(h))
        finally:
            self._leave()

    @property
    def negotiated_by(self) -> Optional[str]:
        """How the protocol version was chosen, when the library reports it (else None)."""
        if not hasattr(lib, "mcpc_client_negotiated_by"):
            return None
        h = self._enter()
        try:
            return _ffi.text(lib.mcpc_client_negotiated_by(h)) or None
        finally:
            self._leave()

    def server_info(self) -> Dict[str, Any]:
        """The server's initialize result (``protocolVersion``, ``capabilities``,
        ``serverInfo``, ``instructions``), as the server sent it."""
        h = self._enter()
        try:
            out = c_void_p()
            _check(lib.mcpc_client_server_info(h, byref(out)))
            info = json.loads(_ffi.take_string(out.value))
            return info if isinstance(info, dict) else {}
        finally:
            self._leave()

    # -- tools --

    def tools(self, *, timeout: Optional[float] = None, cancel: Optional[Cancel] = None,
              fresh: bool = False) -> List[Dict[str, Any]]:
        """Lists every tool, following all pages: each a dict as the server sent it
        (``name``, ``description``, ``inputSchema``, ``outputSchema``, ...). A list
        the client keeps (see the README's caching rules) is reused unless
        ``fresh``."""
        opts = _call_opts(timeout, cancel, None)
        h = self._enter()
        try:
            if fresh:
                _check(lib.mcpc_client_forget_lists(h))
            out = c_void_p()
            _check(lib.mcpc_client_list_tools(h, byref(opts), byref(out)))
        finally:
            self._leave()
        return _tools_from(out.value or 0)

    def call(
        self,
        name: str,
        arguments: Optional[Mapping[str, Any]] = None,
        *,
        timeout: Optional[float] = None,
        cancel: Optional[Cancel] = None,
        on_progress: Optional[ProgressCallback] = None,
        reset_timeout_on_progress: bool = False,
        max_total: Optional[float] = None,
    ) -> CallResult:
        """Calls a tool and returns its :class:`CallResult`.

        Raises :class:`~libmcpc.ToolError` (with ``.result``) when the tool reports
        failure, :class:`~libmcpc.RpcError` for a JSON-RPC error (``.rpc_code``),
        :class:`~libmcpc.TimeoutError`, :class:`~libmcpc.CancelledError` (``cancel`` was
        triggered), or another :class:`~libmcpc.McpcError`. On timeout and cancel the
        server is sent ``notifications/cancelled``.

        ``on_progress(progress, total, message)`` runs on an mcpc thread for each
        progress notification; with ``reset_timeout_on_progress`` each one restarts
        the timeout, but never past ``max_total`` seconds in all.
        """
        args = _arguments_json(arguments)
        key = registry.add(on_progress) if on_progress is not None else None
        try:
            opts = _call_opts(timeout, cancel, key, reset_timeout_on_progress, max_total)
            h = self._enter()
            try:
                out = c_void_p()
                status = lib.mcpc_client_call_tool(h, _b(name), args, byref(opts), byref(out))
                if status != Status.OK:
                    error = _raise_last(status)
                    if out.value:  # MCPC_ERR_TOOL hands out the result
                        error.result = _result_from(out.value)  # type: ignore[attr-defined]
                    raise error
            finally:
                self._leave()
        finally:
            if key is not None:
                registry.pop(key)
        return _result_from(out.value or 0)

    # -- asyncio --

    async def tools_async(self, *, timeout: Optional[float] = None,
                          cancel: Optional[Cancel] = None) -> List[Dict[str, Any]]:
        """As :meth:`tools`, without blocking the event loop (mcpc_client_list_tools_async).
        Cancelling the awaiting task cancels the listing."""
        opts = _call_opts(timeout, cancel, None)
        pending = _Pending(asyncio.get_running_loop(), _tools_from)
        h = self._enter()
        try:
            op = _start_op(lambda key, out: lib.mcpc_client_list_tools_async(h, byref(opts), _list_done, key, out),
                           pending)
        finally:
            self._leave()  # closing completes what is in flight, so only the start needs the guard
        tools: List[Dict[str, Any]] = await _finish_op(op, pending)
        return tools

    async def call_async(
        self,
        name: str,
        arguments: Optional[Mapping[str, Any]] = None,
        *,
        timeout: Optional[float] = None,
        cancel: Optional[Cancel] = None,
        on_progress: Optional[ProgressCallback] = None,
        reset_timeout_on_progress: bool = False,
        max_total: Optional[float] = None,
    ) -> CallResult:
        """As :meth:`call`, without blocking the event loop (mcpc_client_call_tool_async).
        Cancelling the awaiting task (also by ``asyncio.wait_for`` or a task group)
        cancels the call, and the server is sent ``notifications/cancelled``.
        ``on_progress`` runs on the event loop."""
        loop = asyncio.get_running_loop()
        args = _arguments_json(arguments)
        bname = _b(name)
        pending = _Pending(loop, _result_from)
        if on_progress is not None:
            pending.progress_key = registry.add(_async_progress(loop, on_progress))
        try:
            opts = _call_opts(timeout, cancel, pending.progress_key, reset_timeout_on_progress, max_total)
            h = self._enter()
        except BaseException:
            registry.pop(pending.progress_key)
            raise
        try:
            op = _start_op(lambda key, out: lib.mcpc_client_call_tool_async(
                h, bname, args, byref(opts), _call_done, key, out), pending)
        finally:
            self._leave()
        result: CallResult = await _finish_op(op, pending)
        return result

    # -- closing --

    def close(self) -> None:
        """Closes the client: calls in flight raise :class:`~libmcpc.ClosedError`, async
        calls complete, and the transport shuts down (a stdio server is stopped and
        reaped, an HTTP session deleted). Idempotent."""
        with self._lock:
            handle = self._handle
            if handle is None or self._closing:
                return
            self._closing = True
        status = lib.mcpc_client_close(handle)
        if status == Status.WOULD_DEADLOCK:
            # On an mcpc thread (in a callback, or a finaliser run there) the close
            # must not block; finish it on a thread of our own.
            threading.Thread(target=self._finish_close, args=(handle,), daemon=True).start()
            return
        self._finish_close(handle)

    def _finish_close(self, handle: int) -> None:
        with self._lock:
            while self._busy:  # calls in flight return CLOSED promptly after the close
                self._lock.wait()
            if self._handle is None:
                return
            self._handle = None
        lib.mcpc_client_free(handle)
        _live_clients.discard(self)
        if self._transport is not None:
            self._transport.release()

    async def aclose(self) -> None:
        """:meth:`close` without blocking the event loop (it runs in a worker thread)."""
        await asyncio.get_running_loop().run_in_executor(None, self.close)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __del__(self) -> None:
        if getattr(self, "_handle", None) is not None:
            try:
                self.close()
            except Exception:  # noqa: BLE001
                pass

    def __repr__(self) -> str:
        return "<libmcpc.Client %s>" % ("closed" if self.closed else self.protocol_version)


# ---- the caller-supplied transport -----------------------------------------------------


def _send_py(userdata: Optional[int], data: Optional[int], length: int) -> int:
    try:
        t = registry.get(userdata)
        if t is None:
            return 1
        t.send(ctypes.string_at(data, length) if data else b"")
        return 0
    except BaseException:  # noqa: BLE001 - fails this message, not the connection
        return 1


_send_trampoline = _ffi.SEND_CB(_send_py)


def _close_py(userdata: Optional[int]) -> None:
    t = registry.get(userdata)
    if t is not None:
        t.close()


_close_trampoline = _ffi.CLOSE_CB(_close_py)


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


_request_trampoline = _ffi.REQUEST_CB(_request_py)


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
