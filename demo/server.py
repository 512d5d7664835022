#!/usr/bin/env python3
"""mcpc demo MCP server: JSON-RPC 2.0 over stdio, Python standard library only.

It serves as the demo server and the test fixture of the mcpc client library.
The tool catalogue, tools/list pagination, tools/call and the 2026-07-28 _meta
checks are in demo/mcp_tools.py, shared with the HTTP test fixture
(tests/fixtures/http_server.py); the stdio transport, the faults below, the log
and the command line are here.

Usage:
    python3 demo/server.py [--era legacy|modern|dual] [--fault MODE] [--log FILE]
                           [--start-delay MS] [--discover-delay MS]
                           [--page-size N] [--extra-tools N] [--tasks] [--apps]

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
(paginated, cursors "c1", "c2", ... = page number), tools/call, resources/read,
prompts/list and prompts/get (one resource and one prompt: demo/mcp_tools.py),
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

Tools: those of demo/mcp_tools.py (listed there, with their results), in its
order: echo, add, fail, slow, multi, item_00 ... item_NN, then, in the modern and
dual eras only (in dual, legacy requests see them too), needs_state, endless_state,
wants_input, header_tool, bad_header_tool, bad_header_tool2, any_structured. The
stdio server ignores the x-mcp-header annotations. `slow` runs in a worker thread,
can be cancelled and reports progress when the call carries
params._meta.progressToken.

MCP Apps (--apps; without it none of this exists; demo/apps.py): the extension
io.modelcontextprotocol/ui offered in capabilities.extensions; tools show_clock (a view,
ui://demo/clock.html, visible to model and app), clock_tick (visibility ["app"]),
model_only (visibility ["model"]) and legacy_view (the older flat _meta["ui/resourceUri"]) appended to tools/list;
resources/list lists two views (ui://demo/listed.html with its _meta.ui there only);
resources/read serves the views of demo/apps.py: clock.html (csp, permissions, domain,
prefersBorder in its _meta.ui), plain.html, blob.html (base64), wrong-mime.html
(text/html), huge.html (over 9 MiB), inject.html and quote.html (csp sources that try to
break out of the policy), listed.html.

Tasks (--tasks or env MCPC_DEMO_TASKS=1; without it none of this exists; demo/tasks.py).
Legacy requests see tasks when the last initialize negotiated 2025-11-25 (or before any
initialize); modern requests always. Task ids are "task-1", "task-2", ... (one sequence
per server, both eras sharing one store). Timestamps are ISO 8601 UTC with milliseconds.
    Tools, appended after all the others in tools/list (legacy listings give each
    "execution":{"taskSupport":...}; modern ones have no "execution"):
    task_report     {topic:string (default "mcpc"), ms:integer (default 300), poll_ms:integer
                    (the poll interval its task objects carry, default 100), fault:string}
                    taskSupport "optional": done ms milliseconds after creation, result
                    text "report on TOPIC"; fault: one of the task faults below.
    task_required   {topic, ms}, taskSupport "required"; otherwise as task_report.
    task_ask        {}, taskSupport "required": input_required 50 ms after creation,
                    asking "Favourite colour?" (elicitation/create, mode "form",
                    requestedSchema {"type":"object","properties":{"colour":{"type":
                    "string"}},"required":["colour"]}); once answered: working
                    ("input received"), 50 ms later completed, text "colour: C (ACTION)"
                    (C "" when content.colour is absent).
    Bad arguments -> -32602 "Invalid arguments for TOOL: ..." (an unknown fault too).
    statusMessage: "started" (working), "Favourite colour?" (input_required), "done"
    (completed), "the report failed" (failed), "cancelled by the client" (cancelled).
  Legacy (2025-11-25): initialize capabilities gain "tasks":{"list":{},"cancel":{},
    "requests":{"tools":{"call":{}}}}. The task object T is {"taskId","status",
    "statusMessage","createdAt","lastUpdatedAt","ttl":60000,"pollInterval":100}.
    tools/call with params.task (an object; its ttl is ignored) of a task tool ->
        {"task":T} (status working); params.task not an object -> -32602; on another
        known tool -> -32602 "Tool NAME does not support task augmentation".
    Without params.task: task_report answers inline after ms, {"content":[text "report
        on TOPIC"]}; task_required, task_ask -> -32601 "Tool NAME requires task
        augmentation (taskSupport: 'required')".
    Each later status change sends notifications/tasks/status with params T.
    tasks/get {taskId} -> T; tasks/list -> {"tasks":[T...]} (every task, no cursor);
    tasks/cancel {taskId} -> T, now cancelled (and its notification); a task in a
        terminal status -> -32602 "Cannot cancel a task in terminal status".
    tasks/result {taskId} -> when terminal (it waits): the tool result plus "_meta":
        {"io.modelcontextprotocol/related-task":{"taskId":ID}} (failed: isError true,
        text "the report failed"); cancelled -> -32603 "Task was cancelled".
    An unknown or missing taskId -> -32602 "Task not found"; tasks/update -> -32601.
    task_ask's elicitation/create request (server request ids "srv-N"; params as
        above plus "_meta":{"io.modelcontextprotocol/related-task":{"taskId":ID}}) is
        queued when the task goes input_required and sent once a tasks/result for
        the task is waiting (or arrives), once. A response with "result" answers it
        (action, content.colour); an error response fails the task ("elicitation
        failed: MESSAGE", tasks/result: isError with that text).
  Modern (2026-07-28): server/discover capabilities.extensions gain
    "io.modelcontextprotocol/tasks":{}. A request opts in with params._meta
    ["io.modelcontextprotocol/clientCapabilities"].extensions
    ["io.modelcontextprotocol/tasks"] (an object). Without it, tasks/* and tools/call
    of task_required or task_ask -> -32021 {"message":"Missing required client
    capabilities","data":{"requiredCapabilities":{"extensions":
    {"io.modelcontextprotocol/tasks":{}}}}}; task_report then answers inline
    (after ms, "resultType":"complete").
    tools/call of a task tool, opted in -> {"resultType":"task","taskId","status":
        "working","statusMessage":"started","createdAt","lastUpdatedAt","ttlMs":60000,
        "pollIntervalMs":100}. Other tools answer as usual.
    tasks/get {taskId} -> {"resultType":"complete", the same task fields} plus, when
        completed, "result":<the tool result with "resultType":"complete">; failed,
        "error":{"code":-32603,"message":"the report failed"}; input_required,
        "inputRequests":{"<taskId>:1":{"method":"elicitation/create","params":
        {"mode":"form","message":"Favourite colour?","requestedSchema":{...}}}}.
    tasks/update {taskId, inputResponses:{KEY:{"action":..,"content":{..}}}} ->
        {"resultType":"complete"}; the outstanding key answers the task, other keys
        (and a key already answered) are ignored; inputResponses not an object -> -32602.
    tasks/cancel {taskId} -> {"resultType":"complete"}; a running task becomes
        cancelled, a terminal one stays as it is.
    An unknown or missing taskId -> -32602 "Task not found"; tasks/result and
        tasks/list -> -32601. No notifications, no server requests.
  Task faults: task_report's "fault" argument, per call (not --fault), both eras:
    poll-zero, poll-negative, poll-huge
                        pollInterval(Ms) 0, -5, 1000000000000 in every task object
    poll-changing       each task object sent for the task (results, tasks/get,
                        tasks/list, notifications) carries the next of 0, 1,
                        1000000000000, -1, 30, cycling
    never               stays working until cancelled
    other-id            tasks/get answers taskId ID + "-other"
    result-after-cancel tasks/cancel answers as usual (legacy: T with status cancelled)
                        but the task at once completes normally instead (legacy: a
                        completed notification; tasks/get completed, tasks/result the
                        report; modern: tasks/get completed with the result)
    reuse-id            the taskId is "task-reused" on every such call; a new call
                        replaces the old record (a tasks/result waiting on the old one
                        -> -32602 "Task not found")
    same-input          (modern; elsewhere none) input_required 50 ms after creation
                        as task_ask; after the answer the next 3 tasks/get still return
                        input_required with the same inputRequests; the third of
                        them completes the task ("colour: C (ACTION)"), so the fourth
                        sees it completed
    back-from-terminal  (legacy; elsewhere none) on completion the completed
                        notification is sent, then the next tasks/get (one) says
                        "working" (statusMessage "working again"); tasks/result as usual
    fail                ends failed (legacy: tasks/result isError, text "the report
                        failed"; modern: tasks/get "error" as above); inline calls:
                        legacy isError result, modern error -32603 "the report failed"
    bad-status          every tasks/get says status "exploded" (statusMessage
                        "exploded"; modern: no result, error or inputRequests)
    Inline task_report calls ignore the other faults. The --fault modes do not apply to
    task tools or tasks/* requests.

--log FILE appends every received line verbatim, plus event lines:
    {"event":"cancelled","requestId":ID}
    {"event":"client-response","id":ID,"msg":{...}}
    {"event":"grandchild","pid":PID}
    {"event":"mrtr","requestState":<params.requestState or null>,"id":ID}
        (each needs_state, endless_state and wants_input call)
    {"event":"client-info","clientInfo":{...}}   (a modern request whose _meta
        "io.modelcontextprotocol/clientInfo" differs from the last one recorded)
    {"event":"client-extensions","extensions":{...}}   (the client's declared
        capabilities.extensions, in initialize or a modern request's _meta client
        capabilities, when they differ from the last ones recorded)
    {"event":"task-update","taskId":ID,"keys":[...]}   (each modern tasks/update
        under --tasks, even one then refused: its params.taskId and the keys of its
        inputResponses, [] when that is not an object)
    {"event":"task-cancel","taskId":ID}   (each tasks/cancel under --tasks, legacy or
        modern, even one then refused)

Every era offers the extension "dev.mcpc/demo" in its capabilities.extensions, and
the skills extension (io.modelcontextprotocol/skills, with directoryRead): one skill,
skill://demo-greeting/SKILL.md (demo/skills.py); the faults skill-bad-digest,
skill-bad-size, skill-bad-frontmatter, skill-outside and skill-dynamic break it.

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
    exit-on-crash       tools/call of echo with text "crash": os._exit(3) without
                        replying; with text "pid", answers the server's process id
    garbage-line        "this is not json" line before each tools/call response
    bad-responses       before each tools/call response: a response with unknown
                        id 987654, then one with the call's id and both result and
                        error (neither, for an echo of text "neither"; none, for
                        an echo of text "fine")
    long-line           tools/call echo answers a 2 MiB text block
    stderr-flood        tools/call first writes 1 MiB of lines to stderr
    truncate-exit       tools/call: writes half a response line, then exits 4
    invalid-utf8        before each tools/call response: a line with the same id
                        whose text holds bytes that are not UTF-8
    dup-response        each tools/call response is written twice
    bad-result          a tools/call of echo with text "bad" is answered with a
                        result that is not valid JSON (a trailing comma); other
                        calls as usual
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
    grow                tools/call of echo with text "grow" adds a tool grown_N, then
                        sends notifications/tools/list_changed 1000 times (a storm),
                        then answers
    notify-after-call   tools/call answers, then 200 ms later, while the client
                        has nothing in flight, sends notifications/message "later"
    stubborn            ignores SIGTERM and never exits on stdin EOF
    linger              never exits on stdin EOF (SIGTERM still ends it)
    grandchild          spawns `sleep 300` in the same process group at startup
                        and leaves it running when exiting on stdin EOF
    close-stdout        tools/call closes fd 1, then sleeps forever
    close-stdin         tools/call closes fd 0, answers the call, then sleeps forever
                        (so the client's next write finds a pipe with no reader)
    roots-on-close      on stdin EOF (the client closing) sends a roots/list request,
                        which can no longer be answered, and exits 0.5 s later
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

from mcp_tools import (ERAS, LATEST_VERSION, META_CAPS, META_CLIENT_INFO, RpcError, ToolServer, _text,
                       complete, dumps, get_prompt, list_prompts, modern_list, negotiate_version, notification,
                       read_resource)

import skills  # noqa: E402  (beside this file, as mcp_tools is)
import apps  # noqa: E402
import tasks  # noqa: E402

SERVER_INFO = {"name": "mcpc-demo", "version": "0.1.0"}
INSTRUCTIONS = "Demo server for mcpc: echo, add, fail, slow."
FAULTS = {
    "repeated-cursor", "cursor-cycle", "duplicate-names", "endless-pages",
    "empty-cursor", "bad-version", "empty-version", "init-error",
    "exit-on-discover", "silent-discover", "exit-during-call", "exit-on-crash",
    "garbage-line", "bad-responses", "long-line", "stderr-flood",
    "truncate-exit", "invalid-utf8", "dup-response", "bad-result", "string-id", "notification-flood", "stop-reading",
    "ping-during-call", "notify-during-call", "notify-after-call", "grow", "stubborn", "linger", "grandchild",
    "close-stdout", "close-stdin", "roots-on-close",
} | skills.FAULTS


class Server:
    def __init__(self, fault, log_path, page_size, extra_tools, era="legacy", with_tasks=False,
                 with_apps=False):
        self.apps = with_apps
        self.fault = fault
        self.out = sys.stdout.buffer
        self.write_lock = threading.Lock()
        self.log_lock = threading.Lock()
        self.log_file = open(log_path, "a", encoding="utf-8") if log_path else None
        self.core = ToolServer(era, page_size, extra_tools, SERVER_INFO, INSTRUCTIONS,
                               empty_cursor=fault == "empty-cursor", log_event=self.log_event)
        self.state_lock = threading.Lock()
        self.inflight = {}        # json.dumps(request id) -> threading.Event (cancel)
        self.awaiting = {}        # json.dumps(server request id) -> Event, or callable(msg)
        self.srv_ids = itertools.count(1)
        self.discover_delay = 0.0
        # --tasks: the task store (demo/tasks.py); legacy requests see tasks when the
        # last initialize negotiated 2025-11-25 (the latest: also before any initialize).
        self.tasks = tasks.TaskManager(self.log_event, self.notify) if with_tasks else None
        self.legacy_version = LATEST_VERSION

    # ---- output -------------------------------------------------------------

    def write_lines(self, *items):
        """Write messages (dicts) or raw lines (bytes) atomically, one per line."""
        data = b"".join(
            (i if isinstance(i, bytes) else dumps(i).encode("utf-8")) + b"\n"
            for i in items)
        with self.write_lock:
            try:
                self.out.write(data)
                self.out.flush()
            except (OSError, ValueError):
                pass  # client gone or stdout closed on purpose

    def respond(self, rid, result):
        self.write_lines({"jsonrpc": "2.0", "id": rid, "result": result})

    def notify(self, method, params):
        self.write_lines(notification(method, params))

    def log(self, line):
        if self.log_file is None:
            return
        with self.log_lock:
            self.log_file.write(line.rstrip("\r\n") + "\n")
            self.log_file.flush()

    def log_event(self, obj):
        self.log(dumps(obj))

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
        if self.fault == "roots-on-close":
            self.write_lines({"jsonrpc": "2.0", "id": "srv-%d" % next(self.srv_ids),
                              "method": "roots/list"})
            time.sleep(0.5)  # time for the client to try to answer before the pipe goes
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
            if self.core.is_modern(method, params):
                self.dispatch_modern(rid, method, raw_params)
            elif method == "initialize":
                self.respond(rid, self.initialize(params))
            elif method == "ping":
                self.respond(rid, {})
            elif method == "tools/list":
                self.respond(rid, self.list_tools(params.get("cursor"), self.listed_tools(False)))
            elif method == "tools/call" and self.tasks_seen(False) and self.tasks.owns_call(
                    params, False, self.core.names):
                self.task_op(rid, method, params, False)
            elif method == "tools/call":
                self.tools_call(rid, params)
            elif self.tasks_seen(False) and self.tasks.handles(method, False):
                self.task_op(rid, method, params, False)
            elif self.apps and apps.handle(method, params, RpcError) is not None:
                self.respond(rid, apps.handle(method, params, RpcError))
            elif skills.handle(method, params, self.fault, RpcError) is not None:
                self.respond(rid, skills.handle(method, params, self.fault, RpcError))
            elif method == "resources/read":
                self.respond(rid, read_resource(params))
            elif method == "prompts/list":
                self.respond(rid, list_prompts())
            elif method == "prompts/get":
                self.respond(rid, get_prompt(params))
            else:
                raise RpcError(-32601, "Method not found")
        except RpcError as e:
            self.write_lines(e.reply(rid))

    # ---- modern (2026-07-28) requests ---------------------------------------

    def dispatch_modern(self, rid, method, raw_params):
        params = self.core.check_modern(method, raw_params)
        self.core.record_client_info(params["_meta"].get(META_CLIENT_INFO))
        self.core.record_client_extensions(params["_meta"].get(META_CAPS))
        if method == "server/discover" and self.discover_delay > 0:
            threading.Timer(self.discover_delay, self.respond, (rid, self.discover())).start()
        elif method == "server/discover":
            self.respond(rid, self.discover())
        elif method == "tools/list":
            self.respond(rid, modern_list(self.list_tools(params.get("cursor"),
                                                          self.listed_tools(True))))
        elif method == "tools/call" and self.tasks_seen(True) and self.tasks.owns_call(params, True):
            self.task_op(rid, method, params, True)
        elif method == "tools/call":
            self.tools_call(rid, params, modern=True)
        elif self.tasks_seen(True) and self.tasks.handles(method, True):
            self.task_op(rid, method, params, True)
        elif self.apps and apps.handle(method, params, RpcError) is not None:
            self.respond(rid, complete(apps.handle(method, params, RpcError)))
        elif skills.handle(method, params, self.fault, RpcError) is not None:
            self.respond(rid, complete(skills.handle(method, params, self.fault, RpcError)))
        elif method == "resources/read":
            self.respond(rid, complete(read_resource(params)))
        elif method == "prompts/list":
            self.respond(rid, modern_list(list_prompts()))
        elif method == "prompts/get":
            self.respond(rid, complete(get_prompt(params)))
        else:
            raise RpcError(-32601, "Method not found")

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
            waiter = self.awaiting.pop(json.dumps(msg["id"]), None)
        if callable(waiter):
            waiter(msg)  # a task's elicitation/create (demo/tasks.py)
        elif waiter is not None:
            waiter.set()

    def request_client(self, method, params, on_response):
        """Send a request to the client; on_response(msg) gets its response message."""
        sid = "srv-%d" % next(self.srv_ids)
        with self.state_lock:
            self.awaiting[json.dumps(sid)] = on_response
        self.write_lines({"jsonrpc": "2.0", "id": sid, "method": method, "params": params})

    # ---- tasks (--tasks; demo/tasks.py) -------------------------------------

    def tasks_seen(self, modern):
        """Whether a request sees tasks: modern ones always, legacy ones under 2025-11-25."""
        return self.tasks is not None and (modern or self.legacy_version == tasks.TASKS_VERSION)

    def listed_tools(self, modern):
        """The tools/list listing: the core's tools, then the task tools if seen, then
        the apps tools (--apps)."""
        listed = self.core.tools
        if self.tasks_seen(modern):
            listed = listed + self.tasks.tools(modern)
        if self.apps:
            listed = listed + apps.TOOLS
        return listed

    def discover(self):
        result = self.core.discover()
        if self.tasks is not None:
            result["capabilities"]["extensions"][tasks.MODERN_EXTENSION] = {}
        if self.apps:
            result["capabilities"]["extensions"][apps.EXTENSION] = {}
        return result

    def task_op(self, rid, method, params, modern):
        """A task tools/call or tasks/* request; off the reading thread if it blocks."""
        def run():
            try:
                if method == "tools/call":
                    self.tasks.call(params, modern, respond)
                else:
                    self.tasks.handle(method, params, modern, respond, self.request_client)
            except RpcError as e:
                self.write_lines(e.reply(rid))

        def respond(result):
            self.respond(rid, result)

        if self.tasks.blocking(method, params, modern):
            threading.Thread(target=run, daemon=True).start()
        else:
            run()

    # ---- initialize / tools/list ------------------------------------------

    def initialize(self, params):
        self.core.record_client_extensions(params.get("capabilities"))
        if self.fault == "init-error":
            raise RpcError(-32603, "initialization refused")
        version = negotiate_version(params.get("protocolVersion"))
        if self.fault == "bad-version":
            version = "1999-01-01"
        elif self.fault == "empty-version":
            version = ""
        self.legacy_version = version
        result = self.core.initialize_result(version)
        if self.tasks_seen(False):
            result["capabilities"]["tasks"] = self.tasks.legacy_capability()
        if self.apps:
            result["capabilities"]["extensions"][apps.EXTENSION] = {}
        return result

    def page(self, n, tools=None):
        """Tools of page n (0-based); synthetic unique tools past the end."""
        items = self.core.page(n, tools)
        if not items and self.fault == "endless-pages":
            items = [{"name": "more_%d_%d" % (n, j), "description": "Endless filler.",
                      "inputSchema": {"type": "object", "properties": {}}}
                     for j in range(self.core.page_size)]
        return items

    def list_tools(self, cursor, tools=None):
        """ToolServer's pages (fault empty-cursor there), bent by the other cursor faults.

        tools: the listing (None: the core's tools)."""
        if self.fault == "cursor-cycle":
            cycle = {None: (0, "A"), "A": (1, "B"), "B": (2, "A")}
            if cursor not in cycle:
                raise RpcError(-32602, "Invalid cursor: %s" % cursor)
            n, nxt = cycle[cursor]
            return {"tools": self.page(n, tools), "nextCursor": nxt}
        if self.fault == "endless-pages":
            n = self.core.page_number(cursor, bounded=False, tools=tools)
            return {"tools": self.page(n, tools), "nextCursor": "c%d" % (n + 1)}
        result = self.core.list_tools(cursor, tools)
        if self.fault == "duplicate-names" and self.core.page_number(cursor, tools=tools) == 1:
            result["tools"] = [dict(self.core.tools[0])] + result["tools"]
        if self.fault == "repeated-cursor" and cursor is not None:
            result["nextCursor"] = cursor
        return result

    # ---- tools/call --------------------------------------------------------

    def tools_call(self, rid, params, modern=False):
        fault = self.fault
        if fault == "exit-during-call":
            os._exit(3)
        if fault == "exit-on-crash" and params.get("name") == "echo":
            text = (params.get("arguments") or {}).get("text")
            if text == "crash":
                os._exit(3)
            if text == "pid":
                params = dict(params, arguments={"text": str(os.getpid())})
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
        if fault == "close-stdin":
            os.close(0)
            self.finish_call(rid, params, None, modern)
            sleep_forever()
        if fault == "stderr-flood":
            line = b"stderr flood " + b"." * 50 + b"\n"          # 64 bytes
            sys.stderr.buffer.write(line * (1024 * 1024 // len(line)))
            sys.stderr.buffer.flush()
        if fault == "grow" and params.get("name") == "echo" and (params.get("arguments") or {}).get("text") == "grow":
            self.core.grow()
            for _ in range(1000):
                self.notify("notifications/tools/list_changed", {})
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
        if fault == "notify-after-call":
            later = threading.Timer(0.2, self.notify,
                                    args=("notifications/message", {"level": "info", "data": "later"}))
            later.daemon = True
            later.start()

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
            if modern:
                result = complete(result)
            reply = {"jsonrpc": "2.0", "id": rid, "result": result}
        except RpcError as e:
            reply = e.reply(rid)
        before = []
        if self.fault == "garbage-line":
            before = [b"this is not json"]
        elif self.fault == "bad-responses":
            text = (params.get("arguments") or {}).get("text")
            before = [{"jsonrpc": "2.0", "id": 987654, "result": {}}]
            if text == "neither":
                before.append({"jsonrpc": "2.0", "id": rid})
            elif text != "fine":
                before.append({"jsonrpc": "2.0", "id": rid, "result": {},
                               "error": {"code": 1, "message": "x"}})
        elif self.fault == "invalid-utf8":
            before = [b'{"jsonrpc":"2.0","id":' + json.dumps(rid).encode()
                      + b',"result":{"content":[{"type":"text","text":"bad \xff\xfe bytes"}]}}']
        elif self.fault == "string-id" and isinstance(rid, int):
            before = [dict(reply, id=str(rid))]
        elif (self.fault == "bad-result" and "result" in reply
              and (params.get("arguments") or {}).get("text") == "bad"):
            reply = (b'{"jsonrpc":"2.0","id":' + json.dumps(rid).encode()
                     + b',"result":{"content":[{"type":"text","text":"bad"},]}}')
        after = [reply] if self.fault == "dup-response" else []
        self.write_lines(*before, reply, *after)

    def run_tool(self, rid, params, cancel):
        """The tool's result (None if cancelled); fault long-line bends echo."""
        if self.apps and apps.call(params.get("name")) is not None:
            return apps.call(params.get("name"))
        result = self.core.call_tool(params, cancel, self.write_lines, rid)
        if self.fault == "long-line" and params.get("name") == "echo":
            result = {"content": [_text("x" * (2 * 1024 * 1024))]}
        return result


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
    ap.add_argument("--start-delay", type=int, default=0, metavar="MS",
                    help="read nothing for MS milliseconds after starting (a slow start)")
    ap.add_argument("--discover-delay", type=int, default=0, metavar="MS",
                    help="answer server/discover MS milliseconds late (modern and dual eras), "
                         "serving the requests after it meanwhile")
    ap.add_argument("--page-size", type=int, default=5, help="tools per tools/list page")
    ap.add_argument("--extra-tools", type=int, default=20, help="number of item_NN filler tools")
    ap.add_argument("--apps", action="store_true",
                    help="serve MCP Apps views and tools (see module docstring)")
    ap.add_argument("--tasks", action="store_true",
                    default=os.environ.get("MCPC_DEMO_TASKS") == "1",
                    help="serve MCP tasks (see module docstring; also env MCPC_DEMO_TASKS=1)")
    opts = ap.parse_args()
    if opts.fault is not None and opts.fault not in FAULTS:
        ap.error("unknown fault mode: %s" % opts.fault)
    if opts.era not in ERAS:
        ap.error("unknown era: %s (legacy, modern or dual)" % opts.era)
    if opts.page_size < 1 or opts.extra_tools < 0:
        ap.error("--page-size must be >= 1 and --extra-tools >= 0")
    server = Server(opts.fault, opts.log, opts.page_size, opts.extra_tools, opts.era, opts.tasks,
                    opts.apps)
    server.discover_delay = opts.discover_delay / 1000.0
    time.sleep(opts.start_delay / 1000.0)
    server.run()


if __name__ == "__main__":
    main()
