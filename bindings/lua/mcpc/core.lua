-- The core of the binding: loading libmcpc and libmcpc_lua with their declarations,
-- errors, and copying results into Lua tables; the helpers every other part uses.
-- Returns its internals; the public table is `.M` (mcpc.lua returns it).

local ffi = require("ffi")
local decls = require("mcpc_cdef")

local M = { const = decls.const }
local K = decls.const

-- Where the libraries are: MCPC_LIBRARY / MCPC_LUA_SHIM, else beside mcpc.lua (one
-- directory up from this file), else the loader's search path. Loaded before any
-- cdef, so that a require that failed here can be tried again (a second cdef of one
-- type is an error).
local here = (debug.getinfo(1, "S").source:match("^@(.*/)mcpc/[^/]*$") or "./")
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
void mcpcl_on_authorize(void *, mcpc_auth_request_t *);
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

-- ---- marshalling shared by clients and hosts ------------------------------------

local function argv_of(argv)
  local a = ffi.new("const char *[?]", #argv, argv)
  return a, #argv
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

-- ---- without a client ---------------------------------------------------------

function M.version() return ffi.string(C.mcpc_version()) end

--- Checks without a client: raise as connecting or calling would.
function M.check_url(url) check(C.mcpc_check_url(url)) end
function M.check_arguments(args) check(C.mcpc_check_arguments(json_arg(args))) end
M.status_name = status_name

return {
  M = M, C = C, Q = Q, K = K, new_error = new_error, last_error = last_error, check = check,
  str = str, take_string = take_string, take_result = take_result, take_tools = take_tools,
  take_contents = take_contents, call_outcome = call_outcome, json_arg = json_arg,
  call_opts = call_opts, argv_of = argv_of, string_call = string_call, freer = freer,
}
