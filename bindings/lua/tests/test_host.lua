-- The host layer: an mcpServers file of demo servers, started without blocking,
-- events and results delivered by mcpc.poll; a saved catalog and lazy start.
--   MCPC_LIBRARY=target/debug/libmcpc.so MCPC_LUA_SHIM=build/lua/libmcpc_lua.so \
--       luajit bindings/lua/tests/test_host.lua
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local mcpc = require("mcpc")

local config = os.tmpname()
local f = assert(io.open(config, "w"))
f:write(([[{"mcpServers": {
  "alpha": {"command": "%s", "args": ["%s"]},
  "beta": {"command": "%s", "args": ["%s", "--extra-tools", "1"], "includeTools": ["echo", "item_00"]},
  "off": {"command": "/nonexistent", "disabled": true},
  "broken": {"command": "/nonexistent/mcp-server"}
}}]]):format(t.python, t.demo, t.python, t.demo))
f:close()

local function wait_for(fn, what)
  local ok, err = pcall(mcpc.wait, fn, 15000)
  if not ok then error(what .. ": " .. tostring(err), 2) end
end

local catalog
t.test("host: start_async, events, catalog, calls", function()
  local host = mcpc.host({ timeout_ms = 10000 })
  local events, settled = {}, nil
  host:on_event(function(event, server, state, detail)
    events[#events + 1] = { event, server, state }
    if event == "settled" then settled = detail end
  end)
  t.eq(host:add_config(config), 4, "servers added")
  local started
  host:start_async(function(err) started = err or true end)
  wait_for(function() return started and settled end, "start")
  t.eq(started, true, "start's error")
  t.truthy(settled:find('"tools"', 1, true), "settled summary")
  local states = {}
  for _, e in ipairs(events) do if e[1] == "server_state" then states[e[2]] = e[3] end end
  t.eq(states.alpha, "ready", "alpha")
  t.eq(states.broken, "failed", "broken")
  local status = host:status()
  t.truthy(status:find('"name":"off","state":"disabled"', 1, true), "status: " .. status)
  catalog = host:tools()
  t.truthy(catalog:find('"alpha__add"', 1, true), "qualified names")
  t.truthy(catalog:find('"beta__item_00"', 1, true), "included tool")
  t.truthy(not catalog:find('"beta__add"', 1, true), "excluded tool")

  local got = {}
  host:call_tool_async("alpha__add", '{"a":20,"b":22}', function(err, r) got.add = err or r end)
  host:call_tool_async("beta__echo", '{"text":"b"}', function(err, r) got.echo = err or r end)
  host:call_tool_async("nope__x", "{}", function(err, r) got.nope = err or r end)
  host:read_resource_async("demo://greeting", function(err, c) got.read = err or c end)
  t.eq(host.calls, 4, "in flight")
  wait_for(function() return got.add and got.echo and got.nope and got.read end, "calls")
  t.eq(got.add.structured, '{"sum":42}', "alpha__add")
  t.eq(got.echo.text, "b", "beta__echo")
  t.eq(got.nope.name, "MCPC_ERR_UNKNOWN_NAME", "unknown tool")
  -- the demo server reads demo://greeting but lists no resources, so no route to it
  t.eq(got.read.name, "MCPC_ERR_UNKNOWN_NAME", "unlisted resource")
  t.truthy(got.read.message:find("demo://greeting", 1, true), "the message names the URI")
  t.eq(host:call_tool("alpha__echo", '{"text":"blocking"}').text, "blocking", "blocking call")
  t.truthy(host:resources():find('"resources":[]', 1, true), "resources")
  t.truthy(host:prompts():find('"name":"alpha__greet"', 1, true), "prompts")
  t.truthy(host:get_prompt("beta__greet", '{"who":"Lua"}'):find("Say hello to Lua.", 1, true), "get_prompt")
  host:set_name_format("mcp__{server}__{name}")
  t.truthy(host:tools():find('"mcp__alpha__add"', 1, true), "the host's name format")
  local ok, err = pcall(host.set_name_format, host, "a.{name}")
  t.eq(ok or err.name, "MCPC_ERR_INVALID_ARG", "a malformed format")
  host:set_name_format(nil)

  -- a call in flight when the host closes completes (MCPC_ERR_CLOSED) before close returns
  host:call_tool_async("alpha__slow", '{"ms":60000}', function(err) got.slow = err and err.name end)
  host:close()
  t.eq(got.slow, "MCPC_ERR_CLOSED", "slow call at close")
  t.eq(host.handle, nil, "freed")
end)

t.test("host: lazy start from a saved catalog", function()
  local host = mcpc.host({ timeout_ms = 10000 })
  host:add_stdio("alpha", { t.python, t.demo })
  t.truthy(host:load_catalog(catalog) > 0, "tools taken")
  host:set_lazy(true)
  local started
  host:start_async(function(err) started = err or true end)
  wait_for(function() return started end, "start")
  t.truthy(host:status():find('"state":"idle"', 1, true), "idle until called")
  local got
  host:call_tool_async("alpha__echo", '{"text":"woken"}', function(err, r) got = err or r end)
  wait_for(function() return got end, "call")
  t.eq(got.text, "woken", "first call starts it")
  t.truthy(host:status():find('"state":"ready"', 1, true), "ready after")
  host:close()
end)

t.test("nothing is left over", function()
  t.nothing_left(mcpc)
end)

os.remove(config)
t.done("lua host")
