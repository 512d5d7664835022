"""Loading libmcpc and declaring its C ABI for ctypes (private).

Lifetimes of callbacks: every C callback is a module-level CFUNCTYPE object (a
trampoline, in the module that uses it), created once and alive as long as it.
Per-call and per-object Python state travels as `userdata`: an integer key into
`registry`, which holds the Python objects until the library is done with them
(a completion ran, `userdata_free` ran, or a blocking call returned). So no ctypes
callback object can be collected while C still holds a pointer to it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import os
import sys
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional

from ._decls import FREE_CB, FUNCTIONS, OPTIONAL, CallOpts

__all__ = ["lib", "library_path", "registry", "CallOpts", "new_call_opts"]

# The library's file names, in the order they are tried. On Windows cargo names the
# DLL mcpc.dll (its import library is libmcpc.dll.a); libmcpc.dll is a copy renamed
# the Unix way.
if sys.platform == "win32":
    _LIBNAMES = ("mcpc.dll", "libmcpc.dll")
elif sys.platform == "darwin":
    _LIBNAMES = ("libmcpc.dylib",)
else:
    _LIBNAMES = ("libmcpc.so",)


def _candidates() -> List[str]:
    """Where the library is looked for, in order (see load())."""
    here = Path(__file__).resolve().parent
    found: List[str] = []
    for name in _LIBNAMES:
        bundled = here / name
        if bundled.exists():
            found.append(str(bundled))
    # Running from the source tree: bindings/python/src/libmcpc -> the repository root.
    if len(here.parents) > 3:
        repo = here.parents[3]
        if (repo / "Cargo.toml").exists() and (repo / "include" / "mcpc.h").exists():
            for profile in ("release", "debug"):
                for name in _LIBNAMES:
                    p = repo / "target" / profile / name
                    if p.exists():
                        found.append(str(p))
    system = ctypes.util.find_library("mcpc")
    if system:
        found.append(system)
    return found


def _load() -> "tuple[ctypes.CDLL, str]":
    env = os.environ.get("MCPC_LIBRARY")
    if env:
        # An explicit choice is never silently replaced by another copy.
        return ctypes.CDLL(env), env
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append("%s: %s" % (path, e))
    raise ImportError(
        "libmcpc: cannot find {0}. Set MCPC_LIBRARY to the path of {0}, install "
        "the package from a wheel that bundles it, or build it with `cargo build --release`".format(_LIBNAMES[0])
        + ("; tried: " + "; ".join(errors) if errors else "")
    )


lib, library_path = _load()

# ---- declarations ------------------------------------------------------------------
# The table is _decls.FUNCTIONS, which tests/bindings/check_bindings.py holds to mcpc.h.


def _declare_all() -> None:
    for name, (restype, argtypes) in FUNCTIONS.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            if name in OPTIONAL:
                continue
            raise
        fn.restype = restype
        fn.argtypes = list(argtypes)


_declare_all()

def new_call_opts() -> CallOpts:
    """An mcpc_call_opts_t initialised by mcpc_call_opts_init_sized with this
    binding's size of the struct: the library reads what it knows of it, and the
    fields it adds later as their defaults."""
    opts = CallOpts()
    status = lib.mcpc_call_opts_init_sized(ctypes.byref(opts), ctypes.sizeof(opts))
    if status != 0:  # pragma: no cover - would be a library bug
        raise RuntimeError("mcpc_call_opts_init_sized refused this binding's struct")
    return opts


# ---- userdata registry -----------------------------------------------------------


class Registry:
    """Maps integer keys (passed to C as userdata) to Python objects."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: Dict[int, Any] = {}
        self._keys = itertools.count(1)

    def add(self, obj: Any) -> int:
        with self._lock:
            key = next(self._keys)
            self._items[key] = obj
            return key

    def get(self, key: Optional[int]) -> Any:
        with self._lock:
            return self._items.get(key or 0)

    def pop(self, key: Optional[int]) -> Any:
        with self._lock:
            return self._items.pop(key or 0, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


registry = Registry()


def _free_userdata_py(userdata: Optional[int]) -> None:
    """userdata_free for everything registered: drops the registry entry."""
    registry.pop(userdata)


free_userdata = FREE_CB(_free_userdata_py)


def take_string(ptr: Optional[int]) -> str:
    """Copies an owned `char *` from the library and frees it."""
    if not ptr:
        return ""
    try:
        return ctypes.string_at(ptr).decode("utf-8", errors="replace")
    finally:
        lib.mcpc_string_free(ptr)


def put_string(buf: int, size: int, s: str) -> int:
    """Writes `s` NUL-terminated into a C buffer of `size` bytes: 0, or 1 when it does
    not fit or holds a NUL (the callbacks' "nothing")."""
    data = s.encode("utf-8")
    if len(data) + 1 > size or b"\0" in data:
        return 1
    ctypes.memmove(buf, data + b"\0", len(data) + 1)
    return 0


def text(b: Optional[bytes]) -> str:
    return b.decode("utf-8", errors="replace") if b else ""
