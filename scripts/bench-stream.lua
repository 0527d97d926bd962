-- pmcsh bench-stream: pmcsh's STREAM kernels against the textbook loops
-- (kernels/ref_stream.c), same arrays, threads and pinning, interleaved.
local metrics = require("pmcsh.metrics")
local recipe = require("pmcsh.recipe")
local results = require("pmcsh.results")
local stream = require("pmcsh.stream")

-- --kernels checked against the descriptors (default: every available one)
local function kernel_list(opts, desc)
  local kernels = {}
  if opts.kernels then
    for _, k in ipairs(opts.kernels) do
      if not desc[k] then error(recipe.usage("unknown kernel '" .. k .. "'")) end
      kernels[#kernels + 1] = k
    end
  else
    for _, d in ipairs(stream.kernels()) do
      if d.available then kernels[#kernels + 1] = d.name end
    end
  end
  return kernels
end

-- --threads as counts ("all": every cpu; default 1 and all), repeats dropped
local function thread_counts(opts, m)
  local threads = {}
  for _, t in ipairs(opts.threads or {"1", tostring(#m.cpus)}) do
    local v = t == "all" and #m.cpus or math.tointeger(tonumber(t))
    if not v or v < 1 or v > 1024 then error(recipe.usage("bad thread count '" .. t .. "'")) end
    if threads[#threads] ~= v then threads[#threads + 1] = v end
  end
  return threads
end

-- Kernel k of stream s against its reference refk, rounds interleaved:
-- {best, best_ref, paired (the median of the rounds' ratios), isa}, or nil, message.
local function compare(s, k, refk, opts)
  local best, best_ref, paired, isa = 0, 0, {}, nil
  for round = 1, opts.rounds do
    local this = {}
    -- alternate who goes first, so a drift in the machine hits both
    local order = round % 2 == 1 and {false, true} or {true, false}
    for _, ref in ipairs(order) do
      local r, rerr = s:run(ref and refk or k, {reps = opts.reps, reference = ref and not opts.self})
      if not r then
        return nil, rerr
      end
      if not ref then isa = r.isa end
      if ref then best_ref = math.max(best_ref, r.mbps) else best = math.max(best, r.mbps) end
      this[ref] = r.mbps
    end
    paired[#paired + 1] = this[false] / this[true]
  end
  -- the same round's two runs saw the same machine: the median of
  -- their ratios resists noise that best-of alone does not
  return {best = best, best_ref = best_ref, paired = metrics.stats(paired).median, isa = isa}
end

-- the closing line: the lowest ratios, read against the target (or, with --self, as noise)
local function verdict(opts, worst, worst_paired)
  if not opts.json and worst < math.huge and opts.self then
    print(string.format("A/A: lowest ratio of a kernel against itself: best-of %.3f, paired %.3f: "
      .. "differences this size are this machine's noise", worst, worst_paired))
  elseif not opts.json and worst < math.huge then
    print(string.format("lowest ratio over the plain kernels: best-of %.3f, paired %.3f (target >= 0.98)%s",
      worst, worst_paired, math.max(worst, worst_paired) < 0.98
        and ": below target, rerun with more --rounds to tell noise from a real gap" or ""))
  end
end

return {
  description = "pmcsh STREAM kernels vs the textbook reference loops: bandwidth and ratio",
  help = [[
For each thread count and kernel, runs pmcsh's kernel and the plain C
reference loop (McCalpin's textbook STREAM loop, -O3 -march=native,
same arrays, threads and pinning) alternately, `rounds` times each, every run
being `reps` timed repetitions after a warm-up.  Prints the best bandwidth
(STREAM MB/s = 1e6 bytes/s, from the minimum time) of each, their ratio, and
"paired": the median over rounds of the ratio of the two runs of one round;
the *_nt kernels are compared with the plain reference loop they replace.
The target is a ratio >= 0.98 on every kernel.  --self runs pmcsh's own
kernel on both sides (an A/A comparison): its ratios are this machine's
noise floor, against which the real comparison is read.

  pmcsh bench-stream                         1 thread and all threads
  pmcsh bench-stream -t 1 -k triad,copy --rounds 9
  pmcsh bench-stream --json > bench.jsonl]],
  options = {
    {name = "n", type = "size", min = 1, help = "elements per array (default: STREAM's rule, 4x the LLCs)"},
    {name = "reps", short = "r", type = "int", default = 3, min = 1, max = 1000000, help = "timed repetitions per run"},
    {name = "rounds", type = "int", default = 20, min = 1, max = 1000000,
     help = "interleaved runs of each loop (best of rounds x reps)"},
    {name = "threads", short = "t", type = "list", help = "thread counts or all (default: 1 and all cpus)"},
    {name = "kernels", short = "k", type = "list", help = "kernels (default: every available one)"},
    {name = "pages", type = "string", choices = {"4k", "thp", "2m", "1g"}, default = "4k", help = "page policy"},
    {name = "self", type = "flag", help = "A/A: pmcsh's kernel on both sides, to see the noise floor"},
    {name = "isa", type = "string", help = "the variant of pmcsh's loops (default: the best this cpu runs)"},
    {name = "json", type = "flag", help = "one JSON object per kernel and thread count"},
  },
  run = function(opts)
    local m = stream.machine()
    local desc = {}
    for _, d in ipairs(stream.kernels()) do desc[d.name] = d end
    local kernels = kernel_list(opts, desc)
    local threads = thread_counts(opts, m)

    local cjson = opts.json and require("cjson")
    if opts.json then print(results.head("bench-stream")) end
    local n = opts.n or m.default_n
    local worst, worst_paired = math.huge, math.huge
    for _, t in ipairs(threads) do
      local s, err = stream.new{n = n, threads = t, pages = opts.pages, isa = opts.isa}
      if not s then
        return nil, err
      end
      local pg = s:pages()
      if not opts.json then
        print(string.format("n=%d (%s per array), threads=%d, pages=%s (%s pages), %d reps x %d rounds, interleaved; " ..
          "pmcsh's loops: the %s variant, reference: -march=native",
          n, metrics.size(n * 8), t, opts.pages, metrics.size(pg.page_size), opts.reps, opts.rounds,
          opts.isa or m.isa))
        print(string.format("%-9s %12s %12s %7s %7s   %s", "kernel", "pmcsh MB/s", "ref MB/s", "ratio", "paired", "reference loop"))
      end
      for _, k in ipairs(kernels) do
        local d = desc[k]
        local refk = opts.self and k or d.plain or k
        local c, rerr = compare(s, k, refk, opts)
        if not c then return nil, rerr end
        local ratio = c.best / c.best_ref
        -- the nt kernels are a different loop: their ratio is a comparison, not the target
        if not d.nt or opts.self then worst, worst_paired = math.min(worst, ratio), math.min(worst_paired, c.paired) end
        if opts.json then
          print(cjson.encode({kernel = k, threads = t, n = n, pages = opts.pages, page_size = pg.page_size,
            mbps = c.best, ref_mbps = c.best_ref, ratio = ratio, paired_ratio = c.paired, isa = c.isa,
            reference = opts.self and ("stream_" .. k) or ("ref_stream_" .. refk),
            reps = opts.reps, rounds = opts.rounds}))
        else
          print(string.format("%-9s %12.1f %12.1f %7.3f %7.3f   %s%s", k, c.best, c.best_ref, ratio, c.paired,
            opts.self and "stream_" .. k .. " itself (A/A)" or "ref_stream_" .. refk,
            d.nt and not opts.self and " (temporal stores)" or ""))
        end
        io.stdout:flush()
      end
      s:close()
      if not opts.json then print() end
    end
    verdict(opts, worst, worst_paired)
    return 0
  end,
}
