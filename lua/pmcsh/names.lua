-- The names every chunk sees, in scripts, -e, recipes and the REPL alike:
-- pmc, stream, chase, machine, regions, recipe, metrics, help and show (every field of
-- a value, as the REPL would print it in full).  Set in _G when pmcsh starts
-- (all of pmcsh's Lua loads in a few milliseconds).
local chase = require("pmcsh.chase")
local format = require("pmcsh.format")
local help = require("pmcsh.help")
local machine = require("pmcsh.machine")
local metrics = require("pmcsh.metrics")
local pmc = require("pmcsh.pmc")
local recipe = require("pmcsh.recipe")
local regions = require("pmcsh.regions")
local stream = require("pmcsh.stream")

local M = {
  globals = {pmc = pmc, stream = stream, chase = chase, machine = machine, regions = regions, recipe = recipe,
    metrics = metrics,
    help = help.help, show = format.show},
}

for k, v in pairs(M.globals) do rawset(_G, k, v) end

return M
