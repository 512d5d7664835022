"""Per-call settings: timeouts, cancellation handles and progress (mcpc_call_opts_t)."""

from __future__ import annotations

from typing import Callable, Optional

from . import _decls, _ffi
from ._convert import _ms
from ._ffi import lib, registry

ProgressCallback = Callable[[float, Optional[float], Optional[str]], None]
"""on_progress(progress, total or None, message or None)."""


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
