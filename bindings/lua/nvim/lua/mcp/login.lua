-- Logs in to a server that asks for it (OAuth, the authorization code grant): shows the
-- authorization URL and opens it in the browser where Neovim can (vim.ui.open, 0.10+),
-- then asks with vim.ui.input for the URL the browser was sent back to, which holds
-- the code. An empty answer or <Esc> cancels the login. Nothing waits: the server's
-- start goes on when the answer comes, within the plugin's timeout_ms.
local M = {}

local function notify(msg, level) vim.notify("mcp: " .. msg, level or vim.log.levels.INFO) end

function M.handle(login)
  notify("log in at " .. login.url)
  if vim.ui.open then pcall(vim.ui.open, login.url) end
  vim.ui.input({ prompt = "mcp: the URL your browser was sent back to: " }, function(answer)
    local ok, err
    if answer == nil or answer == "" then
      ok, err = pcall(login.cancel, login)
    else
      ok, err = pcall(login.complete, login, answer)
    end
    if not ok then notify("login: " .. tostring(err), vim.log.levels.ERROR) end
  end)
end

return M
