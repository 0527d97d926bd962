-- pmcsh list's plain output: each PMU heading counts the rows under it, and
-- descriptions are whole when the output is not a terminal (as perf list).
local h = require("helpers")

describe("pmcsh list", function()
  it("counts the events under each PMU heading", function()
    local r = h.run({"list"})
    assert.are.equal(0, r.code, r.err)
    local pmu, want, got, seen = nil, 0, 0, 0
    for l in r.out:gmatch("[^\n]+") do
      local name, n = l:match("^(%S+): (%d+) events?$")
      if name then
        if pmu then assert.are.equal(want, got, pmu) end
        pmu, want, got, seen = name, tonumber(n), 0, seen + 1
      else
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
    if not plot.gnuplot() then pending("gnuplot is not installed") return end
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
    if not plot.gnuplot() then pending("gnuplot is not installed") return end
    local rows, cells = {}, {}
    for i = 1, 30 do
      rows[i] = {key = "e" .. i}
      cells["e" .. i] = {copy = {value = i % 5 == 0 and 0 or i, spread = 0.1}}
    end
    local st = {header = {kernels = {"copy"}, rows = rows}, cells = cells, runs = {}, baseline = {}, unopened = {}}
    local file = dir .. "/big.png"
    assert(plot.survey(st, file))
    drawn(file, plot.WIDTH, plot.HEIGHT + (24 - 20) * plot.ROW_PX)      -- 6 of 30 rows are zero
    local none = {header = {kernels = {"copy"}, rows = {{key = "z"}}}, cells = {z = {copy = {value = 0}}}}
    local ok, err = plot.survey(none, dir .. "/none.png")
    assert.is_nil(ok)
    assert.matches("every counted row is zero", err)
  end)
end)
