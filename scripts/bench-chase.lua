-- pmcsh bench-chase: the chase engine checked against a plain C chase over
-- the same chain, the prefetched stride order, and the latency-versus-size
-- curve against the caches sysfs reports.
local chase = require("pmcsh.chase")
local machine = require("pmcsh.machine")
local plot = require("pmcsh.plot")
local recipe = require("pmcsh.recipe")
local results = require("pmcsh.results")
local fmt_size = require("pmcsh.numbers").size
local stats = require("pmcsh.statistics").stats
local shell = require("pmcsh.text").shell

-- pmcsh against multichase (google/multichase, built by the user) on the
-- same size, stride, grouping and pages: a fresh chain on both sides every
-- round (multichase builds one per run; one reused chain keeps one physical
-- placement), the two alternating, which first swapped every round so that
-- the drifts of a shared machine hit both alike.  Latency: ns per load (the
-- best sample on both sides), the ratio pmcsh/multichase; parallelism:
-- pmcsh's k=10 speedup (separate cycles) against multichase's
-- simple/parallel10.  Medians of the per-round ratios.
local function versus_multichase(chase, opts, say)
  local function mc(args)
    local p = io.popen(string.format("%s %s 2>&1", shell(opts.multichase), args))
    local out = p:read("a")
    p:close()
    local v = tonumber(out:match("([%d.]+)%s*$"))
    if not v then io.stderr:write("bench-chase: multichase ", args, " said: ", out:sub(1, 200), "\n") end
    return v
  end
  local function alternate(round, ours, theirs)
    if round % 2 == 1 then ours(); theirs() else theirs(); ours() end
  end
  local mb = opts.size // 2^20
  local cfgs = {
    {name = "tlb, 4k pages", chain = {size = opts.size, order = "tlb", stride = 256, tlb_pages = 64, pages = "4k"},
     args = string.format("-m %dm -s 256 -T 256k -n 4", mb)},
    {name = "random, thp", chain = {size = opts.size, order = "random", stride = 256, pages = "thp"},
     args = string.format("-m %dm -s 256 -T %dm -H -n 4", mb, mb)},
  }
  local out = {}
  say("\n6. against multichase (%s), %s, stride 256, fresh chains, %d interleaved rounds (order swapped each round)",
    opts.multichase, fmt_size(opts.size), opts.rounds)
  say("   %-26s %-32s %10s %10s %8s %s", "config", "multichase arguments", "pmcsh ns", "mc ns", "ratio", "rounds")
  for _, c in ipairs(cfgs) do
    local ratios, ours, theirs = {}, {}, {}
    for round = 1, opts.rounds do
      local a, b
      alternate(round, function()
        local ch <close> = assert(chase.chain(c.chain))   -- gone before multichase maps its own
        a = assert(chase.latency{chain = ch, samples = 4, sample_ms = 250}).ns
      end, function() b = mc(c.args) end)
      if not b then return nil end
      ours[round], theirs[round], ratios[round] = a, b, a / b
    end
    local r = stats(ratios)
    out[#out + 1] = {config = c.name, multichase_args = c.args, pmcsh_ns = stats(ours).median,
      multichase_ns = stats(theirs).median, ratio = r.median, ratios = ratios}
    say("   latency %-18s %-32s %10.1f %10.1f %8.3f %.3f..%.3f", c.name, c.args, stats(ours).median,
      stats(theirs).median, r.median, r.min, r.max)
  end
  local ratios, ours, theirs = {}, {}, {}
  for round = 1, opts.rounds do
    local p, s1, s10
    alternate(round, function()
      p = assert(chase.parallelism{size = opts.size, order = "tlb", stride = 256, tlb_pages = 64, pages = "4k",
        max = 10, chains = "separate", samples = 3, sample_ms = 20})
    end, function()
      s1, s10 = mc(cfgs[1].args), mc(cfgs[1].args .. " -c parallel10")
    end)
    if not s1 or not s10 then return nil end
    ours[round], theirs[round] = p.rows[10].speedup, s1 / s10
    ratios[round] = ours[round] / theirs[round]
  end
  out[#out + 1] = {config = "parallelism k=10, tlb 4k", multichase_args = cfgs[1].args .. " [-c parallel10]",
    ratio = stats(ratios).median, pmcsh = ours, multichase = theirs}
  say("   parallelism k=10, tlb 4k: pmcsh speedup %.2f, multichase simple/parallel10 %.2f, ratio %.3f (%.3f..%.3f)",
    stats(ours).median, stats(theirs).median, stats(ratios).median, stats(ratios).min, stats(ratios).max)
  say("   (ns: medians over rounds of each run's best sample; ratio: median of the per-round ratios)")
  return out
end
local function min(xs) return stats(xs).min end
local function median(xs) return stats(xs).median end

-- Engine and plain loop over one chain, in pairs taken back to back (an
-- engine sample and a plain run of as many loads, which first alternating),
-- after one warm-up, so that the drifts of a shared machine hit both alike.
-- The verdict is on the median of the paired ratios: the best samples alone
-- are extreme values of a wide distribution on a noisy host.
local function versus_plain(chase, o, npairs, sample_ms, out)
  local c = assert(chase.chain{size = o.size, order = o.order, pages = o.pages})   -- the order's stride
  local eng, plain, ratios = {}, {}, {}
  local loads = assert(c:run{samples = 1, sample_ms = sample_ms}).loads_per_sample
  c:plain(loads)
  for i = 1, npairs do
    local e, p
    if i % 2 == 1 then
      e = assert(c:run{samples = 1, sample_ms = sample_ms, warmup_ms = 1}).samples[1]
      p = c:plain(loads)
    else
      p = c:plain(loads)
      e = assert(c:run{samples = 1, sample_ms = sample_ms, warmup_ms = 1}).samples[1]
    end
    eng[i], plain[i], ratios[i] = e, p, e / p
  end
  local info = c:info()
  c:close()
  local row = {order = info.order, size = info.size, pages = info.pages, pairs = npairs,
    engine_median_ns = median(eng), plain_median_ns = median(plain), engine_best_ns = min(eng),
    plain_best_ns = min(plain), ratio = median(ratios)}
  row.within_2pct = math.abs(row.ratio - 1) <= 0.02
  out[#out + 1] = row
  return row
end

-- (1) the random and tlb orders, engine against plain loop, into res.versus_plain
local function part_plain(chase, opts, res, say)
  say("\n1. engine vs plain C chase over the same chain (%s, default strides, %s pages, %d pairs of %g ms)",
    fmt_size(opts.size), opts.pages, opts.pairs, opts.sample_ms)
  say("   %-7s %14s %14s %12s %12s %8s", "order", "engine ns p50", "plain ns p50", "engine best", "plain best",
    "ratio")
  for _, order in ipairs({"random", "tlb"}) do
    local r = versus_plain(chase, {size = opts.size, order = order, pages = opts.pages}, opts.pairs,
      opts.sample_ms, res.versus_plain)
    say("   %-7s %14.1f %14.1f %12.1f %12.1f %8.3f  %s", order, r.engine_median_ns, r.plain_median_ns,
      r.engine_best_ns, r.plain_best_ns, r.ratio, r.within_2pct and "within 2%" or "NOT within 2%")
  end
  say("   (ns per load: p50 the median sample, best the fastest; ratio: median of the paired engine/plain "
    .. "ratios, the verdict)")
end

-- (2) the stride order against (1)'s random
local function part_stride(chase, opts, res, say)
  local st = assert(chase.latency{size = opts.size, order = "stride", stride = 64, pages = opts.pages,
    samples = opts.samples})
  local rnd = res.versus_plain[1].engine_median_ns
  res.stride = {median_ns = st.median_ns, best_ns = st.ns, random_median_ns = rnd, ratio = rnd / st.median_ns}
  say("\n2. stride order, 64 B, %s: %.2f ns/load (median of %d samples; best %.2f); random %.1f ns (median) "
    .. "is %.0fx that (prefetched)", fmt_size(opts.size), st.median_ns, #st.samples, st.ns, rnd, rnd / st.median_ns)
end

-- the step across each sysfs cache: latency at 2x its size over latency at half
local function cache_steps(rows, opts, res, say)
  local function at(size)
    local best, d = nil, math.huge
    for _, row in ipairs(rows) do
      local dd = math.abs(math.log(row.size / size))
      if dd < d then best, d = row, dd end
    end
    return best
  end
  res.steps = {}
  say("\n   steps (best latency at 2x the cache size over best latency at half of it):")
  for _, c in ipairs(res.caches) do
    if c.size / 2 >= opts.from and c.size * 2 <= opts.to then
      local lo, hi = at(c.size / 2), at(c.size * 2)
      local s = {level = c.level, size = c.size, below_ns = lo.ns, above_ns = hi.ns, ratio = hi.ns / lo.ns}
      res.steps[#res.steps + 1] = s
      say("   L%d %-6s %s %.2f ns -> %s %.2f ns  x%.2f", c.level, fmt_size(c.size), fmt_size(lo.size), lo.ns,
        fmt_size(hi.size), hi.ns, s.ratio)
    end
  end
end

-- the steps the curve itself shows (chase.steps), a step to memory well
-- below the LLC sysfs reports said in words
local function observed_steps(chase, rows, res, say)
  local st = chase.steps(rows, res.caches)
  res.observed_steps = st.steps
  for _, s in ipairs(st.steps) do
    say("   observed step %s -> %s: x%.2f  %s", fmt_size(s.from), fmt_size(s.to), s.ratio,
      s.below_llc and "(to memory, well below the LLC: see the note)"
        or s.cache_level and string.format("(L%d %s per sysfs)", s.cache_level, fmt_size(s.cache_size))
        or "(no sysfs cache there)")
  end
  if st.note then
    res.note = st.note
    say("   note: %s", st.note)
  end
end

-- (3) latency versus size, the sysfs caches marked where they fall, into res.sweep
local function part_sweep(chase, opts, res, say)
  local sw = assert(chase.sweep{from = opts.from, to = opts.to, per_octave = opts.per_octave,
    pages = opts.pages, samples = opts.samples})
  res.sweep = sw.rows
  say("\n3. latency versus size (random, 64 B, %s pages): ns per load, best and median of %d samples",
    opts.pages, opts.samples)
  say("   %10s %9s %9s", "size", "best", "median")
  local prev = 0
  for _, row in ipairs(sw.rows) do
    local mark = {}
    for _, c in ipairs(res.caches) do
      if c.size > prev and c.size <= row.size then mark[#mark + 1] = string.format("<- L%d %s", c.level, fmt_size(c.size)) end
    end
    say("   %10s %9.2f %9.2f %s", fmt_size(row.size), row.ns, row.median_ns, table.concat(mark, " "))
    prev = row.size
  end
  cache_steps(sw.rows, opts, res, say)
  observed_steps(chase, sw.rows, res, say)
end

-- (4) memory-level parallelism at --size
local function part_mlp(chase, opts, res, say)
  local p = assert(chase.parallelism{size = opts.size, pages = opts.pages, samples = opts.samples, rounds = 3})
  res.parallelism = p
  say("\n4. memory-level parallelism at %s (%s chains, 3 rounds): %s (peak %.1f)%s", fmt_size(opts.size), p.chains,
    p.mlp and string.format("mlp %.1f, %.1f-%.1f over the rounds%s", p.mlp, p.mlp_min, p.mlp_max,
      p.at_least and string.format(", at least %d", p.at_least) or "") or ("no mlp: " .. p.why), p.peak,
    p.unsettled and "  (unsettled)" or "")
  for _, row in ipairs(p.rows) do
    say("   k=%-2d %8.2f ns/load  speedup %5.2f (%.2f-%.2f)%s", row.k, row.ns, row.speedup, row.speedup_min,
      row.speedup_max, row.superlinear and "  superlinear: above k (left out of mlp)" or "")
  end
  if p.note then say("   %s", p.note) end
  if p.superlinear then say("   %s", chase.SUPERLINEAR_WHY) end
end

-- (5) loaded latency at --size
local function part_loaded(chase, opts, res, say)
  local l = assert(chase.loaded{size = opts.size, pages = opts.pages, samples = opts.samples})
  res.loaded = l
  say("\n5. loaded latency at %s, %d bandwidth thread(s): idle %.1f ns best, %.1f median", fmt_size(opts.size),
    l.threads, l.idle.ns, l.idle.median_ns)
  say("   %8s %10s %9s %9s %9s", "delay", "MB/s", "best ns", "median ns", "worst ns")
  for _, row in ipairs(l.rows) do
    say("   %8d %10.0f %9.1f %9.1f %9.1f", row.delay, row.mbps, row.ns, row.median_ns, row.max_ns)
  end
  for _, f in ipairs(l.flags) do say("   flagged: %s (likely cause: %s)", f.text, f.cause) end
end

-- the sweep's curve to --plot
local function plot_curve(opts, rows, say)
  local pts = {}
  for _, row in ipairs(rows) do pts[#pts + 1] = {row.size / 1024, row.ns} end
  local ok, msg = plot.lines(opts.plot, {title = "pmcsh chase: latency versus size",
    xlabel = "KiB", ylabel = "ns per load", logx = true, logy = true,
    series = {{title = "random, 64 B, " .. opts.pages, points = pts}}})
  if not ok then io.stderr:write("bench-chase: ", msg, "\n") else say("\nplot: %s", opts.plot) end
end

-- bad option values are usage errors; --multichase must name a file
local function check_options(opts)
  if opts.to < opts.from then error(recipe.usage("bench-chase: --to must be >= --from"), 0) end
  for _, o in ipairs({"size", "to"}) do   -- at stride 64, the most elements of its chains
    local fits, why = chase.check{size = opts[o]}
    if not fits then error(recipe.usage(string.format("bench-chase: --%s %s: %s", o, fmt_size(opts[o]), why)), 0) end
  end
  if opts.only == "multichase" then
    if not opts.multichase then error(recipe.usage("bench-chase: --only multichase needs --multichase PATH"), 0) end
  end
  if opts.multichase then
    local f = io.open(opts.multichase, "rb")
    if not f then
      error(recipe.usage("bench-chase: --multichase " .. opts.multichase .. ": no such file (build "
        .. "google/multichase with make and give the path of its multichase binary)"), 0)
    end
    f:close()
  end
end

-- The results as metric records (pmcsh.results.metric), part by part: the
-- engine against the plain loop, the stride order, the curve and its
-- steps, mlp, loaded latency, multichase; each part's own figures beside.
local function part_records(res, opts)
  local out = {}
  local function add(m) out[#out + 1] = results.metric(m) end
  for _, r in ipairs(res.versus_plain or {}) do
    add{name = "engine/plain ns ratio, " .. r.order, unit = "ratio", value = r.ratio, stat = "median of the pairs'",
      context = {order = r.order, size = r.size, pages = r.pages}, pairs = r.pairs, within_2pct = r.within_2pct,
      engine_median_ns = r.engine_median_ns, plain_median_ns = r.plain_median_ns, engine_best_ns = r.engine_best_ns,
      plain_best_ns = r.plain_best_ns}
  end
  local st = res.stride
  if st then
    add{name = "random/stride ns ratio", unit = "ratio", value = st.ratio, stat = "medians'",
      context = {size = opts.size, pages = opts.pages}, median_ns = st.median_ns, best_ns = st.best_ns,
      random_median_ns = st.random_median_ns}
  end
  for _, r in ipairs(res.sweep or {}) do
    add{name = "ns per load, " .. fmt_size(r.size), unit = "ns", value = r.ns, stat = "best", better = "lower",
      samples = r.samples, median_ns = r.median_ns, context = {size = r.size, order = "random", pages = opts.pages}}
  end
  for _, s in ipairs(res.steps or {}) do
    add{name = string.format("step across L%d %s", s.level, fmt_size(s.size)), unit = "ratio", value = s.ratio,
      stat = "best ns at 2x over best at half", context = {level = s.level, size = s.size}, below_ns = s.below_ns,
      above_ns = s.above_ns}
  end
  for _, s in ipairs(res.observed_steps or {}) do
    add{name = string.format("observed step %s -> %s", fmt_size(s.from), fmt_size(s.to)), unit = "ratio",
      value = s.ratio, stat = "best ns", cache_level = s.cache_level, below_llc = s.below_llc}
  end
  local p = res.parallelism
  if p then
    add{name = "mlp, " .. fmt_size(opts.size), unit = "misses", value = p.mlp, stat = "best speedup within k",
      better = "higher", context = {size = opts.size, pages = opts.pages}, peak = p.peak, rows = p.rows,
      at_least = p.at_least, why = p.why, mlp_min = p.mlp_min, mlp_max = p.mlp_max}
  end
  for _, r in ipairs(res.loaded and res.loaded.rows or {}) do
    local context = {delay = r.delay, threads = res.loaded.threads, size = opts.size}
    add{name = string.format("ns per load, delay %d", r.delay), unit = "ns", value = r.ns, stat = "best",
      better = "lower", samples = r.samples, median_ns = r.median_ns, max_ns = r.max_ns, context = context}
    add{name = string.format("loaders MB/s, delay %d", r.delay), unit = "MB/s", value = r.mbps,
      stat = "over all samples", better = "higher", samples = r.mbps_samples, context = context}
  end
  for _, m in ipairs(res.multichase or {}) do
    add{name = "pmcsh/multichase ratio, " .. m.config, unit = "ratio", value = m.ratio,
      stat = "median of the rounds'", samples = m.ratios, context = {config = m.config}, pmcsh_ns = m.pmcsh_ns,
      multichase_ns = m.multichase_ns, multichase_args = m.multichase_args, pmcsh = m.pmcsh, multichase = m.multichase}
  end
  return out
end

-- --json: the fingerprint's line, then the metric records; a note on stderr.
local function print_json(res, opts)
  local cjson = require("cjson")
  print(results.head("bench-chase"))
  for _, r in ipairs(part_records(res, opts)) do print(cjson.encode(r)) end
  if res.note then io.stderr:write("pmcsh bench-chase: ", res.note, "\n") end
end

return {
  description = "pointer-chase engine vs a plain C chase, stride vs random, latency-versus-size curve vs sysfs caches",
  help = [[
Three checks in one run.  (1) At --size (256M) the random and tlb orders
chased by the engine (one unrolled C loop, 100 loads per trip) against the
plain loop `p = *p` over the SAME chain, in pairs of samples taken back to
back: ns per load as the median sample (and the best), and the median of
the paired ratios, which should be within 2% of 1.  (2) The stride order at
64 B over the same size: prefetched, far smaller.  (3) The sweep from
--from to --to, with the data and unified cache sizes of cpu0 from sysfs
marked where they fall, the latency step across each, the steps the curve
shows, and a note where the step to memory comes well below the LLC.  --mlp adds par_mem's parallelism at
--size, --loaded a short loaded-latency table.  --multichase PATH adds
(6), against a multichase binary built from google/multichase, at --size
with stride 256: the tlb order on 4 KiB pages (multichase -s 256 -T 256k)
and the random order on THP (-T SIZE -H), ns per load and the ratio
pmcsh/multichase, fresh chains on both sides, --rounds rounds alternating
which runs first; and the parallelism at k=10 (separate cycles) against
multichase's simple/parallel10.  --only multichase runs (6) alone.  Timings
on a shared machine wander: run it on a quiet one.]],
  options = {
    {name = "size", type = "size", default = 256 * 1024 * 1024, min = 1, help = "chain size for the comparisons"},
    {name = "pages", type = "string", choices = {"4k", "thp", "2m", "1g"}, default = "4k", help = "page policy"},
    {name = "pairs", type = "int", default = 200, min = 1, max = 1000000, help = "engine/plain comparison: sample pairs"},
    {name = "sample_ms", type = "number", default = 5, positive = true, max = 60000,
     help = "engine/plain comparison: ms per sample"},
    {name = "samples", type = "int", default = 5, min = 1, max = 100000, help = "samples per sweep point and per k"},
    {name = "from", type = "size", default = 4096, min = 1, help = "sweep: smallest size"},
    {name = "to", type = "size", default = 256 * 1024 * 1024, min = 1, help = "sweep: largest size"},
    {name = "per_octave", type = "int", default = 4, min = 1, max = 64, help = "sweep: points per doubling"},
    {name = "mlp", type = "flag", help = "also measure memory-level parallelism (k = 1..16) at --size"},
    {name = "loaded", type = "flag", help = "also measure loaded latency at --size"},
    {name = "plot", type = "string", help = "write the curve to this .png or .svg (gnuplot)"},
    {name = "json", type = "flag", help = "JSON lines: the fingerprint, a metric record per figure of each part"},
    {name = "multichase", type = "string", help = "also compare with this multichase binary (built from google/multichase)"},
    {name = "rounds", type = "int", default = 5, min = 1, max = 1000000, help = "multichase comparison: interleaved rounds"},
    {name = "only", type = "string", choices = {"multichase"}, help = "run only this part (multichase: the "
      .. "comparison alone, with --multichase)"},
  },
  run = function(opts)
    check_options(opts)
    local say = opts.json and function() end or function(...) print(string.format(...)); io.stdout:flush() end
    if opts.only == "multichase" then
      local res = {multichase = versus_multichase(chase, opts, say)}
      if not res.multichase then return 1 end
      if opts.json then print_json(res, opts) end
      return 0
    end
    local res = {caches = machine.caches(), versus_plain = {}}
    local t = {}
    for _, c in ipairs(res.caches) do t[#t + 1] = string.format("L%d %s %s", c.level, c.type, fmt_size(c.size)) end
    say("caches (sysfs, cpu0): %s", table.concat(t, ", "))
    part_plain(chase, opts, res, say)
    part_stride(chase, opts, res, say)
    part_sweep(chase, opts, res, say)
    if opts.mlp then part_mlp(chase, opts, res, say) end
    if opts.loaded then part_loaded(chase, opts, res, say) end
    if opts.multichase then
      res.multichase = versus_multichase(chase, opts, say)
      if not res.multichase then return 1 end
    end
    if opts.plot then plot_curve(opts, res.sweep, say) end
    if opts.json then print_json(res, opts) end
    return 0
  end,
}
