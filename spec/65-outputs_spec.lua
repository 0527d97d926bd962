-- pmcsh list's plain output: each PMU heading counts the rows under it, and
-- descriptions are whole when the output is not a terminal (as perf list);
-- aliases share one row, named as perf names them.
local h = require("helpers")

local function rows(out)
  local t = {}
  for _, l in ipairs(h.lines(out)) do
    local mark, name, desc = l:match("^  ([+-]) (.-)%s%s+(.*)$")
    if mark then t[#t + 1] = {mark = mark, name = name, description = desc} end
  end
  return t
end

describe("pmcsh list", function()
  it("counts the events under each PMU heading, and in all", function()
    local r = h.run({"list"})
    assert.are.equal(0, r.code, r.err)
    local pmu, want, got, seen, total, pmus = nil, 0, 0, 0, 0, 0
    for _, l in ipairs(h.lines(r.out)) do
      local name, n = l:match("^(%S+): (%d+) events?, %d+ opens? here$")
      local all, np = l:match("^(%d+) events in (%d+) PMUs")
      if name then
        if pmu then assert.are.equal(want, got, pmu) end
        pmu, want, got, seen = name, tonumber(n), 0, seen + 1
        total = total + want
      elseif all then
        assert.are.equal(total, tonumber(all))
        assert.are.equal(seen, tonumber(np))
      elseif l:match("^  [+-] ") then
        got = got + 1
      end
    end
    assert.are.equal(want, got, pmu)
    assert.is_true(seen >= 1)
  end)

  it("prints descriptions in full into a pipe (no '...' cut)", function()
    local r = h.run({"list"})
    assert.is_nil(r.out:match("%.%.%.\n"))
  end)

  it("collapses aliases into one row: no upper-case perf:: rows, no enum names for descriptions", function()
    local r = h.run({"list"})
    local by = {}
    for _, e in ipairs(rows(r.out)) do
      assert.is_nil(e.name:match("^perf::"), e.name)
      assert.is_nil(e.description:match("^PERF_COUNT_"), e.name)
      for a in (e.name .. " OR "):gmatch("(.-) OR ") do
        assert.is_nil(by[a], "twice: " .. a)
        by[a] = e
      end
    end
    -- libpfm4 lists perf::CYCLES, perf::CPU-CYCLES and perf::PERF_COUNT_HW_CPU_CYCLES: one row
    assert.are.equal("cpu-cycles OR cycles", by["cycles"].name)
    assert.are.equal(by["page-faults"], by["faults"])
    assert.are.equal("+", by["task-clock"].mark)
    -- a libpfm4 name still finds its row
    local one = rows(h.run({"list", "perf::PAGE-FAULTS"}).out)
    assert.are.equal(1, #one)
    assert.are.equal("page-faults OR faults", one[1].name)
  end)

  it("shows umasks with -v, and the groups of events/ with --groups", function()
    local r = h.run({"list", "--pmu", "skl", "-v", "L1D"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("skl::L1D%s", r.out)
    assert.matches("\n      :REPLACEMENT%s+%S", r.out)
    r = h.run({"list", "--groups"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("\nmemory%-skl%s+skl%s+6%s+4", r.out)
    assert.matches("\npairs%-zen%s", r.out)
    assert.is_nil(r.out:match("\ngeneric%s"))   -- descriptions, not a group
    r = h.run({"list", "--group", "software"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("TSC GHz while running", r.out)
    r = h.run({"list", "--group", "no-such"})
    assert.are.equal(2, r.code)
    assert.matches("the choices: .*memory%-skl", r.err)
  end)
end)

describe("plots", function()
  local plot = require("pmcsh.plot")
  local dir
  setup(function() dir = h.tmpdir() end)
  teardown(function() os.execute("rm -rf '" .. dir .. "'") end)

  -- a PNG's width and height, from its IHDR chunk (bytes 17..24, big-endian)
  local function png_size(path)
    local f = io.open(path, "rb")
    if not f then return nil end
    local head = f:read(24)
    f:close()
    if not head or #head < 24 or head:sub(2, 4) ~= "PNG" then return nil end
    return string.unpack(">I4I4", head, 17)
  end
  local function drawn(path, w, hgt)
    local f = assert(io.open(path, "rb"), path .. " was not made")
    local size = f:seek("end")
    f:close()
    assert.is_true(size > 1000, path .. " is nearly empty")
    local pw, ph = png_size(path)
    assert.are.equal(w, pw)
    assert.are.equal(hgt, ph)
  end

  it("checks --plot names before measuring (exit 2, nothing printed)", function()
    for _, c in ipairs({
      {"survey", "-e", "task-clock", "-k", "copy", "--n", "64K", "--plot", dir .. "/s.pdf"},
      {"latency", "--plot", dir .. "/l.jpg"},
      {"parallelism", "--plot", "/nonexistent/p.png"},
    }) do
      local r = h.run(c)
      assert.are.equal(2, r.code, r.err)
      assert.are.equal("", r.out)
      assert.matches("cannot plot to", r.err)
    end
  end)

  it("draws the survey as a heat map, the latency and parallelism curves, each 1000x640", function()
    if not h.need(plot.gnuplot(), "gnuplot is not installed") then return end
    local s = dir .. "/s.png"
    local r = h.run({"survey", "-e", "task-clock,page-faults,msr/tsc/", "-k", "copy,triad", "--n", "64K",
                     "--reps", "2", "--plot", s})
    assert.are.equal(0, r.code, r.err)
    drawn(s, plot.WIDTH, plot.HEIGHT)
    local l = dir .. "/l.png"
    r = h.run({"latency", "--to", "64K", "--samples", "1", "--sample_ms", "2", "--plot", l})
    assert.are.equal(0, r.code, r.err)
    drawn(l, plot.WIDTH, plot.HEIGHT)
    local p = dir .. "/p.png"
    r = h.run({"parallelism", "--sizes", "64K,256K", "--max", "2", "--samples", "1", "--sample_ms", "2", "--plot", p})
    assert.are.equal(0, r.code, r.err)
    drawn(p, plot.WIDTH, plot.HEIGHT)
  end)

  it("leaves all-zero rows out of the heat map and grows it past 20 rows", function()
    if not h.need(plot.gnuplot(), "gnuplot is not installed") then return end
    local rows, cells = {}, {}
    for i = 1, 30 do
      rows[i] = {key = "e" .. i}
      cells["e" .. i] = {copy = {value = i % 5 == 0 and 0 or i, spread = 0.1}}
    end
    local st = {header = {kernels = {"copy"}, rows = rows}, cells = cells, runs = {}, baseline = {}, unopened = {}}
    local file = dir .. "/big.png"
    assert(require("pmcsh.survey").plot(st, file))
    drawn(file, plot.WIDTH, plot.HEIGHT + (24 - 20) * plot.ROW_PX)      -- 6 of 30 rows are zero
    local none = {header = {kernels = {"copy"}, rows = {{key = "z"}}}, cells = {z = {copy = {value = 0}}}}
    local ok, err = require("pmcsh.survey").plot(none, dir .. "/none.png")
    assert.is_nil(ok)
    assert.matches("every counted row is zero", err)
  end)
end)
