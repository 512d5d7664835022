-- The client over stdio and HTTP against the demo server and the HTTP fixture:
-- blocking and asynchronous calls, errors, cancellation, elicitation.
--   MCPC_LIBRARY=target/debug/libmcpc.so MCPC_LUA_SHIM=build/lua/libmcpc_lua.so \
--       luajit bindings/lua/tests/test_client.lua
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local mcpc = require("mcpc")
local K = mcpc.const

local demo = { t.python, t.demo }

t.test("version equals the header's", function()
  t.eq(mcpc.version(), K.MCPC_VERSION, "mcpc.version()")
end)

local c
t.test("stdio: connect, list, call", function()
  c = mcpc.connect_stdio(demo, { timeout_ms = 10000, client_info = { "lua-test", "1.0" } })
  t.eq(c.protocol_version, "2025-11-25", "protocol")
  local tools = c:list_tools()
  t.eq(#tools, 25, "tools")
  t.eq(tools[2].name, "add", "second tool")
  t.truthy(tools[2].json:find('"inputSchema"', 1, true), "tool JSON")
  t.truthy(tools.json:find('"echo"', 1, true), "list JSON")
  local r = c:call_tool("add", '{"a":2,"b":3}')
  t.eq(r.structured, '{"sum":5}', "structured")
  t.eq(r.is_error, false, "is_error")
  local e = c:call_tool("echo", '{"text":"hi"}')
  t.eq(e.text, "hi", "echo text")
  t.eq(e.texts[1], "hi", "texts[1]")
end)

t.test("errors carry status, name and message", function()
  local err = t.raises("MCPC_ERR_TOOL", c.call_tool, c, "fail", '{"message":"no luck"}')
  t.eq(err.status, K.MCPC_ERR_TOOL, "status")
  t.eq(err.result.text, "no luck", "the failed result")
  t.truthy(tostring(err):find("^MCPC_ERR_TOOL: .*no luck"), "tostring")
  err = t.raises("MCPC_ERR_TIMEOUT", c.call_tool, c, "slow", '{"ms":5000}', { timeout_ms = 200 })
  t.truthy(err.message:find("slow", 1, true), "the message names the call")
  err = t.raises("MCPC_ERR_RPC", c.call_tool, c, "add", '{"a":"x"}')
  t.eq(err.rpc_code, -32602, "JSON-RPC code")
  t.raises("MCPC_ERR_INVALID_ARG", c.call_tool, c, "add", "[1]")
  t.raises("MCPC_ERR_SPAWN", mcpc.connect_stdio, { "/nonexistent/mcp-server" })
end)

t.test("resources, prompts, requests", function()
  local contents = c:read_resource("demo://greeting")
  t.eq(contents[1].uri, "demo://greeting", "uri")
  t.eq(contents[1].text, "Hello from the mcpc demo.", "text")
  t.truthy(c:get_prompt("greet", '{"who":"Lua"}'):find("Say hello to Lua.", 1, true), "prompt")
  t.eq(c:request("ping", nil), "{}", "ping")
  t.truthy(c:server_info():find("mcpc-demo", 1, true), "server info")
  t.raises("MCPC_ERR_RPC", c.complete, c, { prompt = "greet" }, "who", "L")
end)

t.test("async: results come from mcpc.poll on this thread", function()
  local got = {}
  c:call_tool_async("echo", '{"text":"one"}', function(err, r) got[#got + 1] = err or r.text end)
  c:list_tools_async(function(err, tools) got[#got + 1] = err or #tools end)
  c:request_async("resources/read", '{"uri":"demo://greeting"}', function(err, json) got[#got + 1] = err or json end)
  c:call_tool_async("fail", '{"message":"async no"}', function(err) got[#got + 1] = err end)
  t.eq(#got, 0, "nothing before poll")
  mcpc.wait(function() return #got == 4 end, 10000)
  local seen = {}
  for _, v in ipairs(got) do seen[type(v) == "table" and v.name or tostring(v):sub(1, 12)] = v end
  t.truthy(seen["one"], "call")
  t.truthy(seen["25"], "list")
  t.truthy(seen['{"contents":'], "request")
  t.eq(seen.MCPC_ERR_TOOL.result.text, "async no", "tool error result")
end)

t.test("async: cancel", function()
  local status
  local op = c:call_tool_async("slow", '{"ms":60000}', function(err) status = err and err.name end)
  op:cancel()
  mcpc.wait(function() return status end, 5000)
  t.eq(status, "MCPC_ERR_CANCELLED", "status")
  t.eq(op.handle, nil, "op freed on completion")
end)

t.test("close completes calls in flight with MCPC_ERR_CLOSED", function()
  local status
  c:call_tool_async("slow", '{"ms":60000}', function(err) status = err and err.name end)
  c:close()
  mcpc.wait(function() return status end, 5000)
  t.eq(status, "MCPC_ERR_CLOSED", "status")
  t.raises("MCPC_ERR_CLOSED", c.list_tools, c)
  t.raises("MCPC_ERR_CLOSED", c.call_tool_async, c, "echo", "{}", function() end)
end)

t.test("connect_stdio_async", function()
  local got
  mcpc.connect_stdio_async(demo, nil, function(err, client) got = { err, client } end)
  mcpc.wait(function() return got end, 10000)
  t.eq(got[1], nil, "error")
  t.eq(#got[2]:list_tools(), 25, "tools")
  got[2]:close()
  got = nil
  mcpc.connect_stdio_async({ t.python, t.demo, "--fault", "init-error" }, nil, function(err, client)
    got = { err, client }
  end)
  mcpc.wait(function() return got end, 10000)
  t.truthy(got[1] and got[1].status ~= 0, "a failed handshake is an error")
end)

t.test("elicitation: answered later, from this thread", function()
  local pending, asked_on
  local cm = mcpc.connect_stdio({ t.python, t.demo, "--era", "modern" }, {
    timeout_ms = 10000,
    elicitation = function(input) pending = input end, -- answered outside the handler
  })
  local result
  cm:call_tool_async("wants_input", "{}", function(err, r) result = err or r end)
  mcpc.wait(function() return pending end, 10000)
  t.eq(pending.message, "name?", "message")
  t.truthy(pending.schema:find('"name"', 1, true), "schema")
  t.eq(pending.kind, K.MCPC_INPUT_ELICIT_FORM, "kind")
  pending:accept('{"name":"Lua"}')
  t.raises("MCPC_ERR_ALREADY_COMPLETED", pending.accept, pending, "{}")
  mcpc.wait(function() return result end, 10000)
  t.eq(result.text, "hello Lua", "the tool got the answer")
  cm:close()
end)

t.test("elicitation: a handler that raises refuses the request", function()
  local old = mcpc.on_callback_error
  local reported
  mcpc.on_callback_error = function(err) reported = tostring(err) end
  local cm = mcpc.connect_stdio({ t.python, t.demo, "--era", "modern" }, {
    timeout_ms = 10000,
    elicitation = function() error("no user here") end,
  })
  local result
  cm:call_tool_async("wants_input", "{}", function(err, r) result = err or r end)
  local ok, err = pcall(mcpc.wait, function() return result end, 10000)
  mcpc.on_callback_error = old
  cm:close()
  if not ok then error(err, 0) end
  t.eq(result.name, "MCPC_ERR_INPUT_REQUIRED", "the call's error")
  t.truthy(reported and reported:find("no user here", 1, true), "the handler's error reported")
end)

t.test("HTTP: connect, call, async", function()
  local url, stop = t.http_fixture()
  local ok, err = pcall(function()
    local h = mcpc.connect_http(url, { timeout_ms = 10000 })
    t.eq(#h:list_tools(), 25, "tools")
    t.eq(h:call_tool("add", '{"a":1,"b":1}').structured, '{"sum":2}', "call")
    local got
    h:call_tool_async("echo", '{"text":"over http"}', function(e, r) got = e or r end)
    mcpc.wait(function() return got end, 10000)
    t.eq(got.text, "over http", "async")
    h:close()
    got = nil
    mcpc.connect_http_async(url, nil, function(e, client) got = { e, client } end)
    mcpc.wait(function() return got end, 10000)
    t.eq(#got[2]:list_tools(), 25, "async connect")
    got[2]:close()
  end)
  stop()
  if not ok then error(err, 0) end
end)

t.test("a transport in Lua", function()
  -- a server in this test: it answers initialize, tools/list and tools/call by pattern
  local results = {
    initialize = '{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"lua-fake","version":"1"}}',
    ["tools/list"] = '{"tools":[{"name":"here","inputSchema":{"type":"object"}}]}',
    ["tools/call"] = '{"content":[{"type":"text","text":"answered in Lua"}]}',
  }
  local sent, closed, tr = {}, false, nil
  tr = mcpc.transport(function(msg)
    sent[#sent + 1] = msg
    local id, method = msg:match('"id":([^,}]+)'), msg:match('"method":"([^"]+)"')
    if id and results[method] then
      tr:deliver(('{"jsonrpc":"2.0","id":%s,"result":%s}'):format(id, results[method]))
    end
  end, function() closed = true end)
  local got
  mcpc.connect_transport_async(tr, { negotiation = "legacy" }, function(err, client) got = { err, client } end)
  mcpc.wait(function() return got end, 5000)
  t.eq(got[1], nil, "connect error")
  local client = got[2]
  t.eq(client.protocol_version, "2025-11-25", "protocol")
  got = nil
  client:call_tool_async("here", "{}", function(err, r) got = err or r end)
  mcpc.wait(function() return got end, 5000)
  t.eq(got.text, "answered in Lua", "result")
  t.truthy(sent[1]:find('"method":"initialize"', 1, true), "initialize sent first")
  client:close()
  mcpc.wait(function() return closed end, 5000)
  tr:free()
  t.raises("MCPC_ERR_CLOSED", tr.deliver, tr, "{}")
end)

t.test("options and checks", function()
  local o = mcpc.options({ negotiation = "legacy", max_pages = 10, http_version = "1.1",
    http_transport = "streamable", restart = { 2, 100 }, close_grace_ms = { 500, 500 },
    no_proxy = "localhost", standalone_stream = false, validate_output = true,
    env = { MCPC_LUA_TEST = "1" }, stderr = "discard",
    roots = function(input) input:complete('{"roots":[]}') end })
  local c2 = mcpc.connect_stdio(demo, o)
  o:free() -- the client keeps what it needs
  t.eq(c2:negotiated_by(), "initialize", "negotiation")
  t.eq(#c2:list_tools(), 25, "tools")
  c2:roots_changed()
  c2:close()
  t.raises("MCPC_ERR_INVALID_ARG", mcpc.options, { http_version = "3" })
  t.raises("MCPC_ERR_INSECURE_URL", mcpc.check_url, "ftp://example.com/mcp")
  mcpc.check_url("http://127.0.0.1:1/mcp")
  t.raises("MCPC_ERR_INVALID_ARG", mcpc.check_arguments, "[1]")
end)

t.test("nothing is left over", function()
  t.nothing_left(mcpc)
end)

t.done("lua client")
