-- Clients: connecting over stdio and HTTP, blocking and asynchronous calls.

local ffi = require("ffi")
local core = require("mcpc.core")
local queue = require("mcpc.queue")
local options = require("mcpc.options")
local M, C, Q, K = core.M, core.C, core.Q, core.K
local new_error, last_error, check, str = core.new_error, core.last_error, core.check, core.str
local take_tools, take_contents, call_outcome = core.take_tools, core.take_contents, core.call_outcome
local json_arg, call_opts, argv_of, string_call, freer =
  core.json_arg, core.call_opts, core.argv_of, core.string_call, core.freer
local new_id, ud, pending, start_op = queue.new_id, queue.ud, queue.pending, queue.start_op
local opts_handle = options.opts_handle

-- ---- clients --------------------------------------------------------------------

local Client = {}
Client.__index = Client
M.Client = Client

local function wrap_client(h)
  local self = setmetatable({ handle = ffi.gc(h, C.mcpc_client_free) }, Client)
  self.protocol_version = str(C.mcpc_client_protocol_version(h))
  return self
end

--- Connects over stdio: argv = {"python3", "demo/server.py"}; opts a table or Options.
function M.connect_stdio(argv, opts)
  local a, n = argv_of(argv)
  local h, made = opts_handle(opts)
  local out = ffi.new("mcpc_client_t *[1]")
  local st = C.mcpc_client_connect_stdio(a, n, h, out)
  if made then made:free() end
  check(st)
  return wrap_client(out[0])
end

function M.connect_http(url, opts)
  local h, made, polls = opts_handle(opts)
  if polls then
    -- A login's handler runs from poll: connect without blocking, and poll until done.
    -- mcpc ends the connect by its timeout, so the wait needs none of its own.
    local done, err, client = false, nil, nil
    local ok, e = pcall(M.connect_http_async, url, made or opts, function(e2, c)
      done, err, client = true, e2, c
    end)
    if made then made:free() end
    if not ok then error(e, 2) end
    M.wait(function() return done end, math.huge)
    if err then error(err, 2) end
    return client
  end
  local out = ffi.new("mcpc_client_t *[1]")
  local st = C.mcpc_client_connect_http(url, h, out)
  if made then made:free() end
  check(st)
  return wrap_client(out[0])
end

local function connect_async(start, cb)
  local id = new_id()
  pending[id] = function(ev)
    if ev.status == K.MCPC_OK then
      cb(nil, wrap_client(ffi.cast("mcpc_client_t *", ev.ptr)))
    else
      cb(new_error(ev.status, ev.text))
    end
  end
  local out = ffi.new("mcpc_op_t *[1]")
  return start_op(id, start(ffi.cast("mcpc_connect_done_cb", Q.mcpcl_on_connect), ud(id), out), out)
end

--- Connects without blocking: cb(err, client) runs from mcpc.poll. Returns an Op.
function M.connect_stdio_async(argv, opts, cb)
  local a, n = argv_of(argv)
  local h, made = opts_handle(opts)
  local op = connect_async(function(fn, u, out) return C.mcpc_client_connect_stdio_async(a, n, h, fn, u, out) end, cb)
  if made then made:free() end
  return op
end

function M.connect_http_async(url, opts, cb)
  local h, made = opts_handle(opts)
  local op = connect_async(function(fn, u, out) return C.mcpc_client_connect_http_async(url, h, fn, u, out) end, cb)
  if made then made:free() end
  return op
end

local function live_client(self)
  if not self.handle then error(new_error(K.MCPC_ERR_CLOSED, "client is closed"), 3) end
  return self.handle
end

function Client:server_info() return string_call(C.mcpc_client_server_info, live_client(self)) end

--- The tools, following pagination: an array of {name, json}, and .json for all.
function Client:list_tools(o)
  local out = ffi.new("mcpc_tool_list_t *[1]")
  check(C.mcpc_client_list_tools(live_client(self), call_opts(o), out))
  return take_tools(out[0])
end

--- Calls a tool and waits: a result table {text, texts, json, structured, is_error}.
--- A tool's own failure raises MCPC_ERR_TOOL with the result in err.result.
function Client:call_tool(name, args, o)
  local out = ffi.new("mcpc_result_t *[1]")
  local st = C.mcpc_client_call_tool(live_client(self), name, json_arg(args) or "{}", call_opts(o), out)
  local err, result = call_outcome(st, out[0], st ~= K.MCPC_OK and ffi.string(C.mcpc_last_error_message()) or nil)
  if err then
    err.rpc_code = tonumber(C.mcpc_last_error_rpc_code())
    error(err, 2)
  end
  return result
end

function Client:list_resources(o) return string_call(C.mcpc_client_list_resources, live_client(self), call_opts(o)) end
function Client:list_resource_templates(o)
  return string_call(C.mcpc_client_list_resource_templates, live_client(self), call_opts(o))
end
function Client:list_prompts(o) return string_call(C.mcpc_client_list_prompts, live_client(self), call_opts(o)) end

--- Reads a resource: an array of {uri, mime_type, text | blob, meta}, and .json.
function Client:read_resource(uri, o)
  local out = ffi.new("mcpc_contents_t *[1]")
  check(C.mcpc_client_read_resource(live_client(self), uri, call_opts(o), out))
  return take_contents(out[0])
end

function Client:get_prompt(name, args, o)
  return string_call(C.mcpc_client_get_prompt, live_client(self), name, json_arg(args), call_opts(o))
end

--- completion/complete: ref = {prompt = NAME} or {resource = URI_TEMPLATE}; the
--- result's JSON ({"completion": {"values": [...]}}).
function Client:complete(ref, argument, value, context, o)
  local kind, reference = K.MCPC_COMPLETE_PROMPT, ref.prompt
  if ref.resource then kind, reference = K.MCPC_COMPLETE_RESOURCE, ref.resource end
  return string_call(C.mcpc_client_complete, live_client(self), kind, reference, argument, value,
                     json_arg(context), call_opts(o))
end

--- Any request, by method: the result's JSON.
function Client:request(method, params, o)
  return string_call(C.mcpc_client_request, live_client(self), method, json_arg(params), call_opts(o))
end

function Client:server_extensions() return string_call(C.mcpc_client_server_extensions, live_client(self)) end
function Client:negotiated_by() return str(C.mcpc_client_negotiated_by(live_client(self))) end
function Client:forget_lists() check(C.mcpc_client_forget_lists(live_client(self))) end
function Client:subscribe_resource(uri, o) check(C.mcpc_client_subscribe_resource(live_client(self), uri, call_opts(o))) end
function Client:unsubscribe_resource(uri, o)
  check(C.mcpc_client_unsubscribe_resource(live_client(self), uri, call_opts(o)))
end
function Client:set_log_level(level, o) check(C.mcpc_client_set_log_level(live_client(self), level, call_opts(o))) end
function Client:roots_changed() check(C.mcpc_client_roots_changed(live_client(self))) end

function Client:notify(method, params) check(C.mcpc_client_notify(live_client(self), method, json_arg(params))) end

function Client:list_tools_async(cb, o)
  local h = live_client(self) -- raises before anything is registered
  local id = new_id()
  pending[id] = function(ev)
    if ev.status == K.MCPC_OK then cb(nil, take_tools(ffi.cast("mcpc_tool_list_t *", ev.ptr)))
    else cb(new_error(ev.status, ev.text)) end
  end
  local out = ffi.new("mcpc_op_t *[1]")
  return start_op(id, C.mcpc_client_list_tools_async(h, call_opts(o),
    ffi.cast("mcpc_list_done_cb", Q.mcpcl_on_list), ud(id), out), out)
end

--- Calls a tool without blocking: cb(err, result) runs from mcpc.poll. Returns an Op.
--- The form to use when the server may ask for input (its handler runs from poll too).
function Client:call_tool_async(name, args, cb, o)
  local h, a = live_client(self), json_arg(args) or "{}"
  local id = new_id()
  pending[id] = function(ev) cb(call_outcome(ev.status, ffi.cast("mcpc_result_t *", ev.ptr), ev.text)) end
  local out = ffi.new("mcpc_op_t *[1]")
  return start_op(id, C.mcpc_client_call_tool_async(h, name, a, call_opts(o),
    ffi.cast("mcpc_call_done_cb", Q.mcpcl_on_call), ud(id), out), out)
end

--- Any request without blocking (resources/read, prompts/get, completion/complete ...):
--- cb(err, result_json).
function Client:request_async(method, params, cb, o)
  local h, p = live_client(self), json_arg(params)
  local id = new_id()
  pending[id] = function(ev)
    if ev.status == K.MCPC_OK then
      local p = ffi.cast("char *", ev.ptr)
      local s = ffi.string(p)
      C.mcpc_string_free(p)
      cb(nil, s)
    else
      cb(new_error(ev.status, ev.text))
    end
  end
  local out = ffi.new("mcpc_op_t *[1]")
  return start_op(id, C.mcpc_client_request_async(h, method, p, call_opts(o),
    ffi.cast("mcpc_request_done_cb", Q.mcpcl_on_request), ud(id), out), out)
end

--- Closes gracefully (raises on failure) and frees; calls in flight complete with
--- MCPC_ERR_CLOSED (their callbacks run at the next poll).
function Client:close()
  if not self.handle then return end
  local st = C.mcpc_client_close(self.handle)
  local err = st ~= K.MCPC_OK and last_error(st) -- before free resets the thread's last error
  self:free()
  if err then error(err, 2) end
end

Client.free = freer(C.mcpc_client_free)

return { connect_async = connect_async }
