-- pmcsh loaded: latency under load (Intel MLC's --loaded_latency) over
-- chase.loaded: one thread chases a chain while bandwidth threads on the
-- other cpus read their own buffers with a decreasing injection delay.
local recipe, chase = require("pmcsh.recipe"), require("pmcsh.chase")

return {
  description = "loaded latency (MLC --loaded_latency): ns per load against the MB/s the other cores read",
  help = [[
  pmcsh loaded                                 256 MiB chain, MLC-like delays, one loader per other cpu
  pmcsh loaded --delays 0,100,1000 --plot l.png
The chaser runs on the calling thread; every other cpu runs a bandwidth
thread reading one 64-byte line, then spinning `delay` empty iterations (about
a cycle each).  Each row: the delay, the MB/s (1e6 bytes) the loaders read
while the latency was timed, and ns per dependent load (best and median).
With few cpus there are few loaders: the curve is then one core's bandwidth,
not the memory's, and the output says so.]],
  options = recipe.chase_options({
    {name = "size", type = "size", default = 256 * 1024 * 1024, min = 1, help = "chain size (bytes), beyond the caches"},
    {name = "bw_size", type = "size", default = 256 * 1024 * 1024, min = 4096, help = "each loader's buffer (bytes)"},
    {name = "delays", type = "list", items = {type = "int", min = 0, max = chase.MAX_DELAY},
     help = "injection delays (empty-loop iterations after each line, 0.." .. chase.MAX_DELAY
       .. "), most load first (default: chase.loaded's 0 .. 20000)"},
    {name = "threads", type = "int", min = 1, max = 1024, help = "loaders (default: every other cpu)"},
  }, {samples = 5, sample_ms = 20, per = "delay", stride = false, pages_help = "the chain's page policy"}, {
    {name = "json", type = "flag", help = "one JSON object per delay"},
    {name = "plot", type = "plot", help = "draw latency against bandwidth to FILE.png or FILE.svg (gnuplot)"},
  }),
  run = function(opts)
    local delays = opts.delays   -- integers, bounded by the option's declaration
    local cpus = #require("pmcsh.machine").online()
    local res, err = chase.loaded{size = opts.size, bw_size = opts.bw_size, delays = delays, threads = opts.threads,
      order = opts.order, pages = opts.pages, samples = opts.samples, sample_ms = opts.sample_ms}
    if not res then
      return nil, err
    end
    local size = require("pmcsh.metrics").size
    -- what the load means on this machine: MLC loads from every other core
    local note
    if res.threads >= cpus then
      note = string.format("%d loader%s on %d cpu%s: the loaders share cpus with the chaser, so latency includes "
        .. "their time slices", res.threads, res.threads == 1 and "" or "s", cpus, cpus == 1 and "" or "s")
    elseif res.threads < 4 then
      note = string.format("only %d loading core%s (%d cpus here): the load is %s bandwidth, well below what "
        .. "the memory can give; MLC's curve needs many loading cores", res.threads, res.threads == 1 and "" or "s",
        cpus, res.threads == 1 and "one core's" or "a few cores'")
    end
    if res.note then note = note and (note .. "; " .. res.note) or res.note end
    if opts.json then
      local cjson = require("cjson")
      print(require("pmcsh.results").head("loaded"))
      for _, r in ipairs(res.rows) do
        print(cjson.encode({delay = r.delay, mbps = r.mbps, ns = r.ns, median_ns = r.median_ns, idle_ns = res.idle_ns,
          threads = res.threads, size = res.size, order = res.order, note = note}))
      end
    else
      print(string.format("# loaded latency (MLC --loaded_latency): %s %s chain, %d loader thread%s reading %s each; "
        .. "best and median of %d samples", size(res.size), res.order, res.threads, res.threads == 1 and "" or "s",
        size(opts.bw_size), opts.samples))
      print(string.format("# idle latency %.1f ns", res.idle_ns))
      if note then print("# note: " .. note) end
      print(string.format("%8s %10s %9s %10s", "delay", "MB/s", "ns", "median_ns"))
      for _, r in ipairs(res.rows) do
        print(string.format("%8d %10.1f %9.2f %10.2f", r.delay, r.mbps, r.ns, r.median_ns))
      end
    end
    if opts.plot then
      -- each point labelled with its delay, but for those crowded within 4%
      -- of the bandwidth axis of the last labelled one (the light loads)
      local pts, labels, maxbw, last = {}, {}, 0, nil
      for _, r in ipairs(res.rows) do maxbw = math.max(maxbw, r.mbps) end
      for i, r in ipairs(res.rows) do
        pts[i] = {r.mbps, r.ns}
        if not last or math.abs(r.mbps - last) > 0.04 * maxbw or i == #res.rows then
          labels[i], last = "d=" .. r.delay, r.mbps
        else
          labels[i] = false
        end
      end
      local ok, perr = require("pmcsh.plot").lines(opts.plot, {
        title = string.format("loaded latency: %s %s chain, %d loader%s%s", size(res.size), res.order, res.threads,
          res.threads == 1 and "" or "s", note and (" (" .. (res.threads < cpus and "few loading cores" or
          "loaders share cpus") .. ")") or ""),
        xlabel = "bandwidth of the loaders (MB/s)", ylabel = "ns per dependent load", from0 = true,
        key = "bottom right",
        hline = {y = res.idle_ns, title = string.format("idle %.1f ns", res.idle_ns)},
        series = {{title = "latency under load (labels: injection delay)", points = pts, labels = labels}}})
      if not ok then return nil, perr end
    end
    return 0
  end,
}
