-- The survey: packing, physical per-iteration counts on software events,
-- the JSON-lines file (resume after SIGKILL, report from a file), formats
-- and errors.  Small arrays (2M doubles = 16 MiB each) and few repetitions
-- keep it quick.
local helpers = require("helpers")
local kit = helpers.kernel_it(it)  -- specs that count the kernel
local survey = require("pmcsh.survey")
local events = require("pmcsh.events")
local outputs = require("pmcsh.survey.outputs")
local plan = require("pmcsh.survey.plan")
local cjson = require("cjson")

local N = 2 * 1024 * 1024
local KERNELS = {"copy", "scale", "add", "triad"}

-- the lines of a file (none when it is missing)
local function lines_of(path) return helpers.lines(helpers.slurp(path)) end

describe("survey packing (try-open and back off)", function()
  -- a fake PMU with 4 counters: a group of more than 4 hardware events
  -- does not schedule; "X..." events do not exist
  local function try(labels)
    if #labels > 4 then return nil, "the PMU multiplexes this group", 22 end
    for _, l in ipairs(labels) do
      if l:match("^X") then return nil, "unknown event " .. l, 2 end
    end
    return true
  end

  it("packs events into as few groups as the counters allow", function()
    local units = plan.plan{events = {"e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8", "e9", "e10"}}
    local groups, unopened = plan.pack(units, try)
    assert.are.equal(3, #groups)                   -- ceil(10 / 4)
    assert.are.same({"e1", "e2", "e3", "e4"}, groups[1].labels)
    assert.are.same({"e9", "e10"}, groups[3].labels)
    assert.are.equal(0, #unopened)
  end)

  it("keeps a split's :u and :k in one run, and pairs together", function()
    local units, rows = plan.plan{events = {"a", "b", "c"}, split = true, pairs = {{"p", "q"}}}
    local groups = plan.pack(units, try)
    for _, g in ipairs(groups) do
      local set = {}
      for _, l in ipairs(g.labels) do set[l] = true end
      for _, base in ipairs({"a", "b", "c"}) do
        assert.are.equal(set[base .. ":u"], set[base .. ":k"])
      end
      assert.are.equal(set["p:u"], set["q:u"])
      assert.are.equal(set["p:k"], set["q:k"])
    end
    assert.are.equal(3, #groups)   -- a+b | c + p:u,q:u | p:k,q:k  (4 counters)
    assert.are.equal("p:u [p+q]", rows[10].key)
  end)

  it("lists events that do not open, with the reason, and keeps the rest", function()
    local units = plan.plan{events = {"e1", "Xbad", "e2"}}
    local groups, unopened = plan.pack(units, try)
    assert.are.same({"e1", "e2"}, groups[1].labels)
    assert.are.equal(1, #unopened)
    assert.are.equal("Xbad", unopened[1].event)
    assert.matches("unknown event", unopened[1].reason)
  end)

  it("reports one notation per row and each row's unit", function()
    local st = {header = {kernels = {"copy", "triad"}, rows = {{key = "a"}, {key = "task-clock"}}, n = 1024, reps = 2,
      threads = 1, pages = "4k"}, baseline = {}, cells = {
        a = {copy = {value = 5e-08, spread = 20}, triad = {value = 0.5, spread = 0}},
        ["task-clock"] = {copy = {value = 0, spread = 0, unit = "ns"}, triad = {value = 1.25, spread = 0.01, unit = "ns"}},
      }, unopened = {}, runs = {}, done = true}
    local text = survey.report(st)
    -- a's row is scientific; a spread past 999% means nothing: --
    assert.matches("\na%s+5%.00e%-08 %-%-%s+5%.00e%-01 ±0%%", text)
    assert.matches("\ntask%-clock %(ns%)%s+0%.0000 ±0%%%s+1%.2500 ±1%.0%%", text)
  end)

  it("caps the default n at 1/8 of the memory available, saying so", function()
    -- the Intel guest that reported a 480 MiB L3: STREAM's rule asks 5.6 GiB
    local n, note = plan.default_n(251658240, 23 * 2^30)
    assert.is_true(n * 8 * 3 <= 23 * 2^30 / 8)
    assert.is_true(n * 8 * 3 > 23 * 2^30 / 8 - 3 * 8 * 4096)
    assert.are.equal(0, n % 4096)
    assert.matches("asks n = 251658240, 5.6G in all: capped at 1/8 of the 23G available " ..
      "%(%-%-n 251658240 for the full rule%)", note)
    -- a 32 MiB L3 on the same machine: the rule stands
    assert.are.same({4 * 2^22}, {plan.default_n(4 * 2^22, 23 * 2^30)})
  end)

  it("parses pair lists and rejects bad ones", function()
    assert.are.same({{"a", "b"}, {"c", "d"}}, events.pairs("a,b c,d"))
    assert.are.same({{"a", "b"}, {"u/e=1,f=2/", "d"}}, events.pairs("a,b;u/e=1,f=2/,d"))
    local p, err = events.pairs("a,b c")
    assert.is_nil(p); assert.matches("2 to 4 events", err)
    p, err = events.pairs("a,,b")
    assert.is_nil(p); assert.matches("not an event name", err)
    p, err = events.pairs("no-such-pairs-file")
    assert.is_nil(p); assert.matches("no events file", err)
    for _, name in ipairs({"pairs-skl", "pairs-zen"}) do
      local t = assert(events.pairs(name))
      assert.is_true(#t >= 3)
    end
  end)
end)

describe("survey over software events", function()
  local stream = require("pmcsh.stream")
  local desc = {}
  for _, d in ipairs(stream.kernels()) do desc[d.name] = d end
  -- arrays a kernel touches, from its descriptor
  local function arrays(k)
    local set, n = {}, 0
    for _, a in ipairs(desc[k].reads) do if not set[a] then set[a] = true; n = n + 1 end end
    for _, a in ipairs(desc[k].writes) do if not set[a] then set[a] = true; n = n + 1 end end
    return n
  end

  kit("counts first touch of fresh arrays as a window's cost: a fault per page of each array, none per iteration", function()
    -- 8-byte doubles on 4 KiB pages: one fault per 512 elements per array
    -- (a read maps the zero page, a write a new page), in user mode, in
    -- the intercept (a 1-pass and a 2-pass window on fresh arrays fault
    -- alike), and checked so by the survey
    -- (64K elements: windows of a fraction of a millisecond, which a busy
    -- machine seldom preempts; a pair that counted a context switch is
    -- dropped, and a cell with every pair dropped has no value to check)
    local n = 65536
    local fresh = assert(survey.run{events = {"page-faults"}, fresh = true,
                                    n = n, reps = 10, baseline = false, progress = false, quiet = true})
    local checked = 0
    for _, k in ipairs(KERNELS) do
      local u, kk = fresh.cells["page-faults:u"][k], fresh.cells["page-faults:k"][k]
      -- each window touches a slice of the fresh arrays (the header's)
      local want = arrays(k) * fresh.header.slice / 512
      assert.is_true(fresh.header.slice % 512 == 0 and fresh.header.slice <= n // 2, "slice " .. fresh.header.slice)
      assert.are.equal(want, u.expected, k)
      if u.kept > 0 then
        checked = checked + 1
        -- the sanitizer's shadow pages fault in the process's first window
        -- only: the intercept (2 x 1-pass - 2-pass) counts them twice
        local _, hi = helpers.touch_faults(want)
        assert.is_true(u.intercept >= want and u.intercept <= want + 2 * (hi - want) + arrays(k),
          string.format("%s: %.1f faults per window, want %d", k, u.intercept, want))
        assert.is_true(math.abs(u.value) < 1e-4 + (hi - want) / n, k .. ": no fault per iteration")
        assert.are.equal("pass", u.verdict, k)
        assert.is_true(kk.intercept < 1 and kk.value < 1e-4, k .. ": first touch is user-mode work")
      else
        assert.are.equal("unresolved", u.verdict, k)
      end
    end
    local warm = assert(survey.run{events = {"page-faults"}, split = true, n = N, reps = 10,
                                   baseline = false, progress = false, quiet = true})
    for _, k in ipairs(KERNELS) do
      local c = warm.cells["page-faults:u"][k]
      if c.kept > 0 then assert.is_true(c.value < 1e-6, k .. ": warmed arrays do not fault") end
    end
    helpers.need(checked > 0, "every pair was disturbed on this busy machine")
  end)

  it("counts TSC ticks per iteration = tsc_hz * task-clock per iteration, pair by pair", function()
    -- msr/tsc/ counts per task, as task-clock does: both stop while another
    -- process has the cpu, so in each pair of windows the slope of the
    -- ticks is tsc_hz times the slope of task-clock (ns) whatever the load.
    -- The edges of the windows (enable, disable) cancel in the slopes.
    local st = assert(survey.run{events = {"msr/tsc/", "task-clock"}, n = 4 * N, reps = 6,
                                 baseline = false, progress = false, quiet = true})
    if not helpers.need(st.cells["msr/tsc/"], "msr/tsc/ does not open here") then return end
    -- every pair, those a context switch disturbed too (the survey drops
    -- them from its cells; here they are the point): the windows' own slopes
    local metrics = require("pmcsh.metrics")
    for _, r in ipairs(st.runs) do
      if not helpers.need(r.tsc_hz, "no constant TSC: the stream engine reports no tsc_hz") then return end
      local tsc = metrics.two_window(r.work, st.cells["msr/tsc/"][r.kernel].windows)
      local clock = metrics.two_window(r.work, st.cells["task-clock"][r.kernel].windows)
      local ratios = {}
      for i = 1, #tsc do ratios[i] = tsc[i] / (r.tsc_hz * clock[i] * 1e-9) end
      local med = metrics.stats(ratios).median
      assert.is_true(math.abs(med - 1) < 0.02, string.format(
        "%s: the median pair's ticks are %.4f of tsc_hz * task-clock", r.kernel, med))
    end
  end)
end)

describe("a survey on a machine without a hardware PMU", function()
  it("says so in its first lines, before anything is measured", function()
    if not helpers.need(not require("pmcsh.pmc").environment().cpu_pmu, "this machine exposes a hardware PMU") then
      return
    end
    local r = helpers.run({"survey", "-k", "copy", "-e", "task-clock", "--n", "64K", "-r", "2"})
    assert.are.equal(0, r.code, r.err)
    local first = helpers.lines(r.err)
    assert.matches("^pmcsh survey: n = ", first[1])
    assert.matches("^pmcsh survey: no hardware PMU is exposed here: cycles, instructions", first[2])
  end)
end)

describe("a cell with nothing under it", function()
  local cell = require("pmcsh.survey.cell")
  local dir
  setup(function() dir = helpers.tmpdir() end)
  teardown(function() os.execute("rm -rf '" .. dir .. "'") end)

  it("is classed only on 3 kept pairs or more: one pair agrees with itself, two are one comparison", function()
    local function c(kept, dropped)
      return {method = "two-window", kept = kept, dropped = dropped, value = 1, min = 1, max = 1, spread = 0}
    end
    assert.are.equal(3, cell.MIN_KEPT)
    assert.is_nil(cell.classify(c(1, 0)))
    assert.is_nil(cell.classify(c(2, 3)))
    assert.are.equal("few", cell.standing(c(2, 3)))
    assert.are.equal("2 of 5 pairs kept: too few to class (at least 3)", cell.why(c(2, 3)))
    assert.are.equal("exact", cell.classify(c(3, 2)))
    -- zero compares no pairs: one kept pair with no count in its windows is zero
    local z = c(1, 4)
    z.zero, z.value, z.min, z.max = true, 0, 0, 0
    assert.are.equal("zero", cell.classify(z))
    -- every pair disturbed: their estimate, marked, no class
    local d = c(0, 5)
    d.disturbed = true
    assert.are.equal("disturbed", cell.standing(d))
    assert.is_nil(cell.classify(d))
    assert.matches("^every pair of windows disturbed %(0 of 5 kept%)", cell.why(d))
    -- no value at all (an older file's every-pair-disturbed cell): dropped,
    -- no class even where the file says one
    local old = c(0, 5)
    old.class, old.value = "exact", nil
    assert.are.equal("dropped", cell.standing(old))
    assert.is_nil(cell.class_of(old))
    assert.is_nil(cell.classify(old))
  end)

  -- A STREAM-convention copy that sleeps 100 us first: a sleep blocks (the
  -- timer's slack alone is 50 us), so the thread is switched out inside
  -- every window it runs in, whatever the host's speed and load, and every
  -- pair of windows counts a context switch.
  local SLEEPY = [[
#include <stddef.h>
#include <time.h>
double sleepy(double *restrict a, double *restrict b, double *restrict c, double s, size_t n)
{
	struct timespec ts = {0, 100000};
	(void)a; (void)s;
	nanosleep(&ts, NULL);
	for (size_t i = 0; i < n; i++)
		c[i] = b[i];
	return 0;
}
]]

  kit("is marked disturbed in the table, CSV and JSON: the disturbed pairs' estimate, no class, no check passed",
      function()
    helpers.write(dir .. "/sleepy.c", SLEEPY)
    local file = dir .. "/disturbed.jsonl"
    -- fresh arrays, so first touch is checked too; --budget 0: one call a
    -- run, however many pairs are disturbed
    local r = helpers.run({"survey", "--loop", dir .. "/sleepy.c:sleepy", "-e", "page-faults,context-switches,task-clock,msr/tsc/",
      "--fresh", "--n", "64K", "-r", "6", "-t", "1", "--budget", "0", "--out", file})
    assert.are.equal(0, r.code, r.err)
    local st = assert(survey.load(file))
    local rows, made = 0, nil
    for key, byk in pairs(st.cells) do
      local c = byk.sleepy
      rows = rows + 1
      assert.is_true(c.disturbed, key)
      assert.are.equal(0, c.kept, key)
      made = made or math.tointeger(c.dropped)
      assert.is_true(made >= 3 and c.dropped == made, key .. ": " .. tostring(c.dropped) .. " pairs made")
      assert.is_number(c.value, key)   -- the best estimate the disturbed pairs allow
      assert.are.equal("disturbed", cell.standing(c), key)
      assert.is_nil(c.class, key)
      assert.are_not.equal("pass", c.verdict, key)
    end
    assert.is_true(rows >= 5, rows .. " rows")     -- page-faults and context-switches :u/:k, task-clock
    -- the table: the column's 0 of made, each cell a value marked !, no class, no ok
    local t = helpers.run({"survey", "--report", file, "--all"})
    assert.are.equal(0, t.code, t.err)
    local head = t.out:match("^(.-)\n\n")
    assert.matches("\nkept / made%s+0/" .. made .. " pairs%s+1 thread\n", head)
    local shown = 0
    for line in head:gmatch("[^\n]+") do
      if line:match("^[%w%-/]+[:%w]* ") and not line:match("^Events") and not line:match("^kept") then
        assert.matches("^%S+.-%s+%-?[%d.e+%-]+ %S*!%s+%-%-$", line)
        shown = shown + 1
      end
    end
    assert.are.equal(rows, shown)
    assert.not_matches("\n  ok ", t.out)
    -- the checks that cannot be made say why: first touch, and the TSC where it opens
    assert.matches("\n  %-%-   page%-faults:u, sleepy: per window [%d.e+%-]+, expected %d+[.%d]* %b()\n", t.out)
    assert.matches("every pair of windows disturbed %(0 of " .. made .. " kept%)[^\n]*: nothing to check%)", t.out)
    assert.matches("! = every pair of the cell's run%s+disturbed", t.out)
    -- CSV and JSON: a value, no class, 0 pairs kept of those made, disturbed, and why
    local csv = helpers.run({"survey", "--report", file, "--csv"})
    assert.are.equal(0, csv.code, csv.err)
    local lines = helpers.lines(csv.out)
    local col = {}
    for i, f in ipairs(helpers.fields(lines[1], ",")) do col[f] = i end
    for i = #lines, 2, -1 do if not lines[i]:match("^event,") then table.remove(lines, i) end end
    assert.are.equal(rows + 1, #lines)
    for i = 2, #lines do
      -- a quoted field (the note) keeps its commas
      local f = helpers.fields((lines[i]:gsub('"[^"]*"', function(q) return (q:gsub(",", ";")) end)), ",")
      assert.are_not.equal("", f[col.value], lines[i])
      assert.are.equal("", f[col.class], lines[i])
      assert.are.equal("true", f[col.disturbed], lines[i])
      assert.are.same({"0", tostring(made), "0", tostring(made)},
        {f[col.reps], f[col.dropped], f[col.pairs_kept], f[col.pairs_total]})
      assert.are_not.equal("pass", f[col.verdict])
      assert.matches('^"?every pair of windows disturbed %(0 of ' .. made .. ' kept%)', f[col.note])
    end
    local js = helpers.run({"survey", "--report", file, "--json"})
    assert.are.equal(0, js.code, js.err)
    local _, all = helpers.json_lines(js.out)
    local objs = {}
    for _, o in ipairs(all) do if o.kind == "event" then objs[#objs + 1] = o end end
    assert.are.equal(rows, #objs)
    for _, o in ipairs(objs) do
      assert.is_number(o.value, o.name)
      assert.are.equal(cjson.null, o.class, o.name)
      assert.is_true(o.disturbed, o.name)
      assert.are.same({0, made, 0, made}, {o.reps, o.dropped, o.pairs_kept, o.pairs_total})
      assert.are_not.equal("pass", o.verdict)
      assert.matches("^every pair of windows disturbed", o.note)
    end
  end)
end)

describe("survey files", function()
  local dir
  setup(function() dir = helpers.tmpdir() end)
  teardown(function() os.execute("rm -rf '" .. dir .. "'") end)

  local ARGS = {"-e", "page-faults,task-clock,msr/tsc/,context-switches", "--split", "--n", "2M"}
  local function args(extra)
    local a = {"survey"}
    for _, x in ipairs(ARGS) do a[#a + 1] = x end
    for _, x in ipairs(extra) do a[#a + 1] = x end
    return a
  end

  kit("renders a report, CSV and JSON from a file written by an earlier run", function()
    local file = dir .. "/s.jsonl"
    local r = helpers.run(args({"--reps", "3", "--out", file}))
    assert.are.equal(0, r.code, r.err)
    assert.matches("Events per loop iteration %(trimmed mean%)%s+Copy%s+Scale%s+Add%s+Triad", r.out)
    local rep = helpers.run({"survey", "--report", file})
    assert.are.equal(0, rep.code, rep.err)
    assert.are.equal(r.out, rep.out)                 -- the same table, from the file
    -- page-faults:u is zero in every loop, or, where every pair of a loop was
    -- disturbed (a busy machine), a row that says so
    local kept = true
    for _, k in ipairs(KERNELS) do kept = kept and assert(survey.load(file)).cells["page-faults:u"][k].kept > 0 end
    if kept then assert.matches("\nzero in every loop %(%d+; %-%-all shows them%):.* page%-faults:u", rep.out)
    else assert.matches("\npage%-faults:u [^\n]* dropped ", rep.out) end
    assert.matches("MB/s, no counters", rep.out)
    -- CSV and JSON: a record per row and kernel, every record all the
    -- fields in one order, each carrying what the table shows; a JSON
    -- line is a typed metric, its kernel the context
    local fields = outputs.FIELDS
    local csv = helpers.run({"survey", "--report", file, "--csv"})
    assert.are.equal(0, csv.code, csv.err)
    local rows = helpers.lines(csv.out)
    assert.are.equal(table.concat(fields, ","), rows[1])
    local js = helpers.run({"survey", "--report", file, "--json"})
    assert.are.equal(0, js.code, js.err)
    local head, objs, lines = helpers.json_lines(js.out)
    -- the machine that measured: the file's fingerprint, not the reader's
    assert.are.same(assert(survey.load(file)).header.fingerprint, head.fingerprint)
    for _, line in ipairs(lines) do
      local keys = {}
      for k in line:sub(2, -2):gsub("%b{}", "{}"):gsub("%b[]", "[]"):gmatch('"([%w_]+)":') do keys[#keys + 1] = k end
      assert.are.same(outputs.JSON_FIELDS, keys)          -- every key, in one order
    end
    assert.are.equal(#rows - 1, #objs)
    local st = assert(survey.load(file))
    local counted = 0
    for _ in pairs(st.cells) do counted = counted + 1 end
    local cells, figures = {}, {}
    for i, o in ipairs(objs) do
      assert.are.equal("metric", o.type)
      local _, commas = rows[i + 1]:gsub('"[^"]*"', ""):gsub(",", "")   -- a quoted field's own commas aside
      assert.are.equal(#fields - 1, commas, rows[i + 1])
      assert.are.equal(o.kind, rows[i + 1]:match("^[^,]*"))
      if o.kind == "event" then cells[#cells + 1] = o elseif o.kind == "kernel" then figures[#figures + 1] = o end
    end
    assert.are.equal(counted * #KERNELS, #cells)               -- each counted row, each kernel
    -- each loop's bandwidth with no counters: the median over its pairs, so within them
    local bw = 0
    for _, o in ipairs(figures) do
      if o.name == "MB/s, no counters" then
        bw = bw + 1
        assert.are.equal("median slope", o.stat)
        assert.is_true(#o.samples >= 1 and math.min(table.unpack(o.samples)) <= o.value * (1 + 1e-5)
          and o.value <= math.max(table.unpack(o.samples)) * (1 + 1e-5), o.context.kernel)
      end
    end
    assert.are.equal(#KERNELS, bw)
    for i, o in ipairs(cells) do
      assert.are.equal(KERNELS[(i - 1) % #KERNELS + 1], o.context.kernel)
      -- 3 repetitions: 2 pairs of windows at least (a call makes as many as one pass over the arrays holds)
      assert.is_true(o.reps + o.dropped >= 2, o.reps + o.dropped)
      assert.are.equal(N, o.n)
      assert.are.equal("trimmed", o.stat)
      assert.are.same({o.reps, o.reps + o.dropped}, {o.pairs_kept, o.pairs_total})
      -- every pair disturbed: the disturbed pairs' estimate, marked, and the note says so
      local none = o.pairs_kept == 0
      assert.are.equal(none, o.disturbed)
      for _, k in ipairs({"value", "mean", "median", "min", "max", "spread", "mbps", "mbps_no_counters",
                          "ns_per_iteration", "ns_per_iteration_no_counters"}) do
        -- a relative spread has no value where the mean is 0 (null)
        if not (k == "spread" and (o.mean == 0 or o[k] == cjson.null)) then assert.is_number(o[k], k) end
      end
      assert.is_boolean(o.multiplexed)
      local c = st.cells[o.name][o.context.kernel]
      if none then
        assert.matches("^every pair of windows disturbed %(0 of " .. o.pairs_total .. " kept%)", o.note)
        assert.are.equal(cjson.null, o.class)
      else
        assert.is_true(o.min <= o.median and o.median <= o.max)
        assert.is_true(o.value == c.value or math.abs(o.value - c.value) <= 1e-5 * math.abs(c.value))
      end
      assert.matches(o.name == "task-clock" and "^ns per loop iteration$" or "^events per loop iteration$", o.unit)
    end
    assert.matches("^event,page%-faults:u,events per loop iteration,copy,trimmed,", rows[2])
    assert.matches("1 thread, 4k pages[;,]", (rep.out .. rep.err):gsub("%s+", " "))
    -- a header from before the page policy was recorded says so, not "nil pages"
    local lines = helpers.lines(helpers.slurp(file))
    local hdr = cjson.decode(lines[1])
    hdr.pages = nil
    lines[1] = cjson.encode(hdr)
    local old = dir .. "/old.jsonl"
    helpers.write(old, table.concat(lines, "\n") .. "\n")
    local orep = helpers.run({"survey", "--report", old})
    assert.are.equal(0, orep.code, orep.err)
    assert.matches("1 thread, page policy not recorded[;,]", (orep.out .. orep.err):gsub("%s+", " "))
    -- a column keeps one notation: all scientific, or all with the same decimals
    local cols = {}
    for i = 2, #rows do
      -- a quoted field keeps its commas
      local quoted = rows[i]:gsub('"[^"]*"', function(q) return (q:gsub(",", "\1")) end)
      for j, cell in ipairs(helpers.fields(quoted, ",")) do
        cols[j] = cols[j] or {}
        if cell:match("^%-?%d") and cell ~= "0" then table.insert(cols[j], cell) end
      end
    end
    for j, list in pairs(cols) do
      local shape
      for _, cell in ipairs(list) do
        local s = cell:match("e[-+]%d+$") and "sci" or (cell:match("%.(%d+)$") or ""):len()
        shape = shape or s
        assert.are.equal(shape, s, fields[j] .. ": " .. cell)
      end
    end
    -- the file itself: flushed JSON lines, header first, done last
    local l = lines_of(file)
    assert.are.equal("header", cjson.decode(l[1]).type)
    assert.are.equal("done", cjson.decode(l[#l]).type)
  end)

  kit("counts an event that ignores the user/OS filter in one row, and says why", function()
    local r = helpers.run({"survey", "-e", "task-clock,page-faults", "--split", "-k", "copy", "--n", "1M", "--reps", "10"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("^pmcsh survey: n = 1048576 per array, 3 arrays of 8M = 24M\n", r.err)
    -- a value, or on a busy machine every pair disturbed
    assert.matches("\ntask%-clock %(ns%)%s+[%d.]", (r.out:gsub(" dropped ", " 0 ")))
    assert.not_matches("task%-clock:[uk]", r.out:match("^(.-)\n\n"))   -- no :u/:k rows in the table
    if not r.out:match("\nkept / made%s+0/") then
      assert.matches("\nzero in every loop %(2; %-%-all shows them%): page%-faults:u page%-faults:k\n", r.out)
    end
    assert.matches("Counted user%+OS together:\n  task%-clock%s+ignores the user/OS filter %(task%-clock:u and " ..
      "task%-clock:k each counted [%d.e+]+ in a 2 ms user%-mode spin%)", r.out)
  end)

  kit("resumes a survey killed with SIGKILL mid-run to the same rows", function()
    local whole = dir .. "/whole.jsonl"
    local r = helpers.run(args({"--reps", "40", "--out", whole}))
    assert.are.equal(0, r.code, r.err)

    local cut = dir .. "/cut.jsonl"
    local pidf = dir .. "/pid"
    local cmd = {}
    for _, a in ipairs(args({"--reps", "40", "--out", cut})) do cmd[#cmd + 1] = helpers.shquote(a) end
    os.execute(helpers.shquote(helpers.exe) .. " " .. table.concat(cmd, " ") ..
               " >/dev/null 2>&1 & echo $! > " .. pidf)
    local pid = tonumber(helpers.slurp(pidf))
    local sys = require("pmcsh._sys")
    -- kill it once a few runs are in the file, well before the end
    local t0 = sys.now()
    while #lines_of(cut) < 4 and sys.now() - t0 < 30 do sys.sleep(0.002) end
    sys.kill(pid, 9)
    os.execute("while kill -0 " .. pid .. " 2>/dev/null; do sleep 0.01; done")
    local before = lines_of(cut)
    assert.is_true(#before >= 4)
    -- the kill may tear the last line mid-write: torn, it is no "done" either
    local whole_line, last = pcall(cjson.decode, before[#before])
    assert.are_not.equal("done", (whole_line and last or {}).type, "killed before the end")

    local res = helpers.run({"survey", "--resume", cut})
    assert.are.equal(0, res.code, res.err)
    -- finished runs were skipped: each (kernel, group) and baseline once
    local seen, dup = {}, 0
    for _, line in ipairs(lines_of(cut)) do
      local ok, o = pcall(cjson.decode, line)
      if ok and (o.type == "run" or o.type == "baseline") then
        local key = o.type .. "/" .. o.kernel .. "/" .. tostring(o.group) .. "/" .. tostring(o.second)
        if seen[key] then dup = dup + 1 end
        seen[key] = true
      end
    end
    assert.are.equal(0, dup)
    -- the same rows and columns as the uninterrupted survey
    local a = helpers.lines(helpers.run({"survey", "--report", whole, "--csv"}).out)
    local b = helpers.lines(helpers.run({"survey", "--report", cut, "--csv"}).out)
    assert.are.equal(#a, #b)
    for i = 1, #a do
      assert.are.equal(a[i]:match("^[^,]*,[^,]*,[^,]*,[^,]*"), b[i]:match("^[^,]*,[^,]*,[^,]*,[^,]*"))
      local _, ca = a[i]:gsub(",", ""); local _, cb = b[i]:gsub(",", "")
      assert.are.equal(ca, cb)
      if i > 1 and b[i]:match("^event,") then
        local f = helpers.fields(b[i], ",")
        -- a value unless every pair was dropped, a class unless too few were kept; the note says which
        local col = {}
        for j, name in ipairs(outputs.FIELDS) do col[name] = f[j] end
        local kept = tonumber(col.pairs_kept)
        if kept > 0 then assert.are_not.equal("", col.value, "no missing cell: " .. b[i]) end
        if kept >= require("pmcsh.survey.cell").MIN_KEPT or col.class == "zero" then
          assert.are_not.equal("", col.class, "no missing class: " .. b[i])
        else
          assert.matches("^every pair of windows disturbed", kept == 0 and col.note or "every pair of windows disturbed")
          assert.matches(kept == 0 and "" or "too few to class", col.note)
        end
      end
    end
  end)

  kit("skips a torn last line when resuming", function()
    local file = dir .. "/torn.jsonl"
    assert.are.equal(0, helpers.run(args({"--reps", "2", "--out", file})).code)
    local l = lines_of(file)
    -- drop the last two records, tear the one before
    local f = assert(io.open(file, "w"))
    for i = 1, #l - 3 do f:write(l[i], "\n") end
    f:write(l[#l - 2]:sub(1, 20))
    f:close()
    local r = helpers.run({"survey", "--resume", file})
    assert.are.equal(0, r.code, r.err)
    assert.matches("page%-faults:u", r.out)
    assert.is_nil(r.out:match("incomplete"))
  end)
end)

describe("survey errors", function()
  local cases = {
    {{"survey", "-e", "no-such-event"}, "unknown event"},
    {{"survey", "--pairs", "a,b c"}, "bad pair list"},
    {{"survey", "--pairs", "no-such-pairs-file"}, "no events file"},
    {{"survey", "--reps", "0"}, "minimum"},
    {{"survey", "--stat", "mode"}, "not one of"},
    {{"survey", "--kernels", "copy,nosuch", "-e", "page-faults"}, "unknown kernel"},
    {{"survey", "--csv", "--json", "-e", "page-faults"}, "exclude"},
    {{"survey", "--bogus"}, "unknown option"},
  }
  for _, c in ipairs(cases) do
    it("exits 2 for: " .. table.concat(c[1], " ", 2), function()
      local r = helpers.run(c[1])
      assert.are.equal(2, r.code)
      assert.matches(c[2], r.err)
      assert.are.equal("", r.out)
    end)
  end

  it("exits 1 with a message for a report file that is missing or not a survey", function()
    local r = helpers.run({"survey", "--report", "/nonexistent/s.jsonl"})
    assert.are.equal(1, r.code)
    assert.matches("cannot read", r.err)
    local tmp = helpers.write(nil, '{"type":"something"}\n')
    r = helpers.run({"survey", "--report", tmp})
    os.remove(tmp)
    assert.are.equal(1, r.code)
    assert.matches(":1: not a survey record %(type something%)", r.err)
  end)
end)

describe("survey results are never lost", function()
  local sys = require("pmcsh._sys")
  local dir
  setup(function() dir = helpers.tmpdir() end)
  teardown(function() os.execute("rm -rf '" .. dir .. "'") end)
  local SMALL = {"survey", "-e", "page-faults", "-k", "copy", "--n", "64K", "--reps", "1"}
  local function with(extra)
    local a = {table.unpack(SMALL)}
    for _, x in ipairs(extra) do a[#a + 1] = x end
    return a
  end

  kit("refuses to overwrite a results file, and a mistyped command leaves it whole", function()
    local file = dir .. "/p.jsonl"
    assert.are.equal(0, helpers.run(with({"--out", file})).code)
    local before = helpers.slurp(file)
    local r = helpers.run({"survey", "-e", "task-clock", "-k", "copy", "--n", "0", "--out", file})
    assert.are.equal(2, r.code, r.err)
    assert.matches("option %-%-n: 0 is below the minimum 1", r.err)
    r = helpers.run(with({"--out", file}))
    assert.are.equal(1, r.code)
    assert.matches("already holds results: %-%-resume .* continues that survey", r.err)
    assert.not_matches("finished runs are kept", r.err)
    assert.are.equal(before, helpers.slurp(file))
    r = helpers.run(with({"--reps", "1000001", "--out", dir .. "/new.jsonl"}))
    assert.are.equal(2, r.code)
    assert.is_nil(io.open(dir .. "/new.jsonl"))             -- refused before the file was made
  end)

  kit("refuses a second writer while the file is locked", function()
    local file = dir .. "/locked.jsonl"
    assert.are.equal(0, helpers.run(with({"--out", file})).code)
    local lines = select(2, helpers.slurp(file):gsub("\n", ""))
    -- drop the done line, so the survey is resumable, then hold the lock
    local text = helpers.slurp(file):gsub('{[^\n]*"type":"done"[^\n]*}\n', "")
    helpers.write(file, text)
    local f = assert(io.open(file, "a"))
    assert(sys.lock(f))
    local r = helpers.run({"survey", "--resume", file})
    assert.are.equal(1, r.code)
    assert.matches("is being written by another pmcsh", r.err)
    f:close()
    r = helpers.run({"survey", "--resume", file})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal(lines, select(2, helpers.slurp(file):gsub("\n", "")))
    -- a finished survey resumes to nothing, and writes nothing
    r = helpers.run({"survey", "--resume", file})
    assert.are.equal(0, r.code, r.err)
    assert.matches("is complete: nothing to resume", r.err)
    assert.are.equal(lines, select(2, helpers.slurp(file):gsub("\n", "")))
  end)

  it("fails, saying why, when a write fails", function()
    local r = helpers.run(with({"--out", "/dev/full"}))
    assert.are.equal(1, r.code)
    assert.matches("/dev/full is not a regular file", r.err)
    if not helpers.need(helpers.is_root(), "needs root to mount a full tmpfs") then return end
    local mnt = dir .. "/full"
    os.execute("mkdir -p " .. mnt)
    if not helpers.need(os.execute("mount -t tmpfs -o size=8k tmpfs " .. mnt .. " 2>/dev/null"), "cannot mount a tmpfs here") then return end
    r = helpers.run({"survey", "-e", "page-faults,minor-faults,major-faults,context-switches,cpu-migrations," ..
      "alignment-faults,emulation-faults", "--split", "-k", "copy,scale,add,triad", "--n", "64K", "--reps", "30",
      "--out", mnt .. "/s.jsonl"})
    os.execute("umount " .. mnt)
    assert.are.equal(1, r.code, r.out)
    assert.matches("cannot write the results file .*No space left on device", r.err)
    local p = io.popen(helpers.shquote(helpers.exe) .. " list 2>&1 >/dev/full; echo $?")
    local out = p:read("a"); p:close()
    assert.matches("error writing standard output: No space left on device\n1\n$", out)
  end)

  kit("reports a group of events/ from anywhere, and runs no group file a results file names", function()
    local r = helpers.run({"survey", "--group", "software", "-k", "copy", "--n", "64K", "--reps", "2", "--out", "g.jsonl"},
      {env = "cd " .. dir .. " &&"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("\nMetrics %(events/software%.lua%)", r.out)
    local elsewhere = helpers.run({"survey", "--report", dir .. "/g.jsonl"}, {env = "cd / &&"})
    assert.are.equal(0, elsewhere.code, elsewhere.err)
    assert.are.equal(r.out, elsewhere.out)
    -- the user's own file: named by a path, its metrics shown as it runs;
    -- a results file naming it (or any path) loads nothing (A6)
    helpers.write(dir .. "/mygrp.lua", 'return {events = {"task-clock"}, metrics = {{name = "m42", ' ..
      'fn = function() return 42 end}}}')
    local bare = helpers.run({"survey", "--group", "mygrp.lua", "-k", "copy", "--n", "64K", "--reps", "2"},
      {env = "cd " .. dir .. " &&"})
    assert.are.equal(2, bare.code)
    assert.matches("needs a path: ./mygrp.lua", bare.err, 1, true)
    r = helpers.run({"survey", "--group", "./mygrp.lua", "-k", "copy", "--n", "64K", "--reps", "2", "--out", "m.jsonl"},
      {env = "cd " .. dir .. " &&"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("\nm42 +42%.0000", r.out)
    elsewhere = helpers.run({"survey", "--report", dir .. "/m.jsonl"}, {env = "cd / &&"})
    assert.are.equal(0, elsewhere.code, elsewhere.err)
    assert.not_matches("m42", elsewhere.out)
    assert.matches("Metrics: none shown: the group's metrics are in " .. dir .. "/mygrp.lua, which pmcsh does not load",
      elsewhere.out, 1, true)
  end)

  kit("stops on Ctrl-C at any point with status 130, the resume hint and no traceback", function()
    local stopped = 0
    for _, delay in ipairs({"0.05", "0.2", "0.4", "0.7"}) do
      local file = dir .. "/int" .. delay .. ".jsonl"
      local p = io.popen(string.format("%s survey -e page-faults,task-clock -k copy,scale,add,triad --n 4M " ..
        "--reps 20 --out %s >/dev/null 2>%s.err & p=$!; sleep %s; kill -INT $p 2>/dev/null; wait $p; echo $?",
        helpers.shquote(helpers.exe), file, file, delay))
      local code = tonumber(p:read("a"))
      p:close()
      local err = helpers.slurp(file .. ".err")
      if code ~= 0 then                                 -- 0: it finished before the signal
        stopped = stopped + 1
        assert.are.equal(130, code, err)
        assert.not_matches("traceback", err)
        if io.open(file) then assert.matches("continue with: pmcsh survey %-%-resume", err) end
      end
    end
    assert.is_true(stopped >= 1)
  end)

  it("checks every line of a file it reads, and says which and what", function()
    local hdr = '{"type":"header","format":"pmcsh-survey/1","kernels":["copy"],"n":1024,"reps":1,' ..
                '"units":[{"labels":["a"],"keys":["a"],"kind":"single"}],"rows":[{"key":"a"}]%s}\n'
    local cases = {
      {hdr:format(',"chase":null'), ":1 %(header%)%.chase: expected an object, got null"},
      {hdr:format(""):gsub('"kernels":%["copy"%]', '"kernels":"copy"'), "%.kernels: expected a list, got string"},
      {'{"type":"header","format":"pmcsh-survey/1","kernels":["copy"],"n":1024,"reps":1,"rows":[]}\n',
        ":1 %(header%): no field units"},
      {hdr:format("") .. '{"type":"run","kernel":"copy","group":1,"cells":[{"count":1}]}\n', ":2 %(run%)%.cells%[1%]: no field key"},
      {hdr:format("") .. '{"type":"run","kernel":"copy","group":1,"cells":[{"key":"a","count":"7"}]}\n',
        "%.cells%[1%]%.count: expected number, got string"},
      {'{"type":"run"}\n', ":1: a survey file starts with its header"},
    }
    for i, c in ipairs(cases) do
      local file = dir .. "/bad" .. i .. ".jsonl"
      helpers.write(file, c[1])
      for _, mode in ipairs({"--report", "--resume"}) do
        local r = helpers.run({"survey", mode, file})
        assert.are.equal(1, r.code, r.err)
        assert.matches(c[2], r.err)
        assert.not_matches("traceback", r.err)
      end
    end
    local r = helpers.run({"survey", "--report", "/dev/urandom"})
    assert.are.equal(1, r.code)
    assert.matches("/dev/urandom: not a regular file", r.err)
    local sparse = dir .. "/sparse.jsonl"
    os.execute("truncate -s 1G " .. sparse)
    local t0 = sys.now()
    r = helpers.run({"survey", "--report", sparse})
    assert.are.equal(1, r.code)
    assert.matches("a line over %d+ bytes: not a pmcsh results file", r.err)
    assert.is_true(sys.now() - t0 < 5)
  end)
end)

describe("survey --pattern", function()
  local events = require("pmcsh.events")
  local pmc = require("pmcsh.pmc")
  local function identity(name)
    local i = assert(pmc.info(name), name)
    return string.format("%d:%d", i.type, i.config)
  end

  it("keeps one name per event, the user's or perf's common one, and says which do not open", function()
    -- libpfm4's perf PMU names page-faults three ways on every machine
    local listed = {}
    for _, e in ipairs(pmc.list("fault")) do listed[e.name] = e end
    for _, alias in ipairs({"perf::PAGE-FAULTS", "perf::FAULTS", "perf::PERF_COUNT_SW_PAGE_FAULTS"}) do
      assert.is_truthy(listed[alias], alias .. " listed")
    end
    local names, unopened = events.matching("fault")
    local seen, ids = {}, {}
    for _, n in ipairs(names) do
      seen[n] = true
      local id = identity(n)
      assert.is_nil(ids[id], n .. " and " .. tostring(ids[id]) .. " are one event")
      ids[id] = n
    end
    assert.is_true(seen["page-faults"] and seen["minor-faults"] and seen["major-faults"])
    assert.is_nil(seen["perf::PAGE-FAULTS"] or seen["perf::FAULTS"] or seen["perf::PERF_COUNT_SW_PAGE_FAULTS"])
    -- exactly the listed events that do not open, each with the kernel's reason
    local shut = {}
    for name, e in pairs(listed) do if e.opens == false then shut[name] = true end end
    for _, u in ipairs(unopened) do
      assert.is_true(shut[u.event], u.event)
      shut[u.event] = nil
      local ok, why = pmc.group({u.event})
      if ok then ok:close() end
      assert.are.equal(why, u.reason)
    end
    assert.are.same({}, shut)
    -- the user's own name is kept for its event
    names = events.matching("fault", {"faults"})
    assert.are.equal("faults", names[1])
    for _, n in ipairs(names) do assert.are_not.equal("page-faults", n) end
  end)

  kit("surveys each event of the pattern once, page-faults not three times", function()
    local r = helpers.run({"survey", "--pattern", "fault", "-k", "copy", "--n", "65536", "-r", "2", "--json"})
    assert.are.equal(0, r.code, r.err)
    local _, recs = helpers.json_lines(r.out)
    local seen = {}
    for _, rec in ipairs(recs) do seen[rec.name] = (seen[rec.name] or 0) + 1 end
    assert.are.equal(1, seen["page-faults:u"])
    assert.are.equal(1, seen["page-faults:k"])
    for name in pairs(seen) do assert.not_matches("^perf::", name) end
    assert.are.equal(1, seen["minor-faults:u"])
  end)

  it("says which events match but cannot open, exit 1, where none opens", function()
    local env = require("pmcsh.pmc").environment()
    if not helpers.need(env.cpu_pmu == false, "a hardware PMU is exposed: branch-misses may open here") then return end
    local r = helpers.run({"survey", "--pattern", "branch-misses", "-k", "copy", "--n", "65536"})
    assert.are.equal(1, r.code)
    assert.matches("^pmcsh survey: %d+ events? match%a* \"branch%-misses\" but none can be opened here: " ..
      "[^\n]*perf::BRANCH%-MISSES[^\n]*; cannot count", r.err)
    assert.not_matches("no event matches", r.err)
  end)
end)
