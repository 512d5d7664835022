-- OAuth against tests/fixtures/oauth_fixture.py (an authorization server that approves
-- every login at once, and a protected MCP server): a login answered at once and one
-- answered later, cancelled logins, the client credentials grant, headless, a host.
--   MCPC_LIBRARY=target/debug/libmcpc.so MCPC_LUA_SHIM=build/lua/libmcpc_lua.so \
--       luajit bindings/lua/tests/test_oauth.lua
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local mcpc = require("mcpc")

local REDIRECT = "http://127.0.0.1:9/callback" -- never contacted: the test plays the browser

local browse = t.browse

local function with_fixture(fn)
  local url, stop = t.oauth_fixture()
  local ok, err = pcall(fn, url)
  stop()
  if not ok then error(err, 0) end
end

t.test("a login answered at once, from a blocking connect", function()
  with_fixture(function(url)
    local shown = {}
    local c = mcpc.connect_http(url, { timeout_ms = 20000, oauth = { redirect_uri = REDIRECT,
      authorize = function(login)
        shown[#shown + 1] = login.url
        login:complete(browse(login.url))
      end } })
    t.eq(c:call_tool("echo", '{"text":"hi"}').text, "hi", "the call")
    c:close()
    t.eq(#shown, 1, "logins")
    t.truthy(shown[1]:find("code_challenge_method=S256", 1, true), "PKCE in the URL")
  end)
end)

t.test("a login answered later, after connect_http_async returned", function()
  with_fixture(function(url)
    local login, got
    mcpc.connect_http_async(url, { timeout_ms = 20000, oauth = { redirect_uri = REDIRECT,
      authorize = function(l) login = l end } }, function(err, c) got = { err, c } end)
    mcpc.wait(function() return login end, 10000)
    t.eq(got, nil, "connected before the login")
    login:complete(browse(login.url))
    t.raises("MCPC_ERR_ALREADY_COMPLETED", login.complete, login, "http://127.0.0.1:9/callback")
    mcpc.wait(function() return got end, 20000)
    t.eq(got[1], nil, "the connect's error")
    t.eq(got[2]:call_tool("echo", '{"text":"later"}').text, "later", "the call")
    got[2]:close()
  end)
end)

t.test("a login cancelled, refused by an error, or dropped", function()
  with_fixture(function(url)
    local function connect(authorize)
      return mcpc.connect_http(url, { timeout_ms = 20000, oauth = { redirect_uri = REDIRECT, authorize = authorize } })
    end
    t.raises("MCPC_ERR_LOGIN_CANCELLED", connect, function(login) login:cancel() end)
    local old, reported = mcpc.on_callback_error, nil
    mcpc.on_callback_error = function(e) reported = tostring(e) end
    local ok, err = pcall(t.raises, "MCPC_ERR_LOGIN_CANCELLED", connect, function() error("the user closed the window") end)
    mcpc.on_callback_error = old
    if not ok then error(err, 0) end
    t.truthy(reported and reported:find("closed the window", 1, true), "the handler's error reported")
    -- a login nobody keeps is cancelled when it is collected
    local asked, got = false, nil
    mcpc.connect_http_async(url, { timeout_ms = 20000, oauth = { redirect_uri = REDIRECT,
      authorize = function() asked = true end } }, function(e, c) got = { e, c } end)
    mcpc.wait(function() return asked end, 10000)
    collectgarbage()
    collectgarbage()
    mcpc.wait(function() return got end, 10000)
    t.eq(got[1] and got[1].name, "MCPC_ERR_LOGIN_CANCELLED", "the connect's error")
  end)
end)

t.test("client credentials; headless without credentials", function()
  with_fixture(function(url)
    local c = mcpc.connect_http(url, { timeout_ms = 20000,
      oauth = { grant = "client_credentials", client_id = "cc-client", client_secret = "cc-secret" } })
    t.eq(c:call_tool("echo", '{"text":"machine"}').text, "machine", "the call")
    c:close()
    t.raises("MCPC_ERR_LOGIN_REQUIRED", mcpc.connect_http, url, { timeout_ms = 20000, oauth = { headless = true } })
    t.raises("MCPC_ERR_INVALID_ARG", mcpc.options, { oauth = { grant = "password" } })
    t.raises("MCPC_ERR_INVALID_ARG", mcpc.options, { oauth = { redirect_uri = "not a url" } })
  end)
end)

t.test("a host whose server needs a login", function()
  with_fixture(function(url)
    local logins = 0
    local host = mcpc.host({ timeout_ms = 20000, oauth = { redirect_uri = REDIRECT,
      authorize = function(login)
        logins = logins + 1
        login:complete(browse(login.url))
      end } })
    host:add_http("o", url)
    host:start()
    t.eq(host:call_tool("o__echo", '{"text":"hosted"}').text, "hosted", "the call")
    host:close()
    t.eq(logins, 1, "logins")
  end)
end)

t.test("nothing is left over", function()
  collectgarbage()
  t.nothing_left(mcpc)
end)

t.done("lua oauth")
