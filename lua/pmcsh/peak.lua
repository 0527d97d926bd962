-- pmcsh.peak: the facade over pmcsh._peak (kernels/peak.c): the machine's
-- floating-point ceilings per register width and precision, and the core
-- clock measured by a dependent chain.  Peaks are the best of short timed
-- windows (ERT's max over trials): a preempted window only reads low, so
-- the best is the one the machine ran undisturbed; each figure says how
-- many windows it rests on.
local C = require("pmcsh._peak")
local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")
local statistics = require("pmcsh.statistics")
local machine = require("pmcsh.machine")

local M = {}

local WINDOW_S, REPS = 0.004, 15

local function check_opts(fname, opts, allowed)
  if opts == nil then return {} end
  errors.check(fname, 1, opts, "table")
  for k in pairs(opts) do
    if not allowed[k] then errors.argument(fname, 1, string.format("unknown option '%s'", tostring(k)), 2) end
  end
  return opts
end

local function check_count(fname, v, name, lo, hi)
  if v == nil then return nil end
  local n = math.tointeger(v)
  if not n or n < lo or n > hi then
    errors.argument(fname, 1, string.format("%s: an integer from %d to %d expected, got %s", name, lo, hi, tostring(v)), 3)
  end
  return n
end

M.kernels = doc(function()
  local ks, variant = C.kernels()
  for _, k in ipairs(ks) do k.variant = variant end
  return ks
end, "peak.kernels", [[
peak.kernels() -> the peak kernels this CPU runs, narrowest first: {name=,
isa=, bits= (register width), precision=, lanes=, fma=, accumulators=,
flops_per_trip=, symbol=, variant=}.  Each keeps `accumulators`
independent multiply-add chains in registers, no memory traffic.]])

-- Repeats f(amount) -> seconds until one window lasts about `window`
-- seconds, then takes reps windows: the amount and their seconds.
local function windows(f, start, window, reps)
  local amount, s = start, f(start)
  while s < window / 4 and amount < 1 << 30 do
    amount = math.tointeger(amount * 2)
    s = f(amount)
  end
  amount = math.min(1 << 32, math.max(start, math.tointeger(math.floor(amount * window / math.max(s, 1e-9)))))
  local secs = {}
  for i = 1, reps do secs[i] = f(amount) end
  return amount, secs
end

local CLOCK_OPTS = {reps = true, window = true}
M.clock = doc(function(opts)
  opts = check_opts("clock", opts, CLOCK_OPTS)
  local reps = check_count("clock", opts.reps, "reps", 1, 10000) or REPS
  local adds, secs = windows(C.chain, 1 << 14, opts.window or WINDOW_S, reps)
  local st = statistics.stats(secs)
  return {hz = adds / st.min, adds = adds, windows = reps, median_hz = adds / st.median,
    estimator = "best window"}
end, "peak.clock", [[
peak.clock{[reps=15][, window=0.004]} -> {hz=, median_hz=, adds=, windows=,
estimator=}: the clock of the core this thread runs on, from `adds` integer
adds each waiting for the last (one cycle each), timed in windows of about
`window` seconds; hz from the fastest window, median_hz from the median.
A nominal or TSC rate is never used.]])

-- The cpus threads run on: the first `threads` this process may use.
local function cpus_for(threads)
  local all = machine.cpus()
  if threads > #all then return nil end
  local out = {}
  for i = 1, threads do out[i] = all[i] end
  return out
end

local FLOPS_OPTS = {threads = true, kernels = true, reps = true, window = true, clock = true}
M.flops = doc(function(opts)
  opts = check_opts("flops", opts, FLOPS_OPTS)
  local threads = check_count("flops", opts.threads, "threads", 1, 1024) or 1
  local cpus = cpus_for(threads)
  if not cpus then
    errors.argument("flops", 1, string.format("threads: this process may run on %d cpus", #machine.cpus()), 2)
  end
  local reps = check_count("flops", opts.reps, "reps", 1, 10000) or REPS
  local want = {}
  for _, n in ipairs(opts.kernels or {}) do want[n] = true end
  local hz = opts.clock or M.clock{reps = reps}.hz
  local out = {}
  for _, k in ipairs(M.kernels()) do
    if not opts.kernels or want[k.name] then
      local trips, secs = windows(function(t) return (C.run(k.name, t, cpus)) end, 64, opts.window or WINDOW_S, reps)
      local flops = trips * k.flops_per_trip * threads
      local st = statistics.stats(secs)
      local best = flops / st.min
      -- FMA pipes per core: what the best window did per cycle, over
      -- what one pipe does (a multiply-add on every lane)
      local pipes = best / (hz * threads * k.lanes * 2)
      local inferred = math.max(1, math.floor(pipes + 0.5))
      out[#out + 1] = {kernel = k.name, isa = k.isa, bits = k.bits, precision = k.precision, lanes = k.lanes,
        fma = k.fma, threads = threads, gflops = best / 1e9, median_gflops = flops / st.median / 1e9,
        windows = reps, estimator = "best window", clock_hz = hz, pipes_measured = pipes, pipes = inferred,
        pipes_source = "inferred", theoretical_gflops = k.lanes * 2 * inferred * hz * threads / 1e9}
    end
  end
  return out
end, "peak.flops", [[
peak.flops{[threads=1][, kernels={names}][, reps=15][, window=0.004][, clock=hz]}
-> a list, one record per kernel (peak.kernels()): {kernel=, isa=, bits=,
precision=, lanes=, fma=, threads=, gflops= (the best window),
median_gflops=, windows=, clock_hz= (peak.clock's unless given),
pipes_measured= (flops per cycle per core over lanes x 2), pipes= (that
rounded: the multiply-add pipes inferred, pipes_source="inferred"),
theoretical_gflops= (lanes x 2 x pipes x clock x threads)}.  The threads
run at once, pinned to the first cpus this process may use.]])

return M
