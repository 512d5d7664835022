"""The demo server's MCP Apps (io.modelcontextprotocol/ui), behind --apps: tools with a
view, one only the view may call, one only the model may see, and ui:// views that a
host must check (the wrong MIME type, too large, a policy with an injection, a blob,
a policy given only in the resource listing)."""

import base64

EXTENSION = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
VIEW = "ui://demo/clock.html"
HTML = ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Demo clock</title></head>"
        "<body><p id=\"time\">waiting</p></body></html>")
VIEW_META = {"ui": {"csp": {"resourceDomains": ["https://cdn.example.com"],
                            "connectDomains": ["wss://live.example.com"]},
                    "permissions": {"clipboardWrite": {}},
                    "domain": "demo-clock.example.com",
                    "prefersBorder": True}}

TOOLS = [
    {"name": "show_clock", "description": "Shows a clock (a view).",
     "inputSchema": {"type": "object", "properties": {}},
     "_meta": {"ui": {"resourceUri": VIEW, "visibility": ["model", "app"]}}},
    {"name": "clock_tick", "description": "Advances the clock; only the view calls it.",
     "inputSchema": {"type": "object", "properties": {}},
     "_meta": {"ui": {"resourceUri": VIEW, "visibility": ["app"]}}},
    {"name": "model_only", "description": "Only the model may call it, not a view.",
     "inputSchema": {"type": "object", "properties": {}},
     "_meta": {"ui": {"visibility": ["model"]}}},
    {"name": "legacy_view", "description": "A view named by the older flat key.",
     "inputSchema": {"type": "object", "properties": {}},
     "_meta": {"ui/resourceUri": "ui://demo/listed.html"}},
]

# uri -> (mime, body text or None, blob bytes or None, _meta or None)
VIEWS = {
    VIEW: (MIME, HTML, None, VIEW_META),
    "ui://demo/plain.html": (MIME, HTML, None, None),
    "ui://demo/blob.html": (MIME, None, HTML.encode("utf-8"), None),
    "ui://demo/wrong-mime.html": ("text/html", HTML, None, None),
    "ui://demo/huge.html": (MIME, "<!DOCTYPE html>" + "x" * (9 << 20), None, None),
    "ui://demo/inject.html": (MIME, HTML, None,
                              {"ui": {"csp": {"connectDomains": ["https://a.example.com; script-src *"]}}}),
    "ui://demo/quote.html": (MIME, HTML, None,
                             {"ui": {"csp": {"resourceDomains": ["https://a.example.com 'unsafe-eval'"]}}}),
    # The policy is in the listing only: a host reads it from there.
    "ui://demo/listed.html": (MIME, HTML, None, None),
}
LISTED = [{"uri": VIEW, "name": "clock", "mimeType": MIME},
          {"uri": "ui://demo/listed.html", "name": "listed", "mimeType": MIME,
           "_meta": {"ui": {"csp": {"frameDomains": ["https://player.example.com"]}, "prefersBorder": False}}}]


def call(name):
    """The result of an apps tool, or None when name is not one."""
    if name == "show_clock":
        return {"content": [{"type": "text", "text": "12:00"}], "structuredContent": {"time": "12:00"}}
    if name == "clock_tick":
        return {"content": [{"type": "text", "text": "12:01"}], "structuredContent": {"time": "12:01"}}
    if name == "model_only":
        return {"content": [{"type": "text", "text": "model only"}]}
    if name == "legacy_view":
        return {"content": [{"type": "text", "text": "listed"}]}
    return None


def handle(method, params, rpc_error):
    """The result of resources/read of a ui:// view or resources/list, or None."""
    if method == "resources/list":
        return {"resources": list(LISTED)}
    uri = params.get("uri")
    if method != "resources/read" or not isinstance(uri, str) or not uri.startswith("ui://"):
        return None
    if uri not in VIEWS:
        raise rpc_error(-32002, "Resource not found", {"uri": uri})
    mime, text, blob, meta = VIEWS[uri]
    item = {"uri": uri, "mimeType": mime}
    if text is not None:
        item["text"] = text
    else:
        item["blob"] = base64.b64encode(blob).decode("ascii")
    if meta is not None:
        item["_meta"] = meta
    return {"contents": [item]}
