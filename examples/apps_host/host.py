"""An MCP Apps host you can run: it connects to a server with libmcpc, calls a tool that
has a view, and serves a page on 127.0.0.1 that renders the view in a sandboxed frame
under the policy mcpc built and carries the view's messages through mcpc's relay.

    python3 host.py [--port N] [--tool NAME] [--arguments JSON] (--url URL | -- COMMAND...)

Then open the URL it prints. Every event is one JSON line on stdout: the tool call and
its view's policy, then each message the view sent and where it went ("reply": the
relay answered it, from the server or with a refusal; "passed": a notification handed
to the server; "host": a ui/ method the page answers; "dropped": refused by the relay).
Python's standard library and the libmcpc binding only.
"""

import argparse
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, Optional

import libmcpc

UI = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
HERE = Path(__file__).resolve().parent
# The relay refuses a larger message anyway: refuse it before reading it.
MAX_BODY = 1 << 20
# A reply larger than this is logged by its size only.
MAX_LOGGED_REPLY = 4096
# Each relayed request, like the tool call, may take this long (seconds).
TIMEOUT = 30.0

_print_lock = threading.Lock()


def log(event: str, **fields: Any) -> None:
    with _print_lock:
        print(json.dumps({"event": event, **fields}), flush=True)


class Session:
    """What the page renders: the tool, its call, and the view with its policy."""

    def __init__(self, client: libmcpc.Client, tool: Dict[str, Any], arguments: Dict[str, Any],
                 result: Dict[str, Any], uri: str, view: libmcpc.UiView) -> None:
        self.client = client
        self.tool = tool
        self.arguments = arguments
        self.result = result
        self.uri = uri
        self.view = view

    def page_data(self) -> Dict[str, Any]:
        meta = self.view.meta or {}
        return {"tool": self.tool, "arguments": self.arguments, "result": self.result,
                "uri": self.uri, "allow": self.view.allow, "csp": meta.get("csp") or {},
                "prefersBorder": self.view.prefers_border}

    def relay(self, text: str) -> Dict[str, Any]:
        """Hands one message of the view to mcpc's relay and says what became of it."""
        try:
            message = json.loads(text)
        except ValueError:
            message = None
        method = message.get("method") if isinstance(message, dict) else None
        entry: Dict[str, Any] = {"method": method if isinstance(method, str) else None}
        if isinstance(message, dict) and isinstance(message.get("id"), (str, int)):
            entry["id"] = message["id"]
        if method == "tools/call" and isinstance(message.get("params"), dict):
            entry["name"] = message["params"].get("name")
        try:
            reply = self.client.relay_ui(text, timeout=TIMEOUT)
        except libmcpc.NotSupportedError as e:
            # A ui/ method is the host's; any other notification the relay does not carry.
            host = isinstance(method, str) and method.startswith("ui/")
            entry.update({"route": "host"} if host else {"route": "dropped", "why": str(e)})
        except libmcpc.McpcError as e:
            # Not one message the relay carries, or a notification the server did not take.
            entry.update(route="dropped", why=str(e))
        else:
            if reply is None:
                entry["route"] = "passed"
            else:
                entry["route"] = "reply"
                entry["reply"] = json.loads(reply)
        logged = dict(entry)
        if "reply" in logged and len(json.dumps(logged["reply"])) > MAX_LOGGED_REPLY:
            logged["reply_bytes"] = len(json.dumps(logged.pop("reply")))
        log("message", **logged)
        return entry


class Handler(BaseHTTPRequestHandler):
    """The page, its script, the view, and the relay endpoint. Only requests made to
    this address (Host) are served, and the relay only for the page's own origin: the
    view runs in an opaque origin (a sandbox without allow-same-origin), so it cannot
    post here itself even where its policy would let it connect."""

    session: Session
    origin: str

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass

    def _send(self, status: int, body: bytes, content_type: str, *extra: "tuple[str, str]") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _refuse(self, status: int, why: str) -> None:
        self._send(status, why.encode("utf-8") + b"\n", "text/plain; charset=utf-8")

    def _ours(self) -> bool:
        # Another Host is a name that resolved here by chance or by DNS rebinding.
        if self.headers.get("Host") != self.origin[len("http://"):]:
            self._refuse(421, "not this host")
            return False
        return True

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if not self._ours():
            return
        page_csp = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
                    "frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
        if self.path == "/":
            self._send(200, (HERE / "host.html").read_bytes(), "text/html; charset=utf-8",
                       ("Content-Security-Policy", page_csp))
        elif self.path == "/host.js":
            self._send(200, (HERE / "host.js").read_bytes(), "text/javascript; charset=utf-8")
        elif self.path == "/host.css":
            self._send(200, (HERE / "host.css").read_bytes(), "text/css; charset=utf-8")
        elif self.path == "/session":
            self._send(200, json.dumps(self.session.page_data()).encode("utf-8"), "application/json")
        elif self.path == "/view":
            view = self.session.view
            log("view", uri=self.session.uri, csp=view.csp, allow=view.allow)
            # mcpc's policy as built, and a second one that keeps the view sandboxed even
            # when it is opened on its own, outside the page's frame.
            self._send(200, view.html.encode("utf-8"), "text/html; charset=utf-8",
                       ("Content-Security-Policy", view.csp),
                       ("Content-Security-Policy", "sandbox allow-scripts"))
        else:
            self._refuse(404, "not found")

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        if not self._ours():
            return
        if self.path != "/relay":
            self._refuse(404, "not found")
            return
        if self.headers.get("Origin") != self.origin:
            self._refuse(403, "only the host page may relay")
            return
        if self.headers.get_content_type() != "application/json":
            self._refuse(415, "the message must be application/json")
            return
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self._refuse(411, "a Content-Length is needed")
            return
        if length < 0 or length > MAX_BODY:
            self._refuse(413, "the message is larger than %d bytes" % MAX_BODY)
            return
        try:
            text = self.rfile.read(length).decode("utf-8")
        except UnicodeDecodeError:
            self._refuse(400, "the message is not UTF-8")
            return
        self._send(200, json.dumps(self.session.relay(text)).encode("utf-8"), "application/json")


def pick_tool(client: libmcpc.Client, name: Optional[str]) -> "tuple[Dict[str, Any], str]":
    """The tool to call and its view's URI: the one named, else the first with a view
    that the model may call (a host calls tools on the model's behalf)."""
    views = client.tool_views()
    if name is None:
        name = next((n for n, v in views.items() if "model" in v["visibility"]), None)
        if name is None:
            sys.exit("host.py: the server lists no tool with a view that the model may call")
    elif name not in views:
        sys.exit("host.py: the server lists no tool %r with a view" % name)
    elif "model" not in views[name]["visibility"]:
        sys.exit("host.py: tool %r is for its view only; a host does not call it" % name)
    tool = next(t for t in client.tools() if t.get("name") == name)
    return tool, views[name]["uri"]


def connect(args: argparse.Namespace) -> libmcpc.Client:
    # Declaring the extension tells the server this host renders views.
    options: Dict[str, Any] = {"timeout": TIMEOUT, "extensions": {UI: {"mimeTypes": [MIME]}}}
    if args.url:
        return libmcpc.Client.http(args.url, **options)
    return libmcpc.Client.stdio(args.command, stderr="inherit", **options)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one)")
    parser.add_argument("--tool", help="the tool to call (default: the first with a view)")
    parser.add_argument("--arguments", default="{}", help="its arguments, a JSON object")
    parser.add_argument("--url", help="the server's Streamable HTTP URL, instead of a command")
    parser.add_argument("command", nargs="*", help="the server's command, after --")
    args = parser.parse_args()
    arguments = json.loads(args.arguments)
    if not isinstance(arguments, dict):
        parser.error("--arguments must be a JSON object")
    if bool(args.url) == bool(args.command):
        parser.error("give either --url URL or -- COMMAND...")

    with connect(args) as client:
        tool, uri = pick_tool(client, args.tool)
        try:
            result = client.call(tool["name"], arguments).raw
        except libmcpc.ToolError as e:
            result = e.result.raw  # the view shows the failure too
        view = client.read_ui_view(uri)
        log("called", tool=tool["name"], arguments=arguments, result=result, uri=uri,
            csp=view.csp, allow=view.allow)

        server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
        server.daemon_threads = True
        Handler.session = Session(client, tool, arguments, result, uri, view)
        Handler.origin = "http://127.0.0.1:%d" % server.server_address[1]
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        log("listening", url=Handler.origin + "/")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()


if __name__ == "__main__":
    try:
        main()
    except libmcpc.McpcError as e:
        sys.exit("host.py: %s" % e)
