"""Many servers behind one handle (mcpc_host_t, docs/host.md): configuration files,
servers started together, one catalog of their tools under qualified names, and
calls routed by those names; their resources and prompts too. :class:`Host` blocks;
:class:`AsyncHost` is the asyncio form. The listing types are in _host_catalog.py,
the callbacks' trampolines in _host_callbacks.py."""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
from contextlib import contextmanager
from ctypes import byref, c_size_t, c_void_p
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Union

from . import _ffi
from ._async import in_thread, on_loop
from ._call import Cancel, CallKeywords, _call_opts, call_signature, call_tool
from ._client import _argv
from ._content import ResourceContents, _contents_from, _json_arg
from ._convert import PathLike, _b, _check, _raise_last
from ._ffi import lib, registry
from ._guard import Guarded
from ._host_callbacks import EventCallback, Resolver, _event_trampoline, _reporting, _resolve_trampoline, _Resolver
# Re-exported: __init__ and callers import the listing types from here, as before the split.
from ._host_catalog import (Catalog, Collision, HostEvent, HostPrompt, HostResource, HostResources, HostTemplate,
                            HostTool, PromptCatalog, ResourceCollision, ServerState, _state)
from ._options import build_options, layered, options_signature
from ._results import CallResult
from .errors import CancelledError, ClosedError, Status, error_for

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._options import HostOptions, HttpOptions, StdioOptions

__all__ = ["AsyncHost", "Catalog", "Collision", "EnvPolicy", "EventCallback", "Host", "HostEvent", "HostPrompt",
           "HostResource", "HostResources", "HostTemplate", "HostTool", "PromptCatalog", "Resolver",
           "ResourceCollision", "ServerState"]

EnvPolicy = Union[str, Sequence[str]]
"""``"no_secrets"`` (the default), ``"pass_all"``, or the names to pass (an allow-list)."""

_ENV_POLICIES = {"no_secrets": 0, "pass_all": 1}
_ENV_ALLOW = 2


class _OwnCancel(Cancel):
    """The Cancel the binding gives a call that has none: close() triggers it, since the
    host may be freed only once no call is in flight."""


def _own(cancel: Optional[Cancel]) -> Cancel:
    return cancel if cancel is not None else _OwnCancel()


class _HostBase(Guarded):
    """What Host and AsyncHost share: the handle, its settings, adding servers, the
    catalog and the state, which never block; and the blocking calls, which Host makes
    as they are and AsyncHost on a worker thread."""

    _what = "host"

    def __init__(self, options: Mapping[str, Any], on_event: Optional[EventCallback], resolver: Optional[Resolver],
                 variables: Optional[Mapping[str, str]], env_policy: Optional[EnvPolicy],
                 concurrency: Optional[int]) -> None:
        with build_options("host", options, self._event_loop()) as o:
            out = c_void_p()
            _check(lib.mcpc_host_new(o.handle, byref(out)))
        super().__init__(out.value or 0)
        self._defaults = dict(options)
        self._resolver: Optional[_Resolver] = None
        self._cancels: Set[Cancel] = set()  # the _OwnCancel of each call in flight
        try:
            for name, value in (variables or {}).items():
                self.set_variable(name, value)
            if env_policy is not None:
                self.set_env_policy(env_policy)
            if concurrency is not None:
                self.set_concurrency(concurrency)
            if on_event is not None:
                self.set_event_callback(on_event)
            if resolver is not None:
                self.set_resolver(resolver)
        except BaseException:
            self.close()
            raise

    def set_event_callback(self, on_event: Optional[EventCallback]) -> None:
        raise NotImplementedError

    def _event_loop(self) -> Optional[asyncio.AbstractEventLoop]:
        """The loop coroutine input handlers run on: AsyncHost's; None for Host."""
        return None

    def set_resolver(self, resolver: Optional[Resolver]) -> None:
        raise NotImplementedError

    def _do(self, fn: Callable[..., int], *args: Any) -> None:
        """fn(handle, *args), raising for its status."""
        h = self._enter()
        try:
            _check(fn(h, *args))
        finally:
            self._leave()

    def _json(self, fn: Callable[..., int]) -> str:
        out = c_void_p()
        self._do(fn, byref(out))
        return _ffi.take_string(out.value)

    # -- settings --

    def set_variable(self, name: str, value: str) -> None:
        """Sets a variable configuration files added later may name as ``${NAME}``, such
        as ``workspaceFolder`` (``userHome`` is $HOME unless set); it comes before the
        environment's variable of that name."""
        self._do(lib.mcpc_host_set_variable, _b(name), _b(value))

    def set_env_policy(self, policy: EnvPolicy) -> None:
        """Which of this process's environment stdio servers started later inherit:
        ``"no_secrets"`` (the default: all but names holding TOKEN, SECRET, PASSWORD,
        KEY, CREDENTIAL or AUTH), ``"pass_all"``, or a list of the names to pass. A
        server's own ``env`` is always passed."""
        if isinstance(policy, str):
            if policy not in _ENV_POLICIES:
                raise ValueError("env_policy must be 'no_secrets', 'pass_all' or a list of names, not %r" % policy)
            self._do(lib.mcpc_host_set_env_policy, _ENV_POLICIES[policy], None, 0)
        else:
            arr, n = _argv(policy)
            self._do(lib.mcpc_host_set_env_policy, _ENV_ALLOW, arr, n)

    def set_concurrency(self, n: int) -> None:
        """How many servers start at once (at least 1; 64 by default)."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError("concurrency must be an int of at least 1, not %r" % (n,))
        self._do(lib.mcpc_host_set_concurrency, n)

    def set_lazy(self, lazy: bool = True) -> None:
        """With ``lazy``, :meth:`start` leaves each server that has saved tools
        (:meth:`load_catalog`) idle, and its first call starts it."""
        self._do(lib.mcpc_host_set_lazy, 1 if lazy else 0)

    def load_catalog(self, saved: Union[str, "Catalog"]) -> int:
        """Publishes a catalog saved from an earlier run (the JSON text of
        :meth:`Catalog.json`, or a :class:`Catalog`): each tool goes to its server while
        that server is not started, so the catalog is whole before the servers are up.
        Returns how many tools were taken."""
        text = saved.json if isinstance(saved, Catalog) else saved
        if not isinstance(text, str):
            raise TypeError("load_catalog takes a Catalog or its JSON text, not %r" % type(saved).__name__)
        taken = c_size_t(0)
        self._do(lib.mcpc_host_load_catalog, _b(text), byref(taken))
        return taken.value

    def _set_event(self, fn: Optional[Callable[..., Any]]) -> None:
        if fn is not None and not callable(fn):
            raise TypeError("on_event must be a callable, not %r" % (fn,))
        self._set_callback(lib.mcpc_host_set_event_callback, _event_trampoline, fn)

    def _set_resolver(self, fn: Optional[Resolver]) -> None:
        if fn is not None and not callable(fn):
            raise TypeError("resolver must be a callable, not %r" % (fn,))
        r = _Resolver(fn) if fn is not None else None
        self._set_callback(lib.mcpc_host_set_resolver, _resolve_trampoline, r)
        self._resolver = r

    def _set_callback(self, set_fn: Callable[..., int], trampoline: Any, obj: Any) -> None:
        # The C API takes no NULL callback: for None the trampoline finds no one to call.
        h = self._enter()
        try:
            # userdata_free releases the entry once C is done with it, also when this fails.
            _check(set_fn(h, trampoline, registry.add(obj) if obj is not None else None, _ffi.free_userdata))
        finally:
            self._leave()

    # -- servers --

    @options_signature("stdio", returns="None")
    def add_stdio(self, name: str, argv: Sequence[PathLike], **options: "Unpack[StdioOptions]") -> None:
        """Adds a stdio server named ``name`` that runs ``argv``, not started. Its
        options (as :meth:`Client.stdio`'s) are laid over the host's."""
        arr, n = _argv(argv)
        self._add(lambda h, o: lib.mcpc_host_add_stdio(h, _b(name), arr, n, o), "stdio", options)

    @options_signature("http", returns="None")
    def add_http(self, name: str, url: str, **options: "Unpack[HttpOptions]") -> None:
        """Adds an HTTP server named ``name`` at ``url``, not started (the URL is checked
        when it starts). Its options (as :meth:`Client.http`'s) are laid over the host's."""
        self._add(lambda h, o: lib.mcpc_host_add_http(h, _b(name), _b(url), o), "http", options)

    def _add(self, add: Callable[[int, Any], int], kind: str, options: Mapping[str, Any]) -> None:
        # With no options of its own a server takes the host's defaults as they are (NULL).
        o = build_options(kind, layered(kind, self._defaults, options), self._event_loop()) if options else None
        try:
            self._do(add, o.handle if o else None)
        finally:
            if o is not None:
                o.free()

    def tools(self) -> Catalog:
        """The catalog: each ready server's tools (after its include and exclude lists)
        under qualified names, and the collisions of those names."""
        return Catalog._parse(self._json(lib.mcpc_host_tools))

    def resources(self) -> HostResources:
        """Every resource and resource template the servers that declare resources
        listed, each with its server, and the URIs two servers listed (a read goes to
        the server added first)."""
        return HostResources._parse(self._json(lib.mcpc_host_resources))

    def prompts(self) -> PromptCatalog:
        """The prompts of the servers that declare prompts, under qualified names
        (named as tools are, see :meth:`set_name_format`), and the collisions of
        those names."""
        return PromptCatalog._parse(self._json(lib.mcpc_host_prompts))

    def set_name_format(self, fmt: Optional[str]) -> None:
        """How tools and prompts are named in the catalog: ``fmt`` holds ``{name}``
        (the server's own name for it) once and ``{server}`` at most once, around text
        of ``[A-Za-z0-9_-]`` (at most 32 characters), such as ``"mcp__{server}__{name}"``;
        None restores the default ``"{server}__{name}"``. The catalog is made again at
        once. A malformed format raises :class:`~libmcpc.InvalidArgumentError` saying
        what is wrong."""
        self._do(lib.mcpc_host_set_name_format, _b(fmt) if fmt is not None else None)

    def status(self) -> List[Dict[str, Any]]:
        """Every server, in the order added: ``{"name", "state", "tools"}``, and for
        one that failed ``"error": {"status", "message"}`` and the last lines of its
        ``"stderr"``. ``state`` is a :class:`ServerState`."""
        servers = json.loads(self._json(lib.mcpc_host_status))
        for s in servers:
            s["state"] = _state(s.get("state"))
        return servers if isinstance(servers, list) else []

    # -- the blocking calls --

    def _add_config(self, path: PathLike) -> int:
        r = self._resolver
        if r is not None:
            r.take()
        added = c_size_t(0)
        h = self._enter()
        try:
            status = lib.mcpc_host_add_config(h, _b(path), byref(added))
            error = _raise_last(status) if status != Status.OK else None
        finally:
            self._leave()
        if error is not None:
            notes = r.take() if r is not None else []
            if notes:
                cause = next((e for _, e in notes if e is not None), None)
                raise error_for(error.status, "%s (%s)" % (error.message, "; ".join(n for n, _ in notes)),
                                error.rpc_code, error.status_name) from cause
            raise error
        return added.value

    def _start(self) -> None:
        self._do(lib.mcpc_host_start)

    def _remove(self, name: str) -> None:
        self._do(lib.mcpc_host_remove, _b(name))

    @contextmanager
    def _closable(self, cancel: Optional[Cancel]) -> Iterator[Cancel]:
        """The cancel a blocking call is to carry: its own, else an _OwnCancel that
        close() triggers; a call close() ended raises ClosedError, not CancelledError."""
        own = _own(cancel)
        closable = isinstance(own, _OwnCancel)
        if closable:
            with self._lock:
                self._cancels.add(own)
        try:
            yield own
        except CancelledError:
            if closable and self._closing:
                raise ClosedError("the host was closed during the call", Status.CLOSED) from None
            raise
        finally:
            if closable:
                with self._lock:
                    self._cancels.discard(own)

    def _call(self, qualified: str, arguments: Optional[Mapping[str, Any]],
              **kw: "Unpack[CallKeywords]") -> CallResult:
        with self._closable(kw.get("cancel")) as own:
            kw["cancel"] = own
            return call_tool(self, lib.mcpc_host_call_tool, qualified, arguments, **kw)

    def _out(self, fn: Callable[..., int], timeout: Optional[float], cancel: Optional[Cancel], *args: Any) -> int:
        """fn(handle, *args, opts, out) with the call's timeout and cancel: the out value."""
        out = c_void_p()
        with self._closable(cancel) as own:
            opts = _call_opts(timeout, own, None)
            self._do(fn, *args, byref(opts), byref(out))
        return out.value or 0

    def _read_resource(self, uri: str, *, timeout: Optional[float] = None,
                       cancel: Optional[Cancel] = None) -> ResourceContents:
        return _contents_from(self._out(lib.mcpc_host_read_resource, timeout, cancel, _b(uri)))

    def _get_prompt(self, qualified: str, arguments: Optional[Mapping[str, str]], *,
                    timeout: Optional[float] = None, cancel: Optional[Cancel] = None) -> Dict[str, Any]:
        args = _json_arg(arguments, "arguments")
        out = self._out(lib.mcpc_host_get_prompt, timeout, cancel, _b(qualified), args)
        result: Dict[str, Any] = json.loads(_ffi.take_string(out))
        return result

    # -- closing --

    def close(self) -> None:
        """Closes every server and frees the host. Calls in flight raise
        :class:`~libmcpc.ClosedError`, and a start in flight ends. Idempotent."""
        handle = self._begin_close()
        if handle is None:
            return
        with self._lock:
            cancels = list(self._cancels)
        for c in cancels:
            c.trigger()
        if not getattr(_reporting, "on", False):
            # Ends every call in flight, those with a cancel of their own too.
            lib.mcpc_host_close(handle)
        else:
            # In an event callback the start that made the report waits on it: free
            # the host from a thread of our own.
            threading.Thread(target=self._finish_close, daemon=True).start()
            return
        self._finish_close()

    def _finish_close(self) -> None:
        handle = self._take_when_idle()
        if handle is not None:
            lib.mcpc_host_free(handle)

    def __repr__(self) -> str:
        if self.closed:
            return "<libmcpc.%s closed>" % type(self).__name__
        return "<libmcpc.%s %d servers>" % (type(self).__name__, len(self.status()))


class Host(_HostBase):
    """Many MCP servers behind one handle (mcpc_host_t): added from configuration files
    (:meth:`add_config`) or one by one (:meth:`add_stdio`, :meth:`add_http`), started
    together (:meth:`start`), their tools in one catalog under qualified names
    (:meth:`tools`), each call routed by that name (:meth:`call`); their prompts
    named likewise (:meth:`prompts`, :meth:`get_prompt`) and their resources read by
    URI (:meth:`resources`, :meth:`read_resource`).

    The keyword options are a client's (:meth:`Client.stdio`'s and
    :meth:`Client.http`'s) and are the defaults of every server. ``on_event(event,
    server, state, detail)`` gets the host's reports (:class:`HostEvent`), one at a time,
    on the thread in :meth:`start` or an mcpc thread: keep it short; :meth:`tools` and
    :meth:`status` may be called from it, blocking calls raise
    :class:`~libmcpc.WouldDeadlockError`. ``resolver(kind, reference, prompt)`` gives
    the values files ask of the host (``${input:ID}``, ``${op://...}``), or None; it
    runs in :meth:`add_config` and may block to ask the user. ``variables``,
    ``env_policy`` and ``concurrency``: see their ``set_*`` methods.

    Thread-safe; a context manager (also ``async with``); :meth:`close` stops every
    server.
    """

    @options_signature("host", returns="None")
    def __init__(self, *, on_event: Optional[EventCallback] = None, resolver: Optional[Resolver] = None,
                 variables: Optional[Mapping[str, str]] = None, env_policy: Optional[EnvPolicy] = None,
                 concurrency: Optional[int] = None, **options: "Unpack[HostOptions]") -> None:
        super().__init__(options, on_event, resolver, variables, env_policy, concurrency)

    def set_event_callback(self, on_event: Optional[EventCallback]) -> None:
        """Reports to ``on_event(event, server, state, detail)`` from now on (None:
        to nobody). It is kept alive while it is set."""
        self._set_event(on_event)

    def set_resolver(self, resolver: Optional[Resolver]) -> None:
        """Asks ``resolver(kind, reference, prompt)`` for the values configuration
        files added later take from the host (None: no resolver). A value that does
        not fit (8 KiB) or holds a NUL is refused, not cut, and :meth:`add_config`
        says so; so it does when the resolver raises."""
        self._set_resolver(resolver)

    def add_config(self, path: PathLike) -> int:
        """Reads a configuration file (``mcpServers``, VS Code's ``servers`` with
        ``inputs``, Zed's ``context_servers``, mcp.json's root map) and adds its
        servers, not started: all or none. Returns how many. Raises
        :class:`~libmcpc.ConfigError` naming the file, the server and the field (never
        a value), or :class:`~libmcpc.InvalidArgumentError` for a name already added."""
        return self._add_config(path)

    def start(self) -> None:
        """Starts every server added and not started yet, together (at most the
        concurrency at once), and returns once each is ready or failed. A failed
        server leaves the others running, unless it is ``required``: then this raises
        its error."""
        self._start()

    @call_signature
    def call(self, qualified: str, arguments: Optional[Mapping[str, Any]] = None,
             **kw: "Unpack[CallKeywords]") -> CallResult:
        """Calls the tool of this qualified name (see :meth:`tools`) on its server,
        with that server's timeout unless ``timeout`` is given. Returns and raises as
        :meth:`Client.call` does, and :class:`~libmcpc.UnknownNameError` for a name not
        in the catalog."""
        return self._call(qualified, arguments, **kw)

    def read_resource(self, uri: str, *, timeout: Optional[float] = None,
                      cancel: Optional[Cancel] = None) -> ResourceContents:
        """Reads ``uri`` from the server that listed it, else from the server whose
        template's literal start (before its first ``{``) is the longest start of
        ``uri``, with that server's timeout unless ``timeout`` is given. Returns and
        raises as :meth:`Client.read_resource` does, and
        :class:`~libmcpc.UnknownNameError` when no server listed it or has a template
        it fits."""
        return self._read_resource(uri, timeout=timeout, cancel=cancel)

    def get_prompt(self, qualified: str, arguments: Optional[Mapping[str, str]] = None, *,
                   timeout: Optional[float] = None, cancel: Optional[Cancel] = None) -> Dict[str, Any]:
        """Gets the prompt of this qualified name (see :meth:`prompts`) from its
        server with ``arguments`` (string values): the result as sent, as
        :meth:`Client.get_prompt` returns it. Raises
        :class:`~libmcpc.UnknownNameError` for a name not in the catalog."""
        return self._get_prompt(qualified, arguments, timeout=timeout, cancel=cancel)

    def remove(self, name: str) -> None:
        """Stops the server ``name`` and removes it; its tools leave the catalog.
        Raises :class:`~libmcpc.UnknownNameError` when there is none."""
        self._remove(name)


class AsyncHost(_HostBase):
    """:class:`Host` for asyncio, made in a running event loop (``async with
    libmcpc.AsyncHost(...) as host:``), with the same arguments. :meth:`add_config`,
    :meth:`start`, :meth:`call`, :meth:`read_resource`, :meth:`get_prompt` and
    :meth:`remove` are awaited and run on worker threads, so the loop is never
    blocked; adding servers, :meth:`tools`, :meth:`resources`, :meth:`prompts`,
    :meth:`set_name_format` and :meth:`status` do not block. ``on_event`` runs on the
    event loop (a coroutine it returns runs as a task); ``resolver`` runs on the worker
    thread of :meth:`add_config`, or on the loop when it returns a coroutine. Close
    with ``await host.aclose()``.
    """

    @options_signature("host", returns="None")
    def __init__(self, *, on_event: Optional[EventCallback] = None, resolver: Optional[Resolver] = None,
                 variables: Optional[Mapping[str, str]] = None, env_policy: Optional[EnvPolicy] = None,
                 concurrency: Optional[int] = None, **options: "Unpack[HostOptions]") -> None:
        self._loop = asyncio.get_running_loop()
        self._tasks: "Set[asyncio.Future[Any]]" = set()
        super().__init__(options, on_event, resolver, variables, env_policy, concurrency)

    def _event_loop(self) -> Optional[asyncio.AbstractEventLoop]:
        return self._loop

    def set_event_callback(self, on_event: Optional[EventCallback]) -> None:
        """Reports to ``on_event(event, server, state, detail)`` on the event loop from
        now on (None: to nobody)."""
        if on_event is None or not callable(on_event):
            self._set_event(on_event)
            return
        loop, tasks = self._loop, self._tasks  # not self: the registry would keep the host alive

        def deliver(*report: Any) -> None:
            result = on_event(*report)
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                tasks.add(task)
                task.add_done_callback(tasks.discard)

        def relay(*report: Any) -> None:
            try:
                loop.call_soon_threadsafe(deliver, *report)
            except RuntimeError:  # the loop is closed: nobody listens
                pass

        self._set_event(relay)

    def set_resolver(self, resolver: Optional[Resolver]) -> None:
        """As :meth:`Host.set_resolver`; ``resolver`` may also be a coroutine function,
        awaited on the event loop while :meth:`add_config` waits for it."""
        if resolver is None or not callable(resolver):
            self._set_resolver(resolver)
            return
        loop = self._loop

        def resolve(kind: str, reference: str, prompt: Optional[str]) -> Optional[str]:
            value: Any = resolver(kind, reference, prompt)
            if inspect.isawaitable(value):
                value = on_loop(value, loop)
            return value  # type: ignore[no-any-return]

        self._set_resolver(resolve)

    async def add_config(self, path: PathLike) -> int:
        """As :meth:`Host.add_config`, on a worker thread."""
        return await asyncio.get_running_loop().run_in_executor(None, self._add_config, path)

    async def start(self) -> None:
        """As :meth:`Host.start`, on a worker thread. Cancelling the awaiting task does
        not stop the start (nothing can): it goes on, and closing waits for it."""
        await asyncio.get_running_loop().run_in_executor(None, self._start)

    @call_signature
    async def call(self, qualified: str, arguments: Optional[Mapping[str, Any]] = None,
                   **kw: "Unpack[CallKeywords]") -> CallResult:
        """As :meth:`Host.call`, on a worker thread. Cancelling the awaiting task (also
        by ``asyncio.wait_for``) cancels the call: the server is sent
        ``notifications/cancelled``. ``on_progress`` and ``on_task`` run on mcpc
        threads."""
        kw["cancel"] = _own(kw.get("cancel"))  # in_thread triggers it when the task is cancelled, close() too
        result: CallResult = await in_thread(self._call, qualified, arguments, **kw)
        return result

    async def read_resource(self, uri: str, *, timeout: Optional[float] = None,
                            cancel: Optional[Cancel] = None) -> ResourceContents:
        """As :meth:`Host.read_resource`, on a worker thread. Cancelling the awaiting
        task cancels the read."""
        return await in_thread(self._read_resource, uri, timeout=timeout, cancel=_own(cancel))

    async def get_prompt(self, qualified: str, arguments: Optional[Mapping[str, str]] = None, *,
                         timeout: Optional[float] = None, cancel: Optional[Cancel] = None) -> Dict[str, Any]:
        """As :meth:`Host.get_prompt`, on a worker thread. Cancelling the awaiting task
        cancels the request."""
        return await in_thread(self._get_prompt, qualified, arguments, timeout=timeout, cancel=_own(cancel))

    async def remove(self, name: str) -> None:
        """As :meth:`Host.remove`, on a worker thread."""
        await asyncio.get_running_loop().run_in_executor(None, self._remove, name)

