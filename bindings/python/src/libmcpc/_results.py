"""A tool call's result and a tool list, copied out of the library."""

from __future__ import annotations

import ctypes
import json
from ctypes import byref, c_size_t, c_void_p
from dataclasses import dataclass, field
from typing import Any, Dict, List

from . import _ffi
from ._convert import _check
from ._ffi import lib


@dataclass(frozen=True)
class CallResult:
    """The result of a tool call, copied out of the library.

    ``structured`` is the parsed ``structuredContent`` (None when absent), ``text``
    the text blocks joined with newlines, ``texts`` each text block, ``raw`` the whole
    ``CallToolResult`` as parsed JSON (content blocks of every type are kept),
    ``is_error`` the tool's ``isError``. Tool output is untrusted data.
    """

    raw: Dict[str, Any]
    structured: Any
    text: str
    texts: List[str]
    is_error: bool
    json: str = field(repr=False)

    @property
    def content(self) -> List[Dict[str, Any]]:
        """The content blocks, as the server sent them."""
        content = self.raw.get("content")
        return content if isinstance(content, list) else []


def _result_from(ptr: int) -> CallResult:
    """Copies a result and frees it."""
    try:
        raw_json = _ffi.text(lib.mcpc_result_json(ptr))
        structured_json = lib.mcpc_result_structured_json(ptr)
        n = c_size_t(0)
        p = lib.mcpc_result_text(ptr, byref(n))
        joined = ctypes.string_at(p, n.value).decode("utf-8", errors="replace") if p else ""
        texts = []
        for i in range(lib.mcpc_result_text_count(ptr)):
            p = lib.mcpc_result_text_at(ptr, i, byref(n))
            texts.append(ctypes.string_at(p, n.value).decode("utf-8", errors="replace") if p else "")
        return CallResult(
            raw=json.loads(raw_json) if raw_json else {},
            structured=json.loads(structured_json) if structured_json is not None else None,
            text=joined,
            texts=texts,
            is_error=bool(lib.mcpc_result_is_error(ptr)),
            json=raw_json,
        )
    finally:
        lib.mcpc_result_free(ptr)


MODEL = 1
"""A tool the model may see (MCP Apps visibility, MCPC_UI_MODEL)."""
APP = 2
"""A tool its view may call (MCPC_UI_APP)."""


def _tools_from(ptr: int, model_only: bool = False) -> List[Dict[str, Any]]:
    """Copies a tool list and frees it; with ``model_only``, the tools whose MCP Apps
    visibility leaves the model out are left out."""
    try:
        out = c_void_p()
        _check(lib.mcpc_tool_list_to_json(ptr, byref(out)))
        tools = json.loads(_ffi.take_string(out.value))
        if not isinstance(tools, list):
            return []
        if model_only:
            tools = [t for i, t in enumerate(tools) if lib.mcpc_tool_list_ui_visibility(ptr, i) & MODEL]
        return tools
    finally:
        lib.mcpc_tool_list_free(ptr)


def _views_from(ptr: int) -> Dict[str, Dict[str, Any]]:
    """Each tool's MCP Apps view, by tool name, and frees the list."""
    try:
        views: Dict[str, Dict[str, Any]] = {}
        for i in range(lib.mcpc_tool_list_count(ptr)):
            uri = lib.mcpc_tool_list_ui_uri(ptr, i)
            if uri is None:
                continue
            bits = lib.mcpc_tool_list_ui_visibility(ptr, i)
            name = lib.mcpc_tool_list_name(ptr, i).decode("utf-8", "replace")
            views[name] = {"uri": uri.decode("utf-8", "replace"),
                           "visibility": [w for w, b in (("model", MODEL), ("app", APP)) if bits & b]}
        return views
    finally:
        lib.mcpc_tool_list_free(ptr)
