#!/usr/bin/env python3
"""The multi-server anchors of benches/host_run.py: one Python MCP client starts N stdio
servers, lists every tool of every one, and says how long that took and how much memory
its own process peaked at. Run with the Python of the client's venv (tests/peers/install.sh
--anchors):

    VENV/bin/python benches/host_anchors.py CLIENT N -- SERVER COMMAND...

CLIENT (the libraries' versions are in each JSON line):
    sdk            mcp 2.x ClientSessionGroup: connect_to_server() once per server, one after
                   another (from a task group it fails: "Attempted to exit cancel scope in a
                   different task"); the group keeps page 1 of tools/list only, so every
                   session is then listed again, all pages, concurrently
    langchain      langchain-mcp-adapters MultiServerMCPClient.get_tools(), tool_name_prefix:
                   one task per server (asyncio.gather), each opens a session, lists all pages
                   and closes it (the servers are stopped before get_tools() returns)
    fastmcp        fastmcp Client({"mcpServers": ...}): servers connected one after another,
                   mounted on an in-process proxy; list_tools() through it
    fastmcp-group  fastmcp ClientGroup.from_config(...): one Client per server, connected
                   together; list_tools() gathers them

One JSON line: client, versions, servers, tools (all pages), listed_s (from before the first
server is started to every tool in hand; imports excluded), import_s, close_s (after the
listing), client_maxrss_kb (ru_maxrss of this process: the servers are other processes).
"""
import json
import resource
import sys
import time

CLIENTS = ("sdk", "langchain", "fastmcp", "fastmcp-group")


def main():
    if len(sys.argv) < 5 or sys.argv[1] not in CLIENTS or sys.argv[3] != "--":
        sys.exit(__doc__)
    client, n, argv = sys.argv[1], int(sys.argv[2]), sys.argv[4:]
    t_imp = time.perf_counter()
    import asyncio
    from importlib.metadata import version
    if client == "sdk":
        import anyio
        import mcp_types
        from mcp import StdioServerParameters
        from mcp.client.session_group import ClientSessionGroup
        versions = {"mcp": version("mcp")}
    elif client == "langchain":
        from langchain_mcp_adapters.client import MultiServerMCPClient
        versions = {"langchain-mcp-adapters": version("langchain-mcp-adapters"), "mcp": version("mcp"),
                    "langchain-core": version("langchain-core")}
    else:
        from fastmcp import Client, ClientGroup
        versions = {"fastmcp": version("fastmcp"), "mcp": version("mcp")}
    import_s = time.perf_counter() - t_imp
    out = {}

    async def run_sdk():
        current = {"i": 0}
        # Every server calls itself the same: the group needs names of its own.
        hook = lambda name, info: f"s{current['i']}_{name}"  # noqa: E731
        async with ClientSessionGroup(component_name_hook=hook) as group:
            sessions = []
            for i in range(n):
                current["i"] = i
                sessions.append(await group.connect_to_server(StdioServerParameters(command=argv[0], args=argv[1:])))
            counts = [0] * n

            async def all_pages(i, s):
                cursor = None
                while True:
                    params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
                    r = await s.list_tools(params=params)
                    counts[i] += len(r.tools)
                    cursor = r.next_cursor
                    if not cursor:
                        return

            async with anyio.create_task_group() as tg:
                for i, s in enumerate(sessions):
                    tg.start_soon(all_pages, i, s)
            out["t_listed"] = time.perf_counter()
            out["tools"] = sum(counts)

    async def run_langchain():
        conns = {f"s{i}": {"command": argv[0], "args": argv[1:], "transport": "stdio"} for i in range(n)}
        tools = await MultiServerMCPClient(conns, tool_name_prefix=True).get_tools()
        out["t_listed"] = time.perf_counter()
        out["tools"] = len({t.name for t in tools})

    config = {"mcpServers": {f"s{i}": {"command": argv[0], "args": argv[1:]} for i in range(n)}}

    async def run_fastmcp():
        async with Client(config) as c:
            tools = await c.list_tools()
            out["t_listed"] = time.perf_counter()
            out["tools"] = len({t.name for t in tools})

    async def run_fastmcp_group():
        async with ClientGroup.from_config(config) as g:
            tools = await g.list_tools()
            out["t_listed"] = time.perf_counter()
            out["tools"] = len({t.name for t in tools})

    fn = {"sdk": run_sdk, "langchain": run_langchain, "fastmcp": run_fastmcp,
          "fastmcp-group": run_fastmcp_group}[client]
    t0 = time.perf_counter()
    if client == "sdk":
        anyio.run(fn)
    else:
        asyncio.run(fn())
    t_end = time.perf_counter()
    print(json.dumps({"bench": "host-anchor", "client": client, **versions, "servers": n, "tools": out["tools"],
                      "listed_s": round(out["t_listed"] - t0, 4), "import_s": round(import_s, 3),
                      "close_s": round(t_end - out["t_listed"], 3),
                      "client_maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}), flush=True)


if __name__ == "__main__":
    main()
