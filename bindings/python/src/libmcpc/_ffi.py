"""Loading libmcpc and declaring its C ABI for ctypes (private).

Lifetimes of callbacks: every C callback is one of the module-level CFUNCTYPE
objects below (the trampolines), created once and alive for as long as the module.
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
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_bool,
    c_char_p,
    c_double,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint32,
    c_void_p,
)
from pathlib import Path
from typing import Any, Dict, List, Optional

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

# ---- types ----------------------------------------------------------------------

PROGRESS_CB = CFUNCTYPE(None, c_void_p, c_double, c_double, c_char_p)
CONNECT_DONE_CB = CFUNCTYPE(None, c_void_p, c_int, c_void_p, c_char_p)
LIST_DONE_CB = CFUNCTYPE(None, c_void_p, c_int, c_void_p, c_char_p)
CALL_DONE_CB = CFUNCTYPE(None, c_void_p, c_int, c_void_p, c_char_p)
STDERR_CB = CFUNCTYPE(None, c_void_p, c_void_p, c_size_t)
FREE_CB = CFUNCTYPE(None, c_void_p)
NOTIFICATION_CB = CFUNCTYPE(None, c_void_p, c_char_p, c_char_p)
LOG_CB = CFUNCTYPE(None, c_void_p, c_char_p, c_char_p, c_char_p)
TOKEN_CB = CFUNCTYPE(c_int32, c_void_p, c_char_p, c_void_p, c_size_t)
SEND_CB = CFUNCTYPE(c_int32, c_void_p, c_void_p, c_size_t)
CLOSE_CB = CFUNCTYPE(None, c_void_p)
REQUEST_CB = CFUNCTYPE(c_int32, c_void_p, c_void_p, c_void_p, c_size_t)


class CallOpts(Structure):
    """mcpc_call_opts_t. The library may know a longer struct than this one (it
    grows by struct_size), so instances live in a larger zeroed buffer: see
    new_call_opts()."""

    _fields_ = [
        ("struct_size", c_uint32),
        ("timeout_ms", c_int64),
        ("cancel", c_void_p),
        ("on_progress", PROGRESS_CB),
        ("progress_userdata", c_void_p),
        ("reset_timeout_on_progress", c_bool),
        ("max_total_ms", c_int64),
    ]


_CALL_OPTS_BUFFER = 512  # bytes; far more than any version of the struct


def new_call_opts() -> CallOpts:
    """An initialised mcpc_call_opts_t (mcpc_call_opts_init), in a buffer large
    enough for whatever size this library's version of the struct has."""
    buf = ctypes.create_string_buffer(_CALL_OPTS_BUFFER)
    opts = CallOpts.from_buffer(buf)
    lib.mcpc_call_opts_init(ctypes.byref(opts))
    if opts.struct_size > _CALL_OPTS_BUFFER:  # pragma: no cover - would be a library bug
        raise RuntimeError("mcpc_call_opts_t is larger than expected")
    return opts


def _declare(name: str, restype: Any, *argtypes: Any, optional: bool = False) -> None:
    try:
        fn = getattr(lib, name)
    except AttributeError:
        if optional:
            return
        raise
    fn.restype = restype
    fn.argtypes = list(argtypes)


_S = c_int  # mcpc_status_t
_P = c_void_p

_declare("mcpc_version", c_char_p)
_declare("mcpc_status_name", c_char_p, c_int32)
_declare("mcpc_last_error_message", c_char_p)
_declare("mcpc_last_error_status", _S)
_declare("mcpc_last_error_rpc_code", c_int64)
_declare("mcpc_string_free", None, _P)

_declare("mcpc_cancel_new", _P)
_declare("mcpc_cancel_trigger", None, _P)
_declare("mcpc_cancel_is_triggered", c_bool, _P)
_declare("mcpc_cancel_free", None, _P)
_declare("mcpc_call_opts_init", None, POINTER(CallOpts))

_declare("mcpc_options_new", _P)
_declare("mcpc_options_free", None, _P)
_declare("mcpc_options_set_timeout_ms", _S, _P, c_int64)
_declare("mcpc_options_set_client_info", _S, _P, c_char_p, c_char_p)
_declare("mcpc_options_set_protocol_version", _S, _P, c_char_p)
_declare("mcpc_options_set_negotiation", _S, _P, c_int32, optional=True)
_declare("mcpc_options_set_max_pages", _S, _P, c_size_t)
_declare("mcpc_options_set_max_message_size", _S, _P, c_size_t)
_declare("mcpc_options_set_close_grace_ms", _S, _P, c_int64, c_int64)
_declare("mcpc_options_set_restart", _S, _P, c_uint32, c_int64)
_declare("mcpc_options_set_env", _S, _P, c_char_p, c_char_p)
_declare("mcpc_options_clear_env", _S, _P)
_declare("mcpc_options_set_cwd", _S, _P, c_char_p)
_declare("mcpc_options_set_stderr", _S, _P, c_int32)
_declare("mcpc_options_set_stderr_callback", _S, _P, STDERR_CB, _P, FREE_CB)
_declare("mcpc_options_set_notification_callback", _S, _P, NOTIFICATION_CB, _P, FREE_CB)
_declare("mcpc_options_add_header", _S, _P, c_char_p, c_char_p)
_declare("mcpc_options_set_bearer_token", _S, _P, c_char_p)
_declare("mcpc_options_set_token_callback", _S, _P, TOKEN_CB, _P, FREE_CB)
_declare("mcpc_options_add_ca_pem", _S, _P, c_char_p, c_size_t)
_declare("mcpc_options_add_ca_file", _S, _P, c_char_p)
_declare("mcpc_options_set_standalone_stream", _S, _P, c_bool)

_declare("mcpc_client_connect_stdio", _S, POINTER(c_char_p), c_size_t, _P, POINTER(_P))
_declare("mcpc_client_connect_http", _S, c_char_p, _P, POINTER(_P))
_declare("mcpc_client_connect_transport", _S, _P, _P, POINTER(_P))
_declare(
    "mcpc_client_connect_stdio_async", _S, POINTER(c_char_p), c_size_t, _P, CONNECT_DONE_CB, _P, POINTER(_P)
)
_declare("mcpc_client_connect_http_async", _S, c_char_p, _P, CONNECT_DONE_CB, _P, POINTER(_P))
_declare("mcpc_client_connect_transport_async", _S, _P, _P, CONNECT_DONE_CB, _P, POINTER(_P))
_declare("mcpc_client_server_info", _S, _P, POINTER(_P))
_declare("mcpc_client_protocol_version", c_char_p, _P)
_declare("mcpc_client_negotiated_by", c_char_p, _P, optional=True)
_declare("mcpc_client_list_tools", _S, _P, POINTER(CallOpts), POINTER(_P))
_declare("mcpc_client_list_tools_async", _S, _P, POINTER(CallOpts), LIST_DONE_CB, _P, POINTER(_P))
_declare("mcpc_client_call_tool", _S, _P, c_char_p, c_char_p, POINTER(CallOpts), POINTER(_P))
_declare(
    "mcpc_client_call_tool_async", _S, _P, c_char_p, c_char_p, POINTER(CallOpts), CALL_DONE_CB, _P, POINTER(_P)
)
_declare("mcpc_options_set_http_transport", _S, _P, c_int32)
_declare("mcpc_options_set_http_version", _S, _P, c_int32)
_declare("mcpc_options_set_log_level", _S, _P, c_char_p)
_declare("mcpc_options_set_validate_output", _S, _P, c_bool)
_declare("mcpc_options_set_log_callback", _S, _P, LOG_CB, _P, FREE_CB)
_declare("mcpc_client_set_log_level", _S, _P, c_char_p, POINTER(CallOpts))
_declare("mcpc_options_set_proxy", _S, _P, c_char_p)
_declare("mcpc_options_set_no_proxy", _S, _P, c_char_p)
_declare("mcpc_options_set_proxy_credentials", _S, _P, c_char_p, c_char_p)
_declare("mcpc_client_forget_lists", _S, _P)
_declare("mcpc_client_list_resources", _S, _P, POINTER(CallOpts), POINTER(_P))
_declare("mcpc_client_list_resource_templates", _S, _P, POINTER(CallOpts), POINTER(_P))
_declare("mcpc_client_list_prompts", _S, _P, POINTER(CallOpts), POINTER(_P))
_declare("mcpc_client_read_resource", _S, _P, c_char_p, POINTER(CallOpts), POINTER(_P))
_declare("mcpc_client_subscribe_resource", _S, _P, c_char_p, POINTER(CallOpts))
_declare("mcpc_client_unsubscribe_resource", _S, _P, c_char_p, POINTER(CallOpts))
_declare("mcpc_client_get_prompt", _S, _P, c_char_p, c_char_p, POINTER(CallOpts), POINTER(_P))
_declare(
    "mcpc_client_complete", _S, _P, c_int32, c_char_p, c_char_p, c_char_p, c_char_p, POINTER(CallOpts), POINTER(_P)
)
_declare("mcpc_client_request", _S, _P, c_char_p, c_char_p, POINTER(CallOpts), POINTER(_P))
_declare("mcpc_client_notify", _S, _P, c_char_p, c_char_p)
_declare("mcpc_client_close", _S, _P)
_declare("mcpc_client_free", None, _P)

_declare("mcpc_op_cancel", None, _P)
_declare("mcpc_op_is_finished", c_bool, _P)
_declare("mcpc_op_free", None, _P)

_declare("mcpc_result_json", c_char_p, _P)
_declare("mcpc_result_structured_json", c_char_p, _P)
_declare("mcpc_result_text", _P, _P, POINTER(c_size_t))
_declare("mcpc_result_text_count", c_size_t, _P)
_declare("mcpc_result_text_at", _P, _P, c_size_t, POINTER(c_size_t))
_declare("mcpc_result_is_error", c_bool, _P)
_declare("mcpc_result_free", None, _P)

_declare("mcpc_contents_count", c_size_t, _P)
_declare("mcpc_contents_uri", c_char_p, _P, c_size_t)
_declare("mcpc_contents_mime_type", c_char_p, _P, c_size_t)
_declare("mcpc_contents_text", _P, _P, c_size_t, POINTER(c_size_t))
_declare("mcpc_contents_blob", _P, _P, c_size_t, POINTER(c_size_t))
_declare("mcpc_contents_meta_json", c_char_p, _P, c_size_t)
_declare("mcpc_contents_json", c_char_p, _P)
_declare("mcpc_contents_free", None, _P)

_declare("mcpc_tool_list_len", c_size_t, _P)
_declare("mcpc_tool_list_name", c_char_p, _P, c_size_t)
_declare("mcpc_tool_list_json", c_char_p, _P, c_size_t)
_declare("mcpc_tool_list_to_json", _S, _P, POINTER(_P))
_declare("mcpc_tool_list_free", None, _P)

_declare("mcpc_transport_new", _S, SEND_CB, CLOSE_CB, _P, FREE_CB, POINTER(_P))
_declare("mcpc_transport_new_request", _S, REQUEST_CB, CLOSE_CB, _P, FREE_CB, POINTER(_P))
_declare("mcpc_transport_deliver", _S, _P, c_char_p, c_size_t)
_declare("mcpc_transport_end", _S, _P, c_char_p)
_declare("mcpc_transport_free", None, _P)
_declare("mcpc_exchange_expects_response", c_bool, _P)
_declare("mcpc_exchange_complete", _S, _P, c_char_p, c_size_t)
_declare("mcpc_exchange_fail", None, _P, c_char_p)


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
