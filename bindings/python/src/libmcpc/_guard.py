"""A C handle shared by threads (a client's, a host's): each call enters and leaves
it, and closing frees it only once no call is in flight, since a handle's free must
never race a call on it."""

from __future__ import annotations

import asyncio
import atexit
import threading
import weakref
from typing import Optional, TypeVar

from .errors import ClosedError, Status

G = TypeVar("G", bound="Guarded")

_live: "weakref.WeakSet[Guarded]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    # Close what is still open while the interpreter can still run callbacks.
    for obj in list(_live):
        try:
            obj.close()
        except Exception:  # noqa: BLE001
            pass


class Guarded:
    """The calls in flight on a handle, and its closing. Subclasses implement close()
    with _begin_close() and _take_when_idle()."""

    _what = "handle"  # names it in ClosedError's message

    def __init__(self, handle: int) -> None:
        self._handle: Optional[int] = handle
        self._lock = threading.Condition(threading.Lock())
        self._busy = 0
        self._closing = False
        _live.add(self)

    def _enter(self) -> int:
        with self._lock:
            if self._handle is None or self._closing:
                raise ClosedError("the %s is closed" % self._what, Status.CLOSED)
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

    def close(self) -> None:
        raise NotImplementedError

    def _begin_close(self) -> Optional[int]:
        """Marks the handle closing (new calls raise ClosedError) and returns it, or
        None when it was closed already."""
        with self._lock:
            if self._handle is None or self._closing:
                return None
            self._closing = True
            return self._handle

    def _take_when_idle(self) -> Optional[int]:
        """Waits until no call is in flight, then takes the handle to free (None when
        another thread took it)."""
        with self._lock:
            while self._busy:
                self._lock.wait()
            handle, self._handle = self._handle, None
        _live.discard(self)
        return handle

    async def aclose(self) -> None:
        """:meth:`close` without blocking the event loop (it runs in a worker thread)."""
        await asyncio.get_running_loop().run_in_executor(None, self.close)

    def __enter__(self: G) -> G:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self: G) -> G:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __del__(self) -> None:
        if getattr(self, "_handle", None) is not None:
            try:
                self.close()
            except Exception:  # noqa: BLE001
                pass
