-- The binding against @modelcontextprotocol/server-everything (tests/peers/install.sh;
-- source DIR/peers.env first): completion, prompts, resources, and elicitation,
-- sampling and roots requests answered from Lua. Without the peer it fails when
-- MCPC_REQUIRE_PEERS=1, else it says so and passes.
local t = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local mcpc = require("mcpc")

local node, everything = os.getenv("MCPC_PEERS_NODE"), os.getenv("MCPC_PEERS_EVERYTHING")
if not (node and everything and io.open(everything)) then
  if os.getenv("MCPC_REQUIRE_PEERS") == "1" then
    t.test("server-everything is installed", function() error("MCPC_PEERS_NODE/MCPC_PEERS_EVERYTHING unset or missing") end)
  else
    t.say("server-everything not installed (tests/peers/install.sh): nothing to test")
  end
  t.done("lua peers")
end

local asked, sampled
local c = mcpc.connect_stdio({ node, everything, "stdio" }, {
  timeout_ms = 15000,
  elicitation = function(input)
    asked = input.message
    input:accept('{"name":"Ada","check":true}')
  end,
  sampling = function(input)
    sampled = input.params
    input:complete('{"role":"assistant","content":{"type":"text","text":"sampled in Lua"},"model":"lua-test"}')
  end,
  roots = function(input) input:complete('{"roots":[{"uri":"file:///tmp/lua-root","name":"lua-root"}]}') end,
})

t.test("completion", function()
  local json = c:complete({ prompt = "completable-prompt" }, "department", "E")
  t.truthy(json:find('"Engineering"', 1, true), json)
  json = c:complete({ prompt = "completable-prompt" }, "name", "A", '{"department":"Engineering"}')
  t.truthy(json:find('"Alice"', 1, true), json)
end)

t.test("prompts and resources", function()
  t.truthy(c:list_prompts():find("completable-prompt", 1, true), "prompts")
  local resources = c:list_resources()
  local uri = resources:match('"uri":"(demo://resource/static/document/[^"]+)"')
  t.truthy(uri, "a static resource: " .. resources:sub(1, 200))
  local contents = c:read_resource(uri)
  t.eq(contents[1].uri, uri, "uri")
  t.truthy(#contents[1].text > 0, "text")
end)

t.test("an elicitation answered by the handler", function()
  local got
  c:call_tool_async("trigger-elicitation-request", "{}", function(err, r) got = err or r end)
  mcpc.wait(function() return got end, 15000)
  t.truthy(asked, "the handler ran")
  t.truthy(got.text and got.text:find("Ada", 1, true), "the tool saw the answer: " .. tostring(got.text or got))
end)

t.test("sampling and roots answered by their handlers", function()
  local got
  c:call_tool_async("trigger-sampling-request", '{"prompt":"hello","maxTokens":10}', function(err, r) got = err or r end)
  mcpc.wait(function() return got end, 15000)
  t.truthy(sampled and sampled:find("hello", 1, true), "the handler saw the request")
  t.truthy(got.text and got.text:find("sampled in Lua", 1, true), "the tool saw the answer: " .. tostring(got.text or got))
  got = nil
  c:call_tool_async("get-roots-list", "{}", function(err, r) got = err or r end)
  mcpc.wait(function() return got end, 15000)
  t.truthy(got.text and got.text:find("lua-root", 1, true), "roots: " .. tostring(got.text or got))
end)

c:close()
t.done("lua peers")
