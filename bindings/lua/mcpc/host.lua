-- Hosts of many servers; their blocking calls made asynchronous on threads of
-- libmcpc_lua.

local ffi = require("ffi")
local core = require("mcpc.core")
local queue = require("mcpc.queue")
local options = require("mcpc.options")
local M, C, Q, K = core.M, core.C, core.Q, core.K
local new_error, last_error, check, json_arg, call_opts =
  core.new_error, core.last_error, core.check, core.json_arg, core.call_opts
local take_contents, call_outcome, argv_of, string_call, freer =
  core.take_contents, core.call_outcome, core.argv_of, core.string_call, core.freer
local new_id, ud, pending, handlers, on_free = queue.new_id, queue.ud, queue.pending, queue.handlers, queue.on_free
local opts_handle = options.opts_handle

-- ---- hosts ----------------------------------------------------------------------

local Host = {}
Host.__index = Host
M.Host = Host

M.server_states = { [0] = "added", "starting", "ready", "failed", "needs_login", "disabled", "restarting", "idle" }
M.host_events = { "server_state", "settled", "catalog_changed" }

--- A host of many servers; defaults (a table or Options) for each server added.
function M.host(defaults)
  local h, made, polls = opts_handle(defaults)
  local out = ffi.new("mcpc_host_t *[1]")
  local st = C.mcpc_host_new(h, out)
  if made then made:free() end
  check(st)
  return setmetatable({ handle = ffi.gc(out[0], C.mcpc_host_free), calls = 0, polls = polls }, Host)
end

local function live_host(self)
  if not self.handle then error(new_error(K.MCPC_ERR_CLOSED, "host is closed"), 3) end
  return self.handle
end

--- Reports to fn(event, server, state, detail) from mcpc.poll: event is "server_state",
--- "settled" or "catalog_changed", state a name of mcpc.server_states.
function Host:on_event(fn)
  local id = new_id()
  handlers[id] = function(ev)
    fn(M.host_events[ev.event], ev.server, M.server_states[ev.state], ev.text)
  end
  self.event_id = id
  check(C.mcpc_host_set_event_callback(live_host(self), ffi.cast("mcpc_host_event_cb", Q.mcpcl_on_host_event),
    ud(id), on_free))
end

function Host:add_config(path)
  local n = ffi.new("size_t[1]")
  check(C.mcpc_host_add_config(live_host(self), path, n))
  return tonumber(n[0])
end

function Host:load_catalog(json)
  local n = ffi.new("size_t[1]")
  check(C.mcpc_host_load_catalog(live_host(self), json, n))
  return tonumber(n[0])
end

function Host:set_lazy(on) check(C.mcpc_host_set_lazy(live_host(self), on and 1 or 0)) end
function Host:set_concurrency(n) check(C.mcpc_host_set_concurrency(live_host(self), n)) end
function Host:set_variable(name, value) check(C.mcpc_host_set_variable(live_host(self), name, value)) end

function Host:add_stdio(name, argv, opts)
  local a, n = argv_of(argv)
  local h, made, polls = opts_handle(opts)
  self.polls = self.polls or polls
  local st = C.mcpc_host_add_stdio(live_host(self), name, a, n, h)
  if made then made:free() end
  check(st)
end

function Host:add_http(name, url, opts)
  local h, made, polls = opts_handle(opts)
  self.polls = self.polls or polls
  local st = C.mcpc_host_add_http(live_host(self), name, url, h)
  if made then made:free() end
  check(st)
end

--- Which environment stdio servers inherit: "no_secrets" (the default), "pass_all",
--- or a list of names to allow.
function Host:set_env_policy(policy)
  if type(policy) == "table" then
    local a, n = argv_of(policy)
    check(C.mcpc_host_set_env_policy(live_host(self), K.MCPC_ENV_ALLOW, a, n))
  else
    local p = policy == "pass_all" and K.MCPC_ENV_PASS_ALL or K.MCPC_ENV_NO_SECRETS
    check(C.mcpc_host_set_env_policy(live_host(self), p, nil, 0))
  end
end

function Host:remove(name) check(C.mcpc_host_remove(live_host(self), name)) end

--- Starts every server and waits (blocking); start_async for an event loop. With an
--- OAuth authorize handler it polls while it waits, so that the handler can run.
function Host:start()
  if not self.polls then return check(C.mcpc_host_start(live_host(self))) end
  local done, err = false, nil
  self:start_async(function(e) done, err = true, e end)
  M.wait(function() return done end, math.huge)
  if err then error(err, 2) end
end

--- JSON of the catalog, of each server's state, of the resources (they do not block).
function Host:tools() return string_call(C.mcpc_host_tools, live_host(self)) end
function Host:status() return string_call(C.mcpc_host_status, live_host(self)) end
function Host:resources() return string_call(C.mcpc_host_resources, live_host(self)) end
function Host:prompts() return string_call(C.mcpc_host_prompts, live_host(self)) end

--- How tools and prompts are named: "mcp__{server}__{name}", "{name}"; nil: the default.
function Host:set_name_format(fmt) check(C.mcpc_host_set_name_format(live_host(self), fmt)) end

--- The prompt's result as JSON (blocking, as Client:get_prompt).
function Host:get_prompt(qualified, args, o)
  return string_call(C.mcpc_host_get_prompt, live_host(self), qualified, json_arg(args), call_opts(o))
end

function Host:call_tool(qualified, args, o)
  local out = ffi.new("mcpc_result_t *[1]")
  local st = C.mcpc_host_call_tool(live_host(self), qualified, json_arg(args) or "{}", call_opts(o), out)
  local err, result = call_outcome(st, out[0], st ~= K.MCPC_OK and ffi.string(C.mcpc_last_error_message()) or nil)
  if err then error(err, 2) end
  return result
end

function Host:read_resource(uri, o)
  local out = ffi.new("mcpc_contents_t *[1]")
  check(C.mcpc_host_read_resource(live_host(self), uri, call_opts(o), out))
  return take_contents(out[0])
end

-- The host's blocking calls, each on a thread of libmcpc_lua; `take` turns the
-- event into the callback's arguments.
local function host_async(self, start, take, cb)
  local id = new_id()
  self.calls = self.calls + 1
  pending[id] = function(ev)
    self.calls = self.calls - 1
    cb(take(ev))
  end
  local rc = start(ud(id))
  if rc ~= 0 then
    pending[id] = nil
    self.calls = self.calls - 1
    error(new_error(K.MCPC_ERR_PANIC, "no thread for the host call (errno " .. rc .. ")"), 3)
  end
end

local function fnptr(f) return ffi.cast("void *", f) end

--- Starts every server without blocking: cb(err) once all are ready or failed.
function Host:start_async(cb)
  local h = live_host(self)
  host_async(self, function(u) return Q.mcpcl_host_start_async(fnptr(C.mcpc_host_start),
    fnptr(C.mcpc_last_error_message), h, u) end,
    function(ev) if ev.status ~= K.MCPC_OK then return new_error(ev.status, ev.text) end end, cb)
end

--- cb(err, result) as Client:call_tool_async; an idle server is started first.
function Host:call_tool_async(qualified, args, cb)
  local h = live_host(self)
  local a = json_arg(args) or "{}"
  host_async(self, function(u) return Q.mcpcl_host_call_tool_async(fnptr(C.mcpc_host_call_tool),
    fnptr(C.mcpc_last_error_message), h, qualified, a, u) end,
    function(ev) return call_outcome(ev.status, ffi.cast("mcpc_result_t *", ev.ptr), ev.text) end, cb)
end

--- cb(err, contents) as Host:read_resource.
function Host:read_resource_async(uri, cb)
  local h = live_host(self)
  host_async(self, function(u) return Q.mcpcl_host_read_resource_async(fnptr(C.mcpc_host_read_resource),
    fnptr(C.mcpc_last_error_message), h, uri, u) end,
    function(ev)
      if ev.status ~= K.MCPC_OK then return new_error(ev.status, ev.text) end
      return nil, take_contents(ffi.cast("mcpc_contents_t *", ev.ptr))
    end, cb)
end

--- Closes every server, lets the calls in flight finish (they fail with
--- MCPC_ERR_CLOSED; their callbacks run here), then frees the host.
function Host:close(timeout_ms)
  if not self.handle then return end
  local st = C.mcpc_host_close(self.handle)
  local close_err = st ~= K.MCPC_OK and last_error(st) -- before poll's calls reset it
  local ok, err = pcall(M.wait, function() return self.calls == 0 end, timeout_ms or 10000)
  if not ok then
    -- a thread still uses the host: leaking it is safe, freeing it is not
    ffi.gc(self.handle, nil)
    self.handle = nil
    error(err, 2)
  end
  self:free()
  if close_err then error(close_err, 2) end
end

Host.free = freer(C.mcpc_host_free)

return {}
