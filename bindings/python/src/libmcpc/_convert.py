"""Python values to C arguments, and statuses back to exceptions: what every call uses."""

from __future__ import annotations

import json
import math
import os
from typing import Any, Mapping, Optional, Union

from . import _ffi
from ._ffi import lib
from .errors import McpcError, Status, error_for

PathLike = Union[str, "os.PathLike[str]"]


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


def _arguments_json(arguments: Optional[Mapping[str, Any]]) -> Optional[bytes]:
    if arguments is None:
        return None
    if isinstance(arguments, (str, bytes)):
        raise TypeError("arguments must be a mapping (it is serialised to JSON), not a string")
    return json.dumps(arguments, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
