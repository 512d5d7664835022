-- :Mcp, the command of the mcp plugin (lua/mcp/init.lua). Loading the plugin starts
-- nothing: the servers start at the first :Mcp command.
if vim.g.loaded_mcp then return end
vim.g.loaded_mcp = true

-- In the mcpc tree the binding (mcpc.lua) is two directories up: put it on the path
-- unless the user has it already.
local here = debug.getinfo(1, "S").source:match("^@(.*)/plugin/[^/]*$")
if here and not package.path:find("bindings/lua/?.lua", 1, true) then
  local binding = vim.fn.fnamemodify(here .. "/../", ":p")
  if vim.fn.filereadable(binding .. "mcpc.lua") == 1 then
    package.path = binding .. "?.lua;" .. package.path
  end
end

vim.api.nvim_create_user_command("Mcp", function(cmd) require("mcp").command(cmd.fargs, cmd.args) end, {
  nargs = "+",
  desc = "MCP servers: tools, call NAME {json}, read URI, status",
  complete = function(lead, line) return require("mcp").complete(lead, line) end,
})
