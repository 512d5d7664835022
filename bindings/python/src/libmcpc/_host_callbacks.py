"""The host's callbacks as C calls them: the event and resolver trampolines, and the
resolver's record of what it refused. Module-level, so they live as long as the module
and outlive every host that set them."""

from __future__ import annotations

import json
import threading
from typing import Any, Callable, List, Optional, Tuple

from . import _decls, _ffi
from ._ffi import registry
from ._host_catalog import _EVENTS, HostEvent, ServerState, _state

__all__ = ["EventCallback", "Resolver"]

EventCallback = Callable[[HostEvent, Optional[str], Optional[ServerState], Any], Any]
"""on_event(event, server or None, state or None, detail): see :class:`HostEvent`."""
Resolver = Callable[[str, str, Optional[str]], Optional[str]]
"""resolver(kind, reference, prompt) -> value or None: kind "input" (``${input:ID}``:
the ID, and its description as the prompt) or "secret" (``${op://...}``: the whole
reference, no prompt)."""

_reporting = threading.local()  # set while this thread runs an event callback


def _event_py(userdata: Optional[int], event: int, server: Optional[bytes], state: int,
              detail: Optional[bytes]) -> None:
    fn = registry.get(userdata)
    if fn is None:
        return
    kind = _EVENTS.get(event, event)
    info: Any = detail.decode("utf-8", "replace") if detail is not None else None
    if kind is HostEvent.SETTLED and info:
        info = json.loads(info)
    _reporting.on = True
    try:
        # ctypes reports an exception here as unraisable and returns: none reaches C.
        fn(kind, server.decode("utf-8", "replace") if server is not None else None,
           _state(state) if kind is HostEvent.SERVER_STATE else None, info)
    finally:
        _reporting.on = False


class _Resolver:
    """The host's resolver, and what it refused on each thread: C hears only "no
    value", so add_config adds the reason (never the value) to its error."""

    def __init__(self, fn: Resolver) -> None:
        self.fn = fn
        self._notes = threading.local()

    def take(self) -> List[Tuple[str, Optional[BaseException]]]:
        notes: List[Tuple[str, Optional[BaseException]]] = getattr(self._notes, "items", [])
        self._notes.items = []
        return notes

    def answer(self, kind: str, reference: str, prompt: Optional[str], buf: int, size: int) -> int:
        what = "${input:%s}" % reference if kind == "input" else "${%s}" % reference
        try:
            value = self.fn(kind, reference, prompt)
        except Exception as e:  # noqa: BLE001 - kept for add_config to raise from
            return self._refuse("the resolver raised %s for %s" % (type(e).__name__, what), e)
        if value is None:
            return 1
        if not isinstance(value, str):
            return self._refuse("the resolver gave %s a %s, not a str" % (what, type(value).__name__))
        data = value.encode("utf-8")
        if len(data) + 1 > size:
            # Refused, not cut: a cut secret would fail later, far from here.
            return self._refuse("the resolver's value for %s is %d bytes, more than the %d that fit"
                                % (what, len(data), size - 1))
        if b"\0" in data:
            return self._refuse("the resolver's value for %s holds a NUL" % what)
        return _ffi.put_string(buf, size, value)

    def _refuse(self, note: str, error: Optional[BaseException] = None) -> int:
        if not hasattr(self._notes, "items"):
            self._notes.items = []
        self._notes.items.append((note, error))
        return 1


def _resolve_py(userdata: Optional[int], kind: Optional[bytes], reference: Optional[bytes],
                prompt: Optional[bytes], buf: Optional[int], size: int) -> int:
    try:
        r = registry.get(userdata)
        if r is None or not buf:
            return 1
        return int(r.answer(_ffi.text(kind), _ffi.text(reference),
                            prompt.decode("utf-8", "replace") if prompt is not None else None, buf, size))
    except BaseException:  # noqa: BLE001 - ctypes would return 0, "a value", for an exception
        return 1


_event_trampoline = _decls.HOST_EVENT_CB(_event_py)
_resolve_trampoline = _decls.RESOLVE_CB(_resolve_py)
