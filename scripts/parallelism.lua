-- pmcsh parallelism: memory-level parallelism versus size (lmbench par_mem)
-- over the chase module.
local recipe, chase = require("pmcsh.recipe"), require("pmcsh.chase")
local numbers = require("pmcsh.numbers")
local plot = require("pmcsh.plot")
local results = require("pmcsh.results")

-- The chain sizes: --sizes as given, else from..to, per_octave a doubling.
local function sizes_of(opts, usage)
  local sizes = {}
  if opts.sizes then
    for _, s in ipairs(opts.sizes) do
      local b = recipe.parse_size(s)
      if not b or b < opts.stride then usage(string.format("bad size %q in --sizes", s)) end
      sizes[#sizes + 1] = b
    end
    return sizes
  end
  return chase.sizes(opts.from, opts.to, opts.per_octave, opts.stride)
end

-- mlp against size with its range over the rounds, y from 0 under the k
-- line; sizes without an mlp have no point; sizes with rows above k marked
-- at their peak, and the peak beside mlp.
local function draw(opts, pts, marks, peaks)
  local series = {{title = string.format("%s: mlp, the best speedup within k (medians of %d round%s%s)", opts.order,
    opts.rounds, opts.rounds == 1 and "" or "s", opts.rounds > 1 and " in which it was within k; bars: their range"
    or ""), points = pts}}
  if #marks > 0 then
    series[#series + 1] = {title = "sizes with rows above k (left out of mlp), at their peak", points = marks,
      points_only = true}
    series[#series + 1] = {title = "peak: the best speedup of any row (multichase's simple/parallelN)", points = peaks,
      dashed = true}
  end
  return plot.lines(opts.plot, {
    title = string.format("memory-level parallelism, %s order: best speedup t1 / (tk / k), k = 1..%d",
      opts.order, opts.max),
    xlabel = "chain size (bytes)", ylabel = "parallelism (best speedup)", bytes = true, y0 = true, key = "below",
    hline = {y = opts.max, title = string.format("k = %d: the most overlapped misses can give", opts.max)},
    series = series})
end

-- What a size's mlp is, in words after its row: a lower bound, or none and why.
local function verdict(r)
  if not r.mlp then return "no mlp: " .. (r.why or "none measured") end
  if r.at_least then
    return string.format("at least %d (%s)", r.at_least, r.engine_limit
      and "the most chains the engine runs: why below" or string.format("raise --max, up to %d", chase.MAX_K))
  end
  return nil
end

local function fmt_mlp(r) return r.mlp and string.format("%.3f", r.mlp) or "-" end
local function fmt_range(r)
  return r.mlp_min and r.rounds > 1 and string.format("%.3f-%.3f", r.mlp_min, r.mlp_max) or "-"
end
-- the rounds an mlp and its range rest on: those in which its k was within k
local function fmt_rounds(r)
  return r.mlp_rounds < r.rounds and string.format("the %d of %d rounds within k", r.mlp_rounds, r.rounds)
    or string.format("%d rounds", r.rounds)
end

-- The sizes of a list of results, "4M, 8M".
local function size_list(list)
  local t = {}
  for i, r in ipairs(list) do t[i] = numbers.size(r.size) end
  return table.concat(t, ", ")
end

-- The options checked, the sizes listed, and the largest chain and the
-- most chains on the smallest checked, before any runs: the sizes.
local function check(opts, usage)
  if (opts.series and 1 or 0) + (opts.json and 1 or 0) + (opts.detail and 1 or 0) > 1 then
    usage("--detail, --series and --json exclude each other")
  end
  opts.stride = opts.stride or chase.default_stride(opts.order)
  if opts.to < opts.from then usage("--to must be at least --from") end
  local sizes = sizes_of(opts, usage)
  local small, large = math.min(table.unpack(sizes)), math.max(table.unpack(sizes))
  local chain = {stride = opts.stride, order = opts.order, pages = opts.pages}
  local list = opts.sizes and "--sizes"
  chain.size = large
  local fits, why = chase.check(chain)
  if not fits then usage(string.format("%s %s: %s", list or "--to", numbers.size(large), why)) end
  chain.size = small
  if not chase.check(chain, opts.max) then
    usage(string.format("%s %s holds %d elements of --stride %s: fewer than the --max %d chains need",
      list or "--from", numbers.size(small), small // opts.stride, numbers.size(opts.stride), opts.max))
  end
  return sizes
end

-- The lines before the rows: the JSON head, the series' title or the table's.
local function print_head(opts)
  if opts.json then
    print(results.head("parallelism"))
  elseif opts.series then
    print(string.format('"stride=%d order=%s pages=%s', opts.stride, opts.order, opts.pages))
  else
    print(string.format("# memory-level parallelism (par_mem): order=%s stride=%d pages=%s, k = 1..%d, %d round%s " ..
      "of %d samples per k", opts.order, opts.stride, opts.pages, opts.max, opts.rounds,
      opts.rounds == 1 and "" or "s", opts.samples))
    print(string.format("# mlp: the best speedup t1 / (tk / k) within k (each k's median over the rounds in which " ..
      "it stayed within k); range: that k's over those rounds%s; peak: the best of all rows; ns(k=1): t1, the " ..
      "median of the rounds",
      opts.rounds == 1 and " (one round: none, --rounds 3 gives one)" or ""))
    if not opts.detail then
      print(string.format("%12s %10s %10s %13s %10s %10s", "size", "size_MB", "mlp", "range", "peak", "ns(k=1)"))
    end
  end
end

-- A size's result kept for the plot and for the notes after the rows.
local function note_row(opts, seen, r)
  if r.mlp then
    seen.pts[#seen.pts + 1] = opts.rounds > 1 and {r.size, r.mlp, r.mlp_min, r.mlp_max} or {r.size, r.mlp}
  else
    seen.none[#seen.none + 1] = r
    seen.pts[#seen.pts + 1] = {r.size}   -- no point, and no line through it
  end
  seen.peaks[#seen.peaks + 1] = {r.size, r.peak}
  if r.superlinear then seen.marks[#seen.marks + 1] = {r.size, r.peak}; seen.above[#seen.above + 1] = r end
  if r.unsettled then seen.unsettled[#seen.unsettled + 1] = r end
  if r.engine_limit then seen.limited[#seen.limited + 1] = r end
end

-- --detail: a size's line, then ns and speedup for every k.
local function print_detail(r, mb)
  local says = verdict(r)
  print(string.format("\nsize %s (%.5f MB): %s%s, peak speedup %.3f%s", numbers.size(r.size), mb,
    r.mlp and string.format("mlp %.3f at k=%d", r.mlp, r.mlp_k) or ("no mlp (" .. r.why .. ")"),
    r.rounds > 1 and r.mlp and string.format(" (%s over %s)", fmt_range(r), fmt_rounds(r)) or "", r.peak,
    r.at_least and ("; " .. says) or ""))
  print(string.format("%4s %10s %10s %13s", "k", "ns/load", "speedup", "range"))
  for _, row in ipairs(r.rows) do
    print(string.format("%4d %10.3f %10.3f %13s%s", row.k, row.ns, row.speedup,
      r.rounds > 1 and string.format("%.3f-%.3f", row.speedup_min, row.speedup_max) or "-",
      row.superlinear_rounds and string.format("  above k in %d of %d round%s%s", row.superlinear_rounds,
        r.rounds, r.rounds == 1 and "" or "s", row.superlinear and " (left out of mlp)" or "") or ""))
  end
end

-- The table's line for a size, its flags after it.
local function print_line(r, mb)
  local flags = {}
  local says = verdict(r)
  if says then flags[#flags + 1] = says end
  if r.superlinear then
    flags[#flags + 1] = string.format("%d superlinear row%s left out", r.superlinear, r.superlinear == 1 and "" or "s")
  end
  if r.unsettled then flags[#flags + 1] = string.format("unsettled: t1 moved %+.0f%%", r.t1_drift * 100) end
  print(string.format("%12s %10.5f %10s %13s %10.3f %10.3f%s", numbers.size(r.size), mb, fmt_mlp(r), fmt_range(r),
    r.peak, r.rows[1].ns, #flags > 0 and ("  (" .. table.concat(flags, "; ") .. ")") or ""))
end

-- A size's result as --json, --series, --detail or the table print it.
local function print_row(opts, r)
  local mb = r.size / 2^20
  if opts.json then
    -- the mlp as a metric (none where every k > 1 ran above k: why says so), the curve beside it
    print(require("cjson").encode(results.metric{name = "mlp, " .. numbers.size(r.size), unit = "misses",
      value = r.mlp, stat = "best speedup within k", better = "higher",
      context = {size = r.size, order = opts.order, stride = opts.stride, pages = opts.pages},
      mlp_min = r.mlp_min, mlp_max = r.mlp_max,
      mlp_k = r.mlp_k, mlp_rounds = r.mlp_rounds, rounds = r.rounds, at_least = r.at_least,
      engine_limit = r.engine_limit, why = r.why, peak = r.peak, rows = r.rows,
      footprint = r.footprint, superlinear = r.superlinear, t1_drift = r.t1_drift, unsettled = r.unsettled,
      note = r.note}))
  elseif opts.series then
    if r.mlp then print(string.format("%.5f %.3f", mb, r.mlp)) end
  elseif opts.detail then
    print_detail(r, mb)
  else
    print_line(r, mb)
  end
end

-- What the flags mean, once for all sizes, on stderr.
local function explain(opts, seen)
  local text = not opts.series
  if #seen.limited > 0 and text then
    io.stderr:write("pmcsh parallelism: at least ", chase.MAX_K, " at ", size_list(seen.limited), ": ", chase.MAX_K,
      " chains is the most the engine runs: ", chase.MAX_K_WHY, "\n")
  end
  if #seen.above > 0 and text then
    io.stderr:write("pmcsh parallelism: rows above k at ", size_list(seen.above), ": ", chase.SUPERLINEAR_WHY, "\n")
  end
  if #seen.unsettled > 0 and text then
    io.stderr:write("pmcsh parallelism: t1 moved more than 10% within a round at ", size_list(seen.unsettled),
      ": the level of the hierarchy serving the chain changed under the measurement, so those speedups mix " ..
      "two levels\n")
  end
  if #seen.none > 0 and (opts.series or opts.plot) then
    io.stderr:write("pmcsh parallelism: no mlp at ", size_list(seen.none), " (every k > 1 above k): left out ",
      "of the ", opts.series and "series" or "plot", "\n")
  end
end

return {
  description = "memory-level parallelism versus size (par_mem): overlapped misses",
  help = ([[
At each size, k = 1..max chains run together in one loop: k separate cycles
over the same elements where each element has a word for every chain
(stride >= 8 * max: the tlb and page orders' default 256), as multichase's
parallel chases, else k pointers evenly spaced along one cycle, as par_mem.
The parallelism (mlp) is the best speedup t1 / (tk / k) within k, measured
in --rounds rounds (k = 1..max each): each k's median over the rounds, and
its range.  A speedup above k cannot come from overlapped misses
(each of k chains ran faster than one alone: near a cache's size they keep
lines one chain loses; some machines serve a lone miss slower than misses
under load): such rows are flagged and left out, and a size where no k > 1
is left has no mlp (the row says why; --series and --plot leave it out);
the mlp and its range come from the same rounds, those in which its k
stayed within k.  --max goes up to %d, the most chains the engine runs:
beyond, the engine rather than the memory would bound the overlap (past
the registers each chain's load comes with a reload and a store, and a
core tracks a few tens of misses at once); %d by default, %s of the
time.  An mlp that reaches --max is a lower bound: "at least max (raise
--max, up to %d)" below %d, "at least %d (the most chains the engine
runs)" at it, with the reason.
peak is the best speedup of all rows (multichase's simple/parallelN).
--detail prints ns per load and the speedup for every k; --series prints
"size_MB parallelism" lines, ready for a plotting program.]]):format(chase.MAX_K, chase.DEFAULT_MAX,
    chase.DEFAULT_MAX * 4 == chase.MAX_K and "a fourth" or "less", chase.MAX_K, chase.MAX_K, chase.MAX_K),
  options = chase.recipe_options({
    {name = "sizes", type = "list", help = "chain sizes (e.g. 32K,4M,256M); default: from..to per octave"},
    {name = "from", type = "size", default = 64 * 1024, min = 1, help = "smallest chain (bytes)"},
    {name = "to", type = "size", default = 256 * 1024 * 1024, min = 1, help = "largest chain (bytes)"},
    {name = "per_octave", type = "int", default = 1, min = 1, max = chase.MAX_PER_OCTAVE, help = "sizes per doubling"},
    {name = "max", type = "int", default = chase.DEFAULT_MAX, min = 1, max = chase.MAX_K, max_why = chase.MAX_K_WHY,
     help = "most chains chased together (up to " .. chase.MAX_K .. ")"},
    {name = "rounds", type = "int", default = 3, min = 1, max = 1000,
     help = "rounds of k = 1..max per size: mlp is their median, with their range"},
  }, {samples = 3, sample_ms = 10, per = "k"}, {
    {name = "detail", type = "flag", help = "print ns and speedup for every k"},
    {name = "series", type = "flag", help = "print \"size_MB parallelism\" lines only"},
    {name = "json", type = "flag", help = "JSON lines: the fingerprint, a metric record per size (its mlp, the curve beside)"},
    {name = "plot", type = "plot", help = "draw parallelism versus size to FILE.png or FILE.svg (1000x640): y from 0, the k limit drawn"},
  }),
  run = function(opts)
    local function usage(msg) error(recipe.usage("parallelism: " .. msg), 0) end
    local sizes = check(opts, usage)
    local seen = {pts = {}, marks = {}, peaks = {}, above = {}, unsettled = {}, none = {}, limited = {}}
    print_head(opts)
    for _, size in ipairs(sizes) do
      local r, err = chase.parallelism{size = size, max = opts.max, rounds = opts.rounds, order = opts.order,
        stride = opts.stride, pages = opts.pages, samples = opts.samples, sample_ms = opts.sample_ms}
      if not r then return nil, err end
      note_row(opts, seen, r)
      print_row(opts, r)
      io.stdout:flush()
    end
    if opts.series then print() end
    if not opts.json then explain(opts, seen) end
    if opts.plot then
      local ok, perr = draw(opts, seen.pts, seen.marks, seen.peaks)
      if not ok then return nil, perr end
    end
    return 0
  end,
}
