-- pmcsh parallelism: memory-level parallelism versus size (lmbench par_mem)
-- over the chase module.
local recipe, chase = require("pmcsh.recipe"), require("pmcsh.chase")

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

-- mlp against size, y from 0 under the k line; sizes with rows above k
-- marked, and then the peak beside mlp.
local function plot(opts, pts, marks, peaks)
  local series = {{title = opts.order .. ": mlp, the best speedup within k", points = pts}}
  if #marks > 0 then
    series[2] = {title = "sizes with rows above k (left out of mlp)", points = marks, points_only = true}
    series[3] = {title = "peak: the best speedup of any row (multichase's simple/parallelN)", points = peaks,
      dashed = true}
  end
  return require("pmcsh.plot").lines(opts.plot, {
    title = string.format("memory-level parallelism, %s order: best speedup t1 / (tk / k), k = 1..%d",
      opts.order, opts.max),
    xlabel = "chain size (bytes)", ylabel = "parallelism (best speedup)", bytes = true, y0 = true, key = "below",
    hline = {y = opts.max, title = string.format("k = %d: the most overlapped misses can give", opts.max)},
    series = series})
end

return {
  description = "memory-level parallelism versus size (par_mem): overlapped misses",
  help = [[
At each size, k = 1..max chains run together in one loop: k separate cycles
over the same elements where each element has a word for every chain
(stride >= 8 * max: the tlb and page orders' default 256), as multichase's
parallel chases, else k pointers evenly spaced along one cycle, as par_mem.
The parallelism (mlp) is the best speedup t1 / (tk / k).  A speedup above k
cannot come from overlapped misses (each of k chains ran faster than one
alone: near a cache's size they keep lines one chain loses; some machines
serve a lone miss slower than misses under load): such rows are flagged and
left out; peak is the best speedup of all rows (multichase's
simple/parallelN).  --detail prints ns per load and the speedup for every k;
--series prints "size_MB parallelism" lines, ready for a plotting program.]],
  options = recipe.chase_options({
    {name = "sizes", type = "list", help = "chain sizes (e.g. 32K,4M,256M); default: from..to per octave"},
    {name = "from", type = "size", default = 64 * 1024, min = 1, help = "smallest chain (bytes)"},
    {name = "to", type = "size", default = 256 * 1024 * 1024, min = 1, help = "largest chain (bytes)"},
    {name = "per_octave", type = "int", default = 1, min = 1, max = chase.MAX_PER_OCTAVE, help = "sizes per doubling"},
    {name = "max", type = "int", default = 16, min = 1, max = chase.MAX_K, help = "most chains chased together"},
  }, {samples = 3, sample_ms = 10, per = "k"}, {
    {name = "detail", type = "flag", help = "print ns and speedup for every k"},
    {name = "series", type = "flag", help = "print \"size_MB parallelism\" lines only"},
    {name = "json", type = "flag", help = "one JSON object per size"},
    {name = "plot", type = "plot", help = "draw parallelism versus size to FILE.png or FILE.svg (1000x640): y from 0, the k limit drawn"},
  }),
  run = function(opts)
    local function usage(msg) error(recipe.usage("parallelism: " .. msg), 0) end
    if (opts.series and 1 or 0) + (opts.json and 1 or 0) + (opts.detail and 1 or 0) > 1 then
      usage("--detail, --series and --json exclude each other")
    end
    opts.stride = opts.stride or chase.default_stride(opts.order)
    if opts.to < opts.from then usage("--to must be at least --from") end
    local sizes = sizes_of(opts, usage)
    local cjson = opts.json and require("cjson")
    local pts, marks, peaks = {}, {}, {}
    if opts.json then
      print(require("pmcsh.results").head("parallelism"))
    elseif opts.series then
      print(string.format('"stride=%d order=%s pages=%s', opts.stride, opts.order, opts.pages))
    else
      print(string.format("# memory-level parallelism (par_mem): order=%s stride=%d pages=%s, k = 1..%d",
        opts.order, opts.stride, opts.pages, opts.max))
      if not opts.detail then print(string.format("%12s %10s %10s %10s %10s", "size", "size_MB", "mlp", "peak", "ns(k=1)")) end
    end
    for _, size in ipairs(sizes) do
      local r, err = chase.parallelism{size = size, max = opts.max, order = opts.order, stride = opts.stride,
        pages = opts.pages, samples = opts.samples, sample_ms = opts.sample_ms}
      if not r then return nil, err end
      local mb = r.size / 2^20
      pts[#pts + 1] = {r.size, r.mlp}
      peaks[#peaks + 1] = {r.size, r.peak}
      if r.superlinear then marks[#marks + 1] = {r.size, r.mlp} end
      if opts.json then
        print(cjson.encode({size = r.size, size_mb = mb, mlp = r.mlp, peak = r.peak, rows = r.rows, footprint = r.footprint,
          superlinear = r.superlinear, t1_drift = r.t1_drift, unsettled = r.unsettled, note = r.note}))
      elseif opts.series then
        print(string.format("%.5f %.3f", mb, r.mlp))
      elseif opts.detail then
        print(string.format("\nsize %s (%.5f MB): parallelism %.3f, peak speedup %.3f", require("pmcsh.metrics").size(r.size),
          mb, r.mlp, r.peak))
        print(string.format("%4s %10s %10s", "k", "ns/load", "speedup"))
        for _, row in ipairs(r.rows) do
          print(string.format("%4d %10.3f %10.3f%s", row.k, row.ns, row.speedup,
            row.superlinear and "  superlinear: above k (left out of parallelism)" or ""))
        end
      else
        print(string.format("%12s %10.5f %10.3f %10.3f %10.3f%s", require("pmcsh.metrics").size(r.size), mb, r.mlp, r.peak,
          r.rows[1].ns,
          (r.superlinear and string.format("  (%d superlinear rows left out)", r.superlinear) or "")
          .. (r.unsettled and string.format("  (unsettled: t1 moved %+.0f%%)", r.t1_drift * 100) or "")))
      end
      if r.note and not opts.json and not opts.series then io.stderr:write("pmcsh parallelism: ", r.note, "\n") end
      io.stdout:flush()
    end
    if opts.series then print() end
    if opts.plot then
      local ok, perr = plot(opts, pts, marks, peaks)
      if not ok then return nil, perr end
    end
    return 0
  end,
}
