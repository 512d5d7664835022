-- Answers a server's elicitation with vim.ui: first whether to answer at all
-- (vim.ui.select), then each field of its form in turn (vim.ui.select for booleans and
-- enums, vim.ui.input for the rest). Every step is a callback, so the editor never
-- waits; the request is answered when the last field is in, or cancelled on <Esc>.
local M = {}

local function finish(input, fn, ...)
  local ok, err = pcall(fn, input, ...)
  if not ok then vim.notify("mcp: elicitation: " .. tostring(err), vim.log.levels.ERROR) end
end

-- The form's fields in a stable order: the required ones first, then by name.
local function fields(schema)
  local required, out = {}, {}
  for _, name in ipairs(schema.required or {}) do required[name] = true end
  for name, prop in pairs(schema.properties or {}) do out[#out + 1] = { name = name, prop = prop, required = required[name] } end
  table.sort(out, function(a, b)
    if a.required ~= b.required then return a.required == true end
    return a.name < b.name
  end)
  return out
end

-- Asks one field, then calls next(value) (nil: left empty; false: cancelled).
local function ask(field, next)
  local prop, label = field.prop, field.prop.title or field.name
  if field.prop.description then label = label .. " (" .. field.prop.description .. ")" end
  if prop.type == "boolean" then
    vim.ui.select({ "true", "false" }, { prompt = label }, function(choice)
      if choice == nil then return next(false) end
      next(choice == "true")
    end)
  elseif prop.enum or (prop.oneOf and prop.oneOf[1] and prop.oneOf[1].const) then
    local values = prop.enum or vim.tbl_map(function(o) return o.const end, prop.oneOf)
    vim.ui.select(values, { prompt = label }, function(choice)
      if choice == nil then return next(false) end
      next(choice)
    end)
  elseif prop.type == "array" and prop.items and (prop.items.enum or prop.items.anyOf) then
    -- a list of choices: one picked here
    local values = prop.items.enum or vim.tbl_map(function(o) return o.const end, prop.items.anyOf)
    vim.ui.select(values, { prompt = label }, function(choice)
      if choice == nil then return next(false) end
      next({ choice })
    end)
  else
    vim.ui.input({ prompt = label .. ": ", default = prop.default and tostring(prop.default) or nil }, function(text)
      if text == nil then return next(false) end
      if text == "" then return next(nil) end
      if prop.type == "number" or prop.type == "integer" then return next(tonumber(text) or text) end
      next(text)
    end)
  end
end

--- The elicitation handler (mcpc.options{ elicitation = ... }): called from mcpc.poll,
--- on the editor's thread, outside libuv's fast context.
function M.handle(input)
  local who = input.host_server or input.server or "a server"
  if input.url then
    local prompt = ("%s asks you to open %s\n%s"):format(who, input.url, input.message or "")
    vim.ui.select({ "Accept", "Decline" }, { prompt = prompt }, function(choice)
      if choice == "Accept" then finish(input, input.accept)
      elseif choice == "Decline" then finish(input, input.decline)
      else finish(input, input.cancel) end
    end)
    return
  end
  local schema = input.schema and vim.json.decode(input.schema) or {}
  vim.ui.select({ "Answer", "Decline" }, { prompt = ("%s asks: %s"):format(who, input.message or "") }, function(choice)
    if choice == "Decline" then return finish(input, input.decline) end
    if choice == nil then return finish(input, input.cancel) end
    local list, content, i = fields(schema), vim.empty_dict(), 0
    local function step(value)
      if value == false then return finish(input, input.cancel) end
      if i > 0 and value ~= nil then content[list[i].name] = value end
      i = i + 1
      if i > #list then return finish(input, input.accept, vim.json.encode(content)) end
      ask(list[i], step)
    end
    step(nil)
  end)
end

return M
