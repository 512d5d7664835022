-- The completion queue: libmcpc_lua queues what mcpc's threads hand its callbacks,
-- and poll runs the Lua callbacks on the thread that calls it (wait, fd and attach_uv
-- for scripts and event loops); and Op, the handle of an asynchronous call.

local ffi = require("ffi")
local core = require("mcpc.core")
local M, C, Q, K = core.M, core.C, core.Q, core.K
local new_error, last_error, str, freer = core.new_error, core.last_error, core.str, core.freer

-- The event kinds of mcpc_lua.c.
local EV_CONNECT, EV_LIST, EV_CALL, EV_REQUEST, EV_INPUT, EV_HOST, EV_CONTENTS, EV_STATUS = 1, 2, 3, 4, 5, 6, 7, 8
local EV_SEND, EV_CLOSE, EV_FREE, EV_AUTHORIZE = 9, 10, 11, 12

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

-- A handler mcpc calls many times with a request: fn(wrap(ptr)) from poll. If fn raises,
-- undo(request, message) answers the request it left open, and the error is reported.
local function handler(fn, wrap, undo)
  local id = new_id()
  handlers[id] = function(ev)
    local request = wrap(ev.ptr)
    local ok, err = pcall(fn, request)
    if not ok then
      if request.handle then pcall(undo, request, tostring(err)) end
      error(err, 0)
    end
  end
  return id
end

-- An owned pointer nobody waits for any more is freed by its kind.
local orphan_free = {
  [EV_CONNECT] = function(p) C.mcpc_client_free(ffi.cast("mcpc_client_t *", p)) end,
  [EV_LIST] = function(p) C.mcpc_tool_list_free(ffi.cast("mcpc_tool_list_t *", p)) end,
  [EV_CALL] = function(p) C.mcpc_result_free(ffi.cast("mcpc_result_t *", p)) end,
  [EV_REQUEST] = function(p) C.mcpc_string_free(ffi.cast("char *", p)) end,
  [EV_INPUT] = function(p) C.mcpc_input_free(ffi.cast("mcpc_input_t *", p)) end,
  [EV_CONTENTS] = function(p) C.mcpc_contents_free(ffi.cast("mcpc_contents_t *", p)) end,
  [EV_AUTHORIZE] = function(p) C.mcpc_auth_request_cancel(ffi.cast("mcpc_auth_request_t *", p)) end,
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

return {
  EV_SEND = EV_SEND, new_id = new_id, ud = ud, pending = pending, handlers = handlers,
  handler = handler, on_free = on_free, start_op = start_op,
}
