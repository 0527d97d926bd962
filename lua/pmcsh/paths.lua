-- Where pmcsh's files are, for a plain Lua host (lua5.4, busted): the
-- pmcsh binary registers this module itself, with its own executable.
-- Here the tree is found from this file: ROOT/lua/pmcsh/paths.lua in the
-- source tree or share/pmcsh, share/lua/5.4/pmcsh/paths.lua beside
-- share/pmcsh once installed.
local C = require("pmcsh._sys")

local here = debug.getinfo(1, "S").source:match("^@(.*)/pmcsh/paths%.lua$") or "."

local function has_events(root)
  local f = io.open(root .. "/events/generic.lua")
  if f then f:close() end
  return f ~= nil
end

local installed = nil   -- make install writes the installed tree's root here
local root = installed or here:match("^(.*)/lua$")
if not (root and has_events(root)) then
  local share = here:match("^(.*)/lua/5%.4$")
  root = share and share .. "/pmcsh" or here .. "/.."
end

return {
  exe = nil,   -- no pmcsh binary hosts this process
  root = root,
  lua = root .. "/lua",
  scripts = root .. "/scripts",
  events = root .. "/events",
  version = C.VERSION,
  secure = false,
  sanitized = false,
}
