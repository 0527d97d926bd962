-- pmcsh.chase: dependent-load chains (lmbench lat_mem_rd and par_mem,
-- multichase) for memory latency, memory-level parallelism, latency versus
-- size and loaded latency.  The door: the engine's facade (chase/engine:
-- chains and latency) and each analysis in its own module (chase/mlp,
-- chase/sweep, chase/steps, chase/loaded), their public names gathered here.
local doc = require("pmcsh.help").doc
local engine = require("pmcsh.chase.engine")
local mlp = require("pmcsh.chase.mlp")
local sweep = require("pmcsh.chase.sweep")
local steps = require("pmcsh.chase.steps")
local loaded = require("pmcsh.chase.loaded")

local M = {}

for mod, names in pairs({
  [engine] = {"MAX_K", "MAX_DELAY", "MAX_SAMPLES", "MAX_SAMPLE_MS", "MAX_K_WHY", "orders", "default_stride",
    "page_policies", "check", "chain", "latency", "recipe_options"},
  [mlp] = {"DEFAULT_MAX", "SUPERLINEAR_WHY", "mlp", "mlp_rounds", "parallelism"},
  [sweep] = {"MAX_PER_OCTAVE", "sizes", "sweep"},
  [steps] = {"steps"},
  [loaded] = {"FEW_LOADERS", "loaded_flags", "loaded"},
}) do
  for _, name in ipairs(names) do M[name] = assert(mod[name], name) end
end

return doc(M, "chase", [[
pointer chases: memory latency, memory-level parallelism, latency versus size, loaded latency
Dependent-load chains (lmbench lat_mem_rd and par_mem, multichase): a chain
is built once (chase.chain: order, stride, page policy), then chased in one
C call with up to 64 chains interleaved in an unrolled loop (100 steps of
each chain per trip to 16 chains, at least 100 loads a trip beyond).  chase.latency, chase.parallelism, chase.sweep,
chase.loaded build their own chain unless given one.]])
