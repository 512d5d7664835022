"""MCP tasks for the mcpc test servers (--tasks), Python standard library only.

Imported by the stdio demo server (demo/server.py, whose docstring describes the
wire: the tools, both eras' methods and shapes, the faults and the log events) and
by the Streamable HTTP test fixture (tests/fixtures/http_server.py). Two flavours,
served from one task store:

    legacy  MCP 2025-11-25 "tasks": tools/call with params.task -> {"task": T};
            tasks/get, tasks/result (blocks until terminal), tasks/list,
            tasks/cancel; notifications/tasks/status on each status change;
            task_ask's elicitation/create is queued until a tasks/result.
    modern  2026-07-28 extension io.modelcontextprotocol/tasks: opt-in per request
            (_meta client capabilities); tools/call -> {"resultType":"task",...};
            tasks/get (with result, error or inputRequests), tasks/update,
            tasks/cancel; no server-to-client messages.

The transport stays in the server. TaskManager(log_event, notify) takes:
    log_event(obj)           records a log event (task-update, task-cancel);
    notify(method, params)   sends a notification (None: never sent, as over HTTP).
Its entry points answer through respond(result), called at most once, and raise
RpcError instead; what follows the answer (the task's worker starting, a status
notification) happens after respond returns, so a client never sees a
notification about a task before the result that names it:
    owns_call(params, modern, known)   whether a tools/call is this module's;
    call(params, modern, respond)      such a tools/call;
    handle(method, params, modern, respond, ask=None)
                                       tasks/* (check handles(method, modern) first);
    blocking(method, params, modern)   whether that may block (tasks/result, an inline
                                       task_report): run it off the reading thread;
    check_modern(method, params)       the -32021 opt-in check alone (the HTTP fixture
                                       runs it early, to answer 400);
    tools(modern), legacy_capability(), MODERN_EXTENSION.
ask(method, params, on_response) sends a request to the client and later calls
on_response(msg) with the client's response message (legacy task_ask); None: the
queued elicitation is never sent.
"""

import datetime
import itertools
import threading
import time

from mcp_tools import META_CAPS, RpcError, _schema, _text, complete

TASKS_VERSION = "2025-11-25"
MODERN_EXTENSION = "io.modelcontextprotocol/tasks"
RELATED_TASK = "io.modelcontextprotocol/related-task"
TOOL_NAMES = ("task_report", "task_required", "task_ask")
LEGACY_METHODS = ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel")
MODERN_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")
FAULTS = ("poll-zero", "poll-negative", "poll-huge", "poll-changing", "never", "other-id",
          "result-after-cancel", "reuse-id", "same-input", "back-from-terminal", "fail",
          "bad-status")
POLL_FIXED = {"poll-zero": 0, "poll-negative": -5, "poll-huge": 1000000000000}
POLL_CYCLE = (0, 1, 1000000000000, -1, 30)
TTL_MS = 60000
POLL_MS = 100
DEFAULT_MS = 300
DEFAULT_TOPIC = "mcpc"
ASK_DELAY = 0.05        # seconds from creation to input_required (task_ask, same-input)
RESUME_DELAY = 0.05     # seconds from the answer ("working") to "completed"
SAME_INPUT_REPEATS = 3
ASK_MESSAGE = "Favourite colour?"
ASK_SCHEMA = {"type": "object", "properties": {"colour": {"type": "string"}},
              "required": ["colour"]}
TERMINAL = ("completed", "failed", "cancelled")
REPORT_FAILED = "the report failed"


def now_iso():
    """The current UTC time as ISO 8601 with milliseconds, e.g. 2026-01-02T03:04:05.678Z."""
    t = datetime.datetime.now(datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


def missing_capability():
    """-32021 naming the tasks extension (status 400 for the HTTP fixture)."""
    return RpcError(-32021, "Missing required client capabilities",
                    {"requiredCapabilities": {"extensions": {MODERN_EXTENSION: {}}}}, status=400)


def opted_in(params):
    """Whether a modern request's _meta client capabilities declare the extension."""
    meta = params.get("_meta")
    caps = meta.get(META_CAPS) if isinstance(meta, dict) else None
    exts = caps.get("extensions") if isinstance(caps, dict) else None
    return isinstance(exts, dict) and isinstance(exts.get(MODERN_EXTENSION), dict)


def not_found():
    return RpcError(-32602, "Task not found")


def task_tools(modern):
    """The three task tools (legacy listings carry execution.taskSupport)."""
    ms = {"type": "integer", "default": DEFAULT_MS,
          "description": "milliseconds until the task is done"}
    tools = [
        {"name": "task_report",
         "description": "Writes a report on a topic, as a task or inline.",
         "inputSchema": _schema({"topic": {"type": "string"}, "ms": dict(ms),
                                 "poll_ms": {"type": "integer", "default": POLL_MS,
                                             "description": "the poll interval the task asks for"},
                                 "fault": {"type": "string", "enum": list(FAULTS)}}),
         "execution": {"taskSupport": "optional"}},
        {"name": "task_required",
         "description": "Writes a report on a topic; only as a task.",
         "inputSchema": _schema({"topic": {"type": "string"}, "ms": dict(ms)}),
         "execution": {"taskSupport": "required"}},
        {"name": "task_ask",
         "description": "Asks for a favourite colour (elicitation) during its task.",
         "inputSchema": _schema({}),
         "execution": {"taskSupport": "required"}},
    ]
    if modern:  # task creation is server-directed in 2026-07-28: no execution field
        for tool in tools:
            del tool["execution"]
    return tools


class Task:
    """One task's state (guarded by TaskManager.cond)."""

    def __init__(self, task_id, name, topic, fault, ms, modern):
        self.id = task_id
        self.name = name
        self.topic = topic
        self.fault = fault
        self.ms = ms
        self.modern = modern          # created by a modern request (no notifications)
        self.status = "working"
        self.message = "started"
        self.created = self.updated = now_iso()
        self.result = None            # the tool result once completed (or failed, legacy)
        self.error = None             # the JSON-RPC error once failed (modern)
        self.stopped = False          # cancelled or superseded (reuse-id): the worker ends
        self.superseded = False
        self.answer = None            # (colour, action) or ("error", message) once answered
        self.pending_ask = None       # legacy: the queued elicitation/create params
        self.ask_sent = False
        self.input_key = None         # modern: the outstanding inputRequests key
        self.repeats = 0              # same-input: tasks/get answers still to repeat
        self.flip_get = False         # back-from-terminal: the next tasks/get says working
        self.polls = 0                # poll-changing: task objects sent so far
        self.poll_ms = POLL_MS        # task_report's poll_ms

    def asks(self):
        return self.name == "task_ask" or (self.modern and self.fault == "same-input")

    def report(self):
        return {"content": [_text("report on %s" % self.topic)]}


class TaskManager:
    def __init__(self, log_event=None, notify=None):
        self.log_event = log_event if log_event is not None else (lambda obj: None)
        self.notify = notify
        self.cond = threading.Condition()
        self.tasks = {}               # taskId -> Task, in creation order
        self.seq = itertools.count(1)

    # ---- what the servers list and advertise ----------------------------------

    @staticmethod
    def tools(modern):
        return task_tools(modern)

    @staticmethod
    def legacy_capability():
        return {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}

    @staticmethod
    def handles(method, modern):
        return method in (MODERN_METHODS if modern else LEGACY_METHODS)

    @staticmethod
    def owns_call(params, modern, known=()):
        """A task tool, or (legacy) params.task on another known tool (-32602 here)."""
        name = params.get("name")
        if name in TOOL_NAMES:
            return True
        return not modern and "task" in params and name in known

    @staticmethod
    def check_modern(method, params):
        """-32021 for tasks/* or a task-only tool called without the extension."""
        if opted_in(params):
            return
        if method in MODERN_METHODS or (
                method == "tools/call" and params.get("name") in ("task_required", "task_ask")):
            raise missing_capability()

    @staticmethod
    def blocking(method, params, modern):
        if method == "tasks/result":
            return True
        if method != "tools/call" or params.get("name") != "task_report":
            return False
        return not (opted_in(params) if modern else "task" in params)

    # ---- rendering (called with cond held) --------------------------------------

    def _poll(self, t):
        if t.fault in POLL_FIXED:
            return POLL_FIXED[t.fault]
        if t.fault == "poll-changing":
            value = POLL_CYCLE[t.polls % len(POLL_CYCLE)]
            t.polls += 1
            return value
        return t.poll_ms

    def _object(self, t, modern, status=None, message=None):
        """The task object of an era (status/message: what to show instead)."""
        obj = {"taskId": t.id, "status": status or t.status,
               "statusMessage": message or t.message,
               "createdAt": t.created, "lastUpdatedAt": t.updated}
        if modern:
            obj.update({"ttlMs": TTL_MS, "pollIntervalMs": self._poll(t)})
        else:
            obj.update({"ttl": TTL_MS, "pollInterval": self._poll(t)})
        return obj

    def _input_requests(self, t):
        return {t.input_key: {"method": "elicitation/create", "params": {
            "mode": "form", "message": ASK_MESSAGE, "requestedSchema": ASK_SCHEMA}}}

    # ---- state changes ----------------------------------------------------------

    def _apply(self, t, status, message, result=None, error=None):
        """Move t to status (cond held); returns the notifications/tasks/status params
        to send once cond is released (None: none, for a modern task or over HTTP)."""
        t.status, t.message, t.updated = status, message, now_iso()
        if result is not None:
            t.result = result
        if error is not None:
            t.error = error
        if status == "completed" and t.fault == "back-from-terminal" and not t.modern:
            t.flip_get = True
        self.cond.notify_all()
        if t.modern or self.notify is None:
            return None
        return self._object(t, False)

    def _send_status(self, note):
        if note is not None:
            self.notify("notifications/tasks/status", note)

    def _change(self, t, status, message, result=None, error=None):
        """Move t to status while it runs (not stopped, not terminal); takes cond.
        False if it no longer runs."""
        with self.cond:
            if t.stopped or t.status in TERMINAL:
                return False
            note = self._apply(t, status, message, result, error)
        self._send_status(note)
        return True

    def _finish(self, t):
        """t's normal end: completed with its result, or failed (fault fail)."""
        if t.fault == "fail":
            return self._change(t, "failed", REPORT_FAILED,
                                result={"content": [_text(REPORT_FAILED)], "isError": True},
                                error={"code": -32603, "message": REPORT_FAILED})
        return self._change(t, "completed", "done", result=self._final(t))

    def _final(self, t):
        if t.asks() and t.answer is not None:
            return {"content": [_text("colour: %s (%s)" % t.answer)]}
        return t.report()

    def _sleep(self, t, seconds):
        """Wait; True if t was stopped meanwhile."""
        with self.cond:
            return self.cond.wait_for(lambda: t.stopped, timeout=seconds)

    def _worker(self, t):
        if not t.asks():
            if self._sleep(t, t.ms / 1000.0):
                return
            if t.fault == "never":
                return  # working until cancelled
            self._finish(t)
            return
        if self._sleep(t, ASK_DELAY):
            return
        with self.cond:
            if t.modern:
                t.input_key = "%s:1" % t.id
            else:
                t.pending_ask = {"mode": "form", "message": ASK_MESSAGE,
                                 "requestedSchema": ASK_SCHEMA,
                                 "_meta": {RELATED_TASK: {"taskId": t.id}}}
        if not self._change(t, "input_required", ASK_MESSAGE):
            return
        with self.cond:
            self.cond.wait_for(lambda: t.stopped or t.answer is not None)
            if t.stopped or t.repeats > 0:
                return  # same-input: tasks/get completes it
        if t.answer[0] == "error":
            self._change(t, "failed", "elicitation failed: %s" % t.answer[1],
                         result={"content": [_text("elicitation failed: %s" % t.answer[1])],
                                 "isError": True},
                         error={"code": -32603, "message": "elicitation failed"})
            return
        if not self._change(t, "working", "input received"):
            return
        if self._sleep(t, RESUME_DELAY):
            return
        self._finish(t)

    # ---- tools/call ---------------------------------------------------------------

    @staticmethod
    def _args(name, args):
        topic = args.get("topic", DEFAULT_TOPIC)
        ms = args.get("ms", DEFAULT_MS)
        fault = args.get("fault") if name == "task_report" else None
        if not isinstance(topic, str):
            raise RpcError(-32602, "Invalid arguments for %s: topic must be a string" % name)
        if not isinstance(ms, int) or isinstance(ms, bool) or ms < 0:
            raise RpcError(-32602, "Invalid arguments for %s: ms must be a non-negative integer"
                           % name)
        if fault is not None and fault not in FAULTS:
            raise RpcError(-32602, "Invalid arguments for %s: unknown fault %s" % (name, fault))
        return topic, ms, fault

    def call(self, params, modern, respond):
        name = params.get("name")
        args = params.get("arguments")
        args = args if isinstance(args, dict) else {}
        if name not in TOOL_NAMES:
            raise RpcError(-32602, "Tool %s does not support task augmentation" % name)
        topic, ms, fault = self._args(name, args)
        if modern:
            self.check_modern("tools/call", params)
            augmented = opted_in(params)
        else:
            augmented = "task" in params
            if augmented and not isinstance(params["task"], dict):
                raise RpcError(-32602, "Invalid params: task must be an object")
            if not augmented and name != "task_report":
                raise RpcError(-32601, "Tool %s requires task augmentation (taskSupport: "
                                       "'required')" % name)
        if not augmented:  # task_report inline
            time.sleep(ms / 1000.0)
            if fault == "fail":
                if modern:
                    raise RpcError(-32603, REPORT_FAILED)
                return respond({"content": [_text(REPORT_FAILED)], "isError": True})
            result = {"content": [_text("report on %s" % topic)]}
            return respond(complete(result) if modern else result)
        with self.cond:
            task_id = "task-reused" if fault == "reuse-id" else "task-%d" % next(self.seq)
            old = self.tasks.pop(task_id, None)
            if old is not None:  # reuse-id: the new call replaces the old record
                old.stopped = old.superseded = True
            t = Task(task_id, name, topic, fault, ms, modern)
            poll_ms = args.get("poll_ms", POLL_MS) if name == "task_report" else POLL_MS
            if isinstance(poll_ms, int) and not isinstance(poll_ms, bool) and poll_ms >= 0:
                t.poll_ms = poll_ms
            self.tasks[task_id] = t
            obj = self._object(t, modern)
            self.cond.notify_all()
        respond(dict({"resultType": "task"}, **obj) if modern else {"task": obj})
        threading.Thread(target=self._worker, args=(t,), daemon=True).start()

    # ---- tasks/* ------------------------------------------------------------------

    def _find(self, params):
        task_id = params.get("taskId")
        t = self.tasks.get(task_id) if isinstance(task_id, str) else None
        if t is None:
            raise not_found()
        return t

    def handle(self, method, params, modern, respond, ask=None):
        if not self.handles(method, modern):
            raise RpcError(-32601, "Method not found")
        if method == "tasks/update":
            responses = params.get("inputResponses")
            self.log_event({"event": "task-update", "taskId": params.get("taskId"),
                            "keys": list(responses) if isinstance(responses, dict) else []})
        elif method == "tasks/cancel":
            self.log_event({"event": "task-cancel", "taskId": params.get("taskId")})
        if modern:
            self.check_modern(method, params)
        if method == "tasks/get":
            return respond(self._get(params, modern))
        if method == "tasks/list":
            with self.cond:
                listed = [self._object(t, False) for t in self.tasks.values()]
            return respond({"tasks": listed})
        if method == "tasks/cancel":
            return self._cancel(params, modern, respond)
        if method == "tasks/update":
            return self._update(params, respond)
        return self._result(params, respond, ask)

    def _get(self, params, modern):
        finish = None
        with self.cond:
            t = self._find(params)
            status = t.status
            if t.flip_get:
                t.flip_get = False
                status = "working"
            elif t.repeats > 0:  # same-input: the answered request, again
                status = "input_required"
                t.repeats -= 1
                if t.repeats == 0:
                    finish = t
            message = "working again" if status != t.status else None
            if t.fault == "bad-status":
                status = message = "exploded"
            obj = self._object(t, modern, status, message)
            if t.fault == "other-id":
                obj["taskId"] = t.id + "-other"
            if modern:
                obj = dict({"resultType": "complete"}, **obj)
                if status == "completed":
                    obj["result"] = complete(t.result)
                elif status == "failed":
                    obj["error"] = t.error
                elif status == "input_required":
                    obj["inputRequests"] = self._input_requests(t)
        if finish is not None:
            self._finish(finish)
        return obj

    def _cancel(self, params, modern, respond):
        # Legacy answers T (a task object, which counts for poll-changing); modern an
        # empty acknowledgement, also for a task already terminal (which stays so).
        note, fake, obj = None, False, {"resultType": "complete"}
        with self.cond:
            t = self._find(params)
            if t.status in TERMINAL:
                if not modern:
                    raise RpcError(-32602, "Cannot cancel a task in terminal status")
            elif t.fault == "result-after-cancel":
                fake = True  # acknowledged as cancelled, but it completes all the same
                if not modern:
                    obj = self._object(t, False, "cancelled", "cancelled by the client")
            else:
                t.stopped = True
                t.pending_ask = None
                note = self._apply(t, "cancelled", "cancelled by the client")
                if not modern:
                    obj = self._object(t, False)
        respond(obj)
        self._send_status(note)
        if fake:
            self._finish(t)

    def _update(self, params, respond):
        with self.cond:
            t = self._find(params)
            responses = params.get("inputResponses")
            if not isinstance(responses, dict):
                raise RpcError(-32602, "Invalid params: inputResponses must be an object")
            answer = responses.get(t.input_key) if t.input_key is not None else None
            if (isinstance(answer, dict) and t.status == "input_required"
                    and t.answer is None and not t.stopped):
                t.answer = self._answer(answer)
                if t.fault == "same-input":
                    t.repeats = SAME_INPUT_REPEATS
                self.cond.notify_all()
        respond({"resultType": "complete"})

    @staticmethod
    def _answer(result):
        """(colour, action) from an elicitation result."""
        content = result.get("content")
        colour = content.get("colour") if isinstance(content, dict) else None
        action = result.get("action")
        return (colour if isinstance(colour, str) else "",
                action if isinstance(action, str) else "")

    def _on_elicitation(self, t, msg):
        with self.cond:
            if t.stopped or t.status != "input_required" or t.answer is not None:
                return
            if isinstance(msg.get("result"), dict):
                t.answer = self._answer(msg["result"])
            else:
                err = msg.get("error")
                message = err.get("message") if isinstance(err, dict) else None
                t.answer = ("error", message if isinstance(message, str) else "error")
            self.cond.notify_all()

    def _result(self, params, respond, ask):
        """Legacy tasks/result: deliver the queued elicitation, wait until terminal."""
        with self.cond:
            t = self._find(params)
        while True:
            send = None
            with self.cond:
                if t.superseded:
                    raise not_found()
                if t.status == "cancelled":
                    raise RpcError(-32603, "Task was cancelled")
                if t.status in TERMINAL:
                    result = dict(t.result)
                    result["_meta"] = {RELATED_TASK: {"taskId": t.id}}
                    break
                if t.pending_ask is not None and not t.ask_sent and ask is not None:
                    t.ask_sent = True
                    send = t.pending_ask
                else:
                    self.cond.wait(1.0)
            if send is not None:
                ask("elicitation/create", send, lambda msg, t=t: self._on_elicitation(t, msg))
        respond(result)
