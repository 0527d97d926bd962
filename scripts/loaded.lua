-- pmcsh loaded: latency under load (Intel MLC's --loaded_latency) over
-- chase.loaded: one thread chases a chain while bandwidth threads on the
-- other cpus read their own buffers with a decreasing injection delay.
local recipe, chase = require("pmcsh.recipe"), require("pmcsh.chase")
local machine = require("pmcsh.machine")
local numbers = require("pmcsh.numbers")
local plot = require("pmcsh.plot")
local results = require("pmcsh.results")

-- What the load means on this machine (MLC loads from every other core),
-- with chase.loaded's own note: nil where there is nothing to say.
local function load_note(res, cpus)
  local note
  if res.threads >= cpus then
    note = string.format("%d loader%s on %d cpu%s: the loaders share cpus with the chaser, so latency includes "
      .. "their time slices", res.threads, res.threads == 1 and "" or "s", cpus, cpus == 1 and "" or "s")
  elseif res.threads < chase.FEW_LOADERS then
    note = string.format("only %d loading core%s (%d cpus here): the load is %s bandwidth, well below what "
      .. "the memory can give; MLC's curve needs many loading cores", res.threads, res.threads == 1 and "" or "s",
      cpus, res.threads == 1 and "one core's" or "a few cores'")
  end
  if res.note then note = note and (note .. "; " .. res.note) or res.note end
  return note
end

-- --json: the head, then per row two metric records, the chaser's latency
-- (with the row's flags and their causes) and the loaders' bandwidth.
local function print_json(res, note)
  local cjson = require("cjson")
  local idle = res.idle
  print(results.head("loaded"))
  for _, r in ipairs(res.rows) do
    local flags, causes = {}, {}
    for _, f in ipairs(res.flags) do   -- a row's own, and those of the whole curve
      if f.delay == nil or f.delay == r.delay or f.against == r.delay then
        flags[#flags + 1] = f.text
        if not causes[f.cause] then causes[f.cause] = true; causes[#causes + 1] = f.cause end
      end
    end
    local context = {delay = r.delay, threads = res.threads, size = res.size, order = res.order}
    print(cjson.encode(results.metric{name = string.format("ns per load, delay %d", r.delay), unit = "ns",
      value = r.ns, stat = "best", better = "lower", samples = r.samples, context = context,
      median_ns = r.median_ns, max_ns = r.max_ns, chaser_ran = r.chaser_ran, idle_ns = idle.ns,
      idle_median_ns = idle.median_ns, idle_max_ns = idle.max_ns,
      flags = #flags > 0 and flags or nil, cause = #flags > 0 and table.concat(causes, " / ") or nil, note = note}))
    print(cjson.encode(results.metric{name = string.format("loaders MB/s, delay %d", r.delay), unit = "MB/s",
      value = r.mbps, stat = "over all samples", better = "higher", samples = r.mbps_samples, context = context,
      min_mbps = r.min_mbps, max_mbps = r.max_mbps, loaders_ran = r.loaders_ran, timed_s = r.timed_s}))
  end
end

-- The table: its head, a line per row, then the flags grouped by their
-- cause, each cause once after its flags.
local function print_table(opts, res, note)
  local size, idle = numbers.size, res.idle
  print(string.format("# loaded latency (MLC --loaded_latency): %s %s chain, %d loader thread%s reading %s each; "
    .. "%d samples per row", size(res.size), res.order, res.threads, res.threads == 1 and "" or "s",
    size(opts.bw_size), opts.samples))
  print(string.format("# idle latency %.1f ns (best; median %.1f, worst %.1f of %d samples, half before and "
    .. "half after the loaded rows)", idle.ns, idle.median_ns, idle.max_ns, #idle.samples))
  if note then print("# note: " .. note) end
  print("# MB/s: the loaders' over all samples, then the least and most of one sample; ns per load: the best,"
    .. " median and worst sample; ran: % of the time the chaser and the loaders had their cpus")
  print(string.format("%8s %10s %21s %9s %10s %9s %7s %7s", "delay", "MB/s", "MB/s per sample", "ns",
    "median_ns", "max_ns", "chaser%", "loader%"))
  for _, r in ipairs(res.rows) do
    print(string.format("%8d %10.1f %21s %9.2f %10.2f %9.2f %7.0f %7.0f", r.delay, r.mbps,
      string.format("%.1f-%.1f", r.min_mbps, r.max_mbps), r.ns, r.median_ns, r.max_ns,
      math.min(1, r.chaser_ran) * 100, math.min(1, r.loaders_ran) * 100))
  end
  local order, by = {}, {}
  for _, f in ipairs(res.flags) do
    if not by[f.cause] then by[f.cause] = {}; order[#order + 1] = f.cause end
    table.insert(by[f.cause], f.text)
  end
  for _, c in ipairs(order) do
    for _, t in ipairs(by[c]) do print("# flagged: " .. t) end
    print("# likely cause: " .. c)
  end
end

-- --plot: latency against the loaders' bandwidth, each point labelled with
-- its delay but for those crowded within 4% of the bandwidth axis of the
-- last labelled one (the light loads).
local function draw(opts, res, note, cpus)
  local size, idle = numbers.size, res.idle
  local pts, labels, maxbw, last = {}, {}, 0, nil
  for _, r in ipairs(res.rows) do maxbw = math.max(maxbw, r.mbps) end
  for i, r in ipairs(res.rows) do
    pts[i] = {r.mbps, r.median_ns, r.ns, r.max_ns}
    if not last or math.abs(r.mbps - last) > 0.04 * maxbw or i == #res.rows then
      labels[i], last = "d=" .. r.delay, r.mbps
    else
      labels[i] = false
    end
  end
  return plot.lines(opts.plot, {
    title = string.format("loaded latency: %s %s chain, %d loader%s%s", size(res.size), res.order, res.threads,
      res.threads == 1 and "" or "s", note and (" (" .. (res.threads < cpus and "few loading cores" or
      "loaders share cpus") .. ")") or ""),
    xlabel = "bandwidth of the loaders (MB/s)", ylabel = "ns per dependent load", from0 = true,
    key = "bottom right",
    hline = {y = idle.median_ns, title = string.format("idle %.1f ns (median)", idle.median_ns)},
    series = {{title = "ns per load, median sample; bars: best to worst; labels: injection delay",
      points = pts, labels = labels}}})
end

return {
  description = "loaded latency (MLC --loaded_latency): ns per load against the MB/s the other cores read",
  help = [[
  pmcsh loaded                                 256 MiB chain, MLC-like delays, one loader per other cpu
  pmcsh loaded --delays 0,100,1000 --plot l.png
The chaser runs on the calling thread; every other cpu runs a bandwidth
thread reading one 64-byte line, then spinning `delay` empty iterations (about
a cycle each).  Each row: the delay, the MB/s (1e6 bytes) the loaders read
while the latency was timed (in all, and the least and most of one
sample), ns per dependent load (the best, median and worst sample), and
how much of the time the chaser and the loaders had their cpus.  The idle
latency is measured before and after the rows.  Where the curve is not
what physics says (a row below idle, or latency rising as the load
lightens, beyond the samples' spread), the rows are flagged with the
likely cause: a busy machine (the threads lost their cpus), or too few
loaders.  With few cpus there are few loaders: the curve is then one
core's bandwidth, not the memory's, and the output says so.]],
  options = chase.recipe_options({
    {name = "size", type = "size", default = 256 * 1024 * 1024, min = 1, help = "chain size (bytes), beyond the caches"},
    {name = "bw_size", type = "size", default = 256 * 1024 * 1024, min = 4096, help = "each loader's buffer (bytes)"},
    {name = "delays", type = "list", items = {type = "int", min = 0, max = chase.MAX_DELAY},
     help = "injection delays (empty-loop iterations after each line, 0.." .. chase.MAX_DELAY
       .. "), most load first (default: chase.loaded's 0 .. 20000)"},
    {name = "threads", type = "int", min = 1, max = 1024, help = "loaders (default: every other cpu)"},
  }, {samples = 5, sample_ms = 20, per = "delay", stride = false, pages_help = "the chain's page policy"}, {
    {name = "json", type = "flag", help = "JSON lines: the fingerprint, per delay a metric record of ns per load and one of the loaders' MB/s"},
    {name = "plot", type = "plot", help = "draw latency against bandwidth to FILE.png or FILE.svg (gnuplot)"},
  }),
  run = function(opts)
    local cpus = #machine.online()
    local fits, why = chase.check{size = opts.size, order = opts.order, pages = opts.pages}
    if not fits then error(recipe.usage(string.format("loaded: --size %s: %s", numbers.size(opts.size), why)), 0) end
    local res, err = chase.loaded{size = opts.size, bw_size = opts.bw_size, delays = opts.delays,
      threads = opts.threads, order = opts.order, pages = opts.pages, samples = opts.samples,
      sample_ms = opts.sample_ms}
    if not res then
      return nil, err
    end
    local note = load_note(res, cpus)
    if opts.json then print_json(res, note) else print_table(opts, res, note) end
    if opts.plot then
      local ok, perr = draw(opts, res, note, cpus)
      if not ok then return nil, perr end
    end
    return 0
  end,
}
