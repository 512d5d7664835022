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
--
-- The parts, one job each, in mcpc/: core.lua (the libraries, declarations, errors and
-- results), queue.lua (the completion queue, poll and wait, Op), oauth.lua (OAuth
-- settings and logins), options.lua (Options and input requests), client.lua,
-- transport.lua (a transport in Lua) and host.lua.
-- Each adds its share to the public table this file returns.

local parts = { "mcpc.core", "mcpc.queue", "mcpc.oauth", "mcpc.options", "mcpc.client", "mcpc.transport", "mcpc.host" }
local ok, err = pcall(function()
  for _, name in ipairs(parts) do require(name) end
end)
if not ok then
  -- LuaJIT leaves a marker of a failed require that fails the next one: clear the
  -- parts' markers, so that loading can be tried again (with another library path).
  for _, name in ipairs(parts) do
    if type(package.loaded[name]) ~= "table" then package.loaded[name] = nil end
  end
  error(err, 0)
end

return require("mcpc.core").M
