-- A small test runner for the Lua binding's tests: t.test(name, fn), t.eq, t.raises,
-- then t.done(), which prints "NAME: N passed, N failed" and exits 1 on a failure.
-- Runs from the repository root; finds the binding beside this directory.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "../?.lua;" .. package.path

local t = { passed = 0, failed = 0, root = os.getenv("MCPC_REPO") or "." }
t.python = os.getenv("MCPC_PYTHON") or "python3"
t.demo = t.root .. "/demo/server.py"

local function say(s) io.stdout:write(s, "\n"); io.stdout:flush() end
t.say = say

function t.test(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    t.passed = t.passed + 1
    say("ok   " .. name)
  else
    t.failed = t.failed + 1
    say("FAIL " .. name .. ": " .. tostring(err))
  end
end

function t.eq(got, want, what)
  if got ~= want then
    error(("%s: got %s, want %s"):format(what or "value", tostring(got), tostring(want)), 2)
  end
end

function t.truthy(v, what)
  if not v then error((what or "value") .. ": false", 2) end
  return v
end

--- Runs fn, which must raise an mcpc error of status `name`; returns the error.
function t.raises(name, fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then error("no error; want " .. name, 2) end
  if type(err) ~= "table" or err.name ~= name then error(("raised %s; want %s"):format(tostring(err), name), 2) end
  return err
end

-- Starts a fixture that prints "PORT n" once listening; returns its /mcp URL and a
-- function that stops it.
local function start_fixture(args, what)
  local p = io.popen(("%s %s & echo $!; wait"):format(t.python, args))
  local pid = p:read("*l")
  local port = (p:read("*l") or ""):match("^PORT (%d+)$")
  if not port then
    os.execute("kill " .. pid)
    p:close()
    error(what .. " did not start")
  end
  return ("http://127.0.0.1:%s/mcp"):format(port), function()
    os.execute("kill " .. pid)
    p:close()
  end
end

--- Starts the HTTP fixture (tests/fixtures/http_server.py) and returns its URL and
--- a function that stops it.
function t.http_fixture(args)
  return start_fixture(("%s/tests/fixtures/http_server.py --ignore-stdin %s"):format(t.root, args or ""),
    "the HTTP fixture")
end

--- Starts the OAuth fixture (tests/fixtures/oauth_fixture.py: an authorization server
--- that approves every login at once, and a protected MCP server; client "cc-client"
--- with secret "cc-secret") and returns its URL and a function that stops it.
function t.oauth_fixture()
  return start_fixture(("%s/tests/fixtures/oauth_fixture.py --ignore-stdin --client cc-client cc-secret"):format(t.root),
    "the OAuth fixture")
end

-- GETs an authorization URL as a browser would and prints where it was redirected.
local BROWSE = [[
import sys, urllib.request, urllib.error
class Stay(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k): return None
try:
    r = urllib.request.build_opener(Stay).open(sys.argv[1], timeout=10); print(r.headers.get("Location") or "")
except urllib.error.HTTPError as e:
    print(e.headers.get("Location") or "")
]]

--- Plays the browser of a login: the URL the authorization server redirects it to.
function t.browse(url)
  local p = io.popen(("%s -c '%s' '%s'"):format(t.python, BROWSE, url))
  local location = p:read("*l")
  p:close()
  return location
end

--- Checks that nothing of mcpc is left: after one poll for the handlers' userdata_free
--- (queued as the handles were freed), no event waits and no Lua handler is live.
function t.nothing_left(mcpc, what)
  mcpc.poll(0)
  t.eq(mcpc.poll(0), 0, "events after " .. (what or "the tests"))
  t.eq(mcpc.live_handlers(), 0, "handlers mcpc may still call")
end

function t.done(name)
  say(("%s: %d passed, %d failed"):format(name, t.passed, t.failed))
  if vim then
    -- nvim --headless: :cquit sets the exit status
    vim.cmd((t.failed == 0) and "qall!" or "cquit! 1")
  end
  os.exit(t.failed == 0 and 0 or 1)
end

return t
