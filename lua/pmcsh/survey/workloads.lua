-- The survey's workloads: what it measures, one column per workload.
--
-- Every engine gives the survey columns of one shape, plain data that
-- a renderer reads without running anything:
--   {name=, title=, unit= (one iteration, in words), what= (the engine, in
--    words), bytes= (bytes per iteration, STREAM convention; nil when the
--    workload moves no STREAM bytes), sized= (it uses the survey's n),
--    note= (nil, or a line under the table)}
-- and, to measure, the same columns as workloads with
--   run = function(group, reps) -> {times=, iterations=, counts=, per_rep=,
--         warnings=, record=} or nil, message, errno
-- (and the checks and disassembly the run's cells are checked by).
-- times: seconds per timed repetition; iterations: over all of them;
-- counts/per_rep: the group's reading over all and per repetition; record:
-- the engine's own fields kept in the results file.  A new engine joins
-- the survey by adding one entry to ENGINES: its names, what it adds to the
-- header from the options, its columns and its workloads.
local errors = require("pmcsh.errors")
local engine_stream = require("pmcsh.survey.engine_stream")
local engine_chase = require("pmcsh.survey.engine_chase")

local M = {}

local ENGINES = {engine_stream.stream, engine_stream.loop, engine_chase.engine}

-- env: {quiet=, loops=} (the header's loops, for the loop engine's names).
local function env_of(env, hdr)
  env = env or {}
  if hdr and env.loops == nil then env.loops = hdr.loops end
  return env
end

-- Every workload name, engine by engine.
function M.names(env)
  env = env_of(env)
  local out = {}
  for _, e in ipairs(ENGINES) do
    for _, n in ipairs(e.names(env)) do out[#out + 1] = n end
  end
  return out
end

-- Completes the header from the options (hdr.kernels set): each engine adds
-- what it needs, then every kernel must be one of theirs.
function M.configure(opt, hdr, usage, env)
  local builtin = M.names({})
  for _, e in ipairs(ENGINES) do
    if e.configure then e.configure(opt, hdr, usage, builtin) end
  end
  local names = M.names(env_of(env, hdr))
  local known = {}
  for _, n in ipairs(names) do known[n] = true end
  for _, k in ipairs(hdr.kernels) do
    if not known[k] then
      usage(string.format("unknown kernel %q (kernels: %s)", k, table.concat(names, ", ")))
    end
  end
end

-- The engine of each name here.
local function engines_by_name(env)
  local by = {}
  for _, e in ipairs(ENGINES) do
    for _, n in ipairs(e.names(env)) do by[n] = e end
  end
  return by
end

-- The engines' own checks of the options the header holds, before anything
-- is written: fail(option, why) for the first one refused.
function M.validate(hdr, env, fail)
  env = env_of(env, hdr)
  local by, seen = engines_by_name(env), {}
  for _, k in ipairs(hdr.kernels) do
    local e = by[k]
    if e and e.validate and not seen[e] then
      seen[e] = true
      e.validate(hdr, env, function(opt, why) fail(opt, errors.message(why)) end)
    end
  end
end

-- Whether a header read from a file holds what each engine's kernels need:
-- true, or nil and what is missing.
function M.check(hdr)
  for _, e in ipairs(ENGINES) do
    local ok, why = (e.check or function() return true end)(hdr)
    if not ok then return nil, why end
  end
  return true
end

-- Whether a run or baseline record read from a file belongs to its
-- header: a kernel the header names, measured as it says (the engine's
-- check_record).  True, or nil, why.
function M.check_record(hdr, rec)
  local named = false
  for _, k in ipairs(hdr.kernels) do named = named or k == rec.kernel end
  if not named then return nil, string.format("a %s of kernel %s, which the header does not name", rec.type, rec.kernel) end
  local e = engines_by_name(env_of(nil, hdr))[rec.kernel]
  if e and e.check_record then return e.check_record(hdr, rec) end
  return true
end

-- The columns of hdr.kernels, in their order (by name too), per engine
-- (a list of {engine, its columns}); plain data: nothing is made or opened.
local function columns(hdr, env)
  local out, per = {}, {}
  for _, e in ipairs(ENGINES) do
    local set, mine = {}, {}
    for _, n in ipairs(e.names(env)) do set[n] = true end
    for _, k in ipairs(hdr.kernels) do if set[k] then mine[#mine + 1] = k end end
    if #mine > 0 then
      local cs = e.columns(hdr, mine)
      for _, c in ipairs(cs) do out[c.name] = c end
      per[#per + 1] = {e, cs}
    end
  end
  -- a name no engine here knows (a file from another build): its column only
  for i, k in ipairs(hdr.kernels) do
    out[k] = out[k] or {name = k, title = (k:gsub("^%l", string.upper)), unit = "iteration", what = "this run"}
    out[i] = out[k]
  end
  return out, per
end

-- What a renderer shows of each workload: the columns of hdr.kernels, in
-- their order and by name; no workload is made, no loop opened.
function M.columns(hdr)
  return (columns(hdr, env_of(nil, hdr)))
end

-- The workloads of hdr.kernels, in their order (by name too): the columns
-- with their runs, and a function that frees what the runs made.  env:
-- {quiet=}.
function M.of(hdr, env)
  env = env_of(env, hdr)
  local close_arrays
  env.arrays, close_arrays = engine_stream.arrays(hdr, env)   -- one set for the built-ins and the loops
  local out, per = columns(hdr, env)
  local closers = {close_arrays}
  for _, ec in ipairs(per) do closers[#closers + 1] = ec[1].workloads(hdr, env, ec[2]) end
  return out, function() for _, c in ipairs(closers) do c() end end
end

return M
