-- pmcsh health: a node health check for Slurm's HealthCheckProgram or a
-- prolog: STREAM triad and copy with all the cpus of each socket, idle
-- latency and memory-level parallelism, judged against a fleet's baseline
-- (pmcsh compare --baseline) or explicit thresholds.  Silent when healthy,
-- exit 0; one line on stderr and exit 1 when not.  With neither it refuses
-- (exit 2): a check that lost its baseline must not pass every node;
-- --measure-only measures for a baseline and judges nothing.
local chase = require("pmcsh.chase")
local compare = require("pmcsh.compare")
local errors = require("pmcsh.errors")
local machine = require("pmcsh.machine")
local numbers = require("pmcsh.numbers")
local statistics = require("pmcsh.statistics")
local recipe = require("pmcsh.recipe")
local results = require("pmcsh.results")
local stream = require("pmcsh.stream")
local plan = require("pmcsh.survey.plan")
local sys = require("pmcsh.sys")
local text = require("pmcsh.text")

local cjson = require("cjson")

local FORMAT = "pmcsh-health/1"
-- The options that give health something to judge against.
local THRESHOLDS = {"min-triad", "min-copy", "max-latency", "min-mlp"}
local MAX_N = 1 << 26            -- elements per array: 1.5 GiB in all
local MAX_CHAIN = 1 << 30

local function usage(fmt, ...) error(recipe.usage("health: " .. string.format(fmt, ...)), 0) end

-- The cpus this task may run on, by socket: {{socket=, cpus={...}}, ...}.
local function sockets()
  local by, order = {}, {}
  for _, cpu in ipairs(machine.cpus()) do
    local s = machine.of(cpu).socket
    if not by[s] then by[s] = {socket = s, cpus = {}}; order[#order + 1] = s end
    table.insert(by[s].cpus, cpu)
  end
  table.sort(order)
  local out = {}
  for i, s in ipairs(order) do out[i] = by[s] end
  return out
end

-- A metric record (pmcsh.results.metric): its estimator, the settings it
-- was measured under, and any fields of health's beside.
local function metric(name, value, unit, better, samples, stat, context, extra)
  local m = {name = name, value = value, unit = unit, better = better, samples = samples, stat = stat,
    context = context}
  for k, v in pairs(extra or {}) do m[k] = v end
  return results.metric(m)
end

-- The measurements: a list of metric records, or nil, message, errno.
local function measure(o)
  local out = {}
  for _, s in ipairs(sockets()) do
    local st, err, errno = stream.new{n = o.n, cpus = s.cpus, threads = #s.cpus, quiet = true}
    if not st then return nil, err, errno end
    for _, k in ipairs({"triad", "copy"}) do
      local r, rerr, rerrno = st:run(k, {reps = o.reps})
      if not r then st:close(); return nil, rerr, rerrno end
      local samples = {}   -- MB/s of each repetition, the best is the value
      for i, t in ipairs(r.times) do samples[i] = 1e-6 * r.bytes_per_iter * r.work[i] / t end
      out[#out + 1] = metric(string.format("%s MB/s, socket %d", k, s.socket), r.mbps, "MB/s", "higher", samples,
        "best", {kernel = k, socket = s.socket, threads = #s.cpus, n = o.n, isa = r.isa})
    end
    st:close()
  end
  local lat, err, errno = chase.latency{size = o.chain, samples = 5, sample_ms = 20}
  if not lat then return nil, err, errno end
  out[#out + 1] = metric("idle latency ns", lat.ns, "ns", "lower", lat.samples, "best", {size = o.chain})
  local par
  par, err, errno = chase.parallelism{size = o.chain, max = o.mlp_max, samples = 2, sample_ms = 10}
  if not par then return nil, err, errno end
  -- the best speedup of k chains over one, at most k (multichase's
  -- simple/parallelN): chase.parallelism's mlp drops rows above k, and on a
  -- machine that serves a lone miss slower than misses under load that is
  -- every row in some runs, and mlp flips between 1 and k: a health figure
  -- must not flip with that
  out[#out + 1] = metric("mlp", math.min(par.peak, o.mlp_max), "misses", "higher", nil, "best speedup, at most k",
    {size = o.chain, max = o.mlp_max}, {superlinear = par.superlinear})
  return out
end

-- The bounds each metric must keep: from the baseline (its "health: NAME"
-- metrics) and the explicit thresholds, the stricter winning.  Returns
-- name -> {low=, high=, why=}, or nil, message.  base: the baseline, read
-- before measuring.
local function bounds(opts, base, ms)
  local b = {}
  local function set(name, low, high, why)
    local e = b[name] or {}
    if low and (not e.low or low > e.low) then e.low, e.why_low = low, why end
    if high and (not e.high or high < e.high) then e.high, e.why_high = high, why end
    b[name] = e
  end
  if base then
    local any = false
    for _, m in ipairs(ms) do
      local bm = base.metrics["health: " .. m.name]
      if bm then
        any = true
        set(m.name, bm.low, bm.high, string.format("the baseline's median %.6g, band %g%%%s", bm.median,
          (base.band or 0) * 100, bm.scale == "log" and string.format(": a factor of %g", 1 + (base.band or 0)) or ""))
      end
    end
    if not any then
      return nil, string.format("%s holds none of health's metrics: write it from pmcsh health results " ..
        "(pmcsh compare --baseline %s DIR)", text.inert(opts.baseline), text.inert(opts.baseline))
    end
  end
  for _, m in ipairs(ms) do
    local kernel = m.name:match("^(%a+) MB/s")
    if kernel == "triad" and opts["min-triad"] then set(m.name, opts["min-triad"], nil, "--min-triad") end
    if kernel == "copy" and opts["min-copy"] then set(m.name, opts["min-copy"], nil, "--min-copy") end
    if m.name == "idle latency ns" and opts["max-latency"] then set(m.name, nil, opts["max-latency"], "--max-latency") end
    if m.name == "mlp" and opts["min-mlp"] then set(m.name, opts["min-mlp"], nil, "--min-mlp") end
  end
  return b
end

-- The run's own spread of a metric, as the survey states a cell's:
-- (max - min) / mean over the repetitions or samples it rests on.
local function spread(m)
  if not m.samples or #m.samples < 2 then return "(one figure)" end
  local st = statistics.stats(m.samples)
  return st.spread and string.format("±%.1f%% over %d %s", 100 * st.spread, st.n,
    m.name:match("MB/s") and "reps" or "samples") or ""
end

-- The checks failed: a list of one-phrase reasons.
local function judge(ms, b)
  local failed = {}
  for _, m in ipairs(ms) do
    local e = b[m.name]
    if e and e.low and m.value < e.low then
      failed[#failed + 1] = string.format("%s %.6g < %.6g (%s)", m.name, m.value, e.low, e.why_low)
    elseif e and e.high and m.value > e.high then
      failed[#failed + 1] = string.format("%s %.6g > %.6g (%s)", m.name, m.value, e.high, e.why_high)
    end
  end
  return failed
end

-- The sizes health measures at, checked as the engines would check them
-- before anything runs (a usage error).
local function sizes(opts)
  local m = stream.machine()
  local o = {reps = opts.reps, mlp_max = opts["mlp-max"]}
  o.n = opts.n or math.min(MAX_N, (plan.default_n(m.default_n, machine.mem_available())))
  o.chain = opts.chain or math.max(64 << 20, math.min(MAX_CHAIN, 4 * m.llc_bytes))
  -- what the engines would refuse, refused before anything runs
  local ok, fits, why = pcall(stream.check, {n = o.n})   -- more than this machine's memory raises
  if not ok and not errors.is(fits, "argument") then error(fits, 0) end
  if not (ok and fits) then usage("--n %s: %s", numbers.size(o.n), ok and why or fits.message) end
  fits, why = chase.check({size = o.chain}, o.mlp_max)
  if not fits then usage("--chain %s (--mlp-max %d): %s", numbers.size(o.chain), o.mlp_max, why) end
  return o
end

-- The baseline, read and checked before measuring: a bad one costs no
-- run, and its status (2) is never health's 1.  nil without --baseline.
local function read_baseline(opts)
  local base
  if opts.baseline then
    local berr
    base, berr = compare.read_baseline(opts.baseline)
    if not base then usage("%s", text.inert(berr)) end
    local any = false
    for name in pairs(base.metrics) do any = any or name:match("^health: ") ~= nil end
    if not any then
      usage("%s holds none of health's metrics: write it from pmcsh health results (pmcsh compare --baseline " ..
        "%s DIR)", text.inert(opts.baseline), text.inert(opts.baseline))
    end
  end
  return base
end

-- The results file of --out, made before measuring; nil without it.
local function open_out(opts)
  if opts.out then
    local path, perr = results.path(opts.out, "health")
    if not path then usage("--out %s: %s", text.inert(opts.out), perr) end
    local w, werr = results.create(path, "remove it or name another file (%j and %t make one per task)")
    if not w then usage("--out: %s", werr) end
    return w
  end
end

-- What health prints: JSON lines (--json), or each metric and the verdict (-v).
local function say(opts, fp, ms, b, verdict)
  local judged = verdict.judged
  if opts.json then
    print(results.head("health", fp))
    for _, rec in ipairs(ms) do print(cjson.encode(rec)) end
    print(cjson.encode(verdict))
  elseif opts.verbose then
    for _, rec in ipairs(ms) do
      local e = b[rec.name] or {}
      local l = string.format("%-24s %12.6g %-6s  %-26s%s%s", rec.name, rec.value, rec.unit, spread(rec),
        e.low and string.format("  >= %.6g", e.low) or "", e.high and string.format("  <= %.6g", e.high) or "")
      print((l:gsub("%s+$", "")))
    end
    print(string.format("%s: %s in %.1f s%s", text.inert(fp.host), not judged and "measured" or #verdict.failed == 0
      and "healthy" or "UNHEALTHY", verdict.seconds, not judged and " (--measure-only: nothing judged)" or ""))
  end
end

return {
  description = "node health check for Slurm (HealthCheckProgram, prolog): bandwidth, latency, MLP against a baseline",
  help = [[
Measures, in well under 60 s: STREAM triad and copy with all the cpus of each
socket this task may run on (best of --reps), idle latency (ns per dependent
load, best of 5 samples) and memory-level parallelism (par_mem: the best
speedup of k chains over one, at most k) on a chain of 4x the last-level
caches, and judges them against a baseline that
pmcsh compare --baseline writes from a healthy fleet's health results, or
against the explicit thresholds, the stricter winning.  Healthy: no output
(unless -v), exit 0.  Unhealthy: one line on stderr naming each check
failed, exit 1, as Slurm's HealthCheckProgram and NHC expect.  With
neither a baseline nor a threshold it refuses (exit 2), as NHC refuses to
run without a configuration: a check that lost its baseline must not pass
every node.  --measure-only measures for a baseline and judges nothing.

The band: a baseline holds a node within the fleet's median widened by
3.5 MADs or by compare's --band (default 10%: a factor of 1.1 either
way), the wider.  The band must exceed a healthy node's own run-to-run
spread, or health fails healthy nodes: -v prints each metric's spread
inside the run, and several --measure-only runs of one node, compared,
its spread from run to run.  Measured: 8 runs of a small virtual machine
that shares its host spread triad 6.5-21.8 GB/s, copy 4.3-20.2 GB/s, idle
latency 219-888 ns and mlp 9.5-16, up to a factor of 2.4 from their
median, while a run's own repetitions spread 6-85%: there 10% fails
healthy runs, a band of 2 (a factor of 3) holds, and no slowdown under
a factor of 3 can be told from noise.  10% suits a node whose runs agree
within a few percent: measure yours before you trust it.

  srun -N4 --ntasks-per-node=1 pmcsh health --measure-only --out results/   a file per node
  pmcsh compare --baseline fleet.json results/                      the fleet's baseline
  pmcsh health --baseline fleet.json                                the check (exit 0/1)
  pmcsh health --min-triad 20000 --max-latency 150 -v]],
  options = {
    {name = "baseline", short = "b", type = "string", help = "the bounds of a healthy fleet (pmcsh compare --baseline)"},
    {name = "min-triad", type = "number", positive = true, help = "fail below this triad MB/s (each socket)"},
    {name = "min-copy", type = "number", positive = true, help = "fail below this copy MB/s (each socket)"},
    {name = "max-latency", type = "number", positive = true, help = "fail above this idle latency (ns)"},
    {name = "min-mlp", type = "number", positive = true, help = "fail below this memory-level parallelism"},
    {name = "measure-only", type = "flag", help = "measure and write the results, judge nothing (for a baseline)"},
    {name = "verbose", short = "v", type = "flag",
     help = "print the measurements, each with its run's own spread, and the verdict when healthy too"},
    {name = "json", type = "flag", help = "print JSON lines: the fingerprint, a record per metric, the verdict"},
    {name = "out", short = "o", type = "string",
     help = "write the results to this file (%h host, %j job, %t task; DIR/: a file per task in DIR)"},
    {name = "n", type = "size", min = 1024, help = "elements per STREAM array (default: STREAM's rule, capped)"},
    {name = "reps", type = "int", default = 5, min = 2, max = 100, help = "STREAM repetitions"},
    {name = "chain", type = "size", min = 4096, help = "the chase's chain (default: 4x the last-level caches, 64M to 1G)"},
    {name = "mlp-max", type = "int", default = 16, min = 2, max = chase.MAX_K, help = "most chains chased together"},
  },
  run = function(opts)
    local t0 = sys.now()
    local judged = opts.baseline ~= nil
    for _, t in ipairs(THRESHOLDS) do judged = judged or opts[t] ~= nil end
    if not judged and not opts["measure-only"] then
      usage("nothing to judge against: give --baseline FILE (pmcsh compare --baseline) or a threshold (--%s), " ..
        "or --measure-only to measure for a baseline", table.concat(THRESHOLDS, ", --"))
    end
    if judged and opts["measure-only"] then
      usage("--measure-only judges nothing: without --baseline and the thresholds")
    end
    local o = sizes(opts)
    -- the baseline read and the results file made before measuring: a bad
    -- one costs no run, and its status (2) is never health's 1
    local base, w = read_baseline(opts), open_out(opts)
    local fp = machine.fingerprint()
    local ms, err = measure(o)
    if not ms then
      if w then w:close() end
      return nil, err
    end
    local b, berr = bounds(opts, base, ms)
    if not b then
      if w then w:close() end
      return nil, berr
    end
    local failed = judge(ms, b)
    local verdict = {type = "verdict", healthy = judged and #failed == 0 or nil, judged = judged, failed = failed,
      seconds = sys.now() - t0}
    local header = {type = "header", recipe = "health", format = FORMAT, fingerprint = fp, n = o.n, reps = o.reps,
      chain = o.chain, mlp_max = o.mlp_max, started = os.time(), baseline = opts.baseline}
    if w then
      local ok, e2 = w:write(header)
      for _, rec in ipairs(ms) do if ok then ok, e2 = w:write(rec) end end
      if ok then ok, e2 = w:write(verdict) end
      if ok then ok, e2 = w:write({type = "done"}) end
      local closed, cerr = w:close()
      if not ok or not closed then return nil, e2 or cerr end
    end
    say(opts, fp, ms, b, verdict)
    if #failed > 0 then
      io.stderr:write(string.format("pmcsh health: %s: %s\n", text.inert(fp.host), table.concat(failed, "; ")))
      return 1
    end
    return 0
  end,
}
