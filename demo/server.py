#!/usr/bin/env python3
"""mcpc demo MCP server: JSON-RPC 2.0 over stdio, Python standard library only.

It serves as the demo server and the test fixture of the mcpc client library.

Usage:
    python3 demo/server.py [--era legacy|modern|dual] [--fault MODE] [--log FILE]
                           [--page-size N] [--extra-tools N]

Framing: one JSON object per line on stdin/stdout (compact JSON + "\\n").
Blank lines are ignored; lines that are not JSON are reported on stderr and
otherwise ignored. stdin EOF ends the server with status 0.

Eras (--era ERA or env MCPC_DEMO_ERA; default legacy):
    legacy  MCP 2024-11-05 .. 2025-11-25 only (initialize); the behaviour below.
    modern  MCP 2026-07-28 only (no initialize; per-request _meta; see "Modern").
    dual    both: server/discover and every request whose params._meta has
            "io.modelcontextprotocol/protocolVersion" with a value other than a
            legacy version (2024-11-05 .. 2025-11-25) are served the modern way;
            initialize and everything else the legacy way.

Legacy methods: initialize, notifications/initialized, ping, tools/list
(paginated, cursors "c1", "c2", ... = page number), tools/call,
notifications/cancelled. Anything else (server/discover included) gets -32601
(requests) or is ignored (notifications). initialize does not have to come first.

Modern (2026-07-28) requests, checked in this order:
    initialize (modern era only) -> -32022 {"message":"Unsupported protocol version",
        "data":{"supported":[...],"requested":<params.protocolVersion, else "">}}.
    params or params._meta missing, or _meta lacks a string
        "io.modelcontextprotocol/protocolVersion" -> -32602;
    that version is not 2026-07-28 -> -32022 (data as above);
    "io.modelcontextprotocol/clientCapabilities" missing -> -32021
        {"message":"Missing required client capabilities",
         "data":{"requiredCapabilities":{}}} (present but not an object -> -32602).
    Then: server/discover, tools/list, tools/call; anything else (ping too) -> -32601.
    supported = ["2026-07-28"] (modern) or ["2026-07-28","2025-11-25","2025-06-18",
    "2025-03-26","2024-11-05"] (dual), in -32022 data and in server/discover.
    Every result has "resultType":"complete" (except input_required ones, below).
    server/discover -> {"resultType":"complete","supportedVersions":supported,
        "capabilities":{"tools":{}},"instructions":"...","ttlMs":60000,
        "cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":
        {"name":"mcpc-demo","version":"0.1.0"}}}.
    tools/list results also carry "ttlMs":0,"cacheScope":"private".
    The server never sends requests to the client (ping-during-call answers
    normally); notifications/initialized is ignored; cancellation is
    notifications/cancelled as in legacy.

Tools, listed in this order: echo, add, fail, slow, multi, item_00 ... item_NN,
then, in the modern and dual eras only (in dual, legacy requests see them too):
    needs_state     no requestState -> {"resultType":"input_required",
                    "requestState":"state-1"}; "state-1" -> same with "state-2";
                    "state-2" -> complete, text "done after 3 rounds"; any other
                    requestState -> error -32602 "bad requestState".
    endless_state   always input_required with a fresh requestState "s-1", "s-2", ...
    wants_input     no requestState -> input_required with "inputRequests":{"q1":
                    {"method":"elicitation/create","params":{"message":"name?",
                    "requestedSchema":{...}}}} and "requestState":"x" (sent even
                    though the client did not declare elicitation); "x" with
                    inputResponses.q1 {"action":"accept","content":{"name":N}} ->
                    text "hello N", "x" with another q1 -> text "no name",
                    "x" without q1 -> the same input_required again; other -> -32602.
    header_tool     x-mcp-header on region (string), priority (integer), verbose
                    (boolean), nested.zone (string); -> text "ok" (stdio ignores
                    the annotations).
    bad_header_tool, bad_header_tool2   invalid x-mcp-header (on a number property;
                    inside array items): a client must drop them; calls -> "ok".
    any_structured  -> content text "[1,2,3]", structuredContent [1,2,3].
`slow` runs in a worker thread, can be cancelled and reports progress when the
call carries params._meta.progressToken.

--log FILE appends every received line verbatim, plus event lines:
    {"event":"cancelled","requestId":ID}
    {"event":"client-response","id":ID,"msg":{...}}
    {"event":"grandchild","pid":PID}
    {"event":"mrtr","requestState":<params.requestState or null>,"id":ID}
        (each needs_state, endless_state and wants_input call)
    {"event":"client-info","clientInfo":{...}}   (a modern request whose _meta
        "io.modelcontextprotocol/clientInfo" differs from the last one recorded)

Fault modes (--fault MODE or env MCPC_DEMO_FAULT), in every era unless noted:
    repeated-cursor     the page for cursor X has nextCursor X again
    cursor-cycle        first page -> "A" -> "B" -> "A" -> ...
    duplicate-names     the second page also contains a tool named "echo"
    endless-pages       every page has a fresh nextCursor (c1, c2, ... forever)
    empty-cursor        the first page has nextCursor "" (empty string) and cursor ""
                        gets the second page (as "c1" does); later pages as usual
    bad-version         initialize answers protocolVersion "1999-01-01"
    empty-version       initialize answers protocolVersion ""
    init-error          initialize answers error -32603 "initialization refused"
    exit-on-discover    a server/discover request makes the server exit at once
                        with status 1, without replying
    silent-discover     server/discover requests are never answered
    exit-during-call    tools/call: os._exit(3) without replying
    garbage-line        "this is not json" line before each tools/call response
    bad-responses       before each tools/call response: a response with unknown
                        id 987654, then one with both result and error
    long-line           tools/call echo answers a 2 MiB text block
    stderr-flood        tools/call first writes 1 MiB of lines to stderr
    truncate-exit       tools/call: writes half a response line, then exits 4
    invalid-utf8        before each tools/call response: a line with the same id
                        whose text holds bytes that are not UTF-8
    dup-response        each tools/call response is written twice
    string-id           before each tools/call response: the same response with
                        the id as a string ("5" for 5)
    notification-flood  tools/call first sends 20000 notifications/message
    stop-reading        on tools/call, stops reading stdin and never answers
                        (never sees EOF either; SIGTERM ends it)
    ping-during-call    legacy tools/call first sends requests "ping" and
                        "sampling/createMessage" to the client and waits (<= 5 s)
                        for both responses (modern requests: no effect)
    notify-during-call  tools/call first sends notifications/message and
                        notifications/tools/list_changed
    stubborn            ignores SIGTERM and never exits on stdin EOF
    linger              never exits on stdin EOF (SIGTERM still ends it)
    grandchild          spawns `sleep 300` in the same process group at startup
                        and leaves it running when exiting on stdin EOF
    close-stdout        tools/call closes fd 1, then sleeps forever
"""

import argparse
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time

SUPPORTED_VERSIONS = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}
LATEST_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
DUAL_VERSIONS = [MODERN_VERSION, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
ERAS = ("legacy", "modern", "dual")
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SERVER_INFO = {"name": "mcpc-demo", "version": "0.1.0"}
INSTRUCTIONS = "Demo server for mcpc: echo, add, fail, slow."
FAULTS = {
    "repeated-cursor", "cursor-cycle", "duplicate-names", "endless-pages",
    "empty-cursor", "bad-version", "empty-version", "init-error",
    "exit-on-discover", "silent-discover", "exit-during-call",
    "garbage-line", "bad-responses", "long-line", "stderr-flood",
    "truncate-exit", "invalid-utf8", "dup-response", "string-id", "notification-flood", "stop-reading",
    "ping-during-call", "notify-during-call", "stubborn", "linger", "grandchild",
    "close-stdout",
}


class RpcError(Exception):
    """A JSON-RPC error to be sent back as the response to a request."""

    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def error(self):
        err = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err


def _schema(props, required=()):
    return {"type": "object", "properties": props, "required": list(required)}


def _text(text):
    return {"type": "text", "text": text}


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


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


def unsupported_version(requested, supported):
    return RpcError(-32022, "Unsupported protocol version",
                    {"supported": list(supported), "requested": requested})


def check_meta(raw_params, supported):
    """Validate a modern request's params._meta; returns params (a dict)."""
    if not isinstance(raw_params, dict):
        raise RpcError(-32602, "Invalid params: params with _meta is required")
    meta = raw_params.get("_meta")
    if not isinstance(meta, dict):
        raise RpcError(-32602, "Invalid params: params._meta is required")
    version = meta.get(META_VERSION)
    if not isinstance(version, str):
        raise RpcError(-32602, "Invalid params: _meta %s is required (a string)" % META_VERSION)
    if version != MODERN_VERSION:
        raise unsupported_version(version, supported)
    if META_CAPS not in meta:
        raise RpcError(-32021, "Missing required client capabilities",
                       {"requiredCapabilities": {}})
    if not isinstance(meta[META_CAPS], dict):
        raise RpcError(-32602, "Invalid params: _meta %s must be an object" % META_CAPS)
    return raw_params


class Server:
    def __init__(self, fault, log_path, page_size, extra_tools, era="legacy"):
        self.fault = fault
        self.era = era
        self.supported = [MODERN_VERSION] if era == "modern" else DUAL_VERSIONS
        self.page_size = page_size
        self.tools = build_tools(extra_tools, era)
        self.tool_names = {t["name"] for t in self.tools}
        self.out = sys.stdout.buffer
        self.write_lock = threading.Lock()
        self.log_lock = threading.Lock()
        self.log_file = open(log_path, "a", encoding="utf-8") if log_path else None
        self.state_lock = threading.Lock()
        self.inflight = {}        # json.dumps(request id) -> threading.Event (cancel)
        self.awaiting = {}        # json.dumps(server request id) -> threading.Event
        self.srv_ids = itertools.count(1)
        self.endless_ids = itertools.count(1)   # endless_state requestStates
        self.client_info = None   # last recorded _meta clientInfo (modern requests)

    # ---- output -------------------------------------------------------------

    def write_lines(self, *items):
        """Write messages (dicts) or raw lines (bytes) atomically, one per line."""
        data = b"".join(
            (i if isinstance(i, bytes) else
             json.dumps(i, separators=(",", ":"), ensure_ascii=False).encode("utf-8")) + b"\n"
            for i in items)
        with self.write_lock:
            try:
                self.out.write(data)
                self.out.flush()
            except (OSError, ValueError):
                pass  # client gone or stdout closed on purpose

    def respond(self, rid, result):
        self.write_lines({"jsonrpc": "2.0", "id": rid, "result": result})

    def respond_error(self, rid, code, message, data=None):
        self.write_lines({"jsonrpc": "2.0", "id": rid,
                          "error": RpcError(code, message, data).error()})

    def notify(self, method, params):
        self.write_lines({"jsonrpc": "2.0", "method": method, "params": params})

    def log(self, line):
        if self.log_file is None:
            return
        with self.log_lock:
            self.log_file.write(line.rstrip("\r\n") + "\n")
            self.log_file.flush()

    def log_event(self, obj):
        self.log(json.dumps(obj, separators=(",", ":"), ensure_ascii=False))

    # ---- main loop ----------------------------------------------------------

    def run(self):
        if self.fault == "stubborn":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if self.fault == "grandchild":
            child = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.log_event({"event": "grandchild", "pid": child.pid})
        for raw in sys.stdin.buffer:
            line = raw.decode("utf-8", errors="replace").strip()
            if not line:
                continue
            self.log(line)
            try:
                msg = json.loads(line)
            except ValueError:
                print("demo server: ignoring invalid JSON line: %.200s" % line,
                      file=sys.stderr, flush=True)
                continue
            if not isinstance(msg, dict):
                print("demo server: ignoring non-object message", file=sys.stderr, flush=True)
                continue
            self.dispatch(msg)
        # stdin EOF
        if self.fault in ("stubborn", "linger"):
            sleep_forever()
        if self.log_file is not None:
            self.log_file.flush()
        os._exit(0)  # don't wait for worker threads (possibly blocked writers)

    def dispatch(self, msg):
        method = msg.get("method")
        has_id = "id" in msg
        if method is None:
            if has_id and ("result" in msg or "error" in msg):
                self.on_client_response(msg)
            return
        raw_params = msg.get("params")
        params = raw_params if isinstance(raw_params, dict) else {}
        if not has_id:
            if method == "notifications/cancelled":
                self.on_cancelled(params)
            return  # notifications/initialized and unknown notifications
        rid = msg["id"]
        if method == "server/discover":
            if self.fault == "exit-on-discover":
                if self.log_file is not None:
                    self.log_file.flush()
                os._exit(1)
            if self.fault == "silent-discover":
                return
        try:
            if self.is_modern(method, params):
                self.dispatch_modern(rid, method, raw_params)
            elif method == "initialize":
                self.respond(rid, self.initialize(params))
            elif method == "ping":
                self.respond(rid, {})
            elif method == "tools/list":
                self.respond(rid, self.list_tools(params.get("cursor")))
            elif method == "tools/call":
                self.tools_call(rid, params)
            else:
                raise RpcError(-32601, "Method not found")
        except RpcError as e:
            self.respond_error(rid, e.code, e.message, e.data)

    # ---- modern (2026-07-28) requests ---------------------------------------

    def is_modern(self, method, params):
        """Whether a request is served the 2026-07-28 way (depends on --era)."""
        if self.era != "dual":
            return self.era == "modern"
        if method == "initialize":
            return False
        if method == "server/discover":
            return True
        meta = params.get("_meta")  # a legacy version here: served the legacy way
        if not isinstance(meta, dict) or META_VERSION not in meta:
            return False
        version = meta[META_VERSION]
        return not (isinstance(version, str) and version in SUPPORTED_VERSIONS)

    def dispatch_modern(self, rid, method, raw_params):
        if method == "initialize":
            requested = raw_params.get("protocolVersion") if isinstance(raw_params, dict) else None
            raise unsupported_version(requested if isinstance(requested, str) else "",
                                      self.supported)
        params = check_meta(raw_params, self.supported)
        self.record_client_info(params["_meta"].get(META_CLIENT_INFO))
        if method == "server/discover":
            self.respond(rid, self.discover())
        elif method == "tools/list":
            result = {"resultType": "complete"}
            result.update(self.list_tools(params.get("cursor")))
            result.update({"ttlMs": 0, "cacheScope": "private"})
            self.respond(rid, result)
        elif method == "tools/call":
            self.tools_call(rid, params, modern=True)
        else:
            raise RpcError(-32601, "Method not found")

    def record_client_info(self, info):
        if info is None:
            return
        with self.state_lock:
            if info == self.client_info:
                return
            self.client_info = info
        self.log_event({"event": "client-info", "clientInfo": info})

    def discover(self):
        return {
            "resultType": "complete",
            "supportedVersions": list(self.supported),
            "capabilities": {"tools": {}},
            "instructions": INSTRUCTIONS,
            "ttlMs": 60000,
            "cacheScope": "public",
            "_meta": {META_SERVER_INFO: dict(SERVER_INFO)},
        }

    # ---- notifications and client responses ---------------------------------

    def on_cancelled(self, params):
        key = json.dumps(params.get("requestId"))
        with self.state_lock:
            ev = self.inflight.get(key)
        if ev is not None:
            # Logged here, on the reading thread, so the record exists even when the
            # client closes stdin right after cancelling and the server exits at once.
            self.log_event({"event": "cancelled", "requestId": params.get("requestId")})
            ev.set()

    def on_client_response(self, msg):
        self.log_event({"event": "client-response", "id": msg["id"], "msg": msg})
        with self.state_lock:
            ev = self.awaiting.pop(json.dumps(msg["id"]), None)
        if ev is not None:
            ev.set()

    # ---- initialize / tools/list ------------------------------------------

    def initialize(self, params):
        if self.fault == "init-error":
            raise RpcError(-32603, "initialization refused")
        requested = params.get("protocolVersion")
        version = requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION
        if self.fault == "bad-version":
            version = "1999-01-01"
        elif self.fault == "empty-version":
            version = ""
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": dict(SERVER_INFO),
            "instructions": INSTRUCTIONS,
        }

    def page(self, n):
        """Tools of page n (0-based); synthetic unique tools past the end."""
        start = n * self.page_size
        items = self.tools[start:start + self.page_size]
        if not items and self.fault == "endless-pages":
            items = [{"name": "more_%d_%d" % (n, j), "description": "Endless filler.",
                      "inputSchema": {"type": "object", "properties": {}}}
                     for j in range(self.page_size)]
        return items

    def list_tools(self, cursor):
        if self.fault == "cursor-cycle":
            cycle = {None: (0, "A"), "A": (1, "B"), "B": (2, "A")}
            if cursor not in cycle:
                raise RpcError(-32602, "Invalid cursor: %s" % cursor)
            n, nxt = cycle[cursor]
            return {"tools": self.page(n), "nextCursor": nxt}
        if cursor is None:
            n = 0
        else:
            digits = cursor[1:] if isinstance(cursor, str) and cursor.startswith("c") else ""
            n = int(digits) if digits.isdigit() else 0
            if cursor == "" and self.fault == "empty-cursor":
                n = 1
            if n < 1 or (n * self.page_size >= len(self.tools) and self.fault != "endless-pages"):
                raise RpcError(-32602, "Invalid cursor: %s" % cursor)
        result = {"tools": self.page(n)}
        if self.fault == "duplicate-names" and n == 1:
            result["tools"] = [dict(self.tools[0])] + result["tools"]
        if self.fault == "endless-pages" or (n + 1) * self.page_size < len(self.tools):
            result["nextCursor"] = "c%d" % (n + 1)
        if self.fault == "repeated-cursor" and cursor is not None:
            result["nextCursor"] = cursor
        if self.fault == "empty-cursor" and n == 0 and "nextCursor" in result:
            result["nextCursor"] = ""
        return result

    # ---- tools/call --------------------------------------------------------

    def tools_call(self, rid, params, modern=False):
        fault = self.fault
        if fault == "exit-during-call":
            os._exit(3)
        if fault == "truncate-exit":
            with self.write_lock:
                self.out.write(b'{"jsonrpc":"2.0","id":' + json.dumps(rid).encode() + b',"result":{"cont')
                self.out.flush()
            os._exit(4)
        if fault == "stop-reading":
            sleep_forever()
        if fault == "notification-flood":
            note = {"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "data": "flood"}}
            for _ in range(20):
                self.write_lines(*([note] * 1000))
        if fault == "close-stdout":
            with self.write_lock:
                os.close(1)
            sleep_forever()
        if fault == "stderr-flood":
            line = b"stderr flood " + b"." * 50 + b"\n"          # 64 bytes
            sys.stderr.buffer.write(line * (1024 * 1024 // len(line)))
            sys.stderr.buffer.flush()
        if fault == "notify-during-call":
            self.notify("notifications/message", {"level": "info", "data": "hello"})
            self.notify("notifications/tools/list_changed", {})
        ask = fault == "ping-during-call" and not modern  # no server requests in 2026-07-28
        if params.get("name") == "slow" or ask:
            cancel = threading.Event()
            if params.get("name") == "slow":
                with self.state_lock:
                    self.inflight[json.dumps(rid)] = cancel
            threading.Thread(target=self.call_worker, args=(rid, params, cancel, ask, modern),
                             daemon=True).start()
        else:
            self.finish_call(rid, params, None, modern)

    def call_worker(self, rid, params, cancel, ask, modern):
        try:
            if ask:
                self.ask_client()
            self.finish_call(rid, params, cancel, modern)
        finally:
            with self.state_lock:
                self.inflight.pop(json.dumps(rid), None)

    def ask_client(self):
        """Send ping and sampling/createMessage; wait up to 5 s for both answers."""
        reqs = []
        for method in ("ping", "sampling/createMessage"):
            sid = "srv-%d" % next(self.srv_ids)
            ev = threading.Event()
            with self.state_lock:
                self.awaiting[json.dumps(sid)] = ev
            reqs.append(({"jsonrpc": "2.0", "id": sid, "method": method, "params": {}}, ev))
        reqs[0][0].pop("params")
        self.write_lines(*(r for r, _ in reqs))
        deadline = time.monotonic() + 5.0
        for _, ev in reqs:
            ev.wait(max(0.0, deadline - time.monotonic()))

    def finish_call(self, rid, params, cancel, modern=False):
        """Run the tool and send its response (or nothing if cancelled)."""
        try:
            result = self.run_tool(rid, params, cancel)
            if result is None:
                return  # cancelled: no reply
            if modern and "resultType" not in result:
                result = dict({"resultType": "complete"}, **result)
            reply = {"jsonrpc": "2.0", "id": rid, "result": result}
        except RpcError as e:
            reply = {"jsonrpc": "2.0", "id": rid, "error": e.error()}
        before = []
        if self.fault == "garbage-line":
            before = [b"this is not json"]
        elif self.fault == "bad-responses":
            before = [{"jsonrpc": "2.0", "id": 987654, "result": {}},
                      {"jsonrpc": "2.0", "id": rid, "result": {},
                       "error": {"code": 1, "message": "x"}}]
        elif self.fault == "invalid-utf8":
            before = [b'{"jsonrpc":"2.0","id":' + json.dumps(rid).encode()
                      + b',"result":{"content":[{"type":"text","text":"bad \xff\xfe bytes"}]}}']
        elif self.fault == "string-id" and isinstance(rid, int):
            before = [dict(reply, id=str(rid))]
        after = [reply] if self.fault == "dup-response" else []
        self.write_lines(*before, reply, *after)

    def run_tool(self, rid, params, cancel):
        name = params.get("name")
        args = params.get("arguments")
        if not isinstance(args, dict):
            args = {}
        if not isinstance(name, str) or name not in self.tool_names:
            raise RpcError(-32602, "Unknown tool: %s" % name)
        if name == "echo":
            text = args.get("text")
            if not isinstance(text, str):
                raise RpcError(-32602, "Invalid arguments for echo: text must be a string")
            if self.fault == "long-line":
                text = "x" * (2 * 1024 * 1024)
            return {"content": [_text(text)]}
        if name == "add":
            a, b = args.get("a"), args.get("b")
            if not (_is_number(a) and _is_number(b)):
                raise RpcError(-32602, "Invalid arguments for add: a and b must be numbers")
            out = {"sum": a + b}
            return {"content": [_text(json.dumps(out, separators=(",", ":")))],
                    "structuredContent": out}
        if name == "fail":
            message = args.get("message")
            if not isinstance(message, str) or not message:
                message = "the tool failed"
            return {"content": [_text(message)], "isError": True}
        if name == "slow":
            return self.slow(rid, args, params, cancel or threading.Event())
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
            return {"resultType": "input_required",
                    "requestState": "s-%d" % next(self.endless_ids)}
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

    def slow(self, rid, args, params, cancel):
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
            if token is not None:
                self.notify("notifications/progress",
                            {"progressToken": token, "progress": k, "total": 4})
        if cancel.is_set():
            return None  # the cancel was logged when it arrived
        return {"content": [_text("slept %d ms" % ms)],
                "structuredContent": {"slept_ms": ms, "cancelled": False}}

def sleep_forever():
    while True:
        time.sleep(3600)


def main():
    ap = argparse.ArgumentParser(description="mcpc demo MCP server (stdio)")
    ap.add_argument("--era", default=os.environ.get("MCPC_DEMO_ERA") or "legacy",
                    help="protocol era: legacy (default), modern (2026-07-28) or dual")
    ap.add_argument("--fault", default=os.environ.get("MCPC_DEMO_FAULT") or None,
                    help="fault mode (see module docstring)")
    ap.add_argument("--log", help="append received messages and events to FILE")
    ap.add_argument("--page-size", type=int, default=5, help="tools per tools/list page")
    ap.add_argument("--extra-tools", type=int, default=20, help="number of item_NN filler tools")
    opts = ap.parse_args()
    if opts.fault is not None and opts.fault not in FAULTS:
        ap.error("unknown fault mode: %s" % opts.fault)
    if opts.era not in ERAS:
        ap.error("unknown era: %s (legacy, modern or dual)" % opts.era)
    if opts.page_size < 1 or opts.extra_tools < 0:
        ap.error("--page-size must be >= 1 and --extra-tools >= 0")
    Server(opts.fault, opts.log, opts.page_size, opts.extra_tools, opts.era).run()


if __name__ == "__main__":
    main()
