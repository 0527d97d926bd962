-- The latency and parallelism recipes, metrics, and plots, run through the
-- real binary with small sizes and short samples.
local helpers = require("helpers")
local kit = helpers.kernel_it(it)  -- specs that count the kernel
local metrics = require("pmcsh.metrics")
local cjson = require("cjson")

describe("metrics", function()
  local reading = {
    {name = "instructions", value = 3e9}, {name = "cycles", value = 1.5e9}, {name = "page-faults", value = 512},
  }
  for _, e in ipairs(reading) do reading[e.name] = e end

  it("normalizes per iteration, per byte, per second and per another event", function()
    local per = metrics.normalize(reading, "iteration", {iterations = 1e9})
    assert.are.equal(3, per.instructions)
    assert.are.equal(512 / 1e9, per["page-faults"])
    assert.are.equal(1.5, metrics.normalize(reading, "second", {seconds = 1})["cycles"] / 1e9)
    assert.are.equal(2, metrics.normalize(reading, "cycles")["instructions"])
    assert.are.equal(1 / 4096, metrics.normalize(reading, "byte", {bytes = 512 * 4096})["page-faults"])
    local none, err = metrics.normalize(reading, "nosuch")
    assert.is_nil(none); assert.matches("no such event", err)
  end)

  it("evaluates metrics as Lua functions, never passing off a zero division as a number", function()
    local ipc = metrics.common[1]
    assert.are.equal(2, metrics.eval(ipc, reading))
    local v, err = metrics.eval(ipc, {instructions = {value = 1}, cycles = {value = 0}})
    assert.is_nil(v); assert.matches("undefined", err)
    v, err = metrics.eval(ipc, {instructions = {value = 1}})
    assert.is_nil(v); assert.matches("needs event cycles", err)
    assert.is_nil(metrics.ratio(1, 0))
  end)

  it("gives median and spread over repetitions", function()
    local s = metrics.stats({4, 1, 3, 2})
    assert.are.equal(2.5, s.median); assert.are.equal(2.5, s.mean)
    assert.are.equal(1.2, s.spread)           -- (4 - 1) / 2.5
    assert.are.equal(0, metrics.stats({7, 7}).spread)
  end)

  it("loads the events/ groups and their metrics as data", function()
    local events = require("pmcsh.events")
    for _, name in ipairs({"software", "memory-skl", "memory-zen", "uncore-intel", "uncore-amd"}) do
      local t = assert(events.load(name))
      assert.are.equal(name, t.name)
    end
    local sw = assert(events.load("software"))
    local m = sw.metrics[1]
    local r = {["msr/tsc/"] = {value = 2.445e9}, ["task-clock"] = {value = 1e9}}
    assert.are.equal(2.445, metrics.eval(m, r))
  end)
end)

describe("pmcsh latency", function()
  it("steps from the L1 to memory: a 64 MiB chain is far slower than a 16 KiB one", function()
    local r = helpers.run({"latency", "--from", "16K", "--to", "64M", "--per_octave", "1",
                           "--samples", "9", "--sample_ms", "1", "--json"})
    assert.are.equal(0, r.code, r.err)
    local _, rows = helpers.json_lines(r.out)
    assert.are.equal(13, #rows)                      -- 16K .. 64M, one per octave
    assert.are.same({"metric", "ns per load, 16K", "ns", "best"}, {rows[1].type, rows[1].name, rows[1].unit, rows[1].stat})
    assert.are.equal(16384, rows[1].context.size)
    assert.are.equal(64 << 20, rows[13].context.size)
    -- the recipe's 16 KiB row (the best of 9 short samples, some uncut on
    -- a busy machine) in cycles measured here, in another process at
    -- another moment: L1's few (spec/50's bounds), 20 for a clock that moved
    local cycles = rows[1].value / helpers.cycle_ns()
    assert.is_true(cycles >= 1.5 and cycles <= 20, string.format("inside L1: %.1f cycles", cycles))
    assert.is_true(rows[13].value > 5 * rows[1].value, "64 MiB is past the caches")
    assert.are.equal(9, #rows[13].samples)           -- the samples kept, the best of them is the value
    assert.are.equal(rows[13].value, math.min(table.unpack(rows[13].samples)))
  end)

  it("prints each row as it is measured, through a pipe too", function()
    local sys = require("pmcsh._sys")
    local p = io.popen(helpers.shquote(helpers.exe) ..
      " latency --from 4K --to 64M --per-octave 1 --samples 3 --sample-ms 20 2>/dev/null")
    local t0, first = sys.now(), nil
    for line in p:lines() do
      if not first and line:match("^%s+4K%s") then first = sys.now() - t0 end
    end
    p:close()
    local total = sys.now() - t0
    assert.is_number(first)
    assert.is_true(first < total / 2, string.format("first row at %.2f s of %.2f s", first, total))
  end)

  it("prints the steps it observes and says so when the step to memory is well below the LLC", function()
    local chase = require("pmcsh.chase")
    local llc = 0
    for _, c in ipairs(require("pmcsh.machine").caches()) do llc = math.max(llc, c.size or 0) end
    local to = math.max(64 << 20, 2 * llc) // (1 << 20) .. "M"
    local r = helpers.run({"latency", "--from", "1M", "--to", to, "--per_octave", "1", "--samples", "3",
                           "--sample_ms", "5"})
    assert.are.equal(0, r.code, r.err)
    local rows = {}
    for sz, ns in r.out:gmatch("\n%s+%S+%s+([%d.]+)%s+([%d.]+)%s+[%d.]+") do
      rows[#rows + 1] = {size = math.floor(tonumber(sz) * 2^20 + 0.5), ns = tonumber(ns)}
    end
    assert.is_true(#rows >= 7)
    -- what the recipe prints is chase.steps of its own rows
    local st = chase.steps(rows)
    assert.are.equal(#st.steps, select(2, r.out:gsub("\n# observed step ", "")))
    for _, s in ipairs(st.steps) do
      local m = require("pmcsh.metrics").size
      assert.matches("# observed step " .. m(s.from):gsub("%.", "%%.") .. " %-> " .. m(s.to):gsub("%.", "%%.") .. ": x",
        r.out)
    end
    if st.note then
      assert.matches("# note: the step to memory %(.-%) comes well below the L%d of", r.out)
      assert.matches("to memory, well below the LLC", r.out)
    else
      assert.is_nil(r.out:find("# note: the step to memory", 1, true))
    end
  end)

  it("prints size_MB ns series for plotting", function()
    local r = helpers.run({"latency", "--from", "4K", "--to", "32K", "--per_octave", "2",
                           "--samples", "1", "--sample_ms", "2", "--series"})
    assert.are.equal(0, r.code, r.err)
    local l = helpers.lines(r.out)
    assert.are.equal('"stride=64 order=random pages=4k', l[1])
    assert.are.equal(1 + 7, #l)                      -- header, then 4K 5.7K 8K 11K 16K 23K 32K
    for i = 2, #l do assert.matches("^%d+%.%d+ %d+%.%d+$", l[i]) end
  end)

  it("rejects bad options with exit 2", function()
    for _, c in ipairs({
      {{"latency", "--stride", "12"}, "multiple of 8"},
      {{"latency", "--order", "zigzag"}, "not one of"},
      {{"latency", "--from", "1M", "--to", "4K"}, "at least"},
      {{"latency", "--from", "lots"}, "size"},
      {{"latency", "--series", "--json"}, "exclude"},
    }) do
      local r = helpers.run(c[1])
      assert.are.equal(2, r.code, table.concat(c[1], " "))
      assert.matches(c[2], r.err)
    end
  end)
end)

describe("pmcsh parallelism", function()
  it("finds several misses overlapped beyond the caches, each k's speedup from one chain", function()
    -- a footprint of 4x the largest cache, from 256 MiB (at 64 MiB a
    -- virtual machine's caches held enough that only k <= 3 stayed under k)
    -- to 1 GiB (a virtual machine may report its host's whole L3, hundreds
    -- of MiB): rows a cache holds give speedups above k, flagged and left
    -- out of mlp
    local llc = 0
    for _, c in ipairs(require("pmcsh.machine").caches()) do llc = math.max(llc, c.size or 0) end
    local size = math.max(256 << 20, math.min(4 * llc, 1 << 30)) // (1 << 20) .. "M"
    local r = helpers.run({"parallelism", "--sizes", size, "--max", "8", "--samples", "2",
                           "--sample_ms", "5", "--rounds", "1", "--json"})
    assert.are.equal(0, r.code, r.err)
    local t = select(2, helpers.json_lines(r.out))[1]
    assert.are.equal(8, #t.rows)
    assert.are.equal(1, t.rows[1].speedup)
    -- overlap is physics on any out-of-order core; whether t1 is slower than
    -- each of k chains (every row above k, no mlp) depends on the machine
    assert.is_true(t.peak > 2, "an out-of-order core overlaps several misses")
    -- k chains overlap at most k misses: the mlp is what one row measured,
    -- its k chains' speedup, and no more than k (5% for noise) nor than
    -- the best speedup; where every row ran above its k there is none
    if t.value then
      local row
      for _, x in ipairs(t.rows) do if x.speedup == t.value then row = x end end
      assert.is_true(row ~= nil or t.value == 1, "mlp " .. t.value .. " is a row's speedup")
      local k = row and row.k or 1
      assert.is_true(t.value >= 1 and t.value <= k * 1.05 and t.value <= t.peak, "mlp " .. t.value)
    else
      assert.matches("above k", t.why)
    end
  end)

  it("prints each size's mlp with its range over the rounds, or why there is none, and says why once", function()
    local sizes = {"64K", "1M", "8M", "32M"}
    local r = helpers.run({"parallelism", "--sizes", table.concat(sizes, ","), "--max", "4", "--rounds", "3",
                           "--samples", "2", "--sample_ms", "4"})
    assert.are.equal(0, r.code, r.err)
    local n, above = 0, 0
    for line in r.out:gmatch("[^\n]+") do
      local size, rest = line:match("^%s+(%d+[KM])%s+[%d.]+%s+(.*)$")
      if size then
        n = n + 1
        local mlp, lo, hi = rest:match("^([%d.]+)%s+([%d.]+)%-([%d.]+)")
        if mlp then
          mlp, lo, hi = tonumber(mlp), tonumber(lo), tonumber(hi)
          assert.is_true(lo <= mlp and mlp <= hi, line)
          -- reaching max: a lower bound, said so
          assert.are.equal(mlp >= 4 / 1.05, rest:find("at least 4 (raise --max, up to 64)", 1, true) ~= nil, line)
        else
          assert.matches("^%-%s+%-%s+[%d.]+%s+[%d.]+%s+%(no mlp: every k > 1 ran above k", rest)   -- no 1.000 for it
        end
        if rest:match("superlinear rows? left out") then above = above + 1 end
      end
    end
    assert.are.equal(#sizes, n)
    -- the why of rows above k: once for all sizes, on stderr
    local _, whys = r.err:gsub("cannot come from overlapping misses", "")
    assert.are.equal(above > 0 and 1 or 0, whys)
    -- --series: a line per size with an mlp, the others named on stderr, never a stand-in
    local s = helpers.run({"parallelism", "--sizes", table.concat(sizes, ","), "--max", "4", "--rounds", "1",
                           "--samples", "2", "--sample_ms", "4", "--series"})
    assert.are.equal(0, s.code, s.err)
    local lines = #helpers.lines(s.out) - 1
    local missing = s.err:match("no mlp at ([^%(]+) %(") or ""
    local _, m = missing:gsub("%d+[KM]", "")
    assert.are.equal(#sizes, lines + m)
  end)

  it("runs k = 1..64 with --max 64, and refuses 65 saying why no more", function()
    local r = helpers.run({"parallelism", "--sizes", "64K", "--max", "64", "--rounds", "1", "--samples", "1",
                           "--sample_ms", "1", "--json"})
    assert.are.equal(0, r.code, r.err)
    local t = select(2, helpers.json_lines(r.out))[1]
    assert.are.equal(64, #t.rows)
    for k, row in ipairs(t.rows) do
      assert.are.equal(k, row.k)
      assert.is_true(row.ns > 0 and row.speedup > 0)
    end
    assert.is_true(t.value == nil or t.mlp_k <= 64 and t.value <= t.mlp_k * 1.05)
    assert.are.equal(t.at_least == 64, t.engine_limit == true)
    r = helpers.run({"parallelism", "--max", "65"})
    assert.are.equal(2, r.code)
    assert.matches("%-%-max: 65 is above the maximum 64 %(more chains would measure the engine, not the memory", r.err)
    assert.are.equal("", r.out)
    -- --help says how far --max goes, and never to raise it past that
    local h = helpers.run({"parallelism", "--help"})
    assert.matches("%-%-max goes up to 64, the most chains the engine runs", h.out)
    assert.matches("most chains chased together %(up to 64%)", h.out)
  end)

  it("rejects bad sizes with exit 2", function()
    local r
    r = helpers.run({"parallelism", "--sizes", "64M,huge"})
    assert.are.equal(2, r.code); assert.matches("bad size", r.err)
  end)
end)

describe("the chase recipes' refusals", function()
  -- each before it measures or prints anything: exit 2, stdout empty, the
  -- option named as typed, in well under the time of one measurement
  local sys = require("pmcsh._sys")
  local BIG = "2%^32%-1 elements"
  local cases = {
    {{"latency", "--to", "1T"}, "^pmcsh latency: %-%-to 1T: size too large: more than " .. BIG},
    {{"parallelism", "--to", "1T"}, "^pmcsh parallelism: %-%-to 1T: size too large: more than " .. BIG},
    {{"parallelism", "--sizes", "4K,1T"}, "^pmcsh parallelism: %-%-sizes 1T: size too large"},
    {{"parallelism", "--stride", "8K", "--from", "16K"},
      "^pmcsh parallelism: %-%-from 16K holds 2 elements of %-%-stride 8K: fewer than the %-%-max 16 chains need"},
    {{"parallelism", "--sizes", "512", "--max", "9"},
      "^pmcsh parallelism: %-%-sizes 512 holds 8 elements of %-%-stride 64: fewer than the %-%-max 9 chains need"},
    {{"loaded", "--size", "1T"}, "^pmcsh loaded: %-%-size 1T: size too large: more than " .. BIG},
    {{"loaded", "--size", "64K", "--bw-size", "1T", "--delays", "0"},
      "bw_size: 1 loader of 1099511627776 bytes and the chain need %d+%.0 MiB, more than this machine's"},
    {{"bench-chase", "--to", "1T"}, "^pmcsh bench%-chase: %-%-to 1T: size too large: more than " .. BIG},
    {{"health", "--measure-only", "--chain", "1T"}, "^pmcsh health: %-%-chain 1T %(%-%-mlp%-max 16%): size too large"},
    {{"health", "--measure-only", "--n", "1T"}, "^pmcsh health: %-%-n 1T: n: 3 arrays of 1099511627776 doubles need"},
  }
  for _, c in ipairs(cases) do
    it(table.concat(c[1], " "), function()
      local t0 = sys.now()
      local r = helpers.run(c[1])
      assert.are.equal(2, r.code, r.err)
      assert.matches(c[2], r.err)
      assert.are.equal("", r.out)
      assert.are.equal(1, select(2, r.err:gsub("\n", "")), r.err)   -- one line
      assert.is_true(sys.now() - t0 < 5, "took " .. (sys.now() - t0) .. " s")
    end)
  end
end)

describe("pmcsh bench-chase", function()
  it("labels each figure with its statistic, the median first", function()
    local r = helpers.run({"bench-chase", "--size", "4M", "--pairs", "6", "--sample_ms", "2", "--samples", "3",
                           "--from", "4K", "--to", "16K", "--per_octave", "1"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("order%s+engine ns p50%s+plain ns p50%s+engine best%s+plain best%s+ratio", r.out)
    for _, order in ipairs({"random", "tlb"}) do
      local ep, pp, eb, pb = r.out:match("\n%s+" .. order .. "%s+([%d.]+)%s+([%d.]+)%s+([%d.]+)%s+([%d.]+)")
      assert.is_true(tonumber(eb) <= tonumber(ep) and tonumber(pb) <= tonumber(pp), order .. ": best above median")
    end
    assert.matches("ns per load, best and median of 3 samples", r.out)
    local j = helpers.run({"bench-chase", "--size", "4M", "--pairs", "6", "--sample_ms", "2", "--samples", "3",
                           "--from", "4K", "--to", "16K", "--per_octave", "1", "--json"})
    assert.are.equal(0, j.code, j.err)
    local v
    for _, o in ipairs(select(2, helpers.json_lines(j.out))) do
      if o.name == "engine/plain ns ratio, random" then v = o end
    end
    assert.is_true(v.engine_best_ns <= v.engine_median_ns and v.plain_best_ns <= v.plain_median_ns)
    assert.is_nil(v.engine_ns)                       -- no figure without its statistic
  end)
end)

describe("plots", function()
  local dir
  setup(function() dir = helpers.tmpdir() end)
  teardown(function() os.execute("rm -rf '" .. dir .. "'") end)
  local have = require("pmcsh.plot").gnuplot() ~= nil

  it("draws a from-0 chart whose every x is 0 (loaders that read nothing on a busy machine)", function()
    if not helpers.need(have, "gnuplot is not installed") then return end
    local file = dir .. "/zero.png"
    assert(require("pmcsh.plot").lines(file, {from0 = true, series = {{points = {{0, 150}, {0, 420}}}}}))
    assert.are.equal("\137PNG", helpers.slurp(file):sub(1, 4))
  end)

  it("breaks a line at a point with no value (a size with no mlp) and draws nothing there", function()
    if not helpers.need(have, "gnuplot is not installed") then return end
    -- gnuplot run through a wrapper that keeps the script it was given
    local wrap, kept = dir .. "/gp", dir .. "/kept.gp"
    helpers.write(wrap, string.format("#!/bin/sh\ncp \"$1\" '%s'\nexec %s \"$1\"\n", kept,
      require("pmcsh.plot").gnuplot()))
    os.execute("chmod +x '" .. wrap .. "'")
    local r = helpers.run({"-e", string.format([[assert(require("pmcsh.plot").lines(%q, {bytes = true,
      series = {{title = "mlp", points = {{1024, 2, 1.9, 2.1}, {2048}, {4096, 3, 2.9, 3.1}, {8192, 4, 3.9, 4.1}}},
                {title = "peak", points = {{1024, 2}, {2048, 9}}}}, hline = {y = 8, title = "k = 8"}}))]],
      dir .. "/gap.png")}, {env = "PMCSH_GNUPLOT=" .. wrap})
    assert.are.equal(0, r.code, r.err)
    local script = helpers.slurp(kept)
    -- the blank line is gnuplot's break: no segment from 1024 to 4096
    assert.are.equal("1024 2 1.9 2.1\n\n4096 3 2.9 3.1\n8192 4 3.9 4.1", script:match("%$s1 << EOD\n(.-)\nEOD"))
    assert.are.equal("1024 2\n2048 9", script:match("%$s2 << EOD\n(.-)\nEOD"))
    assert.matches("8 with lines dt 2 lw 2 lc rgb '#d62728' title 'k = 8'", script, 1, true)
    assert.are.equal("\137PNG", helpers.slurp(dir .. "/gap.png"):sub(1, 4))
  end)

  it("draws the latency curve to a PNG through gnuplot", function()
    if not helpers.need(have, "gnuplot is not installed") then return end
    local file = dir .. "/lat.png"
    local r = helpers.run({"latency", "--from", "4K", "--to", "64K", "--per_octave", "1",
                           "--samples", "1", "--sample_ms", "2", "--plot", file})
    assert.are.equal(0, r.code, r.err)
    local png = helpers.slurp(file)
    assert.are.equal("\137PNG", png:sub(1, 4))
  end)

  kit("draws the survey chart to an SVG", function()
    if not helpers.need(have, "gnuplot is not installed") then return end
    local file = dir .. "/s.svg"
    local r = helpers.run({"survey", "-e", "page-faults,msr/tsc/", "--n", "1M", "--reps", "2",
                           "--plot", file})
    assert.are.equal(0, r.code, r.err)
    assert.matches("<svg", helpers.slurp(file))
  end)

  it("says clearly when gnuplot is missing", function()
    local r = helpers.run({"latency", "--from", "4K", "--to", "8K", "--samples", "1", "--sample_ms", "1",
                           "--plot", dir .. "/x.png"}, {env = "PMCSH_GNUPLOT="})
    assert.are.equal(1, r.code)
    assert.matches("gnuplot is not installed", r.err)
    assert.matches("size_MB", r.out)                  -- the table is still printed
  end)
end)

describe("pmcsh list", function()
  local Term = require("ptyterm")
  local sys = require("pmcsh._sys")
  local MODEL = "amd64_fam19h_zen3"   -- any machine's libpfm4 lists it (x86 builds), as --pmu does
  local function have_model()
    for _, m in ipairs(require("pmcsh.pmc").models() or {}) do if m.name == MODEL then return true end end
    return false, "this libpfm4 has no " .. MODEL .. " model"
  end
  -- the whole output of pmcsh argv... on a 120-column pty, \r dropped
  local function on_tty(env, ...)
    local argv = {"/usr/bin/env", table.unpack(env)}
    argv[#argv + 1] = helpers.exe
    for _, a in ipairs({...}) do argv[#argv + 1] = a end
    local t = Term.start(helpers.tmpdir(), argv)
    local out, deadline = {}, sys.now() + 30
    while sys.now() < deadline do
      local s = t.p:read(0.2)
      if s == nil then break end
      out[#out + 1] = s
    end
    t:wait(); t:close()
    return (table.concat(out):gsub("\r", ""))
  end
  local function widest(text)
    local w = 0
    for l in text:gmatch("[^\n]*") do w = math.max(w, #l) end
    return w
  end
  local function words(text) return (text:gsub("%s+", " ")) end

  it("fits the terminal's width, wrapping descriptions, and cuts nothing into a pipe", function()
    if not helpers.need(have_model()) then return end
    local piped = helpers.run({"list", "-v", "--pmu", MODEL})
    assert.are.equal(0, piped.code)
    assert.is_true(widest(piped.out) > 120, "into a pipe a row is one line, however long")
    local desc = piped.out:match("RETIRED_SSE_AVX_FLOPS +([^\n]+)")
    assert.is_true(#desc > 80, desc)
    for _, cols in ipairs({80, 120}) do
      local env = cols == 80 and {"COLUMNS=80"} or {"-u", "COLUMNS"}   -- 120: the pty's own width
      local out = on_tty(env, "list", "-v", "--pmu", MODEL)
      assert.is_true(widest(out) <= cols, cols .. " columns: a line of " .. widest(out))
      -- the description whole, wrapped
      assert.is_truthy(words(out):find(words(desc), 1, true), cols .. " columns lost words of: " .. desc)
      assert.are.equal(select(2, piped.out:gsub("\n  [-+] ", "")), select(2, out:gsub("\n  [-+] ", "")))
    end
  end)

  it("gives each umask's code and marks the default, as showevtinfo does", function()
    if not helpers.need(have_model()) then return end
    local r = helpers.run({"list", "-v", "--pmu", MODEL, "RETIRED_SSE_AVX_FLOPS"})
    assert.matches("\n +:ADD_SUB_FLOPS +0x01 Addition", r.out)
    assert.matches("\n +:ANY +0x0f %[default%] ", r.out)
    local _, recs = helpers.json_lines(helpers.run({"list", "-v", "--json", "--pmu", MODEL, "RETIRED_SSE_AVX_FLOPS"}).out)
    local any = recs[1].umasks[#recs[1].umasks]
    assert.are.same({"ANY", 15, true}, {any.name, any.code, any.default})
  end)

  it("suggests the model of a close name, and names the models with --pmus", function()
    if not helpers.need(have_model()) then return end
    local r = helpers.run({"list", "--pmu", "zen3", "RETIRED"})
    assert.are.equal(2, r.code)
    assert.matches("no PMU model named 'zen3'; did you mean [^\n]*amd64_fam19h_zen3", r.err)
    assert.not_matches("traceback", r.err)
    r = helpers.run({"list", "--pmus", "zen3"})
    assert.are.equal(0, r.code)
    assert.matches("\n?  [-+] amd64_fam19h_zen3 +%d+ events +AMD64 Fam19h Zen3\n", r.out)
    assert.matches("%d+ PMU models of libpfm4", r.out)
  end)

  it("says under each PMU why its '-' events do not open, once per kind, and each in --json", function()
    local closed
    for _, e in ipairs(require("pmcsh.pmc").list() or {}) do
      if e.opens == false then closed = e; break end
    end
    if not helpers.need(closed, "every event of this machine opens here") then return end
    local r = helpers.run({"list"})
    assert.are.equal(0, r.code, r.err)
    local header, body = r.out:match("\n?(" .. closed.pmu:gsub("%p", "%%%0") .. ": %d+ events?, %d+ opens? here)\n(.-)\n%S")
    assert.is_truthy(header, r.out)
    local shut = tonumber(header:match(": (%d+) event")) - tonumber(header:match(", (%d+) open"))
    local counted = 0
    for n, why in body:gmatch("  why '%-' for (%d+): +([^\n]+)") do
      counted = counted + tonumber(n)
      assert.matches("^cannot count ", why)
    end
    assert.are.equal(shut, counted, body)   -- every '-' row of the PMU has its reason
    local _, recs = helpers.json_lines(helpers.run({"list", "--json"}).out)
    for _, e in ipairs(recs) do
      assert.are.equal(not e.opens, type(e.why) == "string", e.name)
    end
  end)

  it("lists the generic events libpfm4 lacks and perf's duration_time, and stat counts them", function()
    local r = helpers.run({"list", "faults"})
    assert.matches("\n  %+ alignment%-faults +unaligned", r.out)
    assert.matches("\n  %+ emulation%-faults +instructions", r.out)
    r = helpers.run({"list", "duration"})
    assert.matches("^tool: 1 event, 1 opens here\n  %+ duration_time +wall%-clock", r.out)
    r = helpers.run({"stat", "-x", ",", "-e", "duration_time,alignment-faults:u,emulation-faults:u", "--", "sleep", "0.05"})
    assert.are.equal(0, r.code, r.err)
    local rows = {}
    for _, l in ipairs(helpers.lines(r.err)) do local f = helpers.fields(l, ","); rows[f[3]] = f end
    local ns = tonumber(rows.duration_time[1])
    assert.are.equal("ns", rows.duration_time[2])
    assert.is_true(ns >= 0.05e9 and ns < 5e9, "sleep 0.05 lasted " .. ns .. " ns")
    assert.are.equal("0", rows["alignment-faults:u"][1])   -- x86 fixes no unaligned access in hardware's place
    assert.are.equal("0", rows["emulation-faults:u"][1])
  end)
end)
