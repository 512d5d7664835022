"""The connect functions' keyword options, defined once: each is a field of
CommonOptions, StdioOptions or HttpOptions, typed, and annotated with the Option that
sets it on an mcpc_options_t. The connect functions (sync and asyncio) and the host's
constructors and add_* methods take these dicts as keywords; their signatures and
build_options are made from them."""

from __future__ import annotations

import asyncio
import ctypes
import inspect
import json
import os
from typing import (
    Annotated,
    Any,
    Callable,
    Dict,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypedDict,
    TypeVar,
    Union,
    get_type_hints,
)

from . import _decls, _ffi
from ._convert import PathLike, _b, _check, _ms
from ._ffi import lib, registry
from ._input import (InputHandler, Root, set_elicitation_modes, set_on_elicitation, set_on_roots, set_on_sampling,
                     set_roots, set_sampling_tools)
from ._oauth import OAuth

__all__ = ["CommonOptions", "StdioOptions", "HttpOptions", "HostOptions", "build_options", "layered",
           "options_signature"]

NotificationCallback = Callable[[str, Optional[Dict[str, Any]]], None]
"""on_notification(method, params or None)."""
LogCallback = Callable[[str, Optional[str], Any], None]
"""on_log(level, logger or None, data): one log message of the server."""
StderrCallback = Callable[[bytes], None]
"""stderr(line): one line the server wrote to stderr, without its line end."""
TokenCallback = Callable[[Optional[str]], Optional[str]]
"""token(www_authenticate): the bearer token; www_authenticate is None for the first
token and the server's WWW-Authenticate value after a 401. None means "no token"."""

# ---- the callbacks' trampolines (module-level: they live as long as the module) --------


def _stderr_py(userdata: Optional[int], line: Optional[int], length: int) -> None:
    fn = registry.get(userdata)
    if fn is not None:
        fn(ctypes.string_at(line, length) if line else b"")


def _notification_py(userdata: Optional[int], method: Optional[bytes], params: Optional[bytes]) -> None:
    fn = registry.get(userdata)
    if fn is not None:
        fn(_ffi.text(method), json.loads(params) if params is not None else None)


def _log_py(userdata: Optional[int], level: Optional[bytes], logger: Optional[bytes], data: Optional[bytes]) -> None:
    fn = registry.get(userdata)
    if fn is not None:
        fn(_ffi.text(level), _ffi.text(logger) if logger is not None else None, json.loads(data) if data else None)


def _token_py(userdata: Optional[int], www: Optional[bytes], buf: Optional[int], size: int) -> int:
    try:
        fn = registry.get(userdata)
        if fn is None or not buf:
            return 1
        token = fn(www.decode("utf-8", "replace") if www is not None else None)
        if token is None:
            return 1
        return _ffi.put_string(buf, size, token)
    except BaseException:  # noqa: BLE001 - an exception means "no token"
        return 1


_stderr_trampoline = _decls.STDERR_CB(_stderr_py)
_notification_trampoline = _decls.NOTIFICATION_CB(_notification_py)
_log_trampoline = _decls.LOG_CB(_log_py)
_token_trampoline = _decls.TOKEN_CB(_token_py)


class _Options:
    """An mcpc_options_t being built; freed after the connect call copied it. `loop`
    is the event loop of an asyncio client or host (its coroutine handlers run there);
    `notes` carries what one setter leaves for a later one (elicitation_modes for
    on_elicitation)."""

    def __init__(self, loop: Optional[asyncio.AbstractEventLoop] = None) -> None:
        self.loop = loop
        self.notes: Dict[str, Any] = {}
        self.handle = lib.mcpc_options_new()
        if not self.handle:
            raise MemoryError("mcpc_options_new failed")

    def free(self) -> None:
        handle, self.handle = self.handle, None
        if handle:
            lib.mcpc_options_free(handle)

    def __enter__(self) -> "_Options":
        return self

    def __exit__(self, *exc: object) -> None:
        self.free()

    def call(self, function: str, *args: Any) -> None:
        """Calls the setter named `function` on this handle; raises for its status."""
        _check(getattr(lib, function)(self.handle, *args))

    def callback(self, function: str, trampoline: Any, fn: Callable[..., Any]) -> None:
        if not callable(fn):
            raise TypeError("expected a callable, got %r" % (fn,))
        key = registry.add(fn)  # popped by userdata_free, which runs exactly once
        self.call(function, trampoline, key, _ffi.free_userdata)


# ---- how each option is set ----------------------------------------------------------

Setter = Callable[[_Options, Any], None]


class Option:
    """How one keyword option reaches the options handle: `set(options, value)`, run
    unless the value is None. `default` is the keyword's default."""

    def __init__(self, set: Setter, default: Any = None) -> None:
        self.set = set
        self.default = default


def _text(function: str) -> Setter:
    return lambda o, v: o.call(function, _b(v))


def _texts(function: str) -> Setter:
    def set(o: _Options, v: Tuple[str, str]) -> None:
        first, second = v
        o.call(function, _b(first), _b(second))

    return set


def _number(function: str) -> Setter:
    return lambda o, v: o.call(function, v)


def _flag(function: str) -> Setter:
    return lambda o, v: o.call(function, True) if v else None


def _callback(function: str, trampoline: Any) -> Setter:
    return lambda o, v: o.callback(function, trampoline, v)


def _choice(function: str, choices: Mapping[str, int], error: str) -> Setter:
    def set(o: _Options, v: Any) -> None:
        if v not in choices:
            raise ValueError(error)
        o.call(function, choices[v])

    return set


def _timeout(o: _Options, v: float) -> None:
    o.call("mcpc_options_set_timeout_ms", _ms(v, "timeout"))


def _clear_env(o: _Options, v: bool) -> None:
    if v:
        o.call("mcpc_options_clear_env")


def _negotiation(o: _Options, v: str) -> None:
    if v not in ("auto", "legacy"):
        raise ValueError("negotiation must be 'auto' or 'legacy'")
    if not hasattr(lib, "mcpc_options_set_negotiation"):
        raise NotImplementedError("this libmcpc has no negotiation setting")
    o.call("mcpc_options_set_negotiation", {"auto": 0, "legacy": 1}[v])


def _env(o: _Options, env: Mapping[str, Optional[str]]) -> None:
    for name, value in env.items():
        o.call("mcpc_options_set_env", _b(name), None if value is None else _b(value))


def _stderr(o: _Options, v: Any) -> None:
    if callable(v):
        o.callback("mcpc_options_set_stderr_callback", _stderr_trampoline, v)
    elif v in ("discard", "inherit"):
        o.call("mcpc_options_set_stderr", {"discard": 0, "inherit": 1}[v])
    else:
        raise ValueError("stderr must be 'discard', 'inherit' or a callable taking bytes")


def _restart(o: _Options, v: Tuple[int, float]) -> None:
    times, backoff = v
    if not isinstance(times, int) or times < 0:
        raise ValueError("restart must be (times, backoff seconds) with times >= 0")
    o.call("mcpc_options_set_restart", times, _ms(backoff, "restart"))


def _close_grace(o: _Options, v: Tuple[float, float]) -> None:
    after_stdin, after_term = v
    o.call("mcpc_options_set_close_grace_ms", _ms(after_stdin, "close_grace"), _ms(after_term, "close_grace"))


def _extensions(o: _Options, extensions: Mapping[str, Any]) -> None:
    for ext_id, settings in extensions.items():
        text = None if settings is None else settings if isinstance(settings, str) else json.dumps(settings)
        o.call("mcpc_options_add_extension", _b(ext_id), None if text is None else _b(text))


def _headers(o: _Options, headers: Mapping[str, str]) -> None:
    for name, value in headers.items():
        o.call("mcpc_options_add_header", _b(name), _b(value))


def _cacert(o: _Options, v: Union[PathLike, Sequence[PathLike]]) -> None:
    for f in [v] if isinstance(v, (str, bytes, os.PathLike)) else list(v):
        o.call("mcpc_options_add_ca_file", _b(f))


def _ca_pem(o: _Options, v: Union[str, bytes]) -> None:
    pem = _b(v)
    o.call("mcpc_options_add_ca_pem", pem, len(pem))


def _oauth(o: _Options, v: OAuth) -> None:
    if not isinstance(v, OAuth):
        raise TypeError("oauth must be a libmcpc.OAuth")
    v._attach(o.handle, _check)


# ---- the options -----------------------------------------------------------------------
# Set in the order written: clear_env before env, so that env adds to an empty one.

_HTTP_TRANSPORTS = {"auto": 0, "streamable": 1, "sse": 2}
_HTTP_VERSIONS = {"auto": 0, "1.1": 1, "2-prior-knowledge": 2}


class CommonOptions(TypedDict, total=False):
    """Keyword options of every connect function."""

    timeout: Annotated[Optional[float], Option(_timeout)]
    negotiation: Annotated[Optional[str], Option(_negotiation)]
    protocol_version: Annotated[Optional[str], Option(_text("mcpc_options_set_protocol_version"))]
    client_info: Annotated[Optional[Tuple[str, str]], Option(_texts("mcpc_options_set_client_info"))]
    on_notification: Annotated[Optional[NotificationCallback],
                               Option(_callback("mcpc_options_set_notification_callback", _notification_trampoline))]
    log_level: Annotated[Optional[str], Option(_text("mcpc_options_set_log_level"))]
    validate_output: Annotated[bool, Option(_flag("mcpc_options_set_validate_output"), False)]
    on_log: Annotated[Optional[LogCallback], Option(_callback("mcpc_options_set_log_callback", _log_trampoline))]
    max_pages: Annotated[Optional[int], Option(_number("mcpc_options_set_max_pages"))]
    max_message_size: Annotated[Optional[int], Option(_number("mcpc_options_set_max_message_size"))]
    # Extension id -> its settings (a dict, or JSON text of an object; None: {}).
    extensions: Annotated[Optional[Mapping[str, Any]], Option(_extensions)]
    # Input for the server (_input.py): each mode and flag before its handler.
    elicitation_modes: Annotated[Union[str, Sequence[str]], Option(set_elicitation_modes, ("form",))]
    on_elicitation: Annotated[Optional[InputHandler], Option(set_on_elicitation)]
    sampling_tools: Annotated[bool, Option(set_sampling_tools, False)]
    on_sampling: Annotated[Optional[InputHandler], Option(set_on_sampling)]
    roots: Annotated[Optional[Sequence[Root]], Option(set_roots)]
    on_roots: Annotated[Optional[InputHandler], Option(set_on_roots)]


class StdioOptions(CommonOptions, total=False):
    """Keyword options of Client.stdio and Client.stdio_async."""

    clear_env: Annotated[bool, Option(_clear_env, False)]
    env: Annotated[Optional[Mapping[str, Optional[str]]], Option(_env)]
    cwd: Annotated[Optional[PathLike], Option(_text("mcpc_options_set_cwd"))]
    stderr: Annotated[Union[str, StderrCallback], Option(_stderr, "discard")]
    restart: Annotated[Optional[Tuple[int, float]], Option(_restart)]
    close_grace: Annotated[Optional[Tuple[float, float]], Option(_close_grace)]


class HttpOptions(CommonOptions, total=False):
    """Keyword options of Client.http and Client.http_async."""

    headers: Annotated[Optional[Mapping[str, str]], Option(_headers)]
    bearer: Annotated[Optional[str], Option(_text("mcpc_options_set_bearer_token"))]
    token: Annotated[Optional[TokenCallback], Option(_callback("mcpc_options_set_token_callback", _token_trampoline))]
    cacert: Annotated[Union[None, PathLike, Sequence[PathLike]], Option(_cacert)]
    ca_pem: Annotated[Union[None, str, bytes], Option(_ca_pem)]
    standalone_stream: Annotated[bool, Option(_flag("mcpc_options_set_standalone_stream"), False)]
    http_transport: Annotated[Optional[str], Option(_choice(
        "mcpc_options_set_http_transport", _HTTP_TRANSPORTS, "http_transport must be 'auto', 'streamable' or 'sse'"))]
    http_version: Annotated[Optional[str], Option(_choice(
        "mcpc_options_set_http_version", _HTTP_VERSIONS, "http_version must be 'auto', '1.1' or '2-prior-knowledge'"))]
    proxy: Annotated[Optional[str], Option(_text("mcpc_options_set_proxy"))]
    no_proxy: Annotated[Optional[str], Option(_text("mcpc_options_set_no_proxy"))]
    proxy_credentials: Annotated[Optional[Tuple[str, str]], Option(_texts("mcpc_options_set_proxy_credentials"))]
    oauth: Annotated[Optional[OAuth], Option(_oauth)]


class HostOptions(StdioOptions, HttpOptions, total=False):
    """Keyword options of Host and AsyncHost: the defaults of its servers, each taking
    those of its transport."""


def _table(kind: Any) -> Dict[str, Tuple[Any, Option]]:
    """name -> (type, Option) of one TypedDict, in the order written."""
    hints = get_type_hints(kind, include_extras=True)
    return {name: (hint.__origin__, hint.__metadata__[0]) for name, hint in hints.items()}


_KINDS = {"stdio": StdioOptions, "http": HttpOptions, "transport": CommonOptions, "host": HostOptions}
_TABLES = {kind: _table(cls) for kind, cls in _KINDS.items()}
# Every option once, in the order they are set: the common ones, stdio's, HTTP's.
_ALL = _TABLES["host"]


def build_options(kind: str, options: Mapping[str, Any],
                  loop: Optional[asyncio.AbstractEventLoop] = None) -> _Options:
    """An mcpc_options_t with these keyword options of a `kind` connect function
    (the caller frees it); `loop`: the asyncio client's or host's event loop. Raises
    TypeError for an option it does not take."""
    table = _TABLES[kind]
    unknown = [k for k in options if k not in table]
    if unknown:
        other = [k for k in unknown if k in _ALL]
        if other:
            raise TypeError("%s: options for another transport: %s" % (kind, ", ".join(other)))
        raise TypeError("%s() got an unexpected keyword argument %r" % (kind, unknown[0]))
    o = _Options(loop)
    try:
        for name, (_, option) in table.items():
            value = options.get(name, option.default)
            if value is not None:
                option.set(o, value)
    except BaseException:
        o.free()
        raise
    return o


_EITHER = {"roots": "on_roots", "on_roots": "roots"}


def layered(kind: str, defaults: Mapping[str, Any], own: Mapping[str, Any]) -> Dict[str, Any]:
    """The keyword options of a host's `kind` server: the host's defaults that apply to
    that transport, then the server's own over them."""
    table = _TABLES[kind]
    # A server's own roots or on_roots replaces the host's other one.
    replaced = {_EITHER[k] for k in own if k in _EITHER}
    return {**{k: v for k, v in defaults.items() if k in table and k not in replaced}, **own}


F = TypeVar("F", bound=Callable[..., Any])


def options_signature(kind: str, returns: str = "Client") -> Callable[[F], F]:
    """Gives a connect function taking **options the signature that names them, for
    help() and inspect: its own parameters, then each option keyword-only."""

    def mark(fn: F) -> F:
        own = [p for p in inspect.signature(fn).parameters.values() if p.kind != p.VAR_KEYWORD]
        opts = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option.default, annotation=t)
                for name, (t, option) in _TABLES[kind].items()]
        fn.__signature__ = inspect.Signature(own + opts, return_annotation=returns)  # type: ignore[attr-defined]
        return fn

    return mark
