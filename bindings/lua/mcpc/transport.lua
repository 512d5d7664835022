-- A transport whose channel Lua owns, and connecting a client over it.

local ffi = require("ffi")
local core = require("mcpc.core")
local queue = require("mcpc.queue")
local options = require("mcpc.options")
local client = require("mcpc.client")
local M, C, Q, K = core.M, core.C, core.Q, core.K
local new_error, check, freer = core.new_error, core.check, core.freer
local new_id, ud, handlers, on_free, EV_SEND = queue.new_id, queue.ud, queue.handlers, queue.on_free, queue.EV_SEND
local opts_handle, connect_async = options.opts_handle, client.connect_async

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

return {}
