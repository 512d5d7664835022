-- mcpc for LuaJIT: a binding of libmcpc through the FFI (see README.md beside this file).
--
-- The declarations come from mcpc_cdef.lua, generated from include/mcpc.h. mcpc calls
-- its callbacks on its own threads, where Lua must never run: every callback given to
-- libmcpc is a C function of libmcpc_lua (mcpc_lua.c) that queues what it got, and
-- mcpc.poll() hands the queue to the Lua callbacks on the thread that calls it. In
-- Neovim, mcpc.attach_uv() polls whenever the queue's pipe is readable.
--
-- Results are copied into Lua tables and the C objects freed at once; handles
-- (options, clients, hosts, ops, input requests) have explicit close/free methods and
-- an ffi.gc safety net.

local ffi = require("ffi")
local decls = require("mcpc_cdef")

local M = { const = decls.const }
local K = decls.const

-- Where the libraries are: MCPC_LIBRARY / MCPC_LUA_SHIM, else beside this file, else
-- the loader's search path. Loaded before any cdef, so that a require that failed here
-- can be tried again (a second cdef of one type is an error).
local here = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./")
local function load(env, name)
  local path = os.getenv(env)
  if path and path ~= "" then return ffi.load(path) end
  local ok, lib = pcall(ffi.load, here .. name)
  if ok then return lib end
  return ffi.load(name)
end

local C = load("MCPC_LIBRARY", "libmcpc.so")
local Q = load("MCPC_LUA_SHIM", "libmcpc_lua.so")
M.C = C

ffi.cdef(decls.cdef)
ffi.cdef([[
typedef struct mcpc_lua_event_t {
  int32_t kind; int32_t status; int64_t id; void *ptr; char *text; char *server;
  int32_t event; int32_t state; struct mcpc_lua_event_t *next;
} mcpc_lua_event_t;
int mcpcl_fd(void);
int mcpcl_pop(mcpc_lua_event_t *out, int64_t timeout_ms);
void mcpcl_event_clear(mcpc_lua_event_t *ev);
void mcpcl_on_connect(void *, mcpc_status_t, mcpc_client_t *, const char *);
void mcpcl_on_list(void *, mcpc_status_t, mcpc_tool_list_t *, const char *);
void mcpcl_on_call(void *, mcpc_status_t, mcpc_result_t *, const char *);
void mcpcl_on_request(void *, mcpc_status_t, char *, const char *);
void mcpcl_on_input(void *, mcpc_input_t *);
int32_t mcpcl_on_send(void *, const char *, size_t);
void mcpcl_on_close(void *);
void mcpcl_on_free(void *);
void mcpcl_on_host_event(void *, mcpc_host_event_t, const char *, mcpc_server_state_t, const char *);
int mcpcl_host_start_async(void *fn, void *last_error, const mcpc_host_t *host, void *userdata);
int mcpcl_host_call_tool_async(void *fn, void *last_error, const mcpc_host_t *host,
                               const char *qualified, const char *arguments_json, void *userdata);
int mcpcl_host_read_resource_async(void *fn, void *last_error, const mcpc_host_t *host,
                                   const char *uri, void *userdata);
struct timespec { long tv_sec; long tv_nsec; };
int clock_gettime(int clock, struct timespec *ts);
]])

-- The event kinds of mcpc_lua.c.
local EV_CONNECT, EV_LIST, EV_CALL, EV_REQUEST, EV_INPUT, EV_HOST, EV_CONTENTS, EV_STATUS = 1, 2, 3, 4, 5, 6, 7, 8
local EV_SEND, EV_CLOSE, EV_FREE = 9, 10, 11


-- ---- errors -------------------------------------------------------------------

local Error = {}
Error.__index = Error
Error.__tostring = function(e) return ("%s: %s"):format(e.name, e.message) end
M.Error = Error

local function status_name(status) return ffi.string(C.mcpc_status_name(status)) end

local function new_error(status, message, extra)
  local e = setmetatable({ status = tonumber(status), name = status_name(status),
                           message = message or "" }, Error)
  for k, v in pairs(extra or {}) do e[k] = v end
  return e
end

-- The error of the call that just failed on this thread.
local function last_error(status)
  local code = tonumber(C.mcpc_last_error_rpc_code())
  return new_error(status, ffi.string(C.mcpc_last_error_message()), { rpc_code = code ~= 0 and code or nil })
end

local function check(status)
  if status ~= K.MCPC_OK then error(last_error(status), 3) end
end

local function str(p) return p ~= nil and ffi.string(p) or nil end

-- An owned char ** result: copied to a Lua string, then freed.
local function take_string(out)
  local s = str(out[0])
  C.mcpc_string_free(out[0])
  return s
end

-- ---- results --------------------------------------------------------------------

local size_out = ffi.new("size_t[1]")

local function result_table(r)
  local t = { json = str(C.mcpc_result_json(r)), structured = str(C.mcpc_result_structured_json(r)),
              is_error = C.mcpc_result_is_error(r), texts = {} }
  local p = C.mcpc_result_text(r, size_out)
  t.text = p ~= nil and ffi.string(p, size_out[0]) or ""
  for i = 0, tonumber(C.mcpc_result_text_count(r)) - 1 do
    p = C.mcpc_result_text_at(r, i, size_out)
    t.texts[#t.texts + 1] = p ~= nil and ffi.string(p, size_out[0]) or ""
  end
  return t
end

local function take_result(r)
  local t = result_table(r)
  C.mcpc_result_free(r)
  return t
end

local function take_tools(list)
  local out = ffi.new("char *[1]")
  local t = {}
  for i = 0, tonumber(C.mcpc_tool_list_count(list)) - 1 do
    t[#t + 1] = { name = str(C.mcpc_tool_list_name(list, i)), json = str(C.mcpc_tool_list_json(list, i)) }
  end
  if C.mcpc_tool_list_to_json(list, out) == K.MCPC_OK then t.json = take_string(out) end
  C.mcpc_tool_list_free(list)
  return t
end

local function take_contents(c)
  local t = { json = str(C.mcpc_contents_json(c)) }
  for i = 0, tonumber(C.mcpc_contents_count(c)) - 1 do
    local item = { uri = str(C.mcpc_contents_uri(c, i)), mime_type = str(C.mcpc_contents_mime_type(c, i)),
                   meta = str(C.mcpc_contents_meta_json(c, i)) }
    local p = C.mcpc_contents_text(c, i, size_out)
    if p ~= nil then item.text = ffi.string(p, size_out[0]) end
    local b = C.mcpc_contents_blob(c, i, size_out)
    if b ~= nil then item.blob = ffi.string(b, size_out[0]) end
    t[#t + 1] = item
  end
  C.mcpc_contents_free(c)
  return t
end

-- A call's outcome: MCPC_ERR_TOOL (and MCPC_ERR_OUTPUT_SCHEMA) still carry the result.
local function call_outcome(status, r, message)
  local result = r ~= nil and take_result(r) or nil
  if status == K.MCPC_OK then return nil, result end
  return new_error(status, message, { result = result })
end

-- Arguments: a JSON string, or a table when a JSON encoder is at hand (Neovim's).
local function json_arg(v)
  if v == nil then return nil end
  if type(v) == "string" then return v end
  if M.json_encode then return M.json_encode(v) end
  error("mcpc: pass JSON text (no JSON encoder outside Neovim; set mcpc.json_encode)", 3)
end
if vim and vim.json then
  M.json_encode = function(v)
    if next(v) == nil then return "{}" end
    return vim.json.encode(v)
  end
end

-- Call options: only a timeout here (see README.md, "Not bound").
local function call_opts(o)
  if not o or not o.timeout_ms then return nil end
  local c = ffi.new("mcpc_call_opts_t")
  check(C.mcpc_call_opts_init_sized(c, ffi.sizeof(c)))
  c.timeout_ms = o.timeout_ms
  return c
end

-- ---- the queue ------------------------------------------------------------------

local next_id = 0
local pending = {}   -- id -> function(ev) for one completion
local handlers = {}  -- id -> function(ev) for a handler called many times
local function new_id()
  next_id = next_id + 1
  return next_id
end
local function ud(id) return ffi.cast("void *", id) end
-- Every handler is registered with this userdata_free (see dispatch_one).
local on_free = ffi.cast("mcpc_free_cb", Q.mcpcl_on_free)

--- How many Lua handlers mcpc may still call (0 once every handle is freed).
function M.live_handlers()
  local n = 0
  for _ in pairs(handlers) do n = n + 1 end
  return n
end

-- An owned pointer nobody waits for any more is freed by its kind.
local orphan_free = {
  [EV_CONNECT] = function(p) C.mcpc_client_free(ffi.cast("mcpc_client_t *", p)) end,
  [EV_LIST] = function(p) C.mcpc_tool_list_free(ffi.cast("mcpc_tool_list_t *", p)) end,
  [EV_CALL] = function(p) C.mcpc_result_free(ffi.cast("mcpc_result_t *", p)) end,
  [EV_REQUEST] = function(p) C.mcpc_string_free(ffi.cast("char *", p)) end,
  [EV_INPUT] = function(p) C.mcpc_input_free(ffi.cast("mcpc_input_t *", p)) end,
  [EV_CONTENTS] = function(p) C.mcpc_contents_free(ffi.cast("mcpc_contents_t *", p)) end,
}

local ev_buf = ffi.new("mcpc_lua_event_t")

local function dispatch_one(timeout_ms)
  if Q.mcpcl_pop(ev_buf, timeout_ms) == 0 then return false end
  local id = tonumber(ev_buf.id)
  local ev = { kind = ev_buf.kind, status = ev_buf.status, ptr = ev_buf.ptr, text = str(ev_buf.text),
               server = str(ev_buf.server), event = ev_buf.event, state = ev_buf.state }
  Q.mcpcl_event_clear(ev_buf)
  if ev.kind == EV_FREE then
    handlers[id] = nil -- mcpc is done with the handler: nothing more comes for it
    return true
  end
  local fn = pending[id]
  if fn then
    pending[id] = nil
  else
    fn = handlers[id]
  end
  if fn then
    local ok, err = pcall(fn, ev)
    if not ok then M.on_callback_error(err) end
  elseif ev.ptr ~= nil and orphan_free[ev.kind] then
    orphan_free[ev.kind](ev.ptr)
  end
  return true
end

-- What an error raised by a Lua callback becomes (poll goes on with the next event).
function M.on_callback_error(err)
  io.stderr:write("mcpc: a callback failed: ", tostring(err), "\n")
end

--- Runs the callbacks of every queued completion on this thread, first waiting up
--- to timeout_ms (0, the default: not at all) for one. Returns how many events it took.
function M.poll(timeout_ms)
  local n = 0
  if dispatch_one(timeout_ms or 0) then
    n = 1
    while dispatch_one(0) do n = n + 1 end
  end
  return n
end

local now_ts = ffi.new("struct timespec")
local function now_ms()
  ffi.C.clock_gettime(1, now_ts) -- CLOCK_MONOTONIC
  return tonumber(now_ts.tv_sec) * 1000 + tonumber(now_ts.tv_nsec) / 1e6
end

--- Polls until done() is true; raises MCPC_ERR_TIMEOUT after timeout_ms (10 s).
function M.wait(done, timeout_ms)
  local deadline = now_ms() + (timeout_ms or 10000)
  while not done() do
    local left = deadline - now_ms()
    if left <= 0 then
      error(new_error(K.MCPC_ERR_TIMEOUT, ("mcpc.wait: nothing after %d ms"):format(timeout_ms or 10000)), 2)
    end
    M.poll(math.min(math.ceil(left), 100))
  end
end

--- The queue's pipe: readable while completions wait (for an event loop's poll).
function M.fd() return Q.mcpcl_fd() end

--- Neovim: polls from the editor's loop whenever completions wait; the callbacks run
--- through vim.schedule, outside libuv's fast context. Idempotent.
local uv_poll
function M.attach_uv()
  if uv_poll then return end
  local uv = vim.uv or vim.loop
  uv_poll = uv.new_poll(M.fd())
  local function on_readable()
    -- the pipe stays readable until poll drains the queue: stop until it has run
    uv_poll:stop()
    vim.schedule(function()
      M.poll(0)
      if uv_poll then uv_poll:start("r", on_readable) end
    end)
  end
  uv_poll:start("r", on_readable)
end

--- Neovim: undoes attach_uv (before exit, so the loop has no handle of ours).
function M.detach_uv()
  if uv_poll then
    uv_poll:stop()
    uv_poll:close()
    uv_poll = nil
  end
end

-- A free method: drops the ffi.gc safety net and frees the handle, once.
local function freer(free_fn)
  return function(self)
    if self.handle then
      ffi.gc(self.handle, nil)
      free_fn(self.handle)
      self.handle = nil
    end
  end
end

-- ---- ops ------------------------------------------------------------------------

local Op = {}
Op.__index = Op

local function start_op(id, status, out_op)
  if status ~= K.MCPC_OK then
    pending[id] = nil
    error(last_error(status), 3)
  end
  local op = setmetatable({ id = id, handle = ffi.gc(out_op[0], C.mcpc_op_free) }, Op)
  local fn = pending[id]
  pending[id] = function(ev)
    op:free()
    fn(ev)
  end
  return op
end

--- True once the operation completed (its callback may still wait in the queue).
function Op:is_finished() return self.handle == nil or C.mcpc_op_is_finished(self.handle) end

--- Cancels the operation: its callback gets MCPC_ERR_CANCELLED unless it had completed.
function Op:cancel()
  if self.handle then C.mcpc_op_cancel(self.handle) end
end

--- Frees the handle; the callback still runs (done by itself once it completes).
Op.free = freer(C.mcpc_op_free)

-- ---- input requests (elicitation) -----------------------------------------------

local Input = {}
Input.__index = Input
M.Input = Input

local function new_input(p)
  local h = ffi.gc(ffi.cast("mcpc_input_t *", p), C.mcpc_input_free)
  return setmetatable({
    handle = h, kind = C.mcpc_input_kind(h), method = str(C.mcpc_input_method(h)),
    server = str(C.mcpc_input_server(h)), host_server = str(C.mcpc_input_host_server(h)),
    params = str(C.mcpc_input_params_json(h)), message = str(C.mcpc_input_message(h)),
    schema = str(C.mcpc_input_schema_json(h)), url = str(C.mcpc_input_url(h)),
  }, Input)
end

Input.free = freer(C.mcpc_input_free)

-- Answers once, then frees the request: a second answer raises.
local function answer(self, status)
  if status ~= K.MCPC_OK then
    local e = last_error(status)
    -- MCPC_ERR_INPUT_INVALID leaves the request open for a better answer
    if status ~= K.MCPC_ERR_INPUT_INVALID then self:free() end
    error(e, 3)
  end
  self:free()
end

local function live(self)
  if not self.handle then error(new_error(K.MCPC_ERR_ALREADY_COMPLETED, "input request already answered"), 3) end
  return self.handle
end

--- Accepts an elicitation, with a form's content (JSON text or a table).
function Input:accept(content) answer(self, C.mcpc_input_elicit(live(self), K.MCPC_ELICIT_ACCEPT, json_arg(content))) end
function Input:decline() answer(self, C.mcpc_input_elicit(live(self), K.MCPC_ELICIT_DECLINE, nil)) end
function Input:cancel() answer(self, C.mcpc_input_elicit(live(self), K.MCPC_ELICIT_CANCEL, nil)) end
--- Answers with the whole result (an ElicitResult, CreateMessageResult or roots).
function Input:complete(result) answer(self, C.mcpc_input_complete(live(self), json_arg(result))) end
function Input:fail(message) answer(self, C.mcpc_input_fail(live(self), message)) end

-- ---- options --------------------------------------------------------------------

-- A named setting's value; an unknown name raises MCPC_ERR_INVALID_ARG, as the C call would.
local function choice(map, name, what)
  local v = map[name]
  if v == nil then error(new_error(K.MCPC_ERR_INVALID_ARG, ("%s: unknown value %q"):format(what, tostring(name))), 3) end
  return v
end

local Options = {}
Options.__index = Options
M.Options = Options

local function handler_id(fn)
  local id = new_id()
  handlers[id] = function(ev)
    local input = new_input(ev.ptr)
    local ok, err = pcall(fn, input)
    if not ok then
      if input.handle then pcall(Input.fail, input, tostring(err)) end
      error(err, 0)
    end
  end
  return id
end

--- Options from a table: timeout_ms, client_info = {name, version}, protocol_version,
--- log_level, stderr ("discard" | "inherit"), env = {NAME = value}, cwd, headers =
--- {Name = value}, bearer_token, http_transport ("auto" | "streamable" | "sse"),
--- elicitation = function(input) (answers now or later: input:accept(content) ...),
--- elicitation_modes ({"form", "url"}; default both); sampling and roots = function(input)
--- likewise (answer with input:complete(result)), sampling_tools; negotiation ("auto" |
--- "legacy"), probe_window_ms, max_pages, max_message_size, clear_env, http_version ("auto" |
--- "1.1" | "2"), ca_pem = {PEM}, ca_file = {path}, extensions = {ID = settings},
--- standalone_stream, validate_output, close_grace_ms = {close, term}, restart = {max,
--- backoff_ms}, proxy, no_proxy, proxy_credentials = {user, password}.
function M.options(t)
  local h = C.mcpc_options_new()
  if h == nil then error(new_error(K.MCPC_ERR_PANIC, "mcpc_options_new failed"), 2) end
  local self = setmetatable({ handle = ffi.gc(h, C.mcpc_options_free) }, Options)
  t = t or {}
  if t.timeout_ms then check(C.mcpc_options_set_timeout_ms(h, t.timeout_ms)) end
  if t.client_info then check(C.mcpc_options_set_client_info(h, t.client_info[1], t.client_info[2])) end
  if t.protocol_version then check(C.mcpc_options_set_protocol_version(h, t.protocol_version)) end
  if t.log_level then check(C.mcpc_options_set_log_level(h, t.log_level)) end
  if t.stderr then
    check(C.mcpc_options_set_stderr(h, t.stderr == "inherit" and K.MCPC_STDERR_INHERIT or K.MCPC_STDERR_DISCARD))
  end
  for name, value in pairs(t.env or {}) do check(C.mcpc_options_set_env(h, name, value)) end
  if t.cwd then check(C.mcpc_options_set_cwd(h, t.cwd)) end
  for name, value in pairs(t.headers or {}) do check(C.mcpc_options_add_header(h, name, value)) end
  if t.bearer_token then check(C.mcpc_options_set_bearer_token(h, t.bearer_token)) end
  if t.http_transport then
    local modes = { auto = K.MCPC_HTTP_AUTO, streamable = K.MCPC_HTTP_STREAMABLE, sse = K.MCPC_HTTP_SSE }
    check(C.mcpc_options_set_http_transport(h, choice(modes, t.http_transport, "http_transport")))
  end
  if t.negotiation then
    check(C.mcpc_options_set_negotiation(h, t.negotiation == "legacy" and K.MCPC_NEGOTIATE_LEGACY or K.MCPC_NEGOTIATE_AUTO))
  end
  if t.probe_window_ms then check(C.mcpc_options_set_probe_window_ms(h, t.probe_window_ms)) end
  if t.max_pages then check(C.mcpc_options_set_max_pages(h, t.max_pages)) end
  if t.max_message_size then check(C.mcpc_options_set_max_message_size(h, t.max_message_size)) end
  if t.clear_env then check(C.mcpc_options_clear_env(h)) end
  if t.http_version then
    local v = { auto = K.MCPC_HTTP_VERSION_AUTO, ["1.1"] = K.MCPC_HTTP_VERSION_1_1,
                ["2"] = K.MCPC_HTTP_VERSION_2_PRIOR_KNOWLEDGE }
    check(C.mcpc_options_set_http_version(h, choice(v, t.http_version, "http_version")))
  end
  for _, pem in ipairs(t.ca_pem or {}) do check(C.mcpc_options_add_ca_pem(h, pem, #pem)) end
  for _, path in ipairs(t.ca_file or {}) do check(C.mcpc_options_add_ca_file(h, path)) end
  for id, settings in pairs(t.extensions or {}) do check(C.mcpc_options_add_extension(h, id, json_arg(settings))) end
  if t.standalone_stream ~= nil then check(C.mcpc_options_set_standalone_stream(h, t.standalone_stream)) end
  if t.validate_output ~= nil then check(C.mcpc_options_set_validate_output(h, t.validate_output)) end
  if t.close_grace_ms then check(C.mcpc_options_set_close_grace_ms(h, t.close_grace_ms[1], t.close_grace_ms[2])) end
  if t.restart then check(C.mcpc_options_set_restart(h, t.restart[1], t.restart[2])) end
  if t.proxy then check(C.mcpc_options_set_proxy(h, t.proxy)) end
  if t.no_proxy then check(C.mcpc_options_set_no_proxy(h, t.no_proxy)) end
  if t.proxy_credentials then
    check(C.mcpc_options_set_proxy_credentials(h, t.proxy_credentials[1], t.proxy_credentials[2]))
  end
  if t.sampling then
    local id = handler_id(t.sampling)
    check(C.mcpc_options_set_sampling_handler(h, t.sampling_tools and K.MCPC_SAMPLING_TOOLS or 0,
      ffi.cast("mcpc_input_cb", Q.mcpcl_on_input), ud(id), on_free))
  end
  if t.roots then
    local id = handler_id(t.roots)
    check(C.mcpc_options_set_roots_handler(h, ffi.cast("mcpc_input_cb", Q.mcpcl_on_input), ud(id), on_free))
  end
  if t.elicitation then
    local modes = 0
    for _, m in ipairs(t.elicitation_modes or { "form", "url" }) do
      modes = bit.bor(modes, m == "url" and K.MCPC_ELICIT_MODE_URL or K.MCPC_ELICIT_MODE_FORM)
    end
    local id = handler_id(t.elicitation)
    check(C.mcpc_options_set_elicitation_handler(h, modes, ffi.cast("mcpc_input_cb", Q.mcpcl_on_input), ud(id), on_free))
  end
  return self
end

Options.free = freer(C.mcpc_options_free)

-- A table, an Options or nil, as the C handle (and the Options to free after the call).
local function opts_handle(o)
  if o == nil then return nil, nil end
  if getmetatable(o) == Options then return o.handle, nil end
  local made = M.options(o)
  return made.handle, made
end

-- ---- clients --------------------------------------------------------------------

local Client = {}
Client.__index = Client
M.Client = Client

local function wrap_client(h)
  local self = setmetatable({ handle = ffi.gc(h, C.mcpc_client_free) }, Client)
  self.protocol_version = str(C.mcpc_client_protocol_version(h))
  return self
end

local function argv_of(argv)
  local a = ffi.new("const char *[?]", #argv, argv)
  return a, #argv
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
  local h, made = opts_handle(opts)
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

-- A call whose result is an owned char **.
local function string_call(fn, ...)
  local out = ffi.new("char *[1]")
  local n = select("#", ...) -- trailing nils count: they are NULL arguments
  local args = { ... }
  args[n + 1] = out
  check(fn(unpack(args, 1, n + 1)))
  return take_string(out)
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

-- ---- transports ------------------------------------------------------------------

local Transport = {}
Transport.__index = Transport
M.Transport = Transport

--- A transport whose channel Lua owns: on_send(message) gets each outgoing JSON-RPC
--- message (one JSON object, no line end) and on_close() the end, both from
--- mcpc.poll; what the server sends goes in with transport:deliver(message). Connect
--- over it with mcpc.connect_transport_async; then make only asynchronous calls on
--- that client, since a blocking call would hold the thread that delivers.
function M.transport(on_send, on_close)
  local id = new_id()
  handlers[id] = function(ev)
    if ev.kind == EV_SEND then on_send(ev.text)
    elseif on_close then on_close() end
  end
  local out = ffi.new("mcpc_transport_t *[1]")
  local st = C.mcpc_transport_new(ffi.cast("mcpc_transport_send_cb", Q.mcpcl_on_send),
    ffi.cast("mcpc_transport_close_cb", Q.mcpcl_on_close), ud(id), on_free, out)
  check(st) -- a failure ran userdata_free too: the queued free forgets the handler
  return setmetatable({ id = id, handle = ffi.gc(out[0], C.mcpc_transport_free) }, Transport)
end

local function live_transport(self)
  if not self.handle then error(new_error(K.MCPC_ERR_CLOSED, "transport is freed"), 3) end
  return self.handle
end

--- Hands one message from the server to the client (its completions are queued).
function Transport:deliver(message) check(C.mcpc_transport_deliver(live_transport(self), message, #message)) end

--- The channel ended: calls in flight and later fail with MCPC_ERR_TRANSPORT.
function Transport:finish(reason) check(C.mcpc_transport_end(live_transport(self), reason)) end

--- Frees Lua's handle (once the client is closed: delivering needs it).
Transport.free = freer(C.mcpc_transport_free)

--- Connects over a Lua transport: cb(err, client) from mcpc.poll. Returns an Op.
function M.connect_transport_async(transport, opts, cb)
  local t = live_transport(transport)
  local h, made = opts_handle(opts)
  local op = connect_async(function(fn, u, out) return C.mcpc_client_connect_transport_async(t, h, fn, u, out) end, cb)
  if made then made:free() end
  return op
end

-- ---- hosts ----------------------------------------------------------------------

local Host = {}
Host.__index = Host
M.Host = Host

M.server_states = { [0] = "added", "starting", "ready", "failed", "needs_login", "disabled", "restarting", "idle" }
M.host_events = { "server_state", "settled", "catalog_changed" }

--- A host of many servers; defaults (a table or Options) for each server added.
function M.host(defaults)
  local h, made = opts_handle(defaults)
  local out = ffi.new("mcpc_host_t *[1]")
  local st = C.mcpc_host_new(h, out)
  if made then made:free() end
  check(st)
  return setmetatable({ handle = ffi.gc(out[0], C.mcpc_host_free), calls = 0 }, Host)
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
  local h, made = opts_handle(opts)
  local st = C.mcpc_host_add_stdio(live_host(self), name, a, n, h)
  if made then made:free() end
  check(st)
end

function Host:add_http(name, url, opts)
  local h, made = opts_handle(opts)
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

--- Starts every server and waits (blocking); start_async for an event loop.
function Host:start() check(C.mcpc_host_start(live_host(self))) end

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

-- ---- the rest -------------------------------------------------------------------

function M.version() return ffi.string(C.mcpc_version()) end

--- Checks without a client: raise as connecting or calling would.
function M.check_url(url) check(C.mcpc_check_url(url)) end
function M.check_arguments(args) check(C.mcpc_check_arguments(json_arg(args))) end
M.status_name = status_name

return M
