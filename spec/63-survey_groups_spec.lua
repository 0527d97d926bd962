-- The survey beyond the STREAM loops: a pointer chase as a workload
-- (normalised per dependent load), the events/ groups with their metrics
-- (software.lua here, with real counts), and events/ files written for
-- another CPU's PMU (a clear message, not a list of unknown events).
-- Small chains, short samples: a few seconds in all.
local helpers = require("helpers")
local kit = helpers.kernel_it(it)  -- specs that count the kernel
local survey = require("pmcsh.survey")
local events = require("pmcsh.events")
local engine_chase = require("pmcsh.survey.engine_chase")
local pmc = require("pmcsh.pmc")
local cjson = require("cjson")

local function row_of(gm, name)
  for _, r in ipairs(gm.rows) do if r.name == name then return r end end
  error("no metric " .. name)
end

-- The scheduler's own account of this thread (ns on a cpu, ns waiting to
-- run) around f: its result and the share of the time it waited.  A
-- task-bound count (msr/tsc/ counts only while the task runs) falls short
-- of the clock by what the machine took, which a window that saw no
-- context switch of its own can still hide: where the thread waited, a
-- check that disagrees is the machine's, said as pending.
local schedstat = helpers.schedstat
local function waited(f)
  local run0, wait0 = schedstat()
  local r = f()
  local run1, wait1 = schedstat()
  if not run0 or not run1 then return r, 0 end
  local total = (run1 - run0) + (wait1 - wait0)
  return r, total > 0 and (wait1 - wait0) / total or 0
end
local BUSY = 0.05   -- waited for 5% of its time or more: another task had its cpu

local QUIET = {baseline = false, progress = false, quiet = true}
local function opts(t)
  for k, v in pairs(QUIET) do if t[k] == nil then t[k] = v end end
  return t
end

describe("survey of a pointer chase", function()
  kit("normalises per dependent load: task-clock per load is the chase's ns per load on unpreempted samples", function()
    -- 12 samples of 10 ms over a 16 MiB random chain.  The counters run
    -- around each sample only, so a sample's task-clock is its own time on
    -- cpu: never above its wall time, and equal to it (3%: 2.3% seen with a
    -- busy loop on each cpu of a loaded guest) when the sample was not
    -- preempted, i.e. counted no context switch.
    local st = assert(survey.run(opts{events = {"task-clock", "context-switches", "page-faults"}, split = false,
                                      kernels = {"chase"}, chase = "random:16M", reps = 12, sample_ms = 10}))
    assert.are.equal(1, #st.runs)
    local r = st.runs[1]
    assert.are.equal("chase", r.kernel)
    assert.are.equal(12, #r.samples)
    assert.are.equal(r.loads_per_sample * 12, r.iterations)   -- one iteration is one dependent load
    local tc = st.cells["task-clock"].chase
    local cs = st.cells["context-switches"].chase
    local unpreempted = 0
    for i, ns in ipairs(r.samples) do
      local t = tc.per_rep[i]                            -- task-clock ns per load, sample i
      assert.is_true(t <= ns * 1.02 + 20e3 / r.loads_per_sample,
        string.format("sample %d: task-clock %.2f ns/load above the sample's %.2f", i, t, ns))
      if cs.per_rep[i] * r.loads_per_sample < 0.5 then
        unpreempted = unpreempted + 1
        assert.is_true(helpers.rel(t, ns) < 0.03,
          string.format("unpreempted sample %d: task-clock %.2f ns/load, chase %.2f ns/load", i, t, ns))
      end
    end
    -- the cell's mean is the total over all loads
    local sum = 0
    for _, v in ipairs(tc.per_rep) do sum = sum + v * r.loads_per_sample end
    assert.is_true(helpers.rel(tc.mean * r.iterations, sum) < 1e-9)
    -- ns per iteration is the median sample, as its row says, not the best
    local ix = require("pmcsh.survey.records").index(survey.records(st))
    local med = require("pmcsh.metrics").median(r.samples)
    assert.near(med, ix.figures.ns_counted.chase.value, med * 1e-9)
    -- the chain was built and warmed before the window: no page faults
    assert.is_true(st.cells["page-faults"].chase.value < 1e-6, "a warm chain does not fault")
    helpers.need(unpreempted > 0, "every sample was preempted (busy machine): the equality was not checked")
  end)

  kit("puts a Chase column beside the loops, with ns per load beside the bandwidth", function()
    local r = helpers.run({"survey", "-k", "copy", "--chase", "random:8M", "-e", "task-clock,page-faults",
                           "--n", "1M", "--reps", "3", "--sample_ms", "5"})
    assert.are.equal(0, r.code, r.err)
    -- each figure says its statistic: the cells the trimmed mean, ns per iteration the median
    assert.matches("Events per loop iteration %(trimmed mean%)%s+Copy%s+Chase%s+class\n", r.out)
    assert.matches("\nzero in every loop %(2; %-%-all shows them%): page%-faults:u page%-faults:k\n", r.out)   -- warm arrays, warm chain
    assert.matches("\nns per iteration, no counters %(median slope / sample%)%s+[%d.]+%s+[%d.]+\n", r.out)
    assert.matches("\nns per iteration, counted %(median run%)%s+[%d.]+%s+[%d.]+\n", r.out)
    assert.matches("\nMB/s, no counters %(median slope%)%s+[%d.]+%s+n/a\n", r.out)
    assert.matches("chase: random order over 8 MiB, 64%-byte elements, 4k pages, 3 samples of ~5 ms per run; " ..
                   "one iteration = one dependent load", (r.out:gsub("%s+", " ")))
  end)

  it("takes the chase engine's default stride for the order", function()
    local chase = require("pmcsh.chase")
    for _, o in ipairs(chase.orders()) do
      local c = assert(engine_chase.parse_chase(o.name .. ":8M"))
      assert.are.equal(chase.default_stride(o.name), c.stride, o.name)
    end
    assert.are.equal(64, assert(engine_chase.parse_chase("random:8M")).stride)
    assert.are.equal(256, assert(engine_chase.parse_chase("page:8M")).stride)
    assert.are.equal(128, assert(engine_chase.parse_chase("page:8M:128")).stride)
  end)

  it("measures every workload through one descriptor shape", function()
    local workloads = require("pmcsh.survey.workloads")
    local hdr = {kernels = {"copy", "triad", "chase"}, chase = assert(engine_chase.parse_chase("1M")), pages = "4k",
                 n = 1 << 16, reps = 2, threads = 1, sample_ms = 2}
    local ws, free = workloads.of(hdr, {quiet = true})
    local g <close> = assert(pmc.group{"task-clock"})
    for i, k in ipairs(hdr.kernels) do
      local w = ws[i]
      assert.are.equal(k, w.name)
      assert.is_string(w.title); assert.is_string(w.unit); assert.is_function(w.run)
      local res = assert(w.run(g, 2))
      -- the loops' windows in pairs, at least the pair asked for; the chase's 2 samples
      if k == "chase" then assert.are.equal(2, #res.times) end
      assert.is_true(#res.times >= 2 and #res.times % 2 == 0, k)
      assert.is_true(res.iterations > 0)
      assert.is_number(res.counts["task-clock"].value)
      assert.are.equal(#res.times, #res.per_rep)
    end
    assert.are.equal(24, ws.triad.bytes)
    assert.is_nil(ws.chase.bytes)
    free()
  end)

  it("rejects a bad chase with exit 2", function()
    for _, c in ipairs({
      {{"survey", "--chase", "zigzag:1M"}, "neither an order %(page, random, stride, tlb%) nor a size"},
      {{"survey", "--chase", "1M:64:8"}, "ORDER:SIZE%[:STRIDE%]"},
      {{"survey", "--chase", "random:1M:3"}, "bad chase \"random:1M:3\": stride: must be a positive multiple"},
      {{"survey", "-k", "copy,chace"}, "unknown kernel \"chace\" %(kernels: .*chase%)"},
    }) do
      local r = helpers.run(c[1])
      assert.are.equal(2, r.code, table.concat(c[1], " "))
      assert.matches(c[2], r.err)
      assert.not_matches("%.lua:%d+:", r.err)        -- no internal file paths
      assert.are.equal("", r.out)
    end
  end)
end)

describe("survey --group", function()
  it("evaluates software.lua's metrics per kernel: msr/tsc/ / task-clock is the TSC frequency", function()
    -- both count only while the task runs, so their ratio is the TSC rate,
    -- on the loops and on the chase alike, in a window without interrupt or
    -- steal time (task-clock leaves those out where the kernel accounts
    -- them; the TSC does not): 5 pairs, evaluated pair by pair, trimmed
    local st = assert(survey.run(opts{group = "software", kernels = {"copy", "chase"}, chase = "16M",
                                      n = 2 * 1024 * 1024, reps = 10, sample_ms = 10}))
    if not helpers.need(st.cells["msr/tsc/"], "msr/tsc/ does not open here") then return end
    local tsc_hz
    for _, r in ipairs(st.runs) do tsc_hz = tsc_hz or r.tsc_hz end
    if not helpers.need(tsc_hz, "no constant TSC: the stream engine reports no tsc_hz") then return end
    local gm = assert(survey.group_metrics(st))
    assert.matches("events/software%.lua$", gm.path)
    local ghz = row_of(gm, "TSC GHz while running")
    for _, k in ipairs({"copy", "chase"}) do
      -- a metric over a cell whose every pair was disturbed has no value, and says why
      if not helpers.need(ghz.values[k], k .. ": " .. tostring(ghz.reasons[k])) then return end
      local off = helpers.rel(ghz.values[k] * 1e9, tsc_hz)
      if off >= 0.03 and not helpers.need(wait < BUSY, string.format("%s: %.4f GHz against the TSC's %.4f, while "
        .. "this thread waited %.0f%% of the time for a cpu: the task-bound count lost what the machine took",
        k, ghz.values[k], tsc_hz / 1e9, wait * 100)) then return end
      assert.is_true(off < 0.03,
        string.format("%s: %.4f GHz, the TSC runs at %.4f", k, ghz.values[k], tsc_hz / 1e9))
    end
    -- warm arrays: no faults per page moved; the chase moves no STREAM bytes
    local pf = row_of(gm, "page faults per 4 KiB moved")
    assert.is_true(pf.values.copy < 1e-3)
    assert.is_nil(pf.values.chase)
    assert.matches("needs bytes per iteration, which a pointer chase does not have", pf.reasons.chase)
    -- ticks per byte: the TSC cell's per-iteration value over copy's 16
    -- bytes, exactly (a scale keeps the order the trimmed mean cuts by)
    local tpb = row_of(gm, "TSC ticks per byte")
    if not helpers.need(tpb.values.copy, "copy: " .. tostring(tpb.reasons.copy)) then return end
    assert.is_true(helpers.rel(tpb.values.copy, st.cells["msr/tsc/"].copy.value / 16) < 1e-9)
  end)

  it("gives a formula seconds as its counts are taken: msr/tsc/ over seconds is the TSC rate", function()
    -- the counts are per-iteration slopes of two windows; seconds the time's
    -- own slope, pair by pair, so the windows' fixed cost (first touch, the
    -- calls around the loop) is on neither side (it read 14% low at 4M)
    local path = os.tmpname() .. ".lua"
    local f = assert(io.open(path, "w"))
    f:write([[return {name = "tsc-rate", events = {"msr/tsc/"}, metrics = {
      {name = "TSC GHz", unit = "GHz", events = {"msr/tsc/"},
       fn = function(e, c) return e["msr/tsc/"] / c.seconds / 1e9 end}}}]])
    f:close()
    local st, wait = waited(function()
      return assert(survey.run(opts{group = path, kernels = {"copy", "triad"}, n = 1 << 22, reps = 10}))
    end)
    os.remove(path)
    if not helpers.need(st.cells["msr/tsc/"], "msr/tsc/ does not open here") then return end
    local tsc_hz
    for _, r in ipairs(st.runs) do tsc_hz = tsc_hz or r.tsc_hz end
    if not helpers.need(tsc_hz, "no constant TSC: the stream engine reports no tsc_hz") then return end
    local ghz = row_of(assert(survey.group_metrics(st)), "TSC GHz")
    for _, k in ipairs({"copy", "triad"}) do
      if not helpers.need(ghz.values[k], k .. ": " .. tostring(ghz.reasons[k])) then return end
      assert.is_true(helpers.rel(ghz.values[k] * 1e9, tsc_hz) < 0.03,
        string.format("%s: %.4f GHz, the TSC runs at %.4f", k, ghz.values[k], tsc_hz / 1e9))
    end
  end)

  kit("TSC GHz matches /proc/cpuinfo's clock where that clock is the TSC's", function()
    local f = io.open("/proc/cpuinfo")
    local text = f and f:read("a") or ""
    if f then f:close() end
    local mhz, same = nil, true
    for v in text:gmatch("cpu MHz%s*:%s*([%d.]+)") do
      v = tonumber(v)
      if mhz and v ~= mhz then same = false end
      mhz = mhz or v
    end
    -- a KVM guest reports the TSC rate on every cpu; a host reports each
    -- cpu's current clock, which varies and is not the TSC
    if not helpers.need(mhz and same and text:find(" constant_tsc"),
                "/proc/cpuinfo's cpu MHz varies between cpus here: it is the core clock, not the TSC") then
      return
    end
    -- msr/tsc/ and task-clock open in two groups (one per PMU), enabled
    -- microseconds apart: windows long enough that those edges stay under 1%.
    -- Time the hypervisor takes (steal) runs the TSC but not task-clock:
    -- the premise holds only where it took next to none.
    local function cpu_times()
      local fh = assert(io.open("/proc/stat"))
      local l = fh:read("l")
      fh:close()
      local t, total = {}, 0
      for v in l:gmatch("%d+") do t[#t + 1] = tonumber(v); total = total + t[#t] end
      return t[8] or 0, total
    end
    local steal0, total0 = cpu_times()
    local st = assert(survey.run(opts{group = "software", kernels = {"triad"}, n = 4 * 1024 * 1024, reps = 10}))
    local steal1, total1 = cpu_times()
    local stolen = (steal1 - steal0) / math.max(1, total1 - total0)
    if not helpers.need(stolen < 0.01, string.format("the hypervisor took %.1f%% of the cpus' time during the run",
      stolen * 100)) then return end
    local ghz = row_of(assert(survey.group_metrics(st)), "TSC GHz while running").values.triad
    -- none where every pair counted a context switch (a busy machine)
    if not helpers.need(ghz, "every pair was disturbed on this busy machine") then return end
    assert.is_true(helpers.rel(ghz * 1e3, mhz) < 0.03, string.format("%.4f GHz, cpuinfo %.3f MHz", ghz, mhz))
  end)

  kit("counts first touch as one fault per 4 KiB page of each array, per window (fresh arrays)", function()
    -- 8-byte elements: each array faults once per 512 of them, in the
    -- window's cost (intercept); the group's per-iteration metric reads 0.
    -- (Short windows, which a busy machine seldom preempts: a pair that
    -- counted a context switch is dropped.)
    local n = 64 * 1024
    local st = assert(survey.run(opts{group = "software", kernels = {"copy", "triad"}, fresh = true, split = false,
                                      n = n, reps = 10}))
    for _, k in ipairs({"copy", "triad"}) do
      if not helpers.need(st.cells["page-faults"][k].kept > 0, "every pair was disturbed on this busy machine") then
        return
      end
    end
    local pages = st.header.slice / 512   -- each window's slice of the fresh arrays
    for k, arrays in pairs({copy = 2, triad = 3}) do
      local c = st.cells["page-faults"][k]
      assert.is_true(c.intercept >= arrays * pages and c.intercept <= arrays * (pages + 1),
        string.format("%s: %.1f faults per window", k, c.intercept))
      assert.are.equal("pass", c.verdict)
    end
    local pf = row_of(assert(survey.group_metrics(st)), "page faults per 4 KiB moved")
    for _, k in ipairs({"copy", "triad"}) do
      assert.is_true(math.abs(pf.values[k]) < 0.02, string.format("%s: %.4f faults per page per iteration", k, pf.values[k]))
    end
  end)

  kit("prints the metrics after the table, and the same again from the file", function()
    local dir = helpers.tmpdir()
    local file = dir .. "/g.jsonl"
    local r = helpers.run({"survey", "--group", "software", "-k", "copy", "--n", "1M", "--reps", "10",
                           "--out", file})
    assert.are.equal(0, r.code, r.err)
    -- (where every pair counted a context switch, nothing is under the cells)
    if not helpers.need(not r.out:match("\nkept / made%s+0/"), "every pair was disturbed on this busy machine") then
      return
    end
    assert.matches("\nmsr/tsc/%s+[%d.]+", r.out)                       -- the group's events
    assert.matches("\n\nMetrics %(events/software%.lua%)%s+Copy\nTSC GHz while running%s+%d%.%d%d%d%d\n", r.out)
    local rep = helpers.run({"survey", "--report", file})
    assert.are.equal(r.out, rep.out)
    local js = helpers.run({"survey", "--report", file, "--json"})
    local m
    for _, line in ipairs(helpers.lines(js.out)) do
      local o = cjson.decode(line)
      if o.kind == "metric" and o.name == "TSC GHz while running" and o.context.kernel == "copy" then m = o end
    end
    assert.is_number(m and m.value)
    -- no group, no metrics section (pmcsh survey's own table is unchanged)
    local plain = helpers.run({"survey", "-e", "task-clock", "-k", "copy", "--n", "1M", "--reps", "2"})
    assert.are.equal(0, plain.code, plain.err)
    assert.is_nil(plain.out:find("Metrics", 1, true))
    os.execute("rm -rf '" .. dir .. "'")
  end)

  it("rejects a missing group and a pairs file given as a group with exit 2", function()
    local r = helpers.run({"survey", "--group", "no-such-group"})
    assert.are.equal(2, r.code); assert.matches("no events file", r.err)
    r = helpers.run({"survey", "--group", "pairs-skl"})
    assert.are.equal(2, r.code); assert.matches("pairs%-skl%.lua has no 'events' list: not a group", r.err)
  end)
end)

describe("events/ files for another PMU", function()
  -- which PMUs are here is asked in a fresh process, as a survey asks it
  local function mismatch(name)
    local r = helpers.run({"-e", string.format([[
      local events = require("pmcsh.events")
      local t, path = assert(events.load(%q))
      io.write(events.pmu_check(t, path) or "")]], name)})
    assert.are.equal(0, r.code, r.err)
    return r.out ~= "" and r.out or nil
  end

  it("names the file's PMU and how this machine's differs (on recorded machines)", function()
    -- what events.machine_pmus() reads on each machine
    local function fake(pmus, exposed) return {names = pmus, exposed = exposed} end
    local skl = {pmu = "skl", cpu = "Intel Skylake"}
    -- a Skylake with its PMU exposed: nothing to say
    assert.is_nil(events.pmu_check(skl, "memory-skl.lua", fake({"skl", "perf", "msr"}, true)))
    assert.is_nil(events.pmu_check({name = "software"}, "software.lua", fake({"perf"}, false)))
    -- a Zen 3 host
    assert.are.equal("memory-skl.lua is for the skl PMU (Intel Skylake); this machine's PMU differs: " ..
      "libpfm4 finds amd64_fam19h_zen3",
      events.pmu_check(skl, "memory-skl.lua", fake({"amd64_fam19h_zen3", "amd64_fam19h_zen3_l3", "perf"}, true)))
    -- a Skylake guest without a virtual PMU
    assert.matches("is for the skl PMU %(Intel Skylake%), which libpfm4 recognises in this CPU; but this " ..
      "machine's PMU differs: the kernel exposes no hardware PMU",
      events.pmu_check(skl, "memory-skl.lua", fake({"skl", "perf"}, false)))
  end)

  -- each file: exit 1 and the sentence, unless this machine has that PMU
  for _, c in ipairs({
    {{"--group", "memory-skl"}, "memory-skl"},
    {{"--pairs", "pairs-skl"}, "pairs-skl"},
    {{"--group", "memory-zen"}, "memory-zen"},
    {{"--pairs", "pairs-zen"}, "pairs-zen"},
  }) do
    it("exits 1 for " .. table.concat(c[1], " ") .. ": the file's PMU, this machine's, nothing counted", function()
      local t, path = assert(events.load(c[2]))
      -- the distinct events the file names
      local n, seen = 0, {}
      for _, e in ipairs(t.events or {}) do if not seen[e] then seen[e] = true; n = n + 1 end end
      for _, p in ipairs(t.pairs or {}) do
        for _, e in ipairs(p) do if not seen[e] then seen[e] = true; n = n + 1 end end
      end
      local models = events.models(t)
      if not helpers.need(mismatch(c[2]), "this machine has the " .. models[1] .. " PMU") then return end
      -- a live core PMU of another model may count some of the file's events
      local known = 0
      for e in pairs(seen) do if pmc.info(e) and pmc.info(e).hardware then known = known + 1 end end
      if not helpers.need(known == 0 or not pmc.environment().cpu_pmu, known .. " of the file's events resolve on " ..
        "this machine's live PMU, so part of it counts (the partial case is specced below)") then return end
      local args = {"survey", "-k", "copy", "--n", "1M", "--reps", "1"}
      for _, a in ipairs(c[1]) do args[#args + 1] = a end
      local r = helpers.run(args)
      assert.are.equal(1, r.code, r.err)
      assert.are.equal("", r.out)
      assert.matches(c[2]:gsub("%-", "%%-") .. "%.lua is for the " .. table.concat(models, " or ") ..
        " PMU %(" .. t.cpu .. "%)", r.err)
      assert.matches("this machine's PMU differs: ", r.err)
      assert.matches("none of its " .. n .. " events can be counted here", r.err)
      assert.matches("pmc%.info%(NAME, {pmu = \"" .. models[1] .. "\"}%)", r.err)
    end)
  end

  kit("heads the unopened list with the file's PMU when only part of it opens", function()
    local dir = helpers.tmpdir()
    local file = dir .. "/pairs-mixed.lua"
    local f = assert(io.open(file, "w"))
    f:write('return {name = "pairs-mixed", pmu = "skl", cpu = "Intel Skylake",\n',
            '  pairs = {{"task-clock", "page-faults"}, {"INST_RETIRED:ANY_P", "UOPS_RETIRED:RETIRE_SLOTS"}}}\n')
    f:close()
    if not helpers.need(mismatch(file), "this machine has the skl PMU") then return end
    local out = file:gsub("lua$", "jsonl")
    local r = helpers.run({"survey", "--pairs", file, "-k", "copy", "--n", "1M", "--reps", "6", "--out", out})
    assert.are.equal(0, r.code, r.err)
    assert.matches("\ntask%-clock:u %[task%-clock%+page%-faults%] %(ns%)%s+", r.out)
    if helpers.need(not r.out:find("\ntask%-clock:u %[task%-clock%+page%-faults%] %(ns%)%s+dropped"),
      "every pair was disturbed on this busy machine") then
      assert.matches("\ntask%-clock:u %[task%-clock%+page%-faults%] %(ns%)%s+[%d.]+", r.out)
    end
    local note = "\nNot counted here:\n  " .. file:gsub("%p", "%%%0") .. "%s+is for the skl PMU %(Intel Skylake%)"
    assert.matches(note, r.out)
    local st = assert(survey.load(out))
    os.execute("rm -rf '" .. dir .. "'")
    assert.are.equal(file, st.unopened[1].event)
    assert.matches("^is for the skl PMU %(Intel Skylake%)", st.unopened[1].reason)
    assert.are.equal(5, #st.unopened)                   -- the note, then INST_RETIRED and UOPS_RETIRED :u, :k
    -- libpfm4 knows these names on some hosts (an Intel core PMU: then the
    -- open fails), on others not (an unknown event, with the file's PMU)
    for i = 2, 5 do
      local e = st.unopened[i]
      if pmc.info((e.event:gsub(" %[.*", ""))) then
        assert.not_matches("unknown event", e.reason)
      else
        assert.matches("unknown event .*%[the file is for the skl PMU%]$", e.reason)
      end
    end
  end)
end)

describe("survey checks", function()
  it("checks msr/tsc/ against the stream engine's own rdtsc around the same windows, within 2%", function()
    -- the median pair's ratio: each pair's counter and clock see the same preemption
    local st, wait = waited(function()
      return assert(survey.run(opts{events = {"msr/tsc/"}, kernels = {"copy", "triad"}, n = 1 << 22, reps = 10}))
    end)
    if not helpers.need(st.cells["msr/tsc/"], "msr/tsc/ does not open here") then return end
    for _, k in ipairs({"copy", "triad"}) do
      local c = st.cells["msr/tsc/"][k]
      -- a pair that counted a context switch is not compared (the counter stopped, the clock did not)
      if not helpers.need(c.kept > 0, k .. ": every pair was disturbed on this busy machine") then return end
      -- unresolved: the windows too close to tell 2% apart, which a busy
      -- machine makes of a quiet one's resolved check
      if c.verdict ~= "pass" and not helpers.need(wait < BUSY, string.format("%s: the check reads %s while this "
        .. "thread waited %.0f%% of the time for a cpu", k, tostring(c.verdict), wait * 100)) then return end
      assert.are.equal("value", c.check, k)
      assert.is_true(c.expected > 0, k)
      assert.are.equal("pass", c.verdict, string.format("%s: %.4f ticks per iteration counted, %.4f by rdtsc",
        k, c.value, c.expected))
    end
    assert.matches("ok   msr/tsc/, copy: per iteration [%d.]+, expected [%d.]+ %(rdtsc around each window",
      survey.report(st, {}))
  end)

  it("leaves msr/tsc/ unresolved, not failed, where its windows differ by less than 50 times their edges", function()
    -- 32768 elements of copy apart: a few microseconds, about an enable and a disable
    local st = assert(survey.run(opts{events = {"msr/tsc/"}, kernels = {"copy"}, n = 65536, reps = 6}))
    if not helpers.need(st.cells["msr/tsc/"], "msr/tsc/ does not open here") then return end
    local c = st.cells["msr/tsc/"].copy
    if not helpers.need(c.kept > 0, "every pair was disturbed on this busy machine") then return end
    assert.are.equal("unresolved", c.verdict)
    local gap, edge = c.basis:match("windows (%d+) ticks apart, edges (%d+)")
    assert.is_true(tonumber(gap) < 50 * tonumber(edge), c.basis)
    -- on a busy machine a pair too close to judge can even read negative
    assert.matches("%-%-   msr/tsc/, copy: per iteration %-?[%d.]+, expected [%d.]+ %(rdtsc around each window, by the "
      .. "stream engine; windows %d+ ticks apart, edges %d+ %(under 50x%): too close to judge 2%%%)\n",
      survey.report(st, {}))
  end)
end)
