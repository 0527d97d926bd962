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

  -- A survey of cells of every standing: firm (linear, exact, zero),
  -- noisy, too few pairs, every pair dropped, and values below one count
  -- over the pair's difference (2e-6 per iteration at n = 1M).
  local function standing_survey()
    local function c(v, spread, class, kept, extra)
      local t = {value = v, trimmed = v, mean = v, median = v, min = v - math.abs(v) * spread / 2,
        max = v + math.abs(v) * spread / 2, spread = spread, class = class, kept = kept, dropped = 5 - kept,
        method = "two-window", resolution = 2e-6}
      for k, x in pairs(extra or {}) do t[k] = x end
      return t
    end
    local dropped = {kept = 0, dropped = 5, disturbed = true, method = "two-window", unit = "ns"}
    return {header = {kernels = {"copy", "scale", "add", "triad"}, n = 1048576, reps = 10, threads = 1, pages = "4k",
      rows = {{key = "task-clock"}, {key = "context-switches:k"}, {key = "page-faults:k"}, {key = "signed"},
        {key = "straddle"}, {key = "idle"}}},
      baseline = {}, runs = {}, unopened = {}, done = true, cells = {
        ["task-clock"] = {copy = c(0.89, 0.01, "linear", 5, {unit = "ns"}), scale = c(0.6, 0.3, "noisy", 5, {unit = "ns"}),
          add = c(1.2, 0.02, nil, 2, {unit = "ns"}), triad = dropped},
        -- the issue's cell: a stray context switch per few million iterations, +-91%
        ["context-switches:k"] = {copy = c(2.782e-7, 0.91, "noisy", 5), scale = c(0, 0, "zero", 5),
          add = c(0, 0, "zero", 5), triad = c(0, 0, "zero", 5)},
        ["page-faults:k"] = {copy = c(4e-7, 0, "exact", 5, {min = 0, max = 1.9e-6, spread = 4.75}),
          scale = c(0, 0, "zero", 5), add = c(0, 0, "zero", 5), triad = c(0, 0, "zero", 5)},
        signed = {copy = c(-0.5, 0.01, "linear", 5), scale = c(0.25, 0, "exact", 5), add = c(1, 0, "exact", 5),
          triad = c(-1, 0.02, "linear", 5)},
        -- pairs either side of 0: a relative spread past 999% means nothing
        straddle = {copy = c(1e-3, 0, "noisy", 5, {min = -0.01, max = 0.012, spread = 22}), scale = c(0, 0, "zero", 5),
          add = c(0, 0, "zero", 5), triad = c(0, 0, "zero", 5)},
        idle = {copy = c(0, 0, "zero", 1), scale = c(0, 0, "zero", 5), add = c(0, 0, "zero", 5), triad = c(0, 0, "zero", 5)},
      }}
  end
  -- the heat map's cells from its script: {name = {kernel = {colour, value, spread, look}}}, and each row's
  -- right-hand tic (its class and scale)
  local function heat(st, o)
    local heatmap = require("pmcsh.survey.heatmap")
    local script = assert(heatmap.script(st, o))
    local names, tics = {}, {}
    for name, y in script:match("set ytics %((.-)%) scale"):gmatch("'(.-)' (%d+)") do
      names[tonumber(y)] = name:gsub(" %(%a+%)$", "")   -- the row's key, less its unit
    end
    for tic, y in script:match("set y2tics %((.-)%) scale"):gmatch("'(.-)' (%d+)") do tics[names[tonumber(y)]] = tic end
    local cells = {}
    for x, y, colour, v, sp, look in script:gmatch("\n(%d+) (%d+) (%S+) \"(.-)\" \"(.-)\" (%d)") do
      local name = names[tonumber(y)]
      cells[name] = cells[name] or {}
      cells[name][st.header.kernels[tonumber(x) + 1]] = {colour = tonumber(colour), value = v, spread = sp,
        look = ({"firm", "faint", "none"})[tonumber(look) + 1]}
    end
    return cells, tics, script
  end

  it("colours the heat map by what a cell means, as the table says it, cell by cell", function()
    local survey = require("pmcsh.survey")
    local st = standing_survey()
    for _, all in ipairs({false, true}) do
      local cells, tics, script = heat(st, {all = all})
      local table_text = survey.report(st, {all = all})
      -- the rows the table shows, the chart shows; zero rows only with --all, in both
      local rows = 0
      for _ in pairs(cells) do rows = rows + 1 end
      assert.are.equal(all and 6 or 5, rows)
      assert.are.equal(all, cells.idle ~= nil)
      assert.are.equal(all, table_text:match("\nidle ") ~= nil)
      for name, byk in pairs(cells) do
        -- the row's class, as the table's last column says it
        local line = table_text:match("\n(" .. name:gsub("%p", "%%%0") .. "[^\n]*)")
        local class = line:match("(%S+)$")
        assert.are.equal(class, tics[name]:match("^(%S+)"), name)
        for k, hc in pairs(byk) do
          local c = st.cells[name][k]
          -- the label is the table's text; the colour's sign is the value's
          assert.truthy(line:find(hc.value, 1, true), name .. " " .. k .. ": " .. hc.value)
          if hc.spread ~= "" then assert.truthy(line:find(hc.spread, 1, true), name .. " " .. k .. ": " .. hc.spread) end
          if c.value and hc.colour and hc.colour ~= 0 then
            assert.are.equal(c.value > 0, hc.colour > 0, name .. " " .. k)
          end
          -- firm: a class that vouches for the value; faint: noisy or unclassed; none: no value
          local want = (c.disturbed and "none") or ((c.class == "noisy" or c.kept < 3 and c.class ~= "zero") and "faint")
            or "firm"
          assert.are.equal(want, hc.look, name .. " " .. k)
        end
      end
      -- the issue's cell: not as hot as task-clock's 0.89, nor is a value under one count
      assert.are.equal(1, cells["task-clock"].copy.colour)
      for _, name in ipairs({"context-switches:k", "page-faults:k"}) do
        assert.are.equal(0, cells[name].copy.colour, name)
      end
      -- every cell of value <= 1e-6 is far from the hottest colour
      for name, byk in pairs(cells) do
        for k, hc in pairs(byk) do
          local v = st.cells[name][k].value
          if v and math.abs(v) <= 1e-6 then assert.is_true(math.abs(hc.colour) < 0.5, name .. " " .. k) end
        end
      end
      -- no value: dropped, hatched; undefined spreads: --; one zero notation per row
      assert.are.same({"dropped", "", "none"}, {cells["task-clock"].triad.value, cells["task-clock"].triad.spread,
        cells["task-clock"].triad.look})
      assert.are.equal("--", cells.straddle.copy.spread)
      assert.are.equal("±475%", cells["page-faults:k"].copy.spread)
      assert.are.equal("±2.0%?", cells["task-clock"].add.spread)
      assert.are.same({"2.78e-07", "0", "0", "0"}, {cells["context-switches:k"].copy.value,
        cells["context-switches:k"].scale.value, cells["context-switches:k"].add.value, cells["context-switches:k"].triad.value})
      assert.is_nil(script:find("inf", 1, true))
      assert.is_nil(script:find("999", 1, true))
      -- the legend: the table's words, each line inside 1000 pixels (about 150 characters at 9 points)
      assert.truthy(script:find("over the pairs kept", 1, true))
      assert.is_nil(script:find("repetitions", 1, true))
      for l in script:gmatch("set label '(.-)' at screen 0.5") do assert.is_true(#l <= 140, l) end
    end
    if not h.need(plot.gnuplot(), "gnuplot is not installed") then return end
    local file = dir .. "/standing.png"
    assert(survey.plot(st, file, {all = true}))
    drawn(file, plot.WIDTH, plot.HEIGHT)
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
