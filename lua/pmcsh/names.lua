-- The names every chunk sees, in scripts, -e, recipes and the REPL alike:
-- pmc, stream, chase, machine, regions, recipe, metrics, help and show (every field of
-- a value, as the REPL would print it in full).  Each is loaded when a
-- chunk first reads it, through _G's __index, so that pmcsh starts as lua
-- starts: `pmcsh -e ''` loads no engine, no cjson, no libpfm4.
local help = require("pmcsh.help")

local M = {}

-- Each global's loader, the one list of them; the requires are written out
-- (not a name in a variable) so that the floors check reads every edge.
M.globals = {
  pmc = function() return require("pmcsh.pmc") end,
  stream = function() return require("pmcsh.stream") end,
  chase = function() return require("pmcsh.chase") end,
  machine = function() return require("pmcsh.machine") end,
  regions = function() return require("pmcsh.regions") end,
  recipe = function() return require("pmcsh.recipe") end,
  metrics = function() return require("pmcsh.metrics") end,
  help = function() return help.help end,
  show = function() return require("pmcsh.format").show end,
}

-- _G's __index: a global of the list, loaded and then set in _G, so that
-- later reads are plain ones; any other name reads nil, as in lua.
local function load_global(g, name)
  local load = M.globals[name]
  if load == nil then return nil end
  local v = load()
  rawset(g, name, v)
  return v
end

-- Every module behind the globals, loaded: help()'s topics and help "name"
-- read what their modules registered.
function M.load_all()
  for _, load in pairs(M.globals) do load() end
end

help.before_lookup(M.load_all)
setmetatable(_G, {__index = load_global})

return M
