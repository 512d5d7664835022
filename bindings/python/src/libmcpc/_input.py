"""Input for the server (docs/client.md, "Input for the server"): the server's
elicitation, sampling and roots requests reach a Python handler as an
:class:`InputRequest`, and what it returns answers them. The keyword options
``on_elicitation``, ``elicitation_modes``, ``on_sampling``, ``sampling_tools``,
``roots`` and ``on_roots`` are set by the setters here (_options.py names them).

Each request is an mcpc_input_t, answered exactly once and freed by the trampoline
below, whatever the handler does: no Python exception reaches C."""

from __future__ import annotations

import asyncio
import enum
import inspect
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Mapping, Optional, Sequence, Union

from . import _decls, _ffi
from ._async import on_loop
from ._convert import PathLike, _raise_last
from ._ffi import lib, registry
from .errors import Status

if TYPE_CHECKING:
    from ._options import _Options

__all__ = ["Elicitation", "InputHandler", "InputKind", "InputRequest", "Root"]

# The longest message mcpc_input_fail is given for a handler's exception (characters).
MAX_FAIL_MESSAGE = 1000


class InputKind(str, enum.Enum):
    """What the server asks for (mcpc_input_kind)."""

    FORM = "form"  # elicitation/create in form mode: fill in `schema`
    URL = "url"  # elicitation/create in URL mode: consent to open `url`
    SAMPLING = "sampling"  # sampling/createMessage: `params` holds the messages
    ROOTS = "roots"  # roots/list


_KINDS = {1: InputKind.FORM, 2: InputKind.URL, 3: InputKind.SAMPLING, 4: InputKind.ROOTS}


@dataclass(frozen=True)
class InputRequest:
    """One request of the server for input, as the handler gets it.

    ``server`` is who asks (the name or title it gave itself): show it to the user.
    ``host_server`` is the host's name for that server (its name in the configuration,
    or the one given to ``add_stdio``/``add_http``), None outside a host.
    ``message``, ``schema`` (the form's requested schema, parsed, already checked) and
    ``url`` (show it in full; never open it without consent) are an elicitation's, None
    for other kinds. ``params`` are the request's params as sent (for sampling its
    messages, model preferences, ...)."""

    kind: InputKind
    method: str
    server: str
    host_server: Optional[str]
    message: Optional[str]
    schema: Optional[Dict[str, Any]]
    url: Optional[str]
    params: Dict[str, Any]


@dataclass(frozen=True)
class Elicitation:
    """An elicitation's answer: ``Elicitation.accept(content)`` (a form's content, a
    dict; a URL is accepted with none), ``Elicitation.decline()`` (the user said no) or
    ``Elicitation.cancel()`` (dismissed without choosing)."""

    action: str
    content: Optional[Mapping[str, Any]] = None

    @classmethod
    def accept(cls, content: Optional[Mapping[str, Any]] = None) -> "Elicitation":
        return cls("accept", content)

    @classmethod
    def decline(cls) -> "Elicitation":
        return cls("decline")

    @classmethod
    def cancel(cls) -> "Elicitation":
        return cls("cancel")


_ACTIONS = {"accept": 1, "decline": 2, "cancel": 3}

Root = Union[PathLike, Mapping[str, Any]]
"""A root: a directory (a path, or a ``file://`` URI), or ``{"uri": ..., "name": ...}``."""
InputHandler = Callable[[InputRequest], Any]
"""handler(request) -> the answer: an :class:`Elicitation` (or an ElicitResult dict)
for an elicitation, the result dict for sampling, a list of roots for roots. It may be
a coroutine function with the asyncio client and AsyncHost."""


def _opt_text(b: Optional[bytes]) -> Optional[str]:
    return b.decode("utf-8", "replace") if b is not None else None


def _opt_json(b: Optional[bytes]) -> Any:
    return json.loads(b) if b is not None else None


def _read(ptr: int) -> InputRequest:
    kind = lib.mcpc_input_kind(ptr)
    params = _opt_json(lib.mcpc_input_params_json(ptr))
    return InputRequest(
        kind=_KINDS.get(kind, kind),
        method=_ffi.text(lib.mcpc_input_method(ptr)),
        server=_ffi.text(lib.mcpc_input_server(ptr)),
        host_server=_opt_text(lib.mcpc_input_host_server(ptr)),
        message=_opt_text(lib.mcpc_input_message(ptr)),
        schema=_opt_json(lib.mcpc_input_schema_json(ptr)),
        url=_opt_text(lib.mcpc_input_url(ptr)),
        params=params if isinstance(params, dict) else {},
    )


def root(r: Root) -> Dict[str, Any]:
    """One root as the server is sent it: ``{"uri": "file:///...", "name": ...}``."""
    if isinstance(r, Mapping):
        if not isinstance(r.get("uri"), str):
            raise ValueError("a root given as a dict needs a 'uri' string: %r" % (r,))
        return dict(r)
    text = os.fsdecode(os.fspath(r)) if isinstance(r, (str, bytes, os.PathLike)) else None
    if text is None:
        raise TypeError("a root is a path, a file:// URI or a dict, not %r" % (r,))
    if text.startswith("file://"):
        name = text.rstrip("/").rsplit("/", 1)[-1]
        return {"uri": text, "name": name} if name else {"uri": text}
    path = Path(text).absolute()
    return {"uri": path.as_uri(), "name": path.name or str(path)}


def _roots_result(answer: Any) -> Dict[str, Any]:
    if isinstance(answer, Mapping) and "roots" in answer:
        return dict(answer)
    if isinstance(answer, (str, bytes, os.PathLike)) or not isinstance(answer, (list, tuple)):
        raise TypeError("a roots handler returns a list of roots, not %s" % type(answer).__name__)
    return {"roots": [root(r) for r in answer]}


def _put(text: Optional[str]) -> Optional[bytes]:
    return text.encode("utf-8", "replace").replace(b"\0", b"") if text is not None else None


class _Handler:
    """One handler as registered: the user's callable, and the loop a coroutine it
    returns is run on (the asyncio client's or AsyncHost's; None: the blocking ones)."""

    def __init__(self, fn: InputHandler, loop: Optional[asyncio.AbstractEventLoop]) -> None:
        self.fn = fn
        self.loop = loop

    def serve(self, ptr: int) -> None:
        """Runs on an mcpc blocking-pool thread: asks the handler, answers, frees."""
        try:
            try:
                request = _read(ptr)
                answer = self.fn(request)
                if inspect.isawaitable(answer):
                    if self.loop is None:
                        close = getattr(answer, "close", None)
                        if close is not None:
                            close()  # never awaited: no "was never awaited" warning
                        raise TypeError("an async handler needs the asyncio client (Client.*_async) or AsyncHost")
                    answer = on_loop(answer, self.loop)
                self._answer(ptr, request, answer)
            except BaseException as e:  # noqa: BLE001 - the server hears of it; C never sees it
                message = str(e) or type(e).__name__
                lib.mcpc_input_fail(ptr, _put(message[:MAX_FAIL_MESSAGE]))
        finally:
            lib.mcpc_input_free(ptr)

    @staticmethod
    def _answer(ptr: int, request: InputRequest, answer: Any) -> None:
        if request.kind in (InputKind.FORM, InputKind.URL):
            if answer is None:
                answer = Elicitation.cancel()
            if isinstance(answer, Elicitation):
                if answer.action not in _ACTIONS:
                    raise ValueError("an elicitation's action is accept, decline or cancel, not %r" % answer.action)
                content = json.dumps(answer.content) if answer.content is not None else None
                status = lib.mcpc_input_elicit(ptr, _ACTIONS[answer.action], _put(content))
            elif isinstance(answer, Mapping):
                status = lib.mcpc_input_complete(ptr, _put(json.dumps(answer)))
            else:
                raise TypeError("an elicitation handler returns an Elicitation or a dict, not %s"
                                % type(answer).__name__)
        elif request.kind is InputKind.ROOTS:
            status = lib.mcpc_input_complete(ptr, _put(json.dumps(_roots_result(answer))))
        else:
            if not isinstance(answer, Mapping):
                raise TypeError("a sampling handler returns the result dict (role, content, model), not %s"
                                % type(answer).__name__)
            status = lib.mcpc_input_complete(ptr, _put(json.dumps(answer)))
        if status not in (Status.OK, Status.ALREADY_COMPLETED, Status.TIMEOUT, Status.CLOSED):
            # Refused (content that does not fit the schema, a malformed result): the
            # request is still open, and fails with why.
            raise _raise_last(status)


def _input_py(userdata: Optional[int], ptr: Optional[int]) -> None:
    if not ptr:
        return
    try:
        handler = registry.get(userdata)
        if handler is None:
            lib.mcpc_input_free(ptr)  # refused at once
            return
        handler.serve(ptr)
    except BaseException:  # noqa: BLE001 - serve frees it; nothing may unwind into C
        pass


_input_trampoline = _decls.INPUT_CB(_input_py)

# ---- the options' setters (see _options.py; set in the order written there) --------

_MODES = {"form": 1, "url": 2}


def _register(o: "_Options", function: str, fn: InputHandler, *flags: int) -> None:
    if not callable(fn):
        raise TypeError("an input handler must be a callable taking an InputRequest, not %r" % (fn,))
    key = registry.add(_Handler(fn, o.loop))  # popped by userdata_free, which runs exactly once
    o.call(function, *flags, _input_trampoline, key, _ffi.free_userdata)


def set_elicitation_modes(o: "_Options", modes: Union[str, Sequence[str]]) -> None:
    names = [modes] if isinstance(modes, str) else list(modes)
    if not names or any(m not in _MODES for m in names):
        raise ValueError("elicitation_modes must name 'form' and/or 'url', not %r" % (modes,))
    bits = 0
    for m in names:
        bits |= _MODES[m]
    o.notes["elicitation_modes"] = bits


def set_on_elicitation(o: "_Options", fn: InputHandler) -> None:
    _register(o, "mcpc_options_set_elicitation_handler", fn, o.notes.get("elicitation_modes", 1))


def set_sampling_tools(o: "_Options", tools: bool) -> None:
    o.notes["sampling_tools"] = bool(tools)


def set_on_sampling(o: "_Options", fn: InputHandler) -> None:
    _register(o, "mcpc_options_set_sampling_handler", fn, 1 if o.notes.get("sampling_tools") else 0)


def set_roots(o: "_Options", roots: Sequence[Root]) -> None:
    if isinstance(roots, (str, bytes, os.PathLike, Mapping)):
        raise TypeError("roots is a list of roots (paths, file:// URIs or dicts)")
    fixed = {"roots": [root(r) for r in roots]}  # checked now, not at the server's request
    _register(o, "mcpc_options_set_roots_handler", lambda request: fixed)
    o.notes["roots"] = True


def set_on_roots(o: "_Options", fn: InputHandler) -> None:
    if o.notes.get("roots"):
        raise ValueError("give roots or on_roots, not both")
    _register(o, "mcpc_options_set_roots_handler", fn)

