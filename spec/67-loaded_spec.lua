-- pmcsh loaded (MLC --loaded_latency): a row per delay with MB/s and ns and
-- their spread, JSON with the same, a plot of latency against bandwidth,
-- and a curve that breaks physics flagged with its likely cause.  Small
-- chains and short samples: the shape of the output, and the bandwidth per
-- second the loaders ran, which no scheduling can move.
local h = require("helpers")
local chase = require("pmcsh.chase")

local SMALL = {"--size", "4M", "--bw_size", "4M", "--delays", "0,20000", "--samples", "4", "--sample_ms", "10"}
local function with(extra)
  local a = {"loaded"}
  for _, x in ipairs(SMALL) do a[#a + 1] = x end
  for _, x in ipairs(extra or {}) do a[#a + 1] = x end
  return a
end

describe("pmcsh loaded", function()
  it("prints delay, MB/s and ns per delay with their spread, the idle latency, and a note when loading cores are few",
    function()
    local r = h.run(with())
    assert.are.equal(0, r.code, r.err)
    assert.matches("# idle latency [%d.]+ ns %(best; median [%d.]+, worst [%d.]+ of 8 samples", r.out)
    local rows = {}
    for d, mb, lo, hi, ns, med, worst in r.out:gmatch(
        "\n%s+(%d+)%s+([%d.]+)%s+([%d.]+)%-([%d.]+)%s+([%d.]+)%s+([%d.]+)%s+([%d.]+)%s+%d+%s+%d+") do
      rows[#rows + 1] = {tonumber(d), tonumber(mb), tonumber(lo), tonumber(hi), tonumber(ns), tonumber(med),
        tonumber(worst)}
    end
    assert.are.equal(2, #rows)
    assert.are.same({0, 20000}, {rows[1][1], rows[2][1]})
    for _, x in ipairs(rows) do
      assert.is_true(x[3] <= x[4] and x[5] <= x[6] and x[6] <= x[7], "ranges in order")
      assert.is_true(x[5] > 0)
    end
    local cpus = #require("pmcsh.machine").online()
    if cpus <= 4 then assert.matches("# note: ", r.out) end
  end)

  it("--json gives the same rows as metric records; the loaders read what the injection delay allows", function()
    local r = h.run(with{"--json"})
    assert.are.equal(0, r.code, r.err)
    -- per delay the chaser's ns per load and the loaders' MB/s, the row's fields beside them
    local rows, by = {}, {}
    for _, o in ipairs(select(2, h.json_lines(r.out))) do
      assert.are.equal("metric", o.type)
      local d = o.context.delay
      if not by[d] then by[d] = {delay = d, threads = o.context.threads, size = o.context.size}; rows[#rows + 1] = by[d] end
      local row = by[d]
      for k, v in pairs(o) do if row[k] == nil and k ~= "value" and k ~= "samples" then row[k] = v end end
      if o.unit == "ns" then
        assert.are.equal(string.format("ns per load, delay %d", d), o.name)
        row.ns, row.samples = o.value, o.samples
      else
        assert.are.same({string.format("loaders MB/s, delay %d", d), "MB/s"}, {o.name, o.unit})
        row.mbps, row.mbps_samples = o.value, o.samples
      end
    end
    assert.are.equal(2, #rows)
    for _, o in ipairs(rows) do
      for _, k in ipairs{"delay", "mbps", "min_mbps", "max_mbps", "ns", "median_ns", "max_ns", "idle_ns",
          "idle_max_ns", "chaser_ran", "loaders_ran", "timed_s", "threads", "size"} do
        assert.is_number(o[k], k)
      end
      assert.are.equal(4, #o.samples); assert.are.equal(4, #o.mbps_samples)
    end
    -- A sample's bytes are within 4 KiB per loader of the truth (published
    -- every 4 KiB).  At delay 20000 each line costs 20000 iterations of the
    -- delay loop, each at least a cycle (its counter's dependency),
    -- measured here (half of it, for a clock that moved): in the window's
    -- seconds, a loader on a cpu all of them, at most that many lines.
    local function bytes_of(o) return o.mbps * 1e6 * o.timed_s, #o.mbps_samples * 4096 * o.threads end
    local cycle = h.cycle_ns() * 1e-9
    local bytes, slack = bytes_of(rows[2])
    local most = rows[2].timed_s * rows[2].threads
    assert.is_true(bytes <= most / (20000 * cycle / 2) * 64 + slack,
      string.format("delay 20000: %.0f bytes in %.4f s, %d loaders, a cycle %.3g ns", bytes, rows[2].timed_s,
        rows[2].threads, cycle * 1e9))
    -- and the rows' flags are chase.loaded_flags of the rows printed
    local f = chase.loaded_flags{threads = rows[1].threads, idle = {ns = rows[1].idle_ns, max_ns = rows[1].idle_max_ns},
      rows = rows}
    local want, got = {}, {}
    for _, x in ipairs(f.flags) do want[x.text] = true end
    for _, o in ipairs(rows) do
      for _, t in ipairs(o.flags or {}) do if not t:match("^idle latency moved") then got[t] = true end end
      assert.are.equal(o.flags ~= nil, o.cause ~= nil)
    end
    assert.are.same(want, got)
    -- At delay 0 a line, one independent load, takes no longer than the
    -- run's own dependent load under that load (twice its worst sample).
    -- The loaders' cpu clocks are read outside the bytes' window, and only
    -- while the chaser was off its cpu can the gap between the reads be
    -- long: of the loaders' share of the window, at least loaders_ran +
    -- chaser_ran - 1 lies inside it.
    local o = rows[1]
    bytes, slack = bytes_of(o)
    local cpu = math.max(0, o.loaders_ran + o.chaser_ran - 1) * o.timed_s * o.threads
    assert.is_true(bytes >= cpu / (2 * o.max_ns * 1e-9) * 64 - slack,
      string.format("delay 0: %.0f bytes in %.4f s of loader cpu inside the window (loaders ran %.2f, the chaser " ..
        "%.2f), a load under it %.1f ns at worst", bytes, cpu, o.loaders_ran, o.chaser_ran, o.max_ns))
  end)

  it("draws latency against bandwidth to a PNG of the stated size, refuses other names first", function()
    if not h.need(require("pmcsh.plot").gnuplot(), "gnuplot is not installed") then return end
    local f = h.tmpdir() .. "/loaded.png"
    local r = h.run(with{"--plot", f})
    assert.are.equal(0, r.code, r.err)
    local png = h.slurp(f)
    assert.are.equal("\137PNG", png:sub(1, 4))
    local w, ht = string.unpack(">I4I4", png, 17)   -- IHDR: width, height
    assert.are.same({1000, 640}, {w, ht})
    assert.are.equal(2, h.run(with{"--plot", "x.pdf"}).code)
    assert.are.equal(2, h.run({"loaded", "--delays", "0,-5"}).code)
  end)
end)

describe("chase.loaded_flags", function()
  local function row(delay, lo, hi, ran)
    return {delay = delay, ns = lo, max_ns = hi, min_mbps = 10000 / (delay + 1), max_mbps = 12000 / (delay + 1),
      chaser_ran = ran or 1, loaders_ran = 1}
  end

  it("flags a row below idle and latency rising as the load lightens, beyond the spread, with the cause", function()
    -- the runs of the issue: idle 284 ns above every loaded row; 602 ns at
    -- delay 20000 against 283 at delay 0, the chaser off its cpu meanwhile
    local f = chase.loaded_flags{threads = 1, idle = {ns = 284, max_ns = 290, chaser_ran = 1},
      rows = {row(0, 275, 283), row(1000, 168, 180), row(20000, 602, 640, 0.55)}}
    local kinds = {}
    for _, x in ipairs(f.flags) do kinds[#kinds + 1] = x.kind .. "@" .. x.delay end
    assert.are.same({"below_idle@0", "below_idle@1000", "latency_rises@20000"}, kinds)
    assert.matches("delay 20000 reads 602.0%-640.0 ns, above delay 0's 275.0%-283.0 ns under more load", f.flags[3].text)
    -- each flag's cause from the rows it compares: only the last ran without its cpu
    assert.matches("a busy machine: the chaser ran 55%% of its timed time %(delay 20000%)", f.flags[3].cause)
    assert.is_nil(f.flags[1].cause:find("busy", 1, true))
    for _, x in ipairs(f.flags) do assert.matches("too few loaders: 1 loading core adds too little traffic", x.cause) end
    assert.are.equal(f.flags[1].cause .. " / " .. f.flags[3].cause, f.cause)
    -- overlapping spreads are noise, not a flag; enough loaders on idle cpus: no cause to give
    f = chase.loaded_flags{threads = 8, idle = {ns = 150, max_ns = 170, chaser_ran = 1},
      rows = {row(0, 300, 340), row(100, 200, 305), row(20000, 160, 210)}}
    assert.are.same({}, f.flags)
    assert.is_nil(f.cause)
    -- loaders that read more with a longer delay; neither busy nor few: the cause says so
    local b = row(1000, 200, 210)
    b.min_mbps, b.max_mbps = 5000, 6000
    f = chase.loaded_flags{threads = 8, idle = {ns = 150, max_ns = 170, chaser_ran = 1},
      rows = {row(0, 300, 340), row(100, 250, 260), b}}
    assert.are.equal("bandwidth_rises", f.flags[1].kind)
    assert.matches("none seen here", f.cause)
    -- the idle latency before and after apart
    f = chase.loaded_flags{threads = 8, rows = {row(0, 300, 340)}, idle = {ns = 150, max_ns = 260, chaser_ran = 1,
      before = {ns = 150, max_ns = 160}, after = {ns = 240, max_ns = 260}}}
    assert.are.equal("idle_moved", f.flags[1].kind)
  end)

  it("prints each row with its spread: MB/s per sample, ns best, median and worst", function()
    local r = setmetatable({threads = 1, order = "random", size = 1 << 20, stride = 64, pages = "4k", idle_ns = 100,
      idle = {ns = 100, median_ns = 101, max_ns = 104},
      rows = {{delay = 0, mbps = 9000, min_mbps = 8800, max_mbps = 9100, ns = 180, median_ns = 190.5, max_ns = 230}}},
      require("pmcsh.format").kind("pmcsh.chase_loaded"))
    assert.are.equal("loaded latency, 1 loader thread: idle 100.0 101.0 104.0 ns per load (best median worst); random "
      .. "order, 1M, stride 64, 4k pages\n  delay  mbps    mbps_range     ns_best_median_worst\n"
      .. "      0  9000.0  8800.0-9100.0  180.0 190.5 230.0", tostring(r))
  end)
end)
