"""Resources, prompts, completions and requests by method name: the part of
:class:`~libmcpc.Client` beyond tools."""

from __future__ import annotations

import ctypes
import json
from ctypes import byref, c_size_t, c_void_p
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Union

from . import _ffi
from ._async import in_thread
from ._call import _call_opts
from ._convert import _check
from ._ffi import lib

__all__ = ["Content", "ResourceContents"]

COMPLETE_PROMPT = 0
COMPLETE_RESOURCE = 1


@dataclass(frozen=True)
class Content:
    """One entry of a resource read: ``text`` for a text, ``blob`` (decoded bytes)
    for a blob; the other is None."""

    uri: str
    mime_type: Optional[str]
    text: Optional[str]
    blob: Optional[bytes]
    meta: Optional[Dict[str, Any]]


@dataclass(frozen=True)
class ResourceContents:
    """What :meth:`Client.read_resource` returns: the entries, and the result as the
    server sent it (``raw``, blobs still in base64)."""

    contents: List[Content]
    raw: Dict[str, Any]


def _opt(b: Optional[bytes]) -> Optional[str]:
    return b.decode("utf-8", errors="replace") if b is not None else None


def _contents_from(ptr: int) -> ResourceContents:
    """Copies a mcpc_contents_t and frees it."""
    try:
        items = []
        n = c_size_t(0)
        for i in range(lib.mcpc_contents_count(ptr)):
            p = lib.mcpc_contents_text(ptr, i, byref(n))
            text = ctypes.string_at(p, n.value).decode("utf-8", errors="replace") if p else None
            p = lib.mcpc_contents_blob(ptr, i, byref(n))
            blob = ctypes.string_at(p, n.value) if p else None
            meta = lib.mcpc_contents_meta_json(ptr, i)
            items.append(Content(
                uri=_ffi.text(lib.mcpc_contents_uri(ptr, i)),
                mime_type=_opt(lib.mcpc_contents_mime_type(ptr, i)),
                text=text,
                blob=blob,
                meta=json.loads(meta) if meta is not None else None,
            ))
        raw = json.loads(_ffi.text(lib.mcpc_contents_json(ptr)) or "{}")
        return ResourceContents(contents=items, raw=raw)
    finally:
        lib.mcpc_contents_free(ptr)


def _json_arg(value: Optional[Mapping[str, Any]], what: str) -> Optional[bytes]:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} must be a mapping")
    return json.dumps(dict(value)).encode("utf-8")


class ContentMixin:
    """The methods of :class:`~libmcpc.Client` beyond tools. Each blocking one
    releases the GIL; each ``*_async`` one runs it on a worker thread and cancels
    it (``notifications/cancelled`` to the server) when the awaiting task is
    cancelled."""

    # Provided by Client.
    _enter: Callable[[], int]
    _leave: Callable[[], None]

    def _json_call(self, call: Callable[[int, Any, Any], int], timeout: Optional[float],
                   cancel: Any, fresh: bool = False, task: Optional[str] = None,
                   task_timeout: Optional[float] = None) -> Any:
        opts = _call_opts(timeout, cancel, None, task=task, task_timeout=task_timeout)
        h = self._enter()
        try:
            if fresh:
                _check(lib.mcpc_client_forget_lists(h))
            out = c_void_p()
            _check(call(h, byref(opts), byref(out)))
        finally:
            self._leave()
        return json.loads(_ffi.take_string(out.value))

    def resources(self, *, timeout: Optional[float] = None, cancel: Any = None,
                   fresh: bool = False) -> List[Dict[str, Any]]:
        """Lists every resource (``resources/list``, all pages), each as sent; a kept
        list is reused unless ``fresh``."""
        return list(self._json_call(lambda h, o, out: lib.mcpc_client_list_resources(h, o, out), timeout, cancel, fresh))

    def resource_templates(self, *, timeout: Optional[float] = None, cancel: Any = None,
                            fresh: bool = False) -> List[Dict[str, Any]]:
        """Lists every resource template (``resources/templates/list``, all pages)."""
        return list(self._json_call(
            lambda h, o, out: lib.mcpc_client_list_resource_templates(h, o, out), timeout, cancel, fresh))

    def prompts(self, *, timeout: Optional[float] = None, cancel: Any = None,
                 fresh: bool = False) -> List[Dict[str, Any]]:
        """Lists every prompt (``prompts/list``, all pages), each as sent."""
        return list(self._json_call(lambda h, o, out: lib.mcpc_client_list_prompts(h, o, out), timeout, cancel, fresh))

    def read_resource(self, uri: str, *, timeout: Optional[float] = None, cancel: Any = None) -> ResourceContents:
        """Reads the resource ``uri``: its entries, blobs decoded. A malformed result
        (a blob that is not base64, no contents) raises
        :class:`~libmcpc.ProtocolError`."""
        opts = _call_opts(timeout, cancel, None)
        h = self._enter()
        try:
            out = c_void_p()
            _check(lib.mcpc_client_read_resource(h, uri.encode("utf-8"), byref(opts), byref(out)))
        finally:
            self._leave()
        return _contents_from(out.value or 0)

    def skills(self, *, timeout: Optional[float] = None, cancel: Any = None,
               fresh: bool = False) -> List[Dict[str, Any]]:
        """Lists the server's skills (``skills/list``, all pages): the entries that
        passed their checks, each as sent; kept for the listing's ``ttlMs`` unless
        ``fresh``. No file is fetched."""
        return list(self._json_call(lambda h, o, out: lib.mcpc_client_list_skills(h, o, out), timeout, cancel, fresh))

    def skill(self, uri: str, *, timeout: Optional[float] = None, cancel: Any = None) -> Dict[str, Any]:
        """The entry of the skill whose ``SKILL.md`` is ``uri`` (``skills/get``), checked."""
        u = uri.encode("utf-8")
        return dict(self._json_call(lambda h, o, out: lib.mcpc_client_get_skill(h, u, o, out), timeout, cancel))

    def read_skill_file(self, uri: str, *, timeout: Optional[float] = None, cancel: Any = None) -> ResourceContents:
        """Reads a file of a listed skill, handed out only once verified (size, sha256
        digest, and a SKILL.md's frontmatter against the listing's); a failure, or a
        file no listed skill names, raises :class:`~libmcpc.IntegrityError`."""
        opts = _call_opts(timeout, cancel, None)
        h = self._enter()
        try:
            out = c_void_p()
            _check(lib.mcpc_client_read_skill_file(h, uri.encode("utf-8"), byref(opts), byref(out)))
        finally:
            self._leave()
        return _contents_from(out.value or 0)

    def skill_directory(self, uri: str, *, timeout: Optional[float] = None,
                        cancel: Any = None) -> List[Dict[str, Any]]:
        """The children of a directory of a listed skill (``resources/directory/read``),
        where the server declared ``directoryRead``."""
        u = uri.encode("utf-8")
        return list(self._json_call(lambda h, o, out: lib.mcpc_client_read_skill_directory(h, u, o, out),
                                    timeout, cancel))

    def get_prompt(self, name: str, arguments: Optional[Mapping[str, str]] = None, *,
                   timeout: Optional[float] = None, cancel: Any = None) -> Dict[str, Any]:
        """Gets the prompt ``name`` with ``arguments`` (string values): the result as
        sent (``description``, ``messages`` with their content of any type)."""
        args = _json_arg(arguments, "arguments")
        bname = name.encode("utf-8")
        result: Dict[str, Any] = self._json_call(
            lambda h, o, out: lib.mcpc_client_get_prompt(h, bname, args, o, out), timeout, cancel)
        return result

    def complete(self, ref: Union[Dict[str, str], str], argument: str, value: str, *,
                 context: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None,
                 cancel: Any = None) -> Dict[str, Any]:
        """Completions for ``argument`` (typed so far: ``value``) of a prompt or a
        resource template: ``ref`` is ``{"type": "ref/prompt", "name": ...}``,
        ``{"type": "ref/resource", "uri": ...}``, or a prompt's name. ``context`` holds
        the arguments already chosen. Returns the ``completion`` dict (``values``,
        ``total``, ``hasMore``)."""
        if isinstance(ref, str):
            kind, target = COMPLETE_PROMPT, ref
        elif ref.get("type") == "ref/prompt":
            kind, target = COMPLETE_PROMPT, ref.get("name", "")
        elif ref.get("type") == "ref/resource":
            kind, target = COMPLETE_RESOURCE, ref.get("uri", "")
        else:
            raise ValueError("ref must be a prompt name, or a ref/prompt or ref/resource dict")
        ctx = _json_arg(context, "context")
        bt, ba, bv = target.encode("utf-8"), argument.encode("utf-8"), value.encode("utf-8")
        result = self._json_call(
            lambda h, o, out: lib.mcpc_client_complete(h, kind, bt, ba, bv, ctx, o, out), timeout, cancel)
        completion: Dict[str, Any] = result["completion"]
        return completion

    def read_ui_view(self, uri: str, *, timeout: Optional[float] = None, cancel: Any = None) -> "UiView":
        """MCP Apps: fetches the view ``uri`` (a ``ui://`` URI) and the policy to render
        it under (mcpc_client_read_ui_view): a :class:`UiView`. A view of another MIME
        type, over 8 MiB, or whose ``csp`` declares a source that is not an origin
        raises :class:`ProtocolError` (or :class:`MessageTooLargeError`)."""
        opts = _call_opts(timeout, cancel, None)
        h = self._enter()
        try:
            out = c_void_p()
            _check(lib.mcpc_client_read_ui_view(h, uri.encode("utf-8"), byref(opts), byref(out)))
        finally:
            self._leave()
        return UiView._take(out.value or 0)

    def relay_ui(self, message: str, *, timeout: Optional[float] = None, cancel: Any = None) -> Optional[str]:
        """MCP Apps: relays one JSON-RPC message of a view (its text) to this server and
        returns the reply to hand back to the view, or None for a notification passed
        on (mcpc_client_relay_ui). Only ``tools/call`` of a tool the view may call,
        ``resources/read``, ``ping`` and ``notifications/message`` reach the server;
        anything else is answered with a JSON-RPC error here. A ``ui/`` method raises
        :class:`NotSupportedError` (it is the host's to answer); a message that is not
        one JSON-RPC request or notification raises :class:`InvalidArgumentError`."""
        opts = _call_opts(timeout, cancel, None)
        h = self._enter()
        try:
            out = c_void_p()
            _check(lib.mcpc_client_relay_ui(h, message.encode("utf-8"), byref(opts), byref(out)))
        finally:
            self._leave()
        return _ffi.take_string(out.value) if out.value else None

    def request(self, method: str, params: Optional[Mapping[str, Any]] = None, *,
                timeout: Optional[float] = None, cancel: Any = None, task: Optional[str] = None,
                task_timeout: Optional[float] = None) -> Any:
        """Sends the request ``method`` with ``params`` and returns its result as sent,
        for methods with no call of their own (extensions among them). A task the
        server makes of it is followed to its end, as :meth:`call` does."""
        p = _json_arg(params, "params")
        bm = method.encode("utf-8")
        return self._json_call(lambda h, o, out: lib.mcpc_client_request(h, bm, p, o, out), timeout, cancel,
                               task=task, task_timeout=task_timeout)

    def subscribe_resource(self, uri: str, *, timeout: Optional[float] = None, cancel: Any = None) -> None:
        """Subscribes to ``uri`` (``resources/subscribe``; under 2026-07-28 one
        ``subscriptions/listen`` kept open for the whole set, sent again when it drops;
        :class:`NotSupportedError` when the server leaves ``uri`` out of its
        acknowledgement): ``notifications/resources/updated``
        then reach ``on_notification``."""
        self._uri_call(lib.mcpc_client_subscribe_resource, uri, timeout, cancel)

    def unsubscribe_resource(self, uri: str, *, timeout: Optional[float] = None, cancel: Any = None) -> None:
        """Ends a subscription of :meth:`subscribe_resource`."""
        self._uri_call(lib.mcpc_client_unsubscribe_resource, uri, timeout, cancel)

    def _uri_call(self, fn: Callable[..., int], uri: str, timeout: Optional[float], cancel: Any) -> None:
        opts = _call_opts(timeout, cancel, None)
        h = self._enter()
        try:
            _check(fn(h, uri.encode("utf-8"), byref(opts)))
        finally:
            self._leave()

    def set_log_level(self, level: Optional[str], *, timeout: Optional[float] = None, cancel: Any = None) -> None:
        """Asks the server for log messages at ``level`` and above (``"debug"`` ...
        ``"emergency"``; None: under 2026-07-28 none). They reach ``on_log``."""
        opts = _call_opts(timeout, cancel, None)
        h = self._enter()
        try:
            _check(lib.mcpc_client_set_log_level(h, level.encode("utf-8") if level is not None else None, byref(opts)))
        finally:
            self._leave()

    def notify(self, method: str, params: Optional[Mapping[str, Any]] = None) -> None:
        """Sends the notification ``method`` with ``params``."""
        h = self._enter()
        try:
            _check(lib.mcpc_client_notify(h, method.encode("utf-8"), _json_arg(params, "params")))
        finally:
            self._leave()

    # -- asyncio --

    async def resources_async(self, **kw: Any) -> List[Dict[str, Any]]:
        """As :meth:`resources`, without blocking the event loop."""
        return await in_thread(self.resources, **kw)

    async def resource_templates_async(self, **kw: Any) -> List[Dict[str, Any]]:
        """As :meth:`resource_templates`, without blocking the event loop."""
        return await in_thread(self.resource_templates, **kw)

    async def prompts_async(self, **kw: Any) -> List[Dict[str, Any]]:
        """As :meth:`prompts`, without blocking the event loop."""
        return await in_thread(self.prompts, **kw)

    async def read_resource_async(self, uri: str, **kw: Any) -> ResourceContents:
        """As :meth:`read_resource`, without blocking the event loop."""
        return await in_thread(self.read_resource, uri, **kw)

    async def get_prompt_async(self, name: str, arguments: Optional[Mapping[str, str]] = None,
                               **kw: Any) -> Dict[str, Any]:
        """As :meth:`get_prompt`, without blocking the event loop."""
        return await in_thread(self.get_prompt, name, arguments, **kw)

    async def complete_async(self, ref: Union[Dict[str, str], str], argument: str, value: str,
                             **kw: Any) -> Dict[str, Any]:
        """As :meth:`complete`, without blocking the event loop."""
        return await in_thread(self.complete, ref, argument, value, **kw)

    async def request_async(self, method: str, params: Optional[Mapping[str, Any]] = None, **kw: Any) -> Any:
        """As :meth:`request`, without blocking the event loop."""
        return await in_thread(self.request, method, params, **kw)


@dataclass
class UiView:
    """An MCP Apps view: its HTML (the server's: render it only under ``csp``, in a
    sandboxed frame), the Content-Security-Policy, the frame's ``allow`` attribute
    ("" for none), the dedicated ``domain`` it asks for, ``prefers_border`` and the
    ``_meta.ui`` the policy came from."""

    html: str
    csp: str
    allow: str
    domain: Optional[str]
    prefers_border: Optional[bool]
    meta: Optional[Dict[str, Any]]

    @classmethod
    def _take(cls, ptr: int) -> "UiView":
        try:
            n = c_size_t()
            p = lib.mcpc_ui_view_html(ptr, byref(n))
            html = ctypes.string_at(p, n.value).decode("utf-8", "replace") if p else ""
            border = lib.mcpc_ui_view_prefers_border(ptr)
            domain = lib.mcpc_ui_view_domain(ptr)
            return cls(html=html, csp=_ffi.text(lib.mcpc_ui_view_csp(ptr)),
                       allow=_ffi.text(lib.mcpc_ui_view_allow(ptr)),
                       domain=domain.decode("utf-8") if domain is not None else None,
                       prefers_border=None if border < 0 else bool(border),
                       meta=json.loads(_ffi.text(lib.mcpc_ui_view_meta_json(ptr))))
        finally:
            lib.mcpc_ui_view_free(ptr)
