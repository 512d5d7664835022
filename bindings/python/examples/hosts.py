"""Many servers behind one host: read a configuration file, start its servers
together, and call their tools by qualified name."""
import json
import tempfile

import libmcpc


def on_event(event, server, state, detail):
    if event == libmcpc.HostEvent.SERVER_STATE and state in ("ready", "failed"):
        print("server:", server, state.value)


def resolver(kind, reference, prompt):
    # Ask the user or a secret store; None refuses the file.
    return "s3cr3t" if reference == "op://vault/notes-token" else None


config = {"mcpServers": {
    "calc": {"command": "python3", "args": ["demo/server.py"], "includeTools": ["add"]},
    "notes": {"command": "python3", "args": ["demo/server.py"], "env": {"NOTES_TOKEN": "${op://vault/notes-token}"}},
    "broken": {"command": "/nonexistent/mcp-server"},
}}
with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
    json.dump(config, f)
    f.flush()
    with libmcpc.Host(timeout=10, on_event=on_event, resolver=resolver) as host:
        print("added:", host.add_config(f.name))
        host.start()  # together; the broken one leaves the others running
        catalog = host.tools()
        print("tools:", len(catalog), catalog.names[:2])
        print("sum:", host.call("calc__add", {"a": 2, "b": 3}).structured)
        try:
            host.call("broken__echo", {"text": "x"})
        except libmcpc.UnknownNameError as e:
            print("unknown:", e)
