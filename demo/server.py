#!/usr/bin/env python3
"""mcpc demo MCP server: JSON-RPC 2.0 over stdio, Python standard library only.

It serves as the demo server and the test fixture of the mcpc client library.

Usage:
    python3 demo/server.py [--fault MODE] [--log FILE] [--page-size N] [--extra-tools N]

Framing: one JSON object per line on stdin/stdout (compact JSON + "\\n").
Blank lines are ignored; lines that are not JSON are reported on stderr and
otherwise ignored. stdin EOF ends the server with status 0.

Methods: initialize, notifications/initialized, ping, tools/list (paginated,
cursors "c1", "c2", ... = page number), tools/call, notifications/cancelled.
Anything else gets -32601 (requests) or is ignored (notifications).

Tools, listed in this order: echo, add, fail, slow, multi, item_00 ... item_NN.
`slow` runs in a worker thread, can be cancelled and reports progress when the
call carries params._meta.progressToken.

--log FILE appends every received line verbatim, plus event lines:
    {"event":"cancelled","requestId":ID}
    {"event":"client-response","id":ID,"msg":{...}}
    {"event":"grandchild","pid":PID}

Fault modes (--fault MODE or env MCPC_DEMO_FAULT):
    repeated-cursor     the page for cursor X has nextCursor X again
    cursor-cycle        first page -> "A" -> "B" -> "A" -> ...
    duplicate-names     the second page also contains a tool named "echo"
    endless-pages       every page has a fresh nextCursor (c1, c2, ... forever)
    bad-version         initialize answers protocolVersion "1999-01-01"
    empty-version       initialize answers protocolVersion ""
    init-error          initialize answers error -32603 "initialization refused"
    exit-during-call    tools/call: os._exit(3) without replying
    garbage-line        "this is not json" line before each tools/call response
    bad-responses       before each tools/call response: a response with unknown
                        id 987654, then one with both result and error
    long-line           tools/call echo answers a 2 MiB text block
    stderr-flood        tools/call first writes 1 MiB of lines to stderr
    ping-during-call    tools/call first sends requests "ping" and
                        "sampling/createMessage" to the client and waits (<= 5 s)
                        for both responses
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
FAULTS = {
    "repeated-cursor", "cursor-cycle", "duplicate-names", "endless-pages",
    "bad-version", "empty-version", "init-error", "exit-during-call",
    "garbage-line", "bad-responses", "long-line", "stderr-flood",
    "ping-during-call", "notify-during-call", "stubborn", "linger", "grandchild",
    "close-stdout",
}


class RpcError(Exception):
    """A JSON-RPC error to be sent back as the response to a request."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def _schema(props, required=()):
    return {"type": "object", "properties": props, "required": list(required)}


def _text(text):
    return {"type": "text", "text": text}


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def build_tools(extra):
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
    return tools


class Server:
    def __init__(self, fault, log_path, page_size, extra_tools):
        self.fault = fault
        self.page_size = page_size
        self.tools = build_tools(extra_tools)
        self.tool_names = {t["name"] for t in self.tools}
        self.out = sys.stdout.buffer
        self.write_lock = threading.Lock()
        self.log_lock = threading.Lock()
        self.log_file = open(log_path, "a", encoding="utf-8") if log_path else None
        self.state_lock = threading.Lock()
        self.inflight = {}        # json.dumps(request id) -> threading.Event (cancel)
        self.awaiting = {}        # json.dumps(server request id) -> threading.Event
        self.srv_ids = itertools.count(1)

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

    def respond_error(self, rid, code, message):
        self.write_lines({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})

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
        params = msg.get("params")
        if not isinstance(params, dict):
            params = {}
        if not has_id:
            if method == "notifications/cancelled":
                self.on_cancelled(params)
            return  # notifications/initialized and unknown notifications
        rid = msg["id"]
        try:
            if method == "initialize":
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
            self.respond_error(rid, e.code, e.message)

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
            "serverInfo": {"name": "mcpc-demo", "version": "0.1.0"},
            "instructions": "Demo server for mcpc: echo, add, fail, slow.",
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
            if n < 1 or (n * self.page_size >= len(self.tools) and self.fault != "endless-pages"):
                raise RpcError(-32602, "Invalid cursor: %s" % cursor)
        result = {"tools": self.page(n)}
        if self.fault == "duplicate-names" and n == 1:
            result["tools"] = [dict(self.tools[0])] + result["tools"]
        if self.fault == "endless-pages" or (n + 1) * self.page_size < len(self.tools):
            result["nextCursor"] = "c%d" % (n + 1)
        if self.fault == "repeated-cursor" and cursor is not None:
            result["nextCursor"] = cursor
        return result

    # ---- tools/call --------------------------------------------------------

    def tools_call(self, rid, params):
        fault = self.fault
        if fault == "exit-during-call":
            os._exit(3)
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
        if params.get("name") == "slow" or fault == "ping-during-call":
            cancel = threading.Event()
            if params.get("name") == "slow":
                with self.state_lock:
                    self.inflight[json.dumps(rid)] = cancel
            threading.Thread(target=self.call_worker, args=(rid, params, cancel),
                             daemon=True).start()
        else:
            self.finish_call(rid, params, None)

    def call_worker(self, rid, params, cancel):
        try:
            if self.fault == "ping-during-call":
                self.ask_client()
            self.finish_call(rid, params, cancel)
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

    def finish_call(self, rid, params, cancel):
        """Run the tool and send its response (or nothing if cancelled)."""
        try:
            result = self.run_tool(rid, params, cancel)
            if result is None:
                return  # cancelled: no reply
            reply = {"jsonrpc": "2.0", "id": rid, "result": result}
        except RpcError as e:
            reply = {"jsonrpc": "2.0", "id": rid, "error": {"code": e.code, "message": e.message}}
        before = []
        if self.fault == "garbage-line":
            before = [b"this is not json"]
        elif self.fault == "bad-responses":
            before = [{"jsonrpc": "2.0", "id": 987654, "result": {}},
                      {"jsonrpc": "2.0", "id": rid, "result": {},
                       "error": {"code": 1, "message": "x"}}]
        self.write_lines(*before, reply)

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
        return {"content": [_text(name)]}  # item_NN

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
    ap.add_argument("--fault", default=os.environ.get("MCPC_DEMO_FAULT") or None,
                    help="fault mode (see module docstring)")
    ap.add_argument("--log", help="append received messages and events to FILE")
    ap.add_argument("--page-size", type=int, default=5, help="tools per tools/list page")
    ap.add_argument("--extra-tools", type=int, default=20, help="number of item_NN filler tools")
    opts = ap.parse_args()
    if opts.fault is not None and opts.fault not in FAULTS:
        ap.error("unknown fault mode: %s" % opts.fault)
    if opts.page_size < 1 or opts.extra_tools < 0:
        ap.error("--page-size must be >= 1 and --extra-tools >= 0")
    Server(opts.fault, opts.log, opts.page_size, opts.extra_tools).run()


if __name__ == "__main__":
    main()
