-- The Neovim plugin (bindings/lua/nvim) in headless Neovim, against the demo server
-- (legacy and 2026-07-28) and, when tests/peers/install.sh has installed it,
-- @modelcontextprotocol/server-everything:
--   MCPC_LIBRARY=... MCPC_LUA_SHIM=... nvim --headless --clean \
--       --cmd 'set rtp^=bindings/lua/nvim' -c 'luafile bindings/lua/tests/test_nvim.lua'
-- MCPC_REQUIRE_PEERS=1 makes a missing server-everything a failure.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
vim.cmd("runtime plugin/mcp.lua")
local mcp = require("mcp")
local uv = vim.uv or vim.loop -- Neovim < 0.10 has only vim.loop

local node, everything = os.getenv("MCPC_PEERS_NODE"), os.getenv("MCPC_PEERS_EVERYTHING")
local have_everything = node and everything and vim.fn.filereadable(everything) == 1
if os.getenv("MCPC_REQUIRE_PEERS") == "1" and not have_everything then
  t.test("server-everything is installed", function() error("MCPC_PEERS_NODE/MCPC_PEERS_EVERYTHING unset or missing") end)
end

local dir = vim.fn.tempname()
vim.fn.mkdir(dir, "p")
local servers = {
  demo = { command = t.python, args = { t.demo } },
  modern = { command = t.python, args = { t.demo, "--era", "modern" } },
}
if have_everything then servers.everything = { command = node, args = { everything, "stdio" } } end
local config = dir .. "/servers.json"
vim.fn.writefile({ vim.json.encode({ mcpServers = servers }) }, config)
mcp.setup({ config = config, catalog = dir .. "/catalog.json", timeout_ms = 10000 })

-- Messages the plugin shows, kept to check.
local notes = {}
vim.notify = function(msg, level) notes[#notes + 1] = { msg = msg, level = level } end

local function lines_of(name)
  local buf = vim.fn.bufnr(name)
  if buf == -1 then return nil end
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

-- Waits, running the editor's loop, until the buffer NAME holds PATTERN.
local function wait_buffer(name, pattern)
  local ok = vim.wait(5000, function()
    local text = lines_of(name)
    return text ~= nil and text:find(pattern) ~= nil
  end, 10)
  if not ok then error(("buffer %s never held %q; it holds %s"):format(name, pattern, tostring(lines_of(name))), 2) end
  return lines_of(name)
end

-- Waits for a notification after the first `seen` that holds TEXT.
local function wait_note(seen, text)
  local ok = vim.wait(5000, function()
    for i = seen + 1, #notes do if notes[i].msg:find(text, 1, true) then return true end end
  end, 10)
  if not ok then error(("no notification with %q; the last: %s"):format(text, tostring(notes[#notes] and notes[#notes].msg)), 2) end
end

local function reset(name)
  local buf = vim.fn.bufnr(name)
  if buf ~= -1 then vim.api.nvim_buf_delete(buf, { force = true }) end
end

t.test(":Mcp is defined", function()
  t.eq(vim.fn.exists(":Mcp"), 2, "exists(':Mcp')")
end)

t.test("a library that does not load is reported", function()
  mcp.setup({ config = config, library = dir .. "/no-libmcpc.so" })
  local seen = #notes
  vim.cmd("Mcp tools")
  wait_note(seen, "no-libmcpc.so")
  mcp.setup({ config = config, catalog = dir .. "/catalog.json", timeout_ms = 10000 })
end)

t.test("a missing configuration file is reported, and the next command tries again", function()
  mcp.setup({ config = dir .. "/missing.json", catalog = dir .. "/catalog.json" })
  local seen = #notes
  vim.cmd("Mcp tools")
  wait_note(seen, "MCPC_ERR_CONFIG")
  mcp.setup({ config = config, catalog = dir .. "/catalog.json", timeout_ms = 10000 })
end)

t.test(":Mcp tools starts the servers without blocking and lists the catalog", function()
  local t0 = uv.hrtime()
  vim.cmd("Mcp tools")
  t.truthy((uv.hrtime() - t0) / 1e6 < 200, "the command returned at once")
  local text = wait_buffer("mcp://tools", "demo__add")
  t.truthy(text:find("modern__wants_input", 1, true), "modern server's tools")
  if have_everything then t.truthy(text:find("everything__get-sum", 1, true), "server-everything's tools") end
  t.eq(vim.fn.filereadable(dir .. "/catalog.json"), 1, "catalog saved")
end)

t.test(":Mcp call runs in the background", function()
  local ticks = 0
  local timer = uv.new_timer()
  timer:start(0, 20, function() ticks = ticks + 1 end)
  vim.cmd('Mcp call demo__slow {"ms": 300}')
  vim.cmd('Mcp call demo__add {"a": 2, "b": 3}')
  wait_buffer("mcp://result/demo__add", 'structured: {"sum":5}')
  wait_buffer("mcp://result/demo__slow", ".")
  timer:stop()
  timer:close()
  t.truthy(ticks >= 5, "the loop ran while the calls were out (" .. ticks .. " ticks)")
end)

t.test(":Mcp call reports a tool's failure", function()
  local seen = #notes
  vim.cmd('Mcp call demo__fail {"message": "no luck"}')
  wait_buffer("mcp://result/demo__fail", "no luck")
  wait_note(seen, "MCPC_ERR_TOOL")
  seen = #notes
  vim.cmd("Mcp call nope__x")
  wait_note(seen, "MCPC_ERR_UNKNOWN_NAME")
end)

t.test("an elicitation is answered through vim.ui", function()
  local asked = {}
  local select, input = vim.ui.select, vim.ui.input
  -- answer later, as a real picker would
  vim.ui.select = function(items, opts, on_choice)
    asked[#asked + 1] = opts.prompt
    vim.schedule(function() on_choice(items[1], 1) end)
  end
  vim.ui.input = function(opts, on_confirm)
    asked[#asked + 1] = opts.prompt
    vim.schedule(function() on_confirm("Lua") end)
  end
  local ok, err = pcall(function()
    vim.cmd("Mcp call modern__wants_input")
    wait_buffer("mcp://result/modern__wants_input", "hello Lua")
  end)
  vim.ui.select, vim.ui.input = select, input
  if not ok then error(err, 0) end
  t.truthy(asked[1]:find("name?", 1, true), "the server's message shown: " .. tostring(asked[1]))
end)

t.test(":Mcp read and :Mcp status", function()
  vim.cmd("Mcp status")
  local text = wait_buffer("mcp://status", "demo%s+ready")
  t.truthy(text:find("modern%s+ready"), "modern ready")
  if have_everything then
    local uri = "demo://resource/static/document/architecture.md"
    vim.cmd("Mcp read " .. uri)
    wait_buffer(uri, "%S")
  end
  local seen = #notes
  vim.cmd("Mcp read demo://nowhere")
  wait_note(seen, "demo://nowhere")
end)

if have_everything then
  t.test("server-everything: a call", function()
    vim.cmd('Mcp call everything__get-sum {"a": 20, "b": 22}')
    wait_buffer("mcp://result/everything__get-sum", "42")
  end)
end

t.test("the next session starts servers at their first call", function()
  mcp.stop()
  reset("mcp://status")
  vim.cmd("Mcp status")
  local text = wait_buffer("mcp://status", "demo%s+idle")
  t.truthy(text:find("modern%s+idle"), "modern idle")
  vim.cmd('Mcp call demo__echo {"text": "woken"}')
  wait_buffer("mcp://result/demo__echo", "woken")
  reset("mcp://status")
  vim.cmd("Mcp status")
  wait_buffer("mcp://status", "demo%s+ready")
end)

t.test("a Lua transport over libuv pipes to the demo server", function()
  local mcpc = require("mcpc")
  mcpc.attach_uv()
  local stdin, stdout = uv.new_pipe(false), uv.new_pipe(false)
  local proc = uv.spawn(t.python, { args = { t.demo }, stdio = { stdin, stdout, nil } }, function() end)
  t.truthy(proc, "spawned")
  local closed = false
  local tr = mcpc.transport(function(msg) stdin:write(msg .. "\n") end, function()
    stdin:close()
    closed = true
  end)
  local pending = ""
  stdout:read_start(function(_, data)
    if not data then return end
    pending = pending .. data
    for line in pending:gmatch("([^\n]*)\n") do tr:deliver(line) end
    pending = pending:match("[^\n]*$")
  end)
  local got
  mcpc.connect_transport_async(tr, nil, function(err, client) got = { err, client } end)
  t.truthy(vim.wait(5000, function() return got end, 10), "connected")
  local client = t.truthy(got[2], "client: " .. tostring(got[1]))
  got = nil
  client:call_tool_async("add", '{"a":1,"b":41}', function(err, r) got = err or r end)
  t.truthy(vim.wait(5000, function() return got end, 10), "answered")
  t.eq(got.structured, '{"sum":42}', "result")
  client:close()
  t.truthy(vim.wait(5000, function() return closed end, 10), "the channel closed")
  stdout:read_stop()
  tr:free()
  stdout:close()
  proc:kill("sigterm")
  proc:close()
end)

t.test("a server that needs a login asks for it through vim.ui", function()
  local url, stop_fixture = t.oauth_fixture()
  local open, input = vim.ui.open, vim.ui.input
  local opened, prompted
  vim.ui.open = function(u) opened = u end
  vim.ui.input = function(opts, on_confirm)
    prompted = opts.prompt
    -- the browser's address bar after the authorization server sent it back
    vim.schedule(function() on_confirm(t.browse(opened)) end)
  end
  local ok, err = pcall(function()
    mcp.stop()
    local cfg = dir .. "/oauth.json"
    vim.fn.writefile({ vim.json.encode({ mcpServers = { o = { type = "http", url = url } } }) }, cfg)
    mcp.setup({ config = cfg, catalog = dir .. "/oauth-catalog.json", timeout_ms = 20000,
                oauth_redirect_uri = "http://127.0.0.1:9/callback" })
    local seen = #notes
    vim.cmd('Mcp call o__echo {"text": "logged in"}')
    wait_buffer("mcp://result/o__echo", "logged in")
    wait_note(seen, "log in at http://127.0.0.1:")
    t.truthy(opened and opened:find("code_challenge_method=S256", 1, true), "the URL opened: " .. tostring(opened))
    t.truthy(prompted and prompted:find("sent back", 1, true), "the prompt: " .. tostring(prompted))
  end)
  vim.ui.open, vim.ui.input = open, input
  mcp.stop()
  stop_fixture()
  mcp.setup({ config = config, catalog = dir .. "/catalog.json", timeout_ms = 10000 })
  if not ok then error(err, 0) end
end)

t.test("stop leaves nothing behind", function()
  mcp.stop()
  local mcpc = require("mcpc")
  t.nothing_left(mcpc, "stop")
end)

vim.fn.delete(dir, "rf")
t.done("nvim " .. ("%d.%d.%d"):format(vim.version().major, vim.version().minor, vim.version().patch))
