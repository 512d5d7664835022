"""A log of the HTTP requests an ASGI app serves, for mcpc's peer tests: one JSON
line per request, for the tests to count and time what the client sent.

    app = logged(app, "requests.log")        # wrap an ASGI app
    Middleware(logged, "requests.log")       # or as a Starlette middleware

Used by py_server.py and tasks_server.py; the standard library only."""
import json
import time


def logged(app, path):
    """Wraps the ASGI app: one JSON line per HTTP request, written when the response
    starts (the request body has been read by then; for an error status, with the
    start of its body as "reply"), or with status null when the client went away
    before any answer. "t" is the time the request came in (seconds, wall clock),
    "task" the taskId of its params."""
    out = open(path, "a", buffering=1)

    async def wrapper(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        came = time.time()
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        body = bytearray()

        async def receive_logged():
            msg = await receive()
            if msg["type"] == "http.request":
                body.extend(msg.get("body", b""))
            return msg

        started = []

        def log(status, reply=None):
            rpc = {}
            try:
                rpc = json.loads(body) if body else {}
            except ValueError:
                pass
            if not isinstance(rpc, dict):
                rpc = {}
            params = rpc.get("params") if isinstance(rpc.get("params"), dict) else {}
            entry = {
                "t": round(came, 3),
                "http": scope["method"],
                "status": status,
                "rpc": rpc.get("method"),
                "id": rpc.get("id"),
                "task": params.get("taskId"),
                "session": headers.get("mcp-session-id"),
                "version": headers.get("mcp-protocol-version"),
                "mcp_method": headers.get("mcp-method"),
                "mcp_name": headers.get("mcp-name"),
                "last_event_id": headers.get("last-event-id"),
                "http_version": scope.get("http_version"),
                "client_port": (scope.get("client") or [None, None])[1],
            }
            if reply is not None:
                entry["reply"] = reply[:300].decode("utf-8", "replace")
            out.write(json.dumps(entry) + "\n")

        async def send_logged(msg):
            if msg["type"] == "http.response.start":
                started.append(msg["status"])
                if msg["status"] < 400:
                    log(msg["status"])
            elif msg["type"] == "http.response.body" and started and started[-1] >= 400:
                log(started[-1], msg.get("body", b""))  # an error: with the start of its body
                started.append(0)
            await send(msg)

        try:
            await app(scope, receive_logged, send_logged)
        finally:
            if not started:  # the client went away before any answer (status null)
                log(None)
            elif started[-1] >= 400:  # an error whose body never went out
                log(started[-1], b"")

    return wrapper
