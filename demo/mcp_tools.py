"""What the mcpc test servers serve the same way, whatever their transport.

Python standard library only. Imported by the stdio demo server (demo/server.py)
and by the Streamable HTTP test fixture (tests/fixtures/http_server.py, which puts
this directory on sys.path). Each server keeps its transport, its own faults, its
log file and its command line; the servers' docstrings describe the wire. Here:

    constants            protocol versions, eras, the _meta keys of 2026-07-28;
    dumps, notification  compact JSON (the wire and log form); a notification;
    RpcError             a JSON-RPC error (status: an HTTP status, for the fixture);
    build_tools          the tool catalogue (below);
    check_meta, unsupported_version
                         the _meta checks of a 2026-07-28 request;
    negotiate_version    initialize's protocolVersion choice;
    complete, modern_list
                         "resultType" and the cache fields of 2026-07-28 results;
    ToolServer           per-server state: which requests are modern (the era), the
                         initialize and server/discover results, the clientInfo log
                         record, tools/list pages and tools/call;
    read_resource, get_prompt
                         one resource (demo://greeting: the text "Hello from the
                         mcpc demo.", text/plain; another URI -> -32002) and one
                         prompt (greet, argument who: one user message "Say hello to
                         WHO."; another name -> -32602).

Tools, in tools/list order: echo, add, fail, slow, multi, item_00 ... item_NN
(extra_tools of them), then, in the modern and dual eras only (in dual, legacy
requests see them too):
    needs_state     no requestState -> {"resultType":"input_required",
                    "requestState":"state-1"}; "state-1" -> same with "state-2";
                    "state-2" -> complete, text "done after 3 rounds"; any other
                    requestState -> error -32602 "bad requestState".
    endless_state   always input_required with a fresh requestState "s-1", "s-2", ...
                    (one sequence per server)
    wants_input     no requestState -> input_required with "inputRequests":{"q1":
                    {"method":"elicitation/create","params":{"message":"name?",
                    "requestedSchema":{...}}}} and "requestState":"x" (sent even
                    though the client did not declare elicitation); "x" with
                    inputResponses.q1 {"action":"accept","content":{"name":N}} ->
                    text "hello N", "x" with another q1 -> text "no name",
                    "x" without q1 -> the same input_required again; other -> -32602.
    header_tool     x-mcp-header on region (string, required), priority (integer),
                    verbose (boolean), nested.zone (string); query plain -> "ok".
    bad_header_tool, bad_header_tool2   invalid x-mcp-header (on a number property;
                    inside array items): a client must drop them; calls -> "ok".
    any_structured  -> content text "[1,2,3]", structuredContent [1,2,3].
    (needs_state, endless_state and wants_input calls log {"event":"mrtr",
    "requestState":<params.requestState or null>,"id":ID}.)
The others: echo {text} -> that text; add {a, b} -> text {"sum":N} and
structuredContent {"sum":N}; fail {message} -> isError, text message ("the tool
failed" when it is missing or empty); slow {ms} -> sleeps ms milliseconds
(cancellable; with params._meta.progressToken, 4 notifications/progress spread
over the sleep), then text "slept N ms" and structuredContent
{"slept_ms":N,"cancelled":false}; multi -> text "one", an image, text "two";
item_NN -> text "item_NN". Bad arguments -> -32602 "Invalid arguments for TOOL:
..."; an unknown tool -> -32602 "Unknown tool: NAME".

tools/list pages hold page_size tools; cursors are "c1", "c2", ... (page numbers),
a bad one -> -32602 "Invalid cursor: X". empty_cursor (fault empty-cursor): the
first page has nextCursor "" and cursor "" gets the second page.
"""

import json
import threading
import time

SUPPORTED_VERSIONS = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}
LATEST_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
DUAL_VERSIONS = [MODERN_VERSION, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
ERAS = ("legacy", "modern", "dual")
MODERN_METHODS = ("server/discover", "tools/list", "tools/call")
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
# The extension the demo server offers, with its settings (capabilities.extensions).
DEMO_EXTENSION = "dev.mcpc/demo"
DEMO_EXTENSION_SETTINGS = {"logs": "the extensions a client declares"}
# The skills extension (demo/skills.py), with directory reads.
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"


def dumps(obj):
    """Compact JSON text, the form used on the wire and in the log."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def notification(method, params):
    return {"jsonrpc": "2.0", "method": method, "params": params}


class RpcError(Exception):
    """A JSON-RPC error to be sent back as the response to a request.

    status: the HTTP status of a modern-request rejection (None: 200 as usual);
    only the HTTP fixture uses it."""

    def __init__(self, code, message, data=None, status=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.status = status

    def error(self):
        err = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err

    def reply(self, rid):
        return {"jsonrpc": "2.0", "id": rid, "error": self.error()}


def _schema(props, required=()):
    return {"type": "object", "properties": props, "required": list(required)}


def _text(text):
    return {"type": "text", "text": text}


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# ---- the tool catalogue -------------------------------------------------------

def build_tools(extra, era="legacy"):
    """Tool definitions in the fixed tools/list order."""
    tools = [
        {"name": "echo", "description": "Echo the given text back.",
         "inputSchema": _schema({"text": {"type": "string"}}, ["text"])},
        {"name": "add", "description": "Add two numbers.",
         "inputSchema": _schema({"a": {"type": "number"}, "b": {"type": "number"}}, ["a", "b"]),
         "outputSchema": _schema({"sum": {"type": "number"}}, ["sum"])},
        {"name": "fail", "description": "Always fail with an error result.",
         "inputSchema": _schema({"message": {"type": "string"}})},
        {"name": "slow", "description": "Sleep for ms milliseconds (cancellable, reports progress).",
         "inputSchema": _schema({"ms": {"type": "integer"}}, ["ms"])},
        {"name": "multi", "description": "Return text, image and text content blocks.",
         "inputSchema": _schema({})},
    ]
    for i in range(extra):
        tools.append({"name": "item_%02d" % i, "description": "Filler tool number %d." % i,
                      "inputSchema": {"type": "object", "properties": {}}})
    if era != "legacy":
        tools.extend(modern_tools())
    return tools


def modern_tools():
    """The tools added in the modern and dual eras (after all the others)."""
    return [
        {"name": "needs_state",
         "description": "Completes after two input_required rounds (requestState only).",
         "inputSchema": _schema({})},
        {"name": "endless_state",
         "description": "Always answers input_required with a new requestState.",
         "inputSchema": _schema({})},
        {"name": "wants_input",
         "description": "Asks for a name with an elicitation/create input request.",
         "inputSchema": _schema({})},
        {"name": "header_tool",
         "description": "Mirrors parameters into Mcp-Param-* HTTP headers; answers ok.",
         "inputSchema": {
             "type": "object",
             "properties": {
                 "region": {"type": "string", "x-mcp-header": "Region"},
                 "priority": {"type": "integer", "x-mcp-header": "Priority"},
                 "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
                 "nested": {"type": "object", "properties": {
                     "zone": {"type": "string", "x-mcp-header": "Zone"}}},
                 "query": {"type": "string"},
             },
             "required": ["region"]}},
        {"name": "bad_header_tool",
         "description": "Invalid: x-mcp-header on a number property.",
         "inputSchema": {"type": "object", "properties": {
             "amount": {"type": "number", "x-mcp-header": "Amount"}}}},
        {"name": "bad_header_tool2",
         "description": "Invalid: x-mcp-header inside the items of an array property.",
         "inputSchema": {"type": "object", "properties": {
             "tags": {"type": "array",
                      "items": {"type": "string", "x-mcp-header": "Tag"}}}}},
        {"name": "any_structured",
         "description": "Returns a JSON array as structuredContent.",
         "inputSchema": _schema({})},
    ]


# ---- versions and 2026-07-28 request checks -----------------------------------

def negotiate_version(requested):
    """initialize's protocolVersion: the requested one if supported, else the latest."""
    return requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION


def unsupported_version(requested, supported):
    return RpcError(-32022, "Unsupported protocol version",
                    {"supported": list(supported), "requested": requested}, status=400)


def check_meta(raw_params, supported):
    """Validate a modern request's params._meta; returns params (a dict)."""
    if not isinstance(raw_params, dict):
        raise RpcError(-32602, "Invalid params: params with _meta is required", status=400)
    meta = raw_params.get("_meta")
    if not isinstance(meta, dict):
        raise RpcError(-32602, "Invalid params: params._meta is required", status=400)
    version = meta.get(META_VERSION)
    if not isinstance(version, str):
        raise RpcError(-32602, "Invalid params: _meta %s is required (a string)" % META_VERSION,
                       status=400)
    if version != MODERN_VERSION:
        raise unsupported_version(version, supported)
    if META_CAPS not in meta:
        raise RpcError(-32021, "Missing required client capabilities",
                       {"requiredCapabilities": {}}, status=400)
    if not isinstance(meta[META_CAPS], dict):
        raise RpcError(-32602, "Invalid params: _meta %s must be an object" % META_CAPS,
                       status=400)
    return raw_params


GREETING_URI = "demo://greeting"


def read_resource(params):
    """resources/read of the one demo resource."""
    uri = params.get("uri")
    if uri != GREETING_URI:
        raise RpcError(-32002, "Resource not found", {"uri": uri})
    return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "Hello from the mcpc demo."}]}


PROMPTS = [{"name": "greet", "description": "A greeting",
            "arguments": [{"name": "who", "description": "Whom to greet", "required": False}]}]


def list_prompts():
    """prompts/list: the one demo prompt, on one page."""
    return {"prompts": PROMPTS}


def get_prompt(params):
    """prompts/get of the one demo prompt."""
    if params.get("name") != "greet":
        raise RpcError(-32602, "Unknown prompt: %s" % params.get("name"))
    who = (params.get("arguments") or {}).get("who", "the world")
    return {"description": "A greeting",
            "messages": [{"role": "user", "content": _text("Say hello to %s." % who)}]}


def complete(result):
    """A modern result: "resultType":"complete" first, unless it has a resultType."""
    if "resultType" in result:
        return result
    return dict({"resultType": "complete"}, **result)


def modern_list(result):
    """A modern tools/list result: resultType first, then the page, then cache fields."""
    out = {"resultType": "complete"}
    out.update(result)
    out.update({"ttlMs": 0, "cacheScope": "private"})
    return out


# ---- per-server state ---------------------------------------------------------

class ToolServer:
    """Eras, initialize and server/discover, tools/list pages and tools/call.

    era: legacy, modern or dual. server_info and instructions: what initialize and
    server/discover report. empty_cursor: the empty-cursor fault (the first page
    has nextCursor "" and cursor "" gets the second page). log_event(obj): records
    a log event (the mrtr and client-info events). Safe to use from several threads."""

    def __init__(self, era, page_size, extra_tools, server_info, instructions,
                 empty_cursor=False, log_event=None):
        self.era = era
        self.supported = [MODERN_VERSION] if era == "modern" else DUAL_VERSIONS
        self.server_info = server_info
        self.instructions = instructions
        self.page_size = page_size
        self.tools = build_tools(extra_tools, era)
        self.names = {t["name"] for t in self.tools}
        self.by_name = {t["name"]: t for t in self.tools}
        self.empty_cursor = empty_cursor
        self.log_event = log_event if log_event is not None else (lambda obj: None)
        self.lock = threading.Lock()
        self.endless_seq = 0        # endless_state requestStates
        self.client_info = None     # last recorded _meta clientInfo (modern requests)

    def grow(self):
        """Adds a tool grown_N (the grow fault: the server's tools change)."""
        with self.lock:
            n = sum(1 for t in self.tools if t["name"].startswith("grown_"))
            tool = {"name": "grown_%d" % n, "description": "Added while running.",
                    "inputSchema": {"type": "object"}}
            self.tools = self.tools + [tool]
            self.names = self.names | {tool["name"]}
            self.by_name = dict(self.by_name, **{tool["name"]: tool})

    # eras

    def is_modern(self, method, params, header_version=None):
        """Whether a request is served the 2026-07-28 way (depends on the era).

        params: a dict; header_version: an HTTP MCP-Protocol-Version header."""
        if self.era != "dual":
            return self.era == "modern"
        if method == "initialize":
            return False
        if method == "server/discover" or header_version == MODERN_VERSION:
            return True
        meta = params.get("_meta")  # a legacy version here: served the legacy way
        if not isinstance(meta, dict) or META_VERSION not in meta:
            return False
        version = meta[META_VERSION]
        return not (isinstance(version, str) and version in SUPPORTED_VERSIONS)

    def check_modern(self, method, raw_params):
        """A modern request's params (a dict) after the initialize and _meta checks."""
        if method == "initialize":
            requested = raw_params.get("protocolVersion") if isinstance(raw_params, dict) else None
            raise unsupported_version(requested if isinstance(requested, str) else "",
                                      self.supported)
        return check_meta(raw_params, self.supported)

    def record_client_info(self, info):
        """Log a client-info event when a modern request's clientInfo has changed."""
        if info is None:
            return
        with self.lock:
            if info == self.client_info:
                return
            self.client_info = info
        self.log_event({"event": "client-info", "clientInfo": info})

    def record_client_extensions(self, capabilities):
        """Log a client-extensions event when the extensions a client declares (in
        initialize, or in a modern request's _meta) have changed."""
        if not isinstance(capabilities, dict) or "extensions" not in capabilities:
            return
        extensions = capabilities["extensions"]
        with self.lock:
            if extensions == getattr(self, "client_extensions", None):
                return
            self.client_extensions = extensions
        self.log_event({"event": "client-extensions", "extensions": extensions})

    def initialize_result(self, version):
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}, "resources": {}, "prompts": {},
                             "extensions": {DEMO_EXTENSION: DEMO_EXTENSION_SETTINGS,
                                            SKILLS_EXTENSION: {"directoryRead": True}}},
            "serverInfo": dict(self.server_info),
            "instructions": self.instructions,
        }

    def discover(self):
        return {
            "resultType": "complete",
            "supportedVersions": list(self.supported),
            "capabilities": {"tools": {}, "resources": {}, "prompts": {},
                             "extensions": {DEMO_EXTENSION: DEMO_EXTENSION_SETTINGS,
                                            SKILLS_EXTENSION: {"directoryRead": True}}},
            "instructions": self.instructions,
            "ttlMs": 60000,
            "cacheScope": "public",
            "_meta": {META_SERVER_INFO: dict(self.server_info)},
        }

    # tools/list

    # tools: the listing to page through (None: self.tools; the demo server's
    # --tasks adds its task tools after them for the requests that see tasks).

    def page_number(self, cursor, bounded=True, tools=None):
        """The 0-based page a cursor stands for; -32602 for a bad cursor.

        bounded: a cursor past the last page is bad (False: any "cN" is good)."""
        tools = self.tools if tools is None else tools
        if cursor is None:
            return 0
        digits = cursor[1:] if isinstance(cursor, str) and cursor.startswith("c") else ""
        n = int(digits) if digits.isdigit() else 0
        if cursor == "" and self.empty_cursor:
            n = 1
        if n < 1 or (bounded and n * self.page_size >= len(tools)):
            raise RpcError(-32602, "Invalid cursor: %s" % (cursor,))
        return n

    def page(self, n, tools=None):
        """The tools of page n (0-based); empty past the end."""
        tools = self.tools if tools is None else tools
        start = n * self.page_size
        return tools[start:start + self.page_size]

    def list_tools(self, cursor, tools=None):
        """The tools/list result for a cursor (None: the first page)."""
        tools = self.tools if tools is None else tools
        n = self.page_number(cursor, tools=tools)
        result = {"tools": self.page(n, tools)}
        if (n + 1) * self.page_size < len(tools):
            result["nextCursor"] = "" if self.empty_cursor and n == 0 else "c%d" % (n + 1)
        return result

    # tools/call

    def call_tool(self, params, cancel, progress, rid=None):
        """Run a tool; None means the call was cancelled.

        cancel: an Event that stops `slow` (None: not cancellable). progress(msg)
        sends a notifications/progress message; None: no progress is sent."""
        name = params.get("name")
        args = params.get("arguments")
        if not isinstance(args, dict):
            args = {}
        if not isinstance(name, str) or name not in self.names:
            raise RpcError(-32602, "Unknown tool: %s" % name)
        if name == "echo":
            text = args.get("text")
            if not isinstance(text, str):
                raise RpcError(-32602, "Invalid arguments for echo: text must be a string")
            return {"content": [_text(text)]}
        if name == "add":
            a, b = args.get("a"), args.get("b")
            if not (_is_number(a) and _is_number(b)):
                raise RpcError(-32602, "Invalid arguments for add: a and b must be numbers")
            out = {"sum": a + b}
            return {"content": [_text(dumps(out))], "structuredContent": out}
        if name == "fail":
            message = args.get("message")
            if not isinstance(message, str) or not message:
                message = "the tool failed"
            return {"content": [_text(message)], "isError": True}
        if name == "slow":
            return self.slow(args, params, cancel or threading.Event(), progress)
        if name == "multi":
            return {"content": [_text("one"),
                                {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
                                _text("two")]}
        if name in ("needs_state", "endless_state", "wants_input"):
            return self.mrtr_tool(rid, name, params)
        if name in ("header_tool", "bad_header_tool", "bad_header_tool2"):
            return {"content": [_text("ok")]}
        if name == "any_structured":
            return {"resultType": "complete", "content": [_text("[1,2,3]")],
                    "structuredContent": [1, 2, 3]}
        return {"content": [_text(name)]}  # item_NN

    def mrtr_tool(self, rid, name, params):
        """needs_state, endless_state, wants_input: multi round-trip (input_required)."""
        state = params.get("requestState")
        self.log_event({"event": "mrtr", "requestState": state, "id": rid})
        if name == "endless_state":
            with self.lock:
                self.endless_seq += 1
                n = self.endless_seq
            return {"resultType": "input_required", "requestState": "s-%d" % n}
        if name == "needs_state":
            if state is None:
                return {"resultType": "input_required", "requestState": "state-1"}
            if state == "state-1":
                return {"resultType": "input_required", "requestState": "state-2"}
            if state == "state-2":
                return {"content": [_text("done after 3 rounds")]}
            raise RpcError(-32602, "bad requestState")
        # wants_input
        ask = {"resultType": "input_required",
               "inputRequests": {"q1": {"method": "elicitation/create", "params": {
                   "message": "name?",
                   "requestedSchema": {"type": "object",
                                       "properties": {"name": {"type": "string"}}}}}},
               "requestState": "x"}
        if state is None:
            return ask
        if state != "x":
            raise RpcError(-32602, "bad requestState")
        responses = params.get("inputResponses")
        answer = responses.get("q1") if isinstance(responses, dict) else None
        if not isinstance(answer, dict):
            return ask
        content = answer.get("content")
        name_given = content.get("name") if isinstance(content, dict) else None
        if answer.get("action") == "accept" and isinstance(name_given, str):
            return {"content": [_text("hello %s" % name_given)]}
        return {"content": [_text("no name")]}

    @staticmethod
    def slow(args, params, cancel, progress):
        """Sleep ms milliseconds, or until cancel is set (then None); with a
        progressToken, 4 progress notifications spread over the sleep."""
        ms = args.get("ms")
        if not isinstance(ms, int) or isinstance(ms, bool) or ms < 0:
            raise RpcError(-32602, "Invalid arguments for slow: ms must be a non-negative integer")
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        start = time.monotonic()
        steps = 4 if token is not None else 1
        for k in range(1, steps + 1):
            remaining = start + ms * k / steps / 1000.0 - time.monotonic()
            if cancel.wait(max(0.0, remaining)):
                break
            if token is not None and progress is not None:
                progress(notification("notifications/progress",
                                      {"progressToken": token, "progress": k, "total": 4}))
        if cancel.is_set():
            return None  # the cancel was logged when it arrived
        return {"content": [_text("slept %d ms" % ms)],
                "structuredContent": {"slept_ms": ms, "cancelled": False}}
