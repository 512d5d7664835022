"""asyncio over the library's _async functions: a future settled by the completion
callback on an mcpc thread, and cancelling the awaiting task cancels the operation."""

from __future__ import annotations

import asyncio
import threading
from ctypes import byref, c_void_p
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar

from . import _decls, _ffi
from ._call import Cancel, ProgressCallback
from ._convert import _raise_last
from ._ffi import lib, registry
from .errors import Status, error_for

if TYPE_CHECKING:
    from ._client import Client

T = TypeVar("T")


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
_connect_done = _make_done(_decls.CONNECT_DONE_CB)
_list_done = _make_done(_decls.LIST_DONE_CB)
_call_done = _make_done(_decls.CALL_DONE_CB)


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


async def _awaited(value: Any) -> Any:
    return await value


def on_loop(value: Any, loop: asyncio.AbstractEventLoop) -> Any:
    """Awaits ``value`` (an awaitable a callback returned) on ``loop`` from an mcpc
    thread, and returns its result or raises its exception: how an asyncio client's or
    AsyncHost's coroutine callbacks run on their event loop while mcpc waits."""
    return asyncio.run_coroutine_threadsafe(_awaited(value), loop).result()


async def in_thread(fn: Callable[..., T], *args: Any, cancel: Any = None, **kwargs: Any) -> T:
    """Runs a blocking call that takes ``cancel=`` on a worker thread. Cancelling the
    awaiting task triggers the Cancel (the server is sent notifications/cancelled) and
    waits for the call to end, so nothing of it outlives the task."""
    own = cancel if cancel is not None else Cancel()
    task = asyncio.get_running_loop().run_in_executor(None, lambda: fn(*args, cancel=own, **kwargs))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        own.trigger()
        try:
            await task
        except Exception:  # noqa: BLE001 - the cancelled call's own error
            pass
        raise
