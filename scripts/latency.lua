-- pmcsh latency: memory latency versus size (lmbench lat_mem_rd) over the
-- chase module's prefetcher-proof chains.
local recipe, chase = require("pmcsh.recipe"), require("pmcsh.chase")
local machine = require("pmcsh.machine")
local numbers = require("pmcsh.numbers")
local plot = require("pmcsh.plot")
local results = require("pmcsh.results")

return {
  description = "memory latency versus size (lat_mem_rd): ns per dependent load",
  help = [[
Builds one chain per size (geometric, per_octave points per doubling) and
chases it: ns per dependent load, best and median of the samples.  The steps
of the curve are the caches: their sysfs sizes are printed below the
table, with the steps the curve shows (chase.steps) and a note where the
step to memory comes well below the last-level cache sysfs reports.
--series prints lmbench's "size_MB ns" lines, ready for a plotting program.]],
  options = chase.recipe_options({
    {name = "from", type = "size", default = 4096, min = 1, help = "smallest chain (bytes)"},
    {name = "to", type = "size", default = 256 * 1024 * 1024, min = 1, help = "largest chain (bytes)"},
    {name = "per_octave", type = "int", default = 4, min = 1, max = chase.MAX_PER_OCTAVE, help = "sizes per doubling"},
  }, {samples = 5, sample_ms = 20, per = "size"}, {
    {name = "series", type = "flag", help = "print \"size_MB ns\" lines only (lmbench format)"},
    {name = "json", type = "flag", help = "JSON lines: the fingerprint, a metric record per size (ns per load, best sample)"},
    {name = "plot", type = "plot", help = "draw the curve to FILE.png or FILE.svg (gnuplot, 1000x640): log axes, the caches marked"},
  }),
  run = function(opts)
    local function usage(msg) error(recipe.usage("latency: " .. msg), 0) end
    if opts.series and opts.json then usage("--series and --json exclude each other") end
    if opts.to < opts.from then usage("--to must be at least --from") end
    opts.stride = opts.stride or chase.default_stride(opts.order)
    if opts.from < opts.stride then
      usage(string.format("--from %s is smaller than one element of --stride %s", numbers.size(opts.from),
        numbers.size(opts.stride)))
    end
    local fits, why = chase.check{size = opts.to, stride = opts.stride, order = opts.order, pages = opts.pages}
    if not fits then usage(string.format("--to %s: %s", numbers.size(opts.to), why)) end
    -- each row is printed as it is measured (and flushed, so a pipe sees it)
    local cjson = opts.json and require("cjson")
    local size = numbers.size
    local headed = false
    local function head()   -- with the first row: nothing is printed for options refused
      headed = true
      if opts.json then
        print(results.head("latency"))
      elseif opts.series then
        print(string.format('"stride=%d order=%s pages=%s', opts.stride, opts.order, opts.pages))
      else
        print(string.format("# latency (lat_mem_rd): order=%s stride=%d pages=%s; ns per dependent load, "
          .. "best and median of %d samples", opts.order, opts.stride, opts.pages, opts.samples))
        print(string.format("%12s %10s %10s %10s", "size", "size_MB", "ns", "median_ns"))
      end
    end
    local function row(r, res)
      if not headed then head() end
      if opts.json then
        print(cjson.encode(results.metric{name = "ns per load, " .. size(r.size), unit = "ns", value = r.ns,
          stat = "best", better = "lower", samples = r.samples, median_ns = r.median_ns,
          context = {size = r.size, order = res.order, stride = res.stride, pages = res.pages}}))
      elseif opts.series then
        print(string.format("%.5f %.3f", r.size / 2^20, r.ns))
      else
        print(string.format("%12s %10.5f %10.3f %10.3f", size(r.size), r.size / 2^20, r.ns, r.median_ns))
      end
      io.stdout:flush()
    end
    local res, err = chase.sweep{from = opts.from, to = opts.to, per_octave = opts.per_octave,
      order = opts.order, stride = opts.stride, pages = opts.pages, samples = opts.samples,
      sample_ms = opts.sample_ms, each = row}
    if not res then
      return nil, err
    end
    local caches = machine.caches()
    local steps = chase.steps(res.rows, caches)
    if opts.series then
      print()
    elseif not opts.json then
      local cs = {}
      for _, c in ipairs(caches) do cs[#cs + 1] = string.format("L%d %s", c.level, size(c.size)) end
      if #cs > 0 then print("# caches (sysfs): " .. table.concat(cs, ", ")) end
      for _, s in ipairs(steps.steps) do
        print(string.format("# observed step %s -> %s: x%.2f %s", size(s.from), size(s.to), s.ratio,
          s.below_llc and "(to memory, well below the LLC)"
            or s.cache_level and string.format("(L%d %s per sysfs)", s.cache_level, size(s.cache_size))
            or "(no sysfs cache there)"))
      end
    end
    if steps.note then
      if opts.json or opts.series then io.stderr:write("pmcsh latency: ", steps.note, "\n")
      else print("# note: " .. steps.note) end
    end
    if opts.plot then
      local pts, marks = {}, {}
      for _, r in ipairs(res.rows) do pts[#pts + 1] = {r.size, r.ns} end
      for _, c in ipairs(caches) do
        marks[#marks + 1] = {x = c.size, title = string.format("L%d %s", c.level, size(c.size))}
      end
      local ok, perr = plot.lines(opts.plot, {
        title = string.format("latency, %s order, stride %d, %s pages; %s", res.order, res.stride, res.pages,
          #marks > 0 and "dashed: the caches' sizes (sysfs)" or "sysfs lists no cache sizes here"),
        xlabel = "chain size (bytes)", ylabel = "ns per dependent load (best sample)", bytes = true, logy = true,
        vlines = marks, series = {{title = res.order, points = pts}}})
      if not ok then return nil, perr end
    end
    return 0
  end,
}
