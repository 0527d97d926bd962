-- pmcsh loaded (MLC --loaded_latency): a row per delay with MB/s and ns,
-- JSON with the same, and a plot of latency against bandwidth.  Small
-- chains and short samples: the shape of the output, not the machine.
local h = require("helpers")

local SMALL = {"--size", "4M", "--bw_size", "4M", "--delays", "0,1000", "--samples", "2", "--sample_ms", "5"}
local function with(extra)
  local a = {"loaded"}
  for _, x in ipairs(SMALL) do a[#a + 1] = x end
  for _, x in ipairs(extra or {}) do a[#a + 1] = x end
  return a
end

describe("pmcsh loaded", function()
  it("prints delay, MB/s and ns per delay, the idle latency, and a note when loading cores are few", function()
    local r = h.run(with())
    assert.are.equal(0, r.code, r.err)
    assert.matches("# idle latency [%d.]+ ns", r.out)
    local rows = {}
    for d, mb, ns in r.out:gmatch("\n%s+(%d+)%s+([%d.]+)%s+([%d.]+)%s+[%d.]+") do
      rows[#rows + 1] = {tonumber(d), tonumber(mb), tonumber(ns)}
    end
    assert.are.equal(2, #rows)
    assert.are.same({0, 1000}, {rows[1][1], rows[2][1]})
    -- a row whose loaders got no cpu while it was timed reads 0 MB/s, and says so
    for _, x in ipairs(rows) do
      assert.is_true(x[3] > 0 and x[2] >= 0)
      if x[2] == 0 then assert.matches("read nothing while delay", r.out) end
    end
    -- where both loaded: no delay reads at least as fast as a 1000-iteration
    -- delay after each line (about 10x here when the loaders run)
    if rows[1][2] > 0 and rows[2][2] > 0 then assert.is_true(rows[1][2] > rows[2][2]) end
    local cpus = #require("pmcsh.machine").online()
    if cpus <= 4 then assert.matches("# note: ", r.out) end
  end)

  it("--json gives the same rows with their keys", function()
    local r = h.run(with{"--json"})
    assert.are.equal(0, r.code, r.err)
    local n = 0
    for _, o in ipairs(select(2, h.json_lines(r.out))) do
      n = n + 1
      for _, k in ipairs{"delay", "mbps", "ns", "median_ns", "idle_ns", "threads", "size"} do
        assert.is_number(o[k], k)
      end
    end
    assert.are.equal(2, n)
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
