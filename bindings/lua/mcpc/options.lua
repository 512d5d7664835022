-- Options, and the input requests (elicitation, sampling, roots) their handlers get.

local ffi = require("ffi")
local core = require("mcpc.core")
local queue = require("mcpc.queue")
local oauth = require("mcpc.oauth")
local M, C, Q, K = core.M, core.C, core.Q, core.K
local new_error, last_error, check, str, json_arg, freer =
  core.new_error, core.last_error, core.check, core.str, core.json_arg, core.freer
local ud, on_free = queue.ud, queue.on_free

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

local function handler_id(fn) return queue.handler(fn, new_input, Input.fail) end

--- Options from a table: timeout_ms, client_info = {name, version}, protocol_version,
--- log_level, stderr ("discard" | "inherit"), env = {NAME = value}, cwd, headers =
--- {Name = value}, bearer_token, http_transport ("auto" | "streamable" | "sse"),
--- elicitation = function(input) (answers now or later: input:accept(content) ...),
--- elicitation_modes ({"form", "url"}; default both); sampling and roots = function(input)
--- likewise (answer with input:complete(result)), sampling_tools; negotiation ("auto" |
--- "legacy"), probe_window_ms, max_pages, max_message_size, clear_env, http_version ("auto" |
--- "1.1" | "2"), ca_pem = {PEM}, ca_file = {path}, extensions = {ID = settings},
--- standalone_stream, validate_output, close_grace_ms = {close, term}, restart = {max,
--- backoff_ms}, proxy, no_proxy, proxy_credentials = {user, password}, oauth = {...}
--- (mcpc/oauth.lua; with an authorize handler a blocking connect polls while it waits).
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
  if t.oauth then
    oauth.set_oauth(h, t.oauth)
    self.polls = t.oauth.authorize ~= nil
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

-- A table, an Options or nil, as the C handle (and the Options to free after the call),
-- and whether a handler of them must run while a blocking connect waits.
local function opts_handle(o)
  if o == nil then return nil, nil, false end
  if getmetatable(o) == Options then return o.handle, nil, o.polls end
  local made = M.options(o)
  return made.handle, made, made.polls
end

return { opts_handle = opts_handle }
