-- The names every chunk sees, in scripts, -e, recipes and the REPL alike:
-- pmc, stream, chase, machine, recipe, metrics, help and show (every field of a
-- value, as the REPL would print it in full), each loaded on first use
-- through _G's metatable, so pmcsh starts fast and a module that cannot
-- load here fails only when it is used.
local M = {}

M.lazy = {
  pmc = function() return require("pmcsh.pmc") end,
  stream = function() return require("pmcsh.stream") end,
  chase = function() return require("pmcsh.chase") end,
  machine = function() return require("pmcsh.machine") end,
  recipe = function() return require("pmcsh.recipe") end,
  metrics = function() return require("pmcsh.metrics") end,
  help = function() return require("pmcsh.help").help end,
  show = function() return require("pmcsh.format").show end,
}

local mt = getmetatable(_G) or {}
local old = mt.__index
mt.__index = function(t, k)
  local load = M.lazy[k]
  if load then
    local v = load()
    rawset(t, k, v)
    return v
  end
  if type(old) == "function" then return old(t, k) end
  if type(old) == "table" then return old[k] end
end
setmetatable(_G, mt)

return M
