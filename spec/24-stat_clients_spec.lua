-- What perf's own stat tests (spec/clients/perf-stat.sh) need of pmcsh
-- stat, each held to what perf does or to what the counts must be: stat
-- record and report, a weak group, an event given twice, --interval-count,
-- --summary, --no-csv-summary; and the groups of events/: which count
-- here, perf's -M names, an unknown name, a sysfs group's truth.
local h = require("helpers")
local events = require("pmcsh.events")
local pmc = require("pmcsh.pmc")

-- the -x , rows of a run's stderr (perf's 6 fields or more; not dd's
-- own lines), as lists of fields
local function rows(text)
  local out = {}
  for _, l in ipairs(h.lines(text)) do
    local f = h.fields(l, ",")
    if #f >= 6 then out[#out + 1] = f end
  end
  return out
end

local DD = {"--", "dd", "if=/dev/zero", "of=/dev/null", "bs=4M", "count=1"}
local function with_dd(a)
  table.move(DD, 1, #DD, #a + 1, a)
  return a
end

describe("pmcsh stat record and report", function()
  it("report prints the recorded run's rows, line for line, from a file and from a pipe ('pipe', as perf)", function()
    local dir = h.tmpdir()
    local file = dir .. "/rec.data"
    local r = h.run(with_dd({"stat", "record", "-o", file, "-x", ",", "-e", "page-faults,task-clock,page-faults"}))
    assert.are.equal(0, r.code, r.err)
    local rep = h.run({"stat", "report", "-i", file, "-x", ","})
    assert.are.equal(0, rep.code, rep.err)
    assert.are.same(rows(r.err), rows(rep.err))
    assert.are.equal(3, #rows(rep.err))
    assert.is_true(tonumber(rows(rep.err)[1][1]) > 0)
    -- the table: the record's command named; through a pipe, 'pipe'
    rep = h.run({"stat", "report", "-i", file})
    assert.matches("Performance counter stats for 'dd if=/dev/zero of=/dev/null bs=4M count=1':", rep.err, 1, true)
    local p = io.popen(string.format("%s stat record -o - -e task-clock true | %s stat report -i - 2>&1",
      h.shquote(h.exe), h.shquote(h.exe)))
    local out = p:read("a")
    assert.is_true(p:close())
    assert.matches("Performance counter stats for 'pipe':", out, 1, true)
    assert.matches("msec task%-clock", out)
    os.execute("rm -rf " .. h.shquote(dir))
  end)

  it("report re-aggregates a record of every cpu (-A: a row per online cpu) and refuses it for a command's", function()
    local ok, why = h.can_count_cpu_wide()
    if not h.need(ok, why) then return end
    local dir = h.tmpdir()
    local r = h.run({"stat", "record", "-o", dir .. "/a.data", "-a", "-e", "task-clock", "--", "true"})
    assert.are.equal(0, r.code, r.err)
    local rep = h.run({"stat", "report", "-i", dir .. "/a.data", "-A", "-x", ","})
    assert.are.equal(0, rep.code, rep.err)
    local online = require("pmcsh.machine").online()
    assert.are.equal(#online, #rows(rep.err))
    for i, f in ipairs(rows(rep.err)) do assert.are.equal(string.format("CPU%d", online[i]), f[1]) end
    assert.are.equal(0, h.run({"stat", "record", "-o", dir .. "/c.data", "-e", "task-clock", "--", "true"}).code)
    rep = h.run({"stat", "report", "-i", dir .. "/c.data", "-A"})
    assert.are.equal(1, rep.code)
    assert.matches("c.data counted a command, not cpus", rep.err, 1, true)
    os.execute("rm -rf " .. h.shquote(dir))
  end)

  it("report reads a file as hostile: not a record, a FIFO, a missing file are each a clear error, exit 1", function()
    local dir = h.tmpdir()
    local bad = h.write(dir .. "/bad.data", '{"format":"pmcsh-stat/1","null":false,"rows":"x","target":"command",' ..
      '"what":"x"}\n')
    local r = h.run({"stat", "report", "-i", bad})
    assert.are.equal(1, r.code)
    assert.matches("bad.data:1.rows: expected a list, got string: not a pmcsh stat record", r.err, 1, true)
    r = h.run({"stat", "report", "-i", h.write(dir .. "/junk", "\27[2J junk\n")})
    assert.are.equal(1, r.code)
    assert.matches("junk:1: not a JSON object", r.err, 1, true)
    os.execute("mkfifo " .. h.shquote(dir .. "/fifo"))
    r = h.run({"stat", "report", "-i", dir .. "/fifo"})
    assert.are.equal(1, r.code)
    assert.matches("not a regular file", r.err, 1, true)
    r = h.run({"stat", "report", "-i", dir .. "/none"})
    assert.are.equal(1, r.code)
    assert.not_matches("traceback", r.err)
    -- record takes one run of the whole command, as perf's
    r = h.run({"stat", "record", "-o", dir .. "/r.data", "-r", "2", "--", "true"})
    assert.are.equal(2, r.code)
    assert.matches("-r does not go with record", r.err, 1, true)
    os.execute("rm -rf " .. h.shquote(dir))
  end)
end)

describe("pmcsh stat's events as perf lists them", function()
  it("takes a weak group {a,b}:W: its members counted, the W the group's alone", function()
    local p = pmc.parse_name("{task-clock,page-faults}:uW")
    assert.is_true(p.weak)
    assert.are.same({"task-clock:u", "page-faults:u"}, p.members)
    assert.is_nil(pmc.parse_name("{task-clock,page-faults}").weak)
    assert.has_error(function() pmc.parse_name("{task-clock}:WW") end)
    local r = h.run(with_dd({"stat", "-r", "2", "-x", ",", "-e", "{task-clock,page-faults}:W"}))
    assert.are.equal(0, r.code, r.err)
    local f = rows(r.err)
    assert.are.equal(2, #f)
    assert.are.equal("task-clock", f[1][3])
    assert.are.equal("page-faults", f[2][3])
  end)

  it("counts an event given twice twice, a row each, as perf does: the same faults in both", function()
    local r = h.run(with_dd({"stat", "-x", ",", "-e", "page-faults:u,task-clock,page-faults:u"}))
    assert.are.equal(0, r.code, r.err)
    local f = rows(r.err)
    assert.are.equal(3, #f)
    assert.are.equal("page-faults:u", f[1][3])
    assert.are.equal("page-faults:u", f[3][3])
    -- two counters on the same task from its exec: every fault in both
    assert.are.equal(f[1][1], f[3][1])
    assert.is_true(tonumber(f[1][1]) > 0)
  end)
end)

describe("pmcsh stat --interval-count, --summary, --no-csv-summary", function()
  local function cpu_wide()
    local ok, why = h.can_count_cpu_wide()
    return h.need(ok, why)
  end

  it("stops after N intervals without a command; --summary's row is the intervals' sum (page-faults: exactly)", function()
    if not cpu_wide() then return end
    local r = h.run({"stat", "-e", "page-faults,task-clock", "-x", ",", "-I", "100", "--interval-count", "3", "--summary"})
    assert.are.equal(0, r.code, r.err)
    local sum, n, summary = {0, 0}, 0, {}
    for _, f in ipairs(rows(r.err)) do
      local k = f[4] == "page-faults" and 1 or 2
      if f[1]:match("^%s*summary$") then summary[k] = tonumber(f[2])
      else
        assert.matches("^%s*%d+%.%d+$", f[1])
        sum[k], n = sum[k] + tonumber(f[2]), n + 1
      end
    end
    assert.are.equal(6, n, r.err)   -- 3 intervals of 2 events
    assert.are.equal(sum[1], summary[1])
    assert.is_true(math.abs(sum[2] - summary[2]) <= 0.03, sum[2] .. " vs " .. tostring(summary[2]))  -- %.2f each
    -- --no-csv-summary: the same rows, the summary's unmarked (perf's 5 fields for 6)
    r = h.run({"stat", "-e", "page-faults", "-x", ",", "-I", "100", "--interval-count", "1", "--summary",
      "--no-csv-summary"})
    assert.are.equal(0, r.code, r.err)
    local f = rows(r.err)
    assert.are.equal(2, #f)
    assert.is_nil(r.err:find("summary", 1, true))
    assert.are.equal(#f[1] - 1, #f[2])
    assert.are.equal("page-faults", f[2][3])
  end)

  it("waits for the command after its intervals, and sums them over the whole run's time", function()
    local r = h.run({"stat", "-e", "task-clock", "-I", "100", "--interval-count", "1", "--summary", "--",
      "sleep", "0.5"})
    assert.are.equal(0, r.code, r.err)
    -- (a count, or <not counted> where the command had not run yet in it)
    local ticks = select(2, r.err:gsub("\n +%d+%.%d+ +[^\n]- msec task%-clock", ""))
    assert.are.equal(1, ticks, r.err)
    -- sleep 0.5 ran whole: the summary's elapsed time is at least its 0.5 s
    local el = tonumber(r.err:match("([%d.]+) seconds time elapsed"))
    assert.is_true(el >= 0.5, r.err)
    assert.matches("Performance counter stats for 'sleep 0.5':", r.err, 1, true)
    -- -x --summary without -I: every row marked, as perf 6.1 marks them
    r = h.run({"stat", "-e", "task-clock", "-x", ",", "--summary", "--", "true"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("^ +summary,[%d.]+,msec,task%-clock,", r.err)
    r = h.run({"stat", "-e", "task-clock", "--interval-count", "2", "--", "true"})
    assert.are.equal(2, r.code)
    assert.matches("--interval-count needs -I", r.err, 1, true)
  end)
end)

describe("the groups of events/ here", function()
  it("list --groups says which count here, as stat -M finds them: a counted row for each yes, none for a no", function()
    local r = h.run({"list", "--groups"})
    assert.are.equal(0, r.code, r.err)
    local yes, no = {}, {}
    for _, l in ipairs(h.lines(r.out)) do
      -- the here column: after name, models, events, metrics, pairs (16, 24, 6, 7, 5 wide)
      local name, here = l:match("^([%w_-]+) "), l:sub(64, 67):match("^(%a+)")
      if name and here == "yes" then yes[#yes + 1] = name elseif name and here == "no" then no[#no + 1] = name end
    end
    assert.is_true(#yes + #no >= 20, r.out)
    assert.is_true(#yes >= 1)   -- software's task-clock opens on any Linux
    assert.matches("count here %(written for this machine, an event opens%): [^\n]*software", r.out)
    for _, list in ipairs({yes, no}) do
      for _, name in ipairs(list) do
        local t = assert(events.load(name))
        if t.events then
          local s = h.run({"stat", "-M", name, "-x", ",", "--", "true"})
          assert.are.equal(0, s.code, name .. ": " .. s.err)
          local counted = s.err:match("\n[%d.]+,") or s.err:match("^[%d.]+,")
          assert.are.equal(list == yes, counted ~= nil, name .. ": " .. s.err)
        end
      end
    end
  end)

  it("takes perf's -M names where events/ has the same group, and lists the names for one it has not", function()
    local r = h.run({"stat", "-M", "TopdownL1", "-x", ",", "--", "true"})
    assert.are.equal(0, r.code, r.err)
    local got = {}
    for _, f in ipairs(rows(r.err)) do if #f >= 3 and not f[1]:match("^pmcsh") then got[#got + 1] = f[3] end end
    -- the events of one of the top-down files, as this model spells them
    local found = false
    for _, g in ipairs({"topdown-icl", "topdown-skl", "topdown-zen4"}) do
      local t, path = events.group_here(g)
      if t and table.concat(t.events, ",") == table.concat(got, ",") then found = path end
    end
    assert.is_truthy(found, table.concat(got, ","))
    r = h.run({"stat", "-M", "TopdownL9", "--", "true"})
    assert.are.equal(2, r.code)
    assert.matches("no events file \"TopdownL9\"", r.err)
    assert.matches("the groups: [^\n]*software", r.err)
    assert.matches("perf's names: [^\n]*TopdownL1", r.err)
    assert.not_matches("traceback", r.err)
  end)

  it("judges a sysfs group (energy) by the kernel's power PMU, not by the core PMU", function()
    local root = h.tmpdir()
    local t, path = assert(events.load("energy-intel"))
    local pmus = {names = {}, exposed = false, root = root}
    assert.are.equal(path .. " counts power/energy-pkg/, power/energy-ram/; this machine has no power PMU (no " ..
      root .. "/power)", events.pmu_check(t, path, pmus))
    -- a guest whose power PMU has only the platform's domain
    h.sysfs_write(root .. "/power/events/energy-psys", "event=0x05")
    h.sysfs_write(root .. "/power/events/energy-psys.scale", "2.3283064365386962890625e-10")
    h.sysfs_write(root .. "/power/events/energy-psys.unit", "Joules")
    local why = events.pmu_check(t, path, pmus)
    assert.are.equal(path .. " counts power/energy-pkg/, power/energy-ram/; this machine's power PMU has only " ..
      "energy-psys (" .. root .. "/power/events)", why)
    assert.not_matches("hardware PMU", why)
    local g, gpath, gwhy = events.group_here("energy-intel", pmus)
    assert.is_truthy(g)
    assert.are.equal(why, gwhy)
    -- with the package's domain the group fits, whatever the core PMU
    h.sysfs_write(root .. "/power/events/energy-pkg", "event=0x02")
    assert.is_nil(events.pmu_check(t, path, pmus))
    assert.is_nil(select(3, events.group_here("energy-intel", pmus)))
    os.execute("rm -rf " .. h.shquote(root))
  end)
end)
