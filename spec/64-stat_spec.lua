-- pmcsh stat as perf stat 6.1: an event this machine cannot count is a
-- '<not supported>' row and the run goes on; the command's user and sys
-- time follow the elapsed time.  Compared field by field with perf stat
-- where perf is installed (pending otherwise).
local h = require("helpers")
local pmc = require("pmcsh.pmc")

-- an event that no machine counts: a generic hardware event is refused on a
-- VM without a PMU; where the PMU exists, pick one that still cannot open
local function uncountable()
  for _, ev in ipairs{"cycles", "instructions", "branch-misses"} do
    if pmc.info(ev) and not pmc.group{ev} then return ev end
  end
end

describe("pmcsh stat, events that cannot be counted", function()
  it("shows <not supported> and runs the command with the others", function()
    local ev = uncountable()
    if not h.need(ev, "every generic hardware event counts here") then return end
    local r = h.run({"stat", "-e", "task-clock," .. ev, "--", "true"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("task%-clock", r.err)
    assert.matches("<not supported>%s+" .. ev, r.err)
    -- -x: the same 7 fields as a counted row of one run
    r = h.run({"stat", "-x", ",", "-e", "task-clock," .. ev, "--", "true"})
    local ls = h.lines(r.err)
    assert.are.equal(2, #ls)
    assert.are.equal(#h.fields(ls[1], ","), #h.fields(ls[2], ","))
    assert.are.same({"<not supported>", "", ev, "0", "100.00", "", ""}, h.fields(ls[2], ","))
    -- only uncountable events: still a run, status 0, like perf
    r = h.run({"stat", "-e", ev, "--", "true"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("<not supported>", r.err)
  end)

  it("still refuses an unknown name (status 2)", function()
    local r = h.run({"stat", "-e", "no-such-event", "--", "true"})
    assert.are.equal(2, r.code, r.err)
    assert.matches("unknown event", r.err)
  end)

  it("has the same -x rows as perf stat", function()
    local ev = uncountable()
    if not h.need(ev, "every generic hardware event counts here") then return end
    if not h.need(os.execute("perf stat -e task-clock true >/dev/null 2>&1"), "perf is not installed") then return end
    local p = io.popen("perf stat -x, -e task-clock," .. ev .. " -- true 2>&1")
    local theirs = h.lines(p:read("a"))
    p:close()
    local ours = h.lines(h.run({"stat", "-x", ",", "-e", "task-clock," .. ev, "--", "true"}).err)
    assert.are.equal(#theirs, #ours)
    for i = 1, #ours do
      local a, b = h.fields(theirs[i], ","), h.fields(ours[i], ",")
      assert.are.equal(#a, #b)
      assert.are.equal(a[3], b[3])
    end
    assert.are.equal(h.fields(theirs[2], ",")[1], h.fields(ours[2], ",")[1])
  end)
end)

describe("pmcsh stat -e", function()
  it("keeps a sysfs event with several terms whole, alone and inside {a,b}", function()
    -- perf's pmu/a=1,b=2/: the commas inside the slashes are the event's
    local have = h.slurp("/sys/bus/event_source/devices/msr/format/event")
    if not h.need(have, "no msr PMU with an event format here") then return end
    for _, e in ipairs({"msr/event=0x00,event=0x00/", "{task-clock,msr/event=0x00,event=0x00/}"}) do
      local r = h.run({"stat", "-x", ",", "-e", e, "--", "true"})
      assert.are.equal(0, r.code, r.err)
      local row = r.err:match("\n?(%d+),,msr/event=0x00,event=0x00/,")
      assert.is_truthy(row, r.err)
      assert.is_true(tonumber(row) > 0)
    end
  end)
end)

describe("pmcsh stat, seconds user and sys", function()
  it("prints them after the elapsed time for one run, as perf does", function()
    -- dd of 300 MiB from /dev/zero is mostly system time: sys > 0, and
    -- user + sys within the elapsed time (plus 10 ms of rusage rounding)
    local r = h.run({"stat", "-e", "task-clock", "--", "dd", "if=/dev/zero", "of=/dev/null", "bs=1M", "count=300"})
    assert.are.equal(0, r.code, r.err)
    local el = tonumber(r.err:match("([%d.]+) seconds time elapsed"))
    local u = tonumber(r.err:match("([%d.]+) seconds user"))
    local s = tonumber(r.err:match("([%d.]+) seconds sys"))
    assert.is_truthy(el and u and s)
    assert.is_true(s > 0)
    assert.is_true(u + s <= el + 0.01)
  end)

  it("times the command from its release, as perf does: one thread never uses more than the elapsed time", function()
    -- task-clock counts from the exec (enable_on_exec), elapsed from just
    -- before it: CPUs utilized of a single-threaded command stays below 1
    -- (timed from the exec as the parent saw it, a parent woken late read
    -- 20 us for a 1.4 ms ls: 66 CPUs utilized)
    for _ = 1, 20 do
      local r = h.run({"stat", "-x", ",", "-e", "task-clock", "--", "ls", "/"})
      assert.are.equal(0, r.code, r.err)
      local cpus = tonumber(r.err:match("task%-clock,%d+,[%d.]+,([%d.]+),CPUs utilized"))
      assert.is_truthy(cpus, r.err)
      assert.is_true(cpus <= 1.0, r.err)
    end
  end)

  it("leaves them out with -r, as perf does", function()
    local r = h.run({"stat", "-r", "2", "-e", "task-clock", "--", "true"})
    assert.is_nil(r.err:match("seconds user"))
  end)
end)

describe("pmcsh stat -o FILE", function()
  it("writes the counts to the file after a '# started on' line, --append adds", function()
    local f = h.tmpdir() .. "/stat.out"
    local r = h.run({"stat", "-o", f, "-x", ",", "-e", "task-clock", "--", "true"})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("", r.err)
    local t = io.open(f):read("a")
    assert.matches("^# started on ", t)
    assert.matches("\n,?[%d.]+,msec,task%-clock,", t)
    r = h.run({"stat", "-o", f, "--append", "-x", ",", "-e", "task-clock", "--", "true"})
    assert.are.equal(0, r.code, r.err)
    local _, runs = io.open(f):read("a"):gsub("task%-clock", "")
    assert.are.equal(2, runs)
  end)

  it("refuses --append without -o, and an unwritable path before running", function()
    assert.are.equal(2, h.run({"stat", "--append", "--", "true"}).code)
    local ran = h.tmpdir() .. "/ran"
    local r = h.run({"stat", "-o", "/nonexistent/dir/x", "--", "touch", ran})
    assert.are.equal(1, r.code)
    assert.is_nil(io.open(ran))
  end)
end)

-- ---- perf stat 6.1's shapes in every mode --------------------------------
-- The shape of an output: per line, the -x fields' count, the JSON keys in
-- order, or the table's whitespace-separated token count (values aside, the
-- same words: units, metric names, <not supported>, headers, footers).
-- pmcsh's JSON is perf's from its first line: no line of its own.
local function shape(text, fmt)
  local out = {}
  local lines = h.lines(text)
  for _, l in ipairs(lines) do
    if not l:match("^# started on") then
      if fmt == "csv" then out[#out + 1] = tostring(#h.fields(l, ","))
      elseif fmt == "json" then
        local keys = {}
        for k in l:gmatch('"([%w%-]+)" :') do keys[#keys + 1] = k end
        out[#out + 1] = table.concat(keys, " ")
      else
        -- a noise of exactly 0% is left out by both, so its presence is the run's
        local n = 0
        for _ in l:gsub("%( %+%-%s*[%d.]+%% %)", ""):gmatch("%S+") do n = n + 1 end
        out[#out + 1] = (l:match("^%s*#") and "header " or "") .. n
      end
    end
  end
  return out
end

local function perf_ok()
  return os.execute("perf stat -e task-clock true >/dev/null 2>&1")
end


describe("pmcsh stat against perf stat 6.1, mode by mode", function()
  local ev = "task-clock,page-faults" .. (uncountable() and ("," .. uncountable()) or "")
  local sleeper   -- one sleeping thread for -t
  local function with_sleeper()
    if not sleeper then
      local p = io.popen("sleep 30 >/dev/null 2>&1 & echo $!")
      sleeper = p:read("l")
      p:close()
    end
    return sleeper
  end
  teardown(function() if sleeper then os.execute("kill " .. sleeper .. " 2>/dev/null") end end)

  local modes = {
    {name = "one command"},
    {name = "-r 2", args = {"-r", "2"}},
    {name = "-I 100", args = {"-I", "100"}, interval = true},
    {name = "-a", args = {"-a"}, cpus = true},
    {name = "-C 0", args = {"-C", "0"}, cpus = true},
    {name = "-a -A", args = {"-a", "-A"}, cpus = true},
    {name = "-a --per-socket", args = {"-a", "--per-socket"}, cpus = true},
    {name = "-a --per-die", args = {"-a", "--per-die"}, cpus = true},
    {name = "-a --per-core", args = {"-a", "--per-core"}, cpus = true},
    {name = "-a --per-node", args = {"-a", "--per-node"}, cpus = true},
    {name = "-a -I 100 -A", args = {"-a", "-I", "100", "-A"}, cpus = true, interval = true},
    {name = "-a -I 100 --per-socket", args = {"-a", "-I", "100", "--per-socket"}, cpus = true, interval = true},
    {name = "-t TID --per-thread", args = {"-t", "TID", "--per-thread"}, thread = true},
    -- perf stat's everyday options
    {name = "-d", args = {"-d"}},
    {name = "-ddd", args = {"-ddd"}},
    {name = "-d -d", args = {"-d", "-d"}},
    {name = "-n", args = {"-n"}},
    {name = "-n -r 2", args = {"-n", "-r", "2"}},
    {name = "--all-user", args = {"--all-user"}},
    {name = "--all-kernel", args = {"--all-kernel"}},
    {name = "--metric-only", args = {"--metric-only"}},
    {name = "-B", args = {"-B"}, table_only = true},
  }
  for _, m in ipairs(modes) do
    it("has perf's lines, fields and keys with " .. m.name .. " (table, -x and --json)", function()
      if not h.need(perf_ok(), "perf is not installed (or may not count here)") then return end
      if m.cpus then
        local ok, why = h.can_count_cpu_wide()
        if not h.need(ok, why) then return end
      end
      local args = {}
      for i, a in ipairs(m.args or {}) do args[i] = a == "TID" and with_sleeper() or a end
      for _, fmt in ipairs(m.table_only and {"std"} or {"std", "csv", "json"}) do
        local a = {"stat"}
        for _, x in ipairs(args) do a[#a + 1] = x end
        if fmt == "csv" then a[#a + 1] = "-x"; a[#a + 1] = "," elseif fmt == "json" then a[#a + 1] = "-j" end
        a[#a + 1] = "-e"; a[#a + 1] = ev
        a[#a + 1] = "--"; a[#a + 1] = "sleep"; a[#a + 1] = "0.15"
        local words = {}
        for i = 2, #a do words[#words + 1] = h.shquote(a[i]) end
        local p = io.popen("perf stat " .. table.concat(words, " ") .. " 2>&1 >/dev/null")
        local theirs = shape(p:read("a"), fmt)
        p:close()
        local r = h.run(a)
        assert.are.equal(0, r.code, r.err)
        local ours = shape(r.err, fmt)
        if m.interval then
          -- the number of intervals is the clock's: compare those both printed
          local per = #h.lines(ev:gsub(",", "\n")) * (m.name:find("-A", 1, true) and #require("pmcsh.machine").online() or 1)
          assert.is_true(math.abs(#theirs - #ours) <= per, fmt .. ": " .. #theirs .. " lines vs " .. #ours)
          for i = 1, math.min(#theirs, #ours) do assert.are.equal(theirs[i], ours[i], fmt .. " line " .. i) end
        else
          assert.are.same(theirs, ours, fmt)
        end
      end
    end)
  end
end)

describe("pmcsh stat's event list", function()
  it("accumulates repeated -e, flattens {a,b} groups with their modifier, and adds -M groups", function()
    local r = h.run({"stat", "-x", ",", "-e", "task-clock", "-e", "{page-faults,minor-faults}:u", "--", "true"})
    assert.are.equal(0, r.code, r.err)
    local names = {}
    for _, l in ipairs(h.lines(r.err)) do names[#names + 1] = h.fields(l, ",")[3] end
    assert.are.same({"task-clock", "page-faults:u", "minor-faults:u"}, names)
    -- -M software: its events, and a metric of its own (TSC GHz) where msr/tsc/ counts
    r = h.run({"stat", "-M", "software", "--", "true"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("context%-switches", r.err)
    if pmc.group{"msr/tsc/"} then assert.matches("TSC GHz while running", r.err) end
    assert.are.equal(2, h.run({"stat", "-e", "{task-clock", "--", "true"}).code)
  end)

  it("counts a process given with -p until it ends, without a command", function()
    local p = io.popen("sleep 0.3 >/dev/null 2>&1 & echo $!")
    local pid = p:read("l")
    p:close()
    local t0 = os.time()
    local r = h.run({"stat", "-p", pid, "-x", ",", "-e", "task-clock"})
    assert.are.equal(0, r.code, r.err)
    assert.is_true(os.time() - t0 <= 2)
    assert.matches("task%-clock", r.err)
  end)

  it("ends a count without a command at Ctrl-C, prints it and exits 130, as perf stat does", function()
    local ok, why = h.can_count_cpu_wide()
    if not h.need(ok, why) then return end
    local dir = h.tmpdir()
    local p = io.popen(string.format("%s stat -a -x , -e cpu-clock 2>%s/err & p=$!; sleep 0.3; kill -INT $p; wait $p; echo $?",
      h.shquote(h.exe), dir))
    local code = tonumber(p:read("a"):match("(%d+)%s*$"))
    p:close()
    assert.are.equal(130, code)
    assert.matches("cpu%-clock", h.slurp(dir .. "/err"))
  end)

  it("refuses the aggregation modes where they mean nothing", function()
    assert.are.equal(2, h.run({"stat", "-A", "--", "true"}).code)
    assert.are.equal(2, h.run({"stat", "--per-thread", "--", "true"}).code)
    assert.are.equal(2, h.run({"stat", "-a", "-A", "--per-socket", "--", "true"}).code)
    assert.are.equal(2, h.run({"stat", "-I", "100", "-r", "2", "--", "true"}).code)
    assert.are.equal(2, h.run({"stat", "-C", "x", "--", "true"}).code)
  end)
end)

describe("pmcsh stat's messages", function()
  it("say a cpu of -C that is not online, naming the online ones, before any event is tried", function()
    local online = require("pmcsh.machine").online()
    local cpu = online[#online] + 1
    local r = h.run({"stat", "-C", tostring(cpu), "-e", "cpu-clock", "--", "sleep", "0.05"})
    assert.are.equal(2, r.code)
    assert.are.equal(string.format("pmcsh stat: -C %d: cpu %d is not online (online cpus %s)\n", cpu, cpu,
      require("pmcsh.machine").format_list(online)), r.err)
  end)

  it("begin 'pmcsh stat: ' whatever refused the words, and bad names are usage errors (2)", function()
    for _, c in ipairs{
      {{"--repeat", "0", "--", "true"}, "option %-%-repeat: 0 is below the minimum 1"},
      {{"--bogus", "--", "true"}, "unknown option '%-%-bogus'"},
      {{"-e", "nosuch-event", "--", "true"}, "unknown event 'nosuch%-event'"},
      {{"-e", "task-clock:zz", "--", "true"}, "bad modifier 'zz' in 'task%-clock:zz'"},
      {{"-e", "msr/tsc/q", "--", "true"}, "bad modifier 'q' in 'msr/tsc/q'"},
      {{"-x", "", "--", "true"}, "%-x needs a separator"},
    } do
      local r = h.run({"stat", table.unpack(c[1])})
      local what = table.concat(c[1], " ")
      assert.are.equal(2, r.code, what .. ": " .. r.err)
      assert.matches("^pmcsh stat: " .. c[2], r.err, nil, what)
      assert.are.equal(1, #h.lines(r.err), what .. ": " .. r.err)   -- one line, no traceback
    end
  end)

  it("take a long option by an unambiguous prefix, as perf does, and name the candidates of another", function()
    local r = h.run({"stat", "--rep", "2", "-x", ",", "--ev", "task-clock", "--", "true"})
    assert.are.equal(0, r.code, r.err)
    local f = h.fields(h.lines(r.err)[1], ",")
    assert.are.equal("task-clock", f[3])
    assert.matches("^[%d.]+%%$", f[4])       -- a variance field: two runs
    r = h.run({"stat", "--per", "--", "true"})
    assert.are.equal(2, r.code)
    assert.are.equal("pmcsh stat: option '--per' is ambiguous: --per-socket, --per-die, --per-core, " ..
      "--per-node, --per-thread\n", r.err)
    r = h.run({"stat", "--rep=0", "--", "true"})
    assert.matches("^pmcsh stat: option %-%-repeat: 0 is below", r.err)
  end)
end)

describe("pmcsh stat -a --per-thread", function()
  -- perf_json_output_lint.py's per-thread line: these keys, no others (7 commas)
  local KEYS = {"thread", "counter-value", "unit", "event", "event-runtime", "pcnt-running", "metric-value",
                "metric-unit"}

  it("counts every thread of the machine, leaves out those that counted nothing, in perf's fields", function()
    if not h.need(h.can_count_cpu_wide()) then return end
    -- a busy thread that exists before the count starts and lasts through it
    local busy = assert(io.popen(h.shquote(h.exe) .. " -e 'print(require(\"pmcsh._sys\").getpid()) " ..
      "io.stdout:flush() local t = os.clock() while os.clock() - t < 2 do end'"))
    local pid = busy:read("l")
    local r = h.run({"stat", "-a", "--per-thread", "-j", "-e", "task-clock,context-switches", "--", "sleep", "0.3"})
    assert.are.equal(0, r.code, r.err)
    local recs, lines = h.perf_json_lines(r.err)
    local by_thread, tasks = {}, 0
    for i, line in ipairs(lines) do
      local keys = {}
      for k in line:gmatch('"([%w-]+)" :') do keys[#keys + 1] = k end
      assert.are.same(KEYS, keys, line)
      local rec = recs[i]
      assert.are_not.equal(0, tonumber(rec["counter-value"]), line)   -- perf: no zero rows here
      if rec.event == "task-clock" then tasks = tasks + 1; by_thread[rec.thread] = tonumber(rec["counter-value"]) end
    end
    busy:close()
    assert.is_true(tasks >= 2, "threads of the machine: " .. tasks)
    -- the thread spinning through the 0.3 s has its row, and counted far more than an idle one's
    -- instants (10 msec: a 30th of the run, whatever else the host runs)
    local spun = by_thread["pmcsh-" .. pid]
    assert.is_truthy(spun, "no row for the spinning pmcsh-" .. pid)
    assert.is_true(spun >= 10, "pmcsh-" .. pid .. " ran " .. spun .. " msec of 300")
    -- -x: the same fields, comm-tid first
    r = h.run({"stat", "-a", "--per-thread", "-x", ",", "-e", "task-clock", "--", "sleep", "0.1"})
    assert.are.equal(0, r.code, r.err)
    for _, l in ipairs(h.lines(r.err)) do
      local f = h.fields(l, ",")
      assert.are.equal(8, #f, l)
      assert.matches("^.+%-%d+$", f[1])
      assert.are.same({"msec", "task-clock"}, {f[3], f[4]})
    end
  end)

  it("still refuses --per-thread with -C, or alone without a command's threads", function()
    local r = h.run({"stat", "-C", "0", "--per-thread", "--", "true"})
    assert.are.equal(2, r.code)
    assert.matches("^pmcsh stat: %-%-per%-thread counts the threads of %-p PID or %-t TID, or with %-a every thread", r.err)
  end)
end)

describe("pmcsh stat --no-merge", function()
  it("takes perf's flag and prints the same rows and fields: a sysfs event names one PMU, never merged", function()
    local function rows(extra)
      local args = {"stat", "-x", ",", "-e", "msr/tsc/,task-clock"}
      for _, a in ipairs(extra) do args[#args + 1] = a end
      args[#args + 1] = "--"; args[#args + 1] = "true"
      local r = h.run(args)
      assert.are.equal(0, r.code, r.err)
      local out = {}
      for i, l in ipairs(h.lines(r.err)) do local f = h.fields(l, ","); out[i] = {#f, f[2], f[3]} end
      return out
    end
    local plain = rows({})
    assert.are.equal(2, #plain)
    assert.are.same(plain, rows({"--no-merge"}))
  end)
end)

describe("pmcsh stat, nothing countable on a target that refuses", function()
  it("names the events as typed, then why the target opens nothing", function()
    local ev = uncountable()
    local paranoid = tonumber(h.slurp("/proc/sys/kernel/perf_event_paranoid")) or 0
    if not h.need(ev and h.is_root() and h.have("setpriv") and paranoid >= 1,
        "needs root and setpriv (to run as nobody), perf_event_paranoid >= 1 and an uncountable hardware event") then
      return
    end
    local p = assert(io.popen("cd / && setpriv --reuid=65534 --regid=65534 --clear-groups " .. h.shquote(h.exe) ..
      " stat -e " .. ev .. " -C 0 -- true 2>&1; echo \"rc=$?\""))
    local out = p:read("a")
    p:close()
    assert.matches("^pmcsh stat: " .. ev .. ": not supported here; and 'CPU%(s%) 0' refuses even the placeholder " ..
      "a run counts: permission denied[^\n]*perf_event_paranoid[^\n]*\nrc=1\n$", out)
  end)
end)

-- perf_json_output_lint.py (tools/perf/tests/shell/lib, as of perf 6.1),
-- written here so that no spec needs python or a kernel tree: each JSON
-- line's keys come from its table, each value passes its key's check, and a
-- line has as many keys as its mode's (the linter lets a line with
-- metric-value off the count; perf's lines have the count exactly, so ours
-- must too).  The linter's modes and counts: plain, -e, -a 5 or 7; -I,
-- --per-thread, -A 6 or 8; --per-core/socket/die/node 7 or 9.
describe("pmcsh stat --json, as perf's JSON linter checks it", function()
  local function isfloat(x) return tonumber(x) ~= nil end
  local function isint(x) return math.type(tonumber(x)) == "integer" end
  local CHECKS = {
    ["aggregate-number"] = isfloat, core = true, ["counter-value"] = function(x)
      return isfloat(x) or x == "<not counted>" or x == "<not supported>" end,
    cgroup = true, cpu = isint, die = true, event = true, ["event-runtime"] = isfloat, interval = isfloat,
    ["metric-unit"] = true, ["metric-value"] = isfloat, node = true, ["pcnt-running"] = isfloat,
    socket = true, thread = true, unit = true,
  }
  local COUNTS = {plain = {5, 7}, split = {6, 8}, aggr = {7, 9}}
  local modes = {
    {"plain", {}},
    {"plain", {"-e", "task-clock,page-faults,msr/tsc/"}},
    {"split", {"-I", "100"}},
    {"plain", {"-a"}, cpus = true},
    {"plain", {"-a", "--no-merge"}, cpus = true},
    {"split", {"-a", "-A"}, cpus = true},
    {"split", {"-C", "0", "--no-aggr"}, cpus = true},
    {"split", {"-a", "-I", "100"}, cpus = true},
    {"split", {"-a", "--per-thread"}, cpus = true},
    {"split", {"-a", "--per-thread", "--no-merge"}, cpus = true},
    {"aggr", {"-a", "--per-core"}, cpus = true},
    {"aggr", {"-a", "--per-socket"}, cpus = true},
    {"aggr", {"-a", "--per-die"}, cpus = true},
    {"aggr", {"-a", "--per-node"}, cpus = true},
    {"plain", {"-d"}},
    {"plain", {"-ddd"}},
    {"plain", {"--all-user"}},
    {"plain", {"--all-kernel", "-e", "task-clock,page-faults"}},
    {"plain", {"-n", "-e", "task-clock"}},
    {"split", {"-a", "-A", "-d"}, cpus = true},
  }
  for _, m in ipairs(modes) do
    local kind, args = m[1], m[2]
    it("passes with " .. (#args > 0 and table.concat(args, " ") or "no options"), function()
      if m.cpus and not h.need(h.can_count_cpu_wide()) then return end
      local a = {"stat", "-j"}
      for _, x in ipairs(args) do a[#a + 1] = x end
      a[#a + 1] = "--"; a[#a + 1] = "sleep"; a[#a + 1] = "0.25"
      local r = h.run(a)
      assert.are.equal(0, r.code, r.err)
      -- every line, the first included: nothing of pmcsh's before perf's records
      local recs, lines = h.perf_json_lines(r.err)
      assert.is_true(#recs > 0, r.err)
      assert.is_nil(recs[1].fingerprint, lines[1])
      local want = COUNTS[kind]
      for i, rec in ipairs(recs) do
        local n = 0
        for k, v in pairs(rec) do
          n = n + 1
          local check = CHECKS[k]
          assert.is_truthy(check, "unexpected key " .. k .. " in " .. lines[i])
          assert.is_true(check == true or check(v), "check failed for " .. k .. " in " .. lines[i])
        end
        assert.is_true(n == want[1] or n == want[2],
          string.format("%d keys, the linter wants %d or %d: %s", n, want[1], want[2], lines[i]))
      end
    end)
  end
end)

-- perf stat's everyday options, as perf 6.1 prints them where perf is here
describe("pmcsh stat's everyday options against perf stat 6.1", function()
  local function both(args)
    local words = {}
    for i, a in ipairs(args) do words[i] = h.shquote(a) end
    local p = io.popen("perf stat " .. table.concat(words, " ") .. " 2>&1 >/dev/null; echo rc=$?")
    local theirs = p:read("a")
    p:close()
    local a = {"stat"}
    table.move(args, 1, #args, 2, a)
    return theirs, h.run(a)
  end

  it("-d, -dd, -ddd add perf's detailed events, in perf's order, after the given ones", function()
    local want = {"L1-dcache-loads", "L1-dcache-load-misses", "LLC-loads", "LLC-load-misses", "L1-icache-loads",
      "L1-icache-load-misses", "dTLB-loads", "dTLB-load-misses", "iTLB-loads", "iTLB-load-misses",
      "L1-dcache-prefetches", "L1-dcache-prefetch-misses"}
    for level, n in ipairs{4, 10, 12} do
      local r = h.run({"stat", "-" .. string.rep("d", level), "-x", ",", "-e", "task-clock", "--", "true"})
      assert.are.equal(0, r.code, r.err)
      local names = {}
      for i, l in ipairs(h.lines(r.err)) do names[i] = h.fields(l, ",")[3] end
      assert.are.same({"task-clock", table.unpack(want, 1, n)}, names)
    end
  end)

  it("-n counts nothing: the table's times alone, no -x or -j line", function()
    local r = h.run({"stat", "-n", "--", "true"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("Performance counter stats for 'true':\n\n +[%d.]+ seconds time elapsed\n", r.err)
    assert.are.equal("", h.run({"stat", "-n", "-x", ",", "--", "true"}).err)
    assert.are.equal("", h.run({"stat", "-n", "-j", "--", "true"}).err)
  end)

  it("--all-user and --all-kernel count user or kernel space only, the rows keeping their names", function()
    -- dd reads 4 MiB of /dev/zero into a fresh buffer: the kernel's read
    -- touches its 1024 pages, so those faults are the kernel's
    local function faults(extra)
      local a = {"stat", "-x", ",", "-e", "page-faults"}
      table.move(extra, 1, #extra, #a + 1, a)
      table.move({"--", "dd", "if=/dev/zero", "of=/dev/null", "bs=4M", "count=1"}, 1, 6, #a + 1, a)
      local r = h.run(a)
      assert.are.equal(0, r.code, r.err)
      local f = h.fields(h.lines(r.err)[#h.lines(r.err)], ",")
      assert.are.equal("page-faults", f[3])
      return tonumber(f[1])
    end
    local all, user, kernel = faults({}), faults({"--all-user"}), faults({"--all-kernel"})
    assert.is_true(kernel >= 1024, "kernel faults " .. kernel)     -- 4 MiB of 4 KiB pages
    assert.is_true(user < kernel, user .. " user faults, " .. kernel .. " kernel")
    -- each fault is the user's or the kernel's: the two add up to all (runs differ by a few)
    assert.is_true(math.abs(user + kernel - all) <= 16, string.format("%d + %d vs %d", user, kernel, all))
    assert.are.equal(2, h.run({"stat", "--all-user", "--all-kernel", "--", "true"}).code)
  end)

  it("-B is refused with -x, and groups the table's counts as the locale does", function()
    local r = h.run({"stat", "-B", "-x", ",", "--", "true"})
    assert.are.equal(2, r.code)
    assert.are.equal("pmcsh stat: -B option not supported with -x\n", r.err)
    -- C's locale has no separator: the table as without -B
    r = h.run({"stat", "-B", "-e", "page-faults", "--", "dd", "if=/dev/zero", "of=/dev/null", "bs=16M", "count=1"},
      {env = "LC_ALL=C"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("\n +%d%d%d%d+ +page%-faults", r.err)
    local have = io.popen("locale -a 2>/dev/null"):read("a")
    if not h.need(have:match("en_US%.utf8"), "no en_US.UTF-8 locale installed") then return end
    r = h.run({"stat", "-e", "page-faults", "--", "dd", "if=/dev/zero", "of=/dev/null", "bs=16M", "count=1"},
      {env = "LC_ALL=en_US.UTF-8"})
    assert.matches("\n +%d+,%d%d%d +page%-faults", r.err)
    r = h.run({"stat", "--no-big-num", "-e", "page-faults", "--", "dd", "if=/dev/zero", "of=/dev/null", "bs=16M",
      "count=1"}, {env = "LC_ALL=en_US.UTF-8"})
    assert.matches("\n +%d%d%d%d+ +page%-faults", r.err)
  end)

  it("--topdown refuses as perf does where the cpu PMU has no topdown events", function()
    if not h.need(not pmc.info("cpu/topdown-retiring/") and not pmc.info("cpu/topdown-total-slots/"),
        "this PMU has topdown events") then return end
    local r = h.run({"stat", "--topdown", "--", "true"})
    assert.are.equal(1, r.code)
    assert.are.equal("top down event configuration requires system-wide mode (-a)\n", r.err)
    if perf_ok() then
      local theirs = both({"--topdown", "--", "true"})
      assert.are.equal(r.err, theirs:gsub("rc=%d+\n$", ""))
    end
  end)

  it("-v says perf -v's lines: the cpu, the events not supported, each count with its times", function()
    local ev = uncountable()
    if not h.need(ev, "every generic hardware event counts here") then return end
    local r = h.run({"stat", "-v", "-e", "task-clock," .. ev, "--", "true"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("^Using CPUID %w+%-%d+%-%x+%-%x+\nWarning:\n" .. ev .. " event is not supported by the kernel%.\n" ..
      "task%-clock: (%d+) %1 %1\nfailed to read counter " .. ev .. "\n", r.err)
    if not perf_ok() then return end
    local theirs = both({"-v", "-e", "task-clock," .. ev, "--", "true"})
    -- perf's lines, numbers aside, in order (perf says its control channel's state besides)
    local function words(t)
      local out = {}
      for _, l in ipairs(h.lines(t)) do
        if not l:match("^Control descriptor") and not l:match("^rc=") then out[#out + 1] = (l:gsub("[%d.,]+", "N"):gsub("%s+", " "):gsub(" $", "")) end
      end
      return out
    end
    assert.are.same(words(theirs), words(r.err))
  end)
end)
