"""Connect to the demo server over stdio, list its tools, call some."""
import libmcpc

with libmcpc.Client.stdio(["python3", "demo/server.py"], timeout=10) as client:
    for tool in client.tools()[:2]:
        print("tool:", tool["name"], tool["inputSchema"]["properties"])

    result = client.call("add", {"a": 2, "b": 3})
    print("structured:", result.structured)
    print("text:", result.text)

    try:
        client.call("fail", {"message": "no luck"})
    except libmcpc.ToolError as e:
        print("tool failed:", e.result.text)

    try:
        client.call("slow", {"ms": 5000}, timeout=0.2)
    except libmcpc.TimeoutError as e:
        print("timed out:", e)
