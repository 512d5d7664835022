"""The client: connecting, information, tools, and closing (mcpc_client_t)."""

from __future__ import annotations

import asyncio
import json
import threading
from ctypes import byref, c_char_p, c_void_p
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from . import _ffi
from ._async import _async_progress, _call_done, _close_orphan, _connect_done, _finish_op, _list_done, _Pending, _start_op
from ._call import Cancel, ProgressCallback, TaskCallback, TaskWatch, _call_opts, call_tool
from ._content import ContentMixin
from ._convert import PathLike, _arguments_json, _b, _check
from ._ffi import lib, registry
from ._guard import Guarded
from ._options import build_options, options_signature
from ._results import CallResult, _result_from, _tools_from, _views_from
from ._transport import Transport
from .errors import Status, TaskDetachedError

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._options import CommonOptions, HttpOptions, StdioOptions

__all__ = ["Client", "version"]


def version() -> str:
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return _ffi.text(lib.mcpc_version())


def _argv(argv: Sequence[PathLike]) -> Tuple[Any, int]:
    if isinstance(argv, (str, bytes)):
        raise TypeError("argv must be a sequence of strings, such as ['python3', 'server.py']")
    items = [_b(a) for a in argv]
    arr = (c_char_p * max(1, len(items)))(*items)
    return arr, len(items)


# ---- the client -------------------------------------------------------------------


class Client(Guarded, ContentMixin):
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

    _what = "client"

    def __init__(self, handle: int, transport: "Optional[Transport]" = None) -> None:
        """Wraps a client handle from the C API, owned from here on. Use the
        constructors below instead."""
        super().__init__(handle)
        self._transport = transport

    # -- connecting --

    @classmethod
    @options_signature("stdio")
    def stdio(cls, argv: Sequence[PathLike], **options: "Unpack[StdioOptions]") -> "Client":
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
        with build_options("stdio", options) as o:
            out = c_void_p()
            _check(lib.mcpc_client_connect_stdio(arr, n, o.handle, byref(out)))
        return cls(out.value or 0)

    @classmethod
    @options_signature("http")
    def http(cls, url: str, **options: "Unpack[HttpOptions]") -> "Client":
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
        with build_options("http", options) as o:
            out = c_void_p()
            _check(lib.mcpc_client_connect_http(_b(url), o.handle, byref(out)))
        return cls(out.value or 0)

    @classmethod
    @options_signature("transport")
    def transport(cls, transport: Transport, **options: "Unpack[CommonOptions]") -> "Client":
        """Connects over a caller-supplied :class:`Transport`, running the handshake
        through it; the host delivers the server's messages from its own thread
        meanwhile. Closing the client closes the transport (its ``close()`` runs) and
        releases it: a transport serves one client."""
        if not isinstance(transport, Transport):
            raise TypeError("transport must be a libmcpc.Transport")
        with build_options("transport", options) as o:
            out = c_void_p()
            _check(lib.mcpc_client_connect_transport(transport._require(), o.handle, byref(out)))
        return cls(out.value or 0, transport)

    # -- connecting without blocking --

    @classmethod
    @options_signature("stdio")
    async def stdio_async(cls, argv: Sequence[PathLike], **options: "Unpack[StdioOptions]") -> "Client":
        """As :meth:`stdio` (same keyword arguments), awaiting the handshake without
        blocking the event loop. Cancelling the awaiting task stops the handshake and
        the server."""
        arr, n = _argv(argv)
        with build_options("stdio", options, asyncio.get_running_loop()) as o:
            return await cls._connect_async(
                lambda key, op: lib.mcpc_client_connect_stdio_async(arr, n, o.handle, _connect_done, key, op))

    @classmethod
    @options_signature("http")
    async def http_async(cls, url: str, **options: "Unpack[HttpOptions]") -> "Client":
        """As :meth:`http` (same keyword arguments), without blocking the event loop."""
        burl = _b(url)
        with build_options("http", options, asyncio.get_running_loop()) as o:
            return await cls._connect_async(
                lambda key, op: lib.mcpc_client_connect_http_async(burl, o.handle, _connect_done, key, op))

    @classmethod
    @options_signature("transport")
    async def transport_async(cls, transport: Transport, **options: "Unpack[CommonOptions]") -> "Client":
        """As :meth:`transport` (same keyword arguments), without blocking the event loop."""
        if not isinstance(transport, Transport):
            raise TypeError("transport must be a libmcpc.Transport")
        handle = transport._require()
        with build_options("transport", options, asyncio.get_running_loop()) as o:
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

    def server_extensions(self) -> Optional[Dict[str, Any]]:
        """The extensions the server offers (its ``capabilities.extensions``, id to
        settings), or None when it declared none. Server data: check what you use."""
        h = self._enter()
        try:
            out = c_void_p()
            _check(lib.mcpc_client_server_extensions(h, byref(out)))
            if not out.value:
                return None
            ext = json.loads(_ffi.take_string(out.value))
            return ext if isinstance(ext, dict) else None
        finally:
            self._leave()

    def roots_changed(self) -> None:
        """Tells the server the roots changed (``notifications/roots/list_changed``;
        under 2026-07-28 the server asks each time, so nothing is sent). Raises
        :class:`~libmcpc.NotSupportedError` for a client without ``roots`` or
        ``on_roots``. Does not block."""
        h = self._enter()
        try:
            _check(lib.mcpc_client_roots_changed(h))
        finally:
            self._leave()

    # -- tools --

    def tools(self, *, timeout: Optional[float] = None, cancel: Optional[Cancel] = None,
              fresh: bool = False, model_only: bool = False) -> List[Dict[str, Any]]:
        """Lists every tool, following all pages: each a dict as the server sent it
        (``name``, ``description``, ``inputSchema``, ``outputSchema``, ...). A list
        the client keeps (see the README's caching rules) is reused unless
        ``fresh``. ``model_only`` leaves out the tools MCP Apps makes visible to their
        view only (the tools to give a model)."""
        ptr = self._tool_list(timeout, cancel, fresh)
        return _tools_from(ptr, model_only)

    def tool_views(self, *, timeout: Optional[float] = None, cancel: Optional[Cancel] = None,
                   fresh: bool = False) -> Dict[str, Dict[str, Any]]:
        """MCP Apps: each listed tool that has a view, by name: ``{"uri": "ui://...",
        "visibility": ["model", "app"]}`` (``read_ui_view`` fetches the view)."""
        return _views_from(self._tool_list(timeout, cancel, fresh))

    def _tool_list(self, timeout: Optional[float], cancel: Optional[Cancel], fresh: bool) -> int:
        opts = _call_opts(timeout, cancel, None)
        h = self._enter()
        try:
            if fresh:
                _check(lib.mcpc_client_forget_lists(h))
            out = c_void_p()
            _check(lib.mcpc_client_list_tools(h, byref(opts), byref(out)))
        finally:
            self._leave()
        return out.value or 0

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
        task: Optional[str] = None,
        task_timeout: Optional[float] = None,
        on_task: Optional[TaskCallback] = None,
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

        A call the server answers with a task is followed to its end (docs/client.md, Tasks).
        ``task`` is the preference: ``"allow"`` (default), ``"forbid"``, ``"prefer"``
        or ``"require"``; ``task_timeout`` bounds the whole task in seconds (default:
        ``timeout`` does); ``on_task(status, message, reference)`` sees each status
        change, and returning True detaches: the call raises
        :class:`~libmcpc.TaskDetachedError`, whose ``reference`` resumes the task
        (:meth:`resume_task`).
        """
        return call_tool(self, lib.mcpc_client_call_tool, name, arguments, timeout=timeout, cancel=cancel,
                         on_progress=on_progress, reset_timeout_on_progress=reset_timeout_on_progress,
                         max_total=max_total, task=task, task_timeout=task_timeout, on_task=on_task)

    def resume_task(self, reference: str, *, timeout: Optional[float] = None, cancel: Optional[Cancel] = None,
                    task_timeout: Optional[float] = None, on_task: Optional[TaskCallback] = None) -> Any:
        """Follows a task to its end from its ``reference`` (from ``on_task`` or a
        :class:`~libmcpc.TaskDetachedError`, kept by the host, perhaps from another
        process), and returns the original request's result as sent (a tool call's
        ``CallToolResult`` as a dict). Raises as :meth:`call` does;
        :class:`~libmcpc.InvalidArgumentError` for a reference of another endpoint or
        generation (mcpc_client_resume_task)."""
        watch = TaskWatch(on_task)
        task_key = registry.add(watch) if on_task is not None else None
        try:
            opts = _call_opts(timeout, cancel, None, task_timeout=task_timeout, task_key=task_key)
            h = self._enter()
            try:
                out = c_void_p()
                status = lib.mcpc_client_resume_task(h, _b(reference), byref(opts), byref(out))
                if status != Status.OK:
                    raise watch.error(status)
            finally:
                self._leave()
        finally:
            registry.pop(task_key)
        return json.loads(_ffi.take_string(out.value))

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
        task: Optional[str] = None,
        task_timeout: Optional[float] = None,
        on_task: Optional[TaskCallback] = None,
    ) -> CallResult:
        """As :meth:`call`, without blocking the event loop (mcpc_client_call_tool_async).
        Cancelling the awaiting task (also by ``asyncio.wait_for`` or a task group)
        cancels the call, and the server is sent ``notifications/cancelled``.
        ``on_progress`` runs on the event loop; ``on_task`` on an mcpc thread (its
        answer is needed there), so it must not block."""
        loop = asyncio.get_running_loop()
        args = _arguments_json(arguments)
        bname = _b(name)
        pending = _Pending(loop, _result_from)
        if on_progress is not None:
            pending.progress_key = registry.add(_async_progress(loop, on_progress))
        watch = TaskWatch(on_task)
        task_key = registry.add(watch) if on_task is not None else None
        try:
            opts = _call_opts(timeout, cancel, pending.progress_key, reset_timeout_on_progress, max_total, task,
                              task_timeout, task_key)
            h = self._enter()
        except BaseException:
            registry.pop(pending.progress_key)
            registry.pop(task_key)
            raise
        try:
            op = _start_op(lambda key, out: lib.mcpc_client_call_tool_async(
                h, bname, args, byref(opts), _call_done, key, out), pending)
        finally:
            self._leave()
        try:
            result: CallResult = await _finish_op(op, pending)
        except TaskDetachedError as e:
            e.reference = watch.reference
            raise
        finally:
            registry.pop(task_key)
        return result

    # -- closing --

    def close(self) -> None:
        """Closes the client: calls in flight raise :class:`~libmcpc.ClosedError`, async
        calls complete, and the transport shuts down (a stdio server is stopped and
        reaped, an HTTP session deleted). Idempotent."""
        handle = self._begin_close()
        if handle is None:
            return
        status = lib.mcpc_client_close(handle)
        if status == Status.WOULD_DEADLOCK:
            # On an mcpc thread (in a callback, or a finaliser run there) the close
            # must not block; finish it on a thread of our own.
            threading.Thread(target=self._finish_close, daemon=True).start()
            return
        self._finish_close()

    def _finish_close(self) -> None:
        handle = self._take_when_idle()  # calls in flight return CLOSED promptly after the close
        if handle is None:
            return
        lib.mcpc_client_free(handle)
        if self._transport is not None:
            self._transport.release()

    def __repr__(self) -> str:
        return "<libmcpc.Client %s>" % ("closed" if self.closed else self.protocol_version)

