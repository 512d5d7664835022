"""Per-call settings: timeouts, cancellation handles, progress and tasks (mcpc_call_opts_t)."""

from __future__ import annotations

import inspect
from ctypes import byref, c_void_p
from typing import TYPE_CHECKING, Annotated, Any, Callable, Dict, Mapping, Optional, TypedDict, TypeVar, get_type_hints

from . import _decls, _ffi
from ._convert import _arguments_json, _b, _ms, _raise_last
from .errors import McpcError, Status, TaskDetachedError
from ._ffi import lib, registry
from ._results import CallResult, _result_from

if TYPE_CHECKING:
    from typing_extensions import Unpack

ProgressCallback = Callable[[float, Optional[float], Optional[str]], None]
"""on_progress(progress, total or None, message or None)."""

TaskCallback = Callable[[str, Optional[str], str], Any]
"""on_task(status, message or None, reference): return True to detach from the task."""

TASK_MODES = {"allow": 0, "forbid": 1, "prefer": 2, "require": 3}
"""The task preferences (MCPC_TASK_*), by their names."""


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


_progress_trampoline = _decls.PROGRESS_CB(_progress_py)


class TaskWatch:
    """A call's task callback, and the last reference it was given (for
    :class:`~libmcpc.TaskDetachedError`)."""

    def __init__(self, on_task: Optional[TaskCallback]) -> None:
        self.on_task = on_task
        self.reference: Optional[str] = None

    def error(self, status: int) -> McpcError:
        """The exception for a status just returned, with the reference when the call
        detached from its task."""
        error = _raise_last(status)
        if isinstance(error, TaskDetachedError):
            error.reference = self.reference
        return error


def _task_py(userdata: Optional[int], reference: bytes, status: bytes, message: Optional[bytes]) -> int:
    watch = registry.get(userdata)
    if watch is None:
        return 0
    watch.reference = reference.decode("utf-8", "replace")
    if watch.on_task is None:
        return 0
    try:
        detach = watch.on_task(status.decode("utf-8"), message.decode("utf-8", "replace") if message else None,
                               watch.reference)
    except Exception:  # noqa: BLE001 - an exception cannot cross the C callback
        return 0
    return 1 if detach else 0


_task_trampoline = _decls.TASK_CB(_task_py)


def _task_mode(task: Optional[str]) -> int:
    if task is None:
        return 0
    try:
        return TASK_MODES[task]
    except KeyError:
        raise ValueError("task must be one of %s, not %r" % (", ".join(TASK_MODES), task)) from None


def _call_opts(timeout: Optional[float], cancel: Optional[Cancel], progress_key: Optional[int],
               reset_timeout_on_progress: bool = False, max_total: Optional[float] = None,
               task: Optional[str] = None, task_timeout: Optional[float] = None,
               task_key: Optional[int] = None) -> _ffi.CallOpts:
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
    opts.task_mode = _task_mode(task)
    opts.task_timeout_ms = _ms(task_timeout, "task_timeout")
    if task_key is not None:
        opts.on_task = _task_trampoline
        opts.task_userdata = task_key
    return opts


class CallKeywords(TypedDict, total=False):
    """The keywords of a tool call after its name and arguments (see Client.call),
    each annotated with its default. Host.call and AsyncHost.call take them as
    ``**kw``; call_signature names them in their signatures."""

    timeout: Annotated[Optional[float], None]
    cancel: Annotated[Optional[Cancel], None]
    on_progress: Annotated[Optional[ProgressCallback], None]
    reset_timeout_on_progress: Annotated[bool, False]
    max_total: Annotated[Optional[float], None]
    task: Annotated[Optional[str], None]
    task_timeout: Annotated[Optional[float], None]
    on_task: Annotated[Optional[TaskCallback], None]


# name -> (type, default), in the order written.
_CALL_KEYWORDS = {name: (hint.__origin__, hint.__metadata__[0])
                  for name, hint in get_type_hints(CallKeywords, include_extras=True).items()}

F = TypeVar("F", bound=Callable[..., Any])


def call_signature(fn: F) -> F:
    """Gives a call taking ``**kw`` the signature that names the CallKeywords, for
    help() and inspect: its own parameters, then each keyword-only."""
    own = [p for p in inspect.signature(fn).parameters.values() if p.kind != p.VAR_KEYWORD]
    kws = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=t)
           for name, (t, default) in _CALL_KEYWORDS.items()]
    fn.__signature__ = inspect.Signature(own + kws, return_annotation="CallResult")  # type: ignore[attr-defined]
    return fn


def call_tool(guard: Any, c_call: Callable[..., int], name: str, arguments: Optional[Mapping[str, Any]],
              **kw: "Unpack[CallKeywords]") -> CallResult:
    """A blocking tool call through `c_call(handle, name, arguments, opts, out)` (a
    client's or a host's), on the handle `guard` lends (its _enter and _leave)."""
    unknown = [k for k in kw if k not in _CALL_KEYWORDS]
    if unknown:
        raise TypeError("call() got an unexpected keyword argument %r" % unknown[0])
    k: Dict[str, Any] = {name: default for name, (_, default) in _CALL_KEYWORDS.items()}
    k.update(kw)
    on_progress, on_task = k["on_progress"], k["on_task"]
    args = _arguments_json(arguments)
    key = registry.add(on_progress) if on_progress is not None else None
    watch = TaskWatch(on_task)
    task_key = registry.add(watch) if on_task is not None else None
    try:
        opts = _call_opts(k["timeout"], k["cancel"], key, k["reset_timeout_on_progress"], k["max_total"], k["task"],
                          k["task_timeout"], task_key)
        h = guard._enter()
        try:
            out = c_void_p()
            status = c_call(h, _b(name), args, byref(opts), byref(out))
            if status != Status.OK:
                error = watch.error(status)
                if out.value:  # MCPC_ERR_TOOL hands out the result
                    error.result = _result_from(out.value)  # type: ignore[attr-defined]
                raise error
        finally:
            guard._leave()
    finally:
        registry.pop(key)
        registry.pop(task_key)
    return _result_from(out.value or 0)
