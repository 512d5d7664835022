-- Connect to the demo server over stdio, list its tools, call some, one of them
-- asynchronously (run from the repository root).
package.path = "bindings/lua/?.lua;" .. package.path
local mcpc = require("mcpc")

local client = mcpc.connect_stdio({ "python3", "demo/server.py" }, { timeout_ms = 10000 })
local tools = client:list_tools()
print(#tools .. " tools, the first: " .. tools[1].name)
print(client:call_tool("add", '{"a":2,"b":3}').structured)        -- {"sum":5}

local ok, err = pcall(client.call_tool, client, "fail", '{"message":"no luck"}')
print(err.name, err.result.text)                                   -- MCPC_ERR_TOOL  no luck

-- Asynchronous: the callback runs from mcpc.poll, on this thread.
local echoed
client:call_tool_async("echo", '{"text":"hi"}', function(e, result) echoed = e or result.text end)
mcpc.wait(function() return echoed end, 5000)
print(echoed)                                                      -- hi
client:close()
