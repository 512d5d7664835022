-- The mcp plugin: MCP servers from an mcpServers file, behind one mcpc host.
--
-- The host starts at the first command, without blocking: its start and every call
-- run on threads of the binding, and their results come back through mcpc.attach_uv()
-- and vim.schedule. A catalog of the tools is saved after each start, so the next
-- session starts no server until a call needs it (mcpc_host_set_lazy).
local elicit = require("mcp.elicit")
local login = require("mcp.login")
local mcpc -- the binding, loaded at the first command, after setup() named the libraries

local M = {}

local defaults = {
  config = vim.fn.expand("~/.config/mcp/servers.json"),
  lazy = true,
  catalog = vim.fn.stdpath("cache") .. "/mcp/catalog.json",
  timeout_ms = 30000,
  library = nil, -- libmcpc.so (else $MCPC_LIBRARY, else beside mcpc.lua, else the loader's path)
  shim = nil, -- libmcpc_lua.so, likewise ($MCPC_LUA_SHIM)
  -- Where the browser is sent back after an OAuth login (for example
  -- "http://127.0.0.1:8976/callback"): set, a server that needs a login asks for it
  -- (mcp.login); unset, it reports needs_login.
  oauth_redirect_uri = nil,
}
M.opts = vim.deepcopy(defaults)

local env0 = { MCPC_LIBRARY = vim.env.MCPC_LIBRARY, MCPC_LUA_SHIM = vim.env.MCPC_LUA_SHIM }
local state = { host = nil, ready = false, waiters = {}, catalog = nil }

function M.setup(opts)
  M.opts = vim.tbl_extend("force", vim.deepcopy(defaults), opts or {})
end

local function notify(msg, level) vim.notify("mcp: " .. msg, level or vim.log.levels.INFO) end
local function failed(err) notify(tostring(err), vim.log.levels.ERROR) end

local function read_file(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

local function save_catalog(host)
  local ok, json = pcall(host.tools, host)
  if not ok then return end
  state.catalog = vim.json.decode(json)
  if #state.catalog.tools == 0 then return end
  vim.fn.mkdir(vim.fn.fnamemodify(M.opts.catalog, ":h"), "p")
  local f = io.open(M.opts.catalog, "w")
  if f then
    f:write(json)
    f:close()
  end
end

local function settle(err)
  state.ready = not err
  local waiters = state.waiters
  state.waiters = {}
  for _, cb in ipairs(waiters) do cb(err, state.host) end
end

-- Calls cb(err, host) once the host has started (at once after the first time).
local function with_host(cb)
  if state.ready then return cb(nil, state.host) end
  table.insert(state.waiters, cb)
  if state.host then return end
  if not mcpc then
    -- the binding reads these two; setup's paths win over what the editor started with
    vim.env.MCPC_LIBRARY = M.opts.library or env0.MCPC_LIBRARY
    vim.env.MCPC_LUA_SHIM = M.opts.shim or env0.MCPC_LUA_SHIM
    local ok, lib = pcall(require, "mcpc")
    if not ok then
      package.loaded.mcpc = nil -- LuaJIT keeps a marker that would fail the next require
      state.waiters = {}
      return cb(lib)
    end
    mcpc = lib
  end
  mcpc.attach_uv()
  local ok, err = pcall(function()
    local oauth = M.opts.oauth_redirect_uri and { redirect_uri = M.opts.oauth_redirect_uri, authorize = login.handle }
    state.host = mcpc.host({ timeout_ms = M.opts.timeout_ms, elicitation = elicit.handle, oauth = oauth })
    state.host:on_event(function(event, server, st, detail)
      if event == "server_state" and st == "failed" then notify(server .. " failed: " .. (detail or ""), vim.log.levels.WARN) end
      if event == "catalog_changed" then save_catalog(state.host) end
    end)
    state.host:add_config(M.opts.config)
    local saved = M.opts.lazy and read_file(M.opts.catalog)
    if saved then
      pcall(state.host.load_catalog, state.host, saved) -- a stale or foreign catalog only costs laziness
      state.host:set_lazy(true)
    end
  end)
  if not ok then
    if state.host then state.host:close() end
    state.host = nil
    return settle(err)
  end
  state.host:start_async(function(start_err)
    -- only a server marked `required` fails the start; the others run on, so serve them
    if start_err then failed(start_err) end
    save_catalog(state.host)
    settle(nil)
  end)
end

-- A scratch buffer named NAME with LINES, shown in a split (reused when open).
local function show(name, lines, filetype)
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(buf, name)
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = filetype or ""
  if vim.fn.bufwinid(buf) == -1 then
    vim.cmd("split")
    vim.api.nvim_win_set_buf(0, buf)
  end
  return buf
end
M.show = show

local function split_lines(s) return vim.split(s or "", "\n", { plain = true }) end

-- Each command gets the host once it has started, and its arguments.
local commands = {}

function commands.tools(host)
  local catalog = vim.json.decode(host:tools())
  state.catalog = catalog
  local lines = {}
  for _, entry in ipairs(catalog.tools) do
    local desc = (entry.tool.description or ""):gsub("\n.*", "")
    lines[#lines + 1] = ("%s\t%s"):format(entry.name, desc)
  end
  show("mcp://tools", lines)
end

function commands.status(host)
  local lines = {}
  for _, s in ipairs(vim.json.decode(host:status())) do
    local line = ("%-20s %-12s %s tools"):format(s.name, s.state, tostring(s.tools or 0))
    if type(s.error) == "table" then line = line .. "  " .. (s.error.message or "") end
    lines[#lines + 1] = line
  end
  show("mcp://status", lines)
end

function commands.call(host, args, rest)
  local name = args[1]
  if not name then return failed("usage: :Mcp call NAME {json}") end
  local json = rest:match("^%s*call%s+%S+%s*(.*)$")
  if json == "" then json = "{}" end
  host:call_tool_async(name, json, function(err, result)
    if err and not err.result then return failed(err) end
    result = result or err.result
    local lines = split_lines(result.text)
    if result.structured then vim.list_extend(lines, { "", "structured: " .. result.structured }) end
    show("mcp://result/" .. name, lines)
    if err then failed(err) end
  end)
end

function commands.read(host, args)
  local uri = args[1]
  if not uri then return failed("usage: :Mcp read URI") end
  host:read_resource_async(uri, function(err, contents)
    if err then return failed(err) end
    local lines = {}
    for _, item in ipairs(contents) do
      vim.list_extend(lines, item.text and split_lines(item.text)
        or { ("[%s: %d bytes]"):format(item.mime_type or "blob", #(item.blob or "")) })
    end
    local ft = contents[1] and contents[1].mime_type == "text/markdown" and "markdown" or nil
    show(uri, lines, ft)
  end)
end

--- :Mcp SUBCOMMAND ARGS (rest: the whole argument text, for JSON with spaces).
function M.command(args, rest)
  local fn = commands[args[1]]
  if not fn then return failed("unknown subcommand " .. tostring(args[1]) .. " (tools, call, read, status)") end
  with_host(function(err, host)
    if err then return failed(err) end
    local ok, e = pcall(fn, host, vim.list_slice(args, 2), rest or "")
    if not ok then failed(e) end
  end)
end

function M.complete(lead, line)
  local words = vim.split(line, "%s+")
  local pool = {}
  if #words <= 2 then
    pool = vim.tbl_keys(commands)
  elseif words[2] == "call" and #words == 3 and state.catalog then
    pool = vim.tbl_map(function(e) return e.name end, state.catalog.tools)
  end
  table.sort(pool)
  return vim.tbl_filter(function(w) return w:sub(1, #lead) == lead end, pool)
end

--- Stops every server (at exit, or to read the configuration again at the next command).
function M.stop()
  if state.host then
    local host = state.host
    state.host, state.ready = nil, false
    local ok, err = pcall(host.close, host)
    if not ok then failed(err) end
  end
  if mcpc then mcpc.detach_uv() end
end

vim.api.nvim_create_autocmd("VimLeavePre", { callback = function() M.stop() end })

return M
