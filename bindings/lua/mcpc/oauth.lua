-- OAuth: the settings an options table's `oauth` field makes, and the logins its
-- `authorize` handler gets. The login handler runs from mcpc.poll, like every Lua
-- callback; the callbacks that must answer on mcpc's own thread (a token store,
-- signers, an assertion callback) are not offered (README.md, "Not bound").

local ffi = require("ffi")
local core = require("mcpc.core")
local queue = require("mcpc.queue")
local M, C, Q, K = core.M, core.C, core.Q, core.K
local new_error, check, str = core.new_error, core.check, core.str
local ud, on_free = queue.ud, queue.on_free

-- ---- logins ---------------------------------------------------------------------

local Login = {}
Login.__index = Login
M.Login = Login

-- A login never answered is cancelled when it is collected, so mcpc is not left
-- waiting for the rest of its timeout.
local function new_login(p)
  local h = ffi.gc(ffi.cast("mcpc_auth_request_t *", p), C.mcpc_auth_request_cancel)
  return setmetatable({ handle = h, url = str(C.mcpc_auth_request_url(h)) }, Login)
end

local function take(self)
  local h = self.handle
  if not h then error(new_error(K.MCPC_ERR_ALREADY_COMPLETED, "login already answered"), 3) end
  self.handle = nil
  return ffi.gc(h, nil)
end

--- Completes the login with the URL the authorization server redirected the browser
--- to (its query holds code, state and iss, which mcpc checks).
function Login:complete(redirect_url) check(C.mcpc_auth_request_complete(take(self), redirect_url)) end

--- Gives the login up: the connect or call that needed it fails with MCPC_ERR_LOGIN_CANCELLED.
function Login:cancel() check(C.mcpc_auth_request_cancel(take(self))) end

-- ---- settings -------------------------------------------------------------------

local grants = {
  authorization_code = K.MCPC_OAUTH_AUTHORIZATION_CODE,
  client_credentials = K.MCPC_OAUTH_CLIENT_CREDENTIALS,
  jwt_bearer = K.MCPC_OAUTH_JWT_BEARER,
}

local function authorize_id(fn) return queue.handler(fn, new_login, Login.cancel) end

-- Sets `t` on the new settings `o`, a setter at a time.
local function configure(o, t)
  if t.client_id then check(C.mcpc_oauth_set_client(o, t.client_id, t.client_secret)) end
  if t.redirect_uri then check(C.mcpc_oauth_set_redirect_uri(o, t.redirect_uri)) end
  if t.client_metadata_url then check(C.mcpc_oauth_set_client_metadata_url(o, t.client_metadata_url)) end
  if t.scope then check(C.mcpc_oauth_set_scope(o, t.scope)) end
  if t.grant then
    local g = grants[t.grant]
    if not g then error(new_error(K.MCPC_ERR_INVALID_ARG, ("oauth.grant: unknown value %q"):format(tostring(t.grant))), 0) end
    check(C.mcpc_oauth_set_grant(o, g))
  end
  if t.headless ~= nil then check(C.mcpc_oauth_set_headless(o, t.headless and 1 or 0)) end
  if t.client_key then check(C.mcpc_oauth_set_client_key(o, t.client_key)) end
  if t.assertion then check(C.mcpc_oauth_set_assertion(o, t.assertion)) end
  if t.identity_provider then
    check(C.mcpc_oauth_set_identity_provider(o, t.identity_provider[1], t.identity_provider[2]))
  end
  if t.dpop ~= nil then check(C.mcpc_oauth_set_dpop(o, t.dpop and 1 or 0)) end
  if t.dpop_key then check(C.mcpc_oauth_set_dpop_key(o, t.dpop_key)) end
  if t.authorize then
    check(C.mcpc_oauth_set_authorize_callback(o, ffi.cast("mcpc_authorize_cb", Q.mcpcl_on_authorize),
      ud(authorize_id(t.authorize)), on_free))
  end
end

--- Puts the OAuth settings of table `t` on options handle `h`: client_id and
--- client_secret, redirect_uri, client_metadata_url, scope, grant ("authorization_code"
--- | "client_credentials" | "jwt_bearer"), headless, client_key (PEM), assertion,
--- identity_provider = {token_endpoint, client_id}, dpop, dpop_key (PEM), authorize =
--- function(login) (answers now or later: login:complete(redirect_url) or login:cancel()).
local function set_oauth(h, t)
  local o = C.mcpc_oauth_new()
  if o == nil then error(new_error(K.MCPC_ERR_PANIC, "mcpc_oauth_new failed"), 0) end
  local ok, err = pcall(configure, o, t)
  if ok then ok, err = pcall(check, C.mcpc_options_set_oauth(h, o)) end
  C.mcpc_oauth_free(o) -- the options keep a copy; a handler's id is freed with them
  if not ok then error(err, 0) end
end

return { set_oauth = set_oauth }
