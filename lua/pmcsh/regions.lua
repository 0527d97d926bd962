-- Regions of the user's own program (include/pmcsh/marker.h): the command
-- run with the marker library turned on, each process's file read back,
-- and the counts as plain data and as perf stat's three formats.
local C = require("pmcsh._regions")
local csys = require("pmcsh._sys")
local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")
local format = require("pmcsh.stat.format")
local kinds = require("pmcsh.format")
local json = require("pmcsh.json")
local machine = require("pmcsh.machine")
local pmc = require("pmcsh.pmc")
local results = require("pmcsh.results")
local sys = require("pmcsh.sys")
local text = require("pmcsh.text")

local M = {}

M.MAX_EVENTS = C.MAX_EVENTS
M.FORMAT = "pmcsh-regions/1"

local function add_to(into, from, n)
  for i = 1, n do into[i] = (into[i] or 0) + from[i] end
end

-- The processes' files merged: regions in the order first seen, each with
-- its threads and its sums over them (exclusive sums only where no thread
-- overlapped).
local function merge(procs, nev)
  local regions, by_name = {}, {}
  for _, p in ipairs(procs) do
    for _, r in ipairs(p.regions) do
      local m = by_name[r.name]
      if not m then
        m = {name = r.name, calls = 0, iterations = 0, inner = 0, overlapped = false, open = false, seconds = 0,
             inclusive = {}, exclusive = {},
             enabled = {}, running = {}, threads = {}}
        for i = 1, nev do m.inclusive[i], m.exclusive[i], m.enabled[i], m.running[i] = 0, 0, 0, 0 end
        by_name[r.name] = m
        regions[#regions + 1] = m
      end
      for _, t in ipairs(r.threads) do
        t.pid = p.pid
        t.seconds = (t.enabled[1] or 0) / 1e9   -- the region's wall time (every event's enabled ns)
        m.threads[#m.threads + 1] = t
        m.seconds = m.seconds + t.seconds
        m.calls, m.iterations, m.inner = m.calls + t.calls, m.iterations + t.iterations, m.inner + t.inner
        m.overlapped = m.overlapped or t.overlapped
        m.open = m.open or t.open
        add_to(m.inclusive, t.inclusive, nev)
        add_to(m.exclusive, t.exclusive, nev)
        add_to(m.enabled, t.enabled, nev)
        add_to(m.running, t.running, nev)
      end
    end
  end
  return regions
end

-- What went wrong that the library did not say itself (it says each kind
-- of misuse once per process on the program's stderr, as it happens: a
-- kind stays in the process's warned list, not in these words), once.
local function notes_of(procs)
  local notes, seen = {}, {}
  local function say(s) if not seen[s] then seen[s] = true; notes[#notes + 1] = s end end
  for _, p in ipairs(procs) do
    -- a process that did not reach exit() lost only the calls open at its
    -- end (a forked child's _exit loses nothing): said where there were some
    local open = false
    for _, t in ipairs(p.threads) do open = open or #t.open > 0 end
    if not p.finished and open then
      say(string.format("process %d did not reach its exit with regions open (it ended by _exit, exec, a signal " ..
        "or a crash): its counts are those of each region's last end before that", p.pid))
    end
    for _, t in ipairs(p.threads) do
      if #t.open > 0 and t.state ~= "ended" then   -- an ended thread's exit inside was said
        say(string.format("thread %d of process %d was inside %s at its end: %s not counted, nor %s exclusive " ..
          "counts on that thread given", t.tid, p.pid, table.concat(t.open, " > "),
          #t.open > 1 and "those calls are" or "that call is", #t.open > 1 and "their" or "its"))
      end
    end
  end
  return notes
end

-- The cost of one begin/end pair, from the first process that measured it:
-- per event what a region holding one pair counts more (outer) and what an
-- empty region counts (self), and its time in ns; nil when none did.
local function cost_of(procs, nev)
  for _, p in ipairs(procs) do
    local c = p.cost
    if c.pairs > 0 then
      local outer, self = {}, {}
      for i = 1, nev do outer[i], self[i] = c.outer[i] / c.pairs, c.self[i] / c.pairs end
      return {pairs = c.pairs, batches = C.CAL_BATCHES, ns = c.ns / c.pairs, outer = outer, self = self}
    end
  end
end

-- The library's files in dir (PID.regions, PID-K.regions after an exec)
-- read, oldest process first; each removed once read, and nothing else:
-- what the program put there itself is left, with dir, and said.
local function read_dir(dir)
  local names = sys.dir(dir) or {}
  table.sort(names)
  local procs, bad, others = {}, {}, {}
  for _, name in ipairs(names) do
    local path = dir .. "/" .. name
    local st = sys.stat(path, true)
    if st and st.type == "file" and (name:match("^%d+%.regions$") or name:match("^%d+%-%d+%.regions$")) then
      local p, why = C.read(path)
      if p then procs[#procs + 1] = p else bad[#bad + 1] = why end
      os.remove(path)
    else
      others[#others + 1] = text.inert(name)
    end
  end
  if not os.remove(dir) then
    bad[#bad + 1] = string.format("the regions' folder %s is left as it is: it holds %s, which the marker " ..
      "library did not make", text.inert(dir), #others > 0 and table.concat(others, ", ") or "what pmcsh did not read")
  end
  table.sort(procs, function(a, b) return a.pid < b.pid end)
  return procs, bad
end

M.run = doc(errors.facade("run", function(o)
  errors.check("run", 1, o, "table")
  if type(o.events) ~= "table" then errors.argument("run", 1, "events: a list of event names expected") end
  if type(o.cmd) ~= "table" then errors.argument("run", 1, "cmd: a list of command words expected") end
  if #o.events == 0 then errors.argument("run", 1, "no events given") end
  if #o.events > C.MAX_EVENTS then
    errors.argument("run", 1, string.format("%d events: the marker library counts at most %d", #o.events,
      C.MAX_EVENTS))
  end
  if #o.cmd == 0 then errors.argument("run", 1, "empty command") end
  local spec, why, errno = C.encode(o.events)
  if not spec then return nil, why, errno end
  local dir, derr, derrno = csys.mkdtemp(sys.scratch() .. "/pmcsh-regions-")
  if not dir then return nil, "cannot make a folder for the regions' files: " .. derr, derrno end
  local env = {PMCSH_MARKER_EVENTS = spec, PMCSH_MARKER_DIR = dir}
  local r, info, errno = pmc.run{events = o.events, cmd = o.cmd, env = env}
  local procs, bad = read_dir(dir)
  if not r then return nil, info, errno end
  local program = {}
  for i, e in ipairs(r) do
    program[i] = {value = e.value, enabled = e.enabled or r.enabled, running = e.running or r.running}
  end
  local res = {command = o.cmd, events = o.events, status = info.status, elapsed = info.elapsed,
               stopped_by = info.stopped_by, program = program, processes = procs, regions = merge(procs, #o.events),
               cost = cost_of(procs, #o.events), notes = notes_of(procs)}
  for _, why in ipairs(bad) do res.notes[#res.notes + 1] = why end
  return setmetatable(res, kinds.kind("pmcsh.regions_result"))   -- prints a row per region
end), "regions.run", [[
regions.run{events = {...}, cmd = {...}} -> result | nil, msg, errno
Runs cmd, a program built with pmcsh's marker library (pmcsh/marker.h),
with its regions counted on the events, each thread on its own counters.
The result is plain data: command, events, status (the command's exit
status), elapsed (s), program (the whole command's counts, per event:
value, enabled, running), processes (each process's file: pid, rank?,
threads, warned (the kinds of misuse the library said), ...), regions (in
the order first begun: name, calls, iterations, seconds (wall time inside,
summed over threads), inclusive, exclusive, enabled, running (per event,
summed over threads),
inner (marker pairs inside the inclusive counts), overlapped, and threads,
each with the same fields and pid, tid), cost (one begin/end pair: ns,
outer and self per event; nil when no process measured it) and notes (what
went wrong, in words).  Counts are integers, exact.]])

-- ---- formats --------------------------------------------------------------

local is_clock = format.is_clock

-- A count as written: clocks in msec to the ns ("%.6f": a 3 us region reads
-- 0.003000, where perf's "%.2f" would read 0.00); counts as the integers
-- they are (a whole program's multiplexed count scaled, rounded).
local function count_str(name, v)
  if is_clock(name) then return string.format("%.6f", v / 1e6) end
  return math.type(v) == "integer" and string.format("%d", v) or string.format("%.0f", v)
end

local function ratio_str(v, d)
  if d == 0 then return "" end
  local r = v / d
  if r ~= 0 and math.abs(r) < 0.01 then return string.format("%.3e", r) end
  return string.format("%.3f", r)
end

local function pct(en, run)
  return en > 0 and 100 * run / en or 100
end

-- The rows of region m: the sum (thread "all") then each thread when there
-- are several; each row is {thread, pid, calls, iterations, seconds, inner,
-- overlapped, open, inclusive, exclusive, enabled, running}.
local ROW_KEYS = {"calls", "iterations", "seconds", "inner", "overlapped", "open", "inclusive", "exclusive",
  "enabled", "running"}
local function rows_of(m)
  local rows = {{thread = "all"}}
  for _, k in ipairs(ROW_KEYS) do rows[1][k] = m[k] end
  if #m.threads > 1 then
    for _, t in ipairs(m.threads) do
      local row = {thread = t.tid, pid = t.pid}
      for _, k in ipairs(ROW_KEYS) do row[k] = t[k] end
      rows[#rows + 1] = row
    end
  end
  return rows
end

-- The regions a call of which ended: one that was only registered or
-- never ended has no counts to show (the table says so in one line).
local function ended(res)
  local out = {}
  for _, m in ipairs(res.regions) do if m.calls > 0 then out[#out + 1] = m end end
  return out
end

-- A row whose exclusive counts are not given: regions overlapped, or a
-- call was open when the counts were read (its ended children are in them).
local function no_exclusive(row) return row.overlapped or row.open end

local function unit_of(name) return is_clock(name) and "msec" or "" end

-- -x SEP, a row per region, thread and event (README, "Regions of your
-- program"): region, thread, calls, iterations, inclusive, exclusive, unit,
-- event, run time (ns), percent running, inclusive per call, per
-- iteration, marker pairs inside, seconds (the region's wall time); then
-- the whole program's, per event, with an empty region and only the count,
-- unit, event, run time, percent and seconds (its elapsed time).
local function write_csv(res, w, sep)
  for _, m in ipairs(ended(res)) do
    for _, row in ipairs(rows_of(m)) do
      for i, ev in ipairs(res.events) do
        local f = {text.csv(m.name, sep), tostring(row.thread), tostring(row.calls), tostring(row.iterations),
          count_str(ev, row.inclusive[i]), no_exclusive(row) and "" or count_str(ev, row.exclusive[i]), unit_of(ev),
          text.csv(ev, sep), tostring(row.running[i]), string.format("%.2f", pct(row.enabled[i], row.running[i])),
          ratio_str(row.inclusive[i], row.calls), ratio_str(row.inclusive[i], row.iterations), tostring(row.inner),
          string.format("%.9f", row.seconds)}
        w:write(table.concat(f, sep), "\n")
      end
    end
  end
  for i, ev in ipairs(res.events) do
    local e = res.program[i]
    local f = {"", "all", "", "", count_str(ev, e.value), "", unit_of(ev), text.csv(ev, sep), tostring(e.running),
      string.format("%.2f", pct(e.enabled, e.running)), "", "", "", string.format("%.9f", res.elapsed or 0)}
    w:write(table.concat(f, sep), "\n")
  end
end

-- -j: one object per region, thread and event, perf stat's keys where they
-- mean the same; counts as strings of their exact digits, "thread" a
-- string ("all" or the thread's id), "seconds" the region's wall time;
-- then the whole program's, "region" null.
local function write_json(res, w)
  for _, m in ipairs(ended(res)) do
    for _, row in ipairs(rows_of(m)) do
      for i, ev in ipairs(res.events) do
        local s = {string.format('{"region" : %s, "thread" : %s, "calls" : %d, "iterations" : %d, ',
          json.string(m.name, true), json.string(tostring(row.thread), true), row.calls, row.iterations)}
        s[#s + 1] = string.format('"counter-value" : "%s", ', count_str(ev, row.inclusive[i]))
        if not no_exclusive(row) then
          s[#s + 1] = string.format('"exclusive-value" : "%s", ', count_str(ev, row.exclusive[i]))
        end
        s[#s + 1] = string.format('"unit" : %s, "event" : %s, "event-runtime" : %d, "pcnt-running" : %.2f, ' ..
          '"marker-pairs" : %d, "seconds" : %.9f}', json.string(unit_of(ev), true), json.string(ev, true),
          row.running[i], pct(row.enabled[i], row.running[i]), row.inner, row.seconds)
        w:write(table.concat(s), "\n")
      end
    end
  end
  for i, ev in ipairs(res.events) do
    local e = res.program[i]
    w:write(string.format('{"region" : null, "thread" : "all", "counter-value" : "%s", "unit" : %s, ' ..
      '"event" : %s, "event-runtime" : %d, "pcnt-running" : %.2f, "seconds" : %.9f}\n', count_str(ev, e.value),
      json.string(unit_of(ev), true), json.string(ev, true), e.running, pct(e.enabled, e.running), res.elapsed or 0))
  end
end

local function clock_ms(ev, v) return is_clock(ev) and v / 1e6 or v end

-- Region m's block of the table: its sum then its threads, each a runtime
-- row (LIKWID's "RDTSC Runtime [s]") and a row per event.
local function write_region(res, w, m, what)
  w:write(string.format("\n Region '%s' of '%s' (%d call%s%s, %d thread%s):\n\n", text.inert(m.name), what,
    m.calls, m.calls == 1 and "" or "s", m.iterations > 0 and string.format(", %d iterations", m.iterations) or "",
    #m.threads, #m.threads == 1 and "" or "s"))
  w:write(string.format("%18s %18s %14s %14s  %s\n", "inclusive", "exclusive", "per call",
    m.iterations > 0 and "per iteration" or "", "event"))
  for _, row in ipairs(rows_of(m)) do
    if row.thread ~= "all" then
      w:write(string.format("   thread %d%s (%d call%s%s):\n", row.thread,
        #res.processes > 1 and string.format(" of process %d", row.pid) or "", row.calls,
        row.calls == 1 and "" or "s", row.iterations > 0 and string.format(", %d iterations", row.iterations) or ""))
    end
    w:write(string.format("%18.9f %18s %14s %14s  runtime (s)\n", row.seconds, "", ratio_str(row.seconds, row.calls),
      ratio_str(row.seconds, row.iterations)))
    for i, ev in ipairs(res.events) do
      local line = string.format("%18s %18s %14s %14s  %s", count_str(ev, row.inclusive[i]),
        no_exclusive(row) and "-" or count_str(ev, row.exclusive[i]),
        ratio_str(clock_ms(ev, row.inclusive[i]), row.calls), ratio_str(clock_ms(ev, row.inclusive[i]), row.iterations),
        ev .. (is_clock(ev) and " (msec)" or ""))
      local p = pct(row.enabled[i], row.running[i])
      if p < 100 then line = line .. string.format(" (%.2f%%)", p) end
      w:write(line, "\n")
    end
  end
  if m.inner > 0 then
    w:write(string.format("\n   its inclusive counts hold %d marker pair%s of nested regions (%.2f per call)\n",
      m.inner, m.inner == 1 and "" or "s", m.inner / math.max(m.calls, 1)))
  end
end

-- The whole program's counts, as perf stat prints them beside its regions.
local function write_program(res, w, what)
  w:write(string.format("\n The whole of '%s':\n\n", what))
  for i, ev in ipairs(res.events) do
    local e = res.program[i]
    local line = string.format("%18s      %s", count_str(ev, e.value), ev .. (is_clock(ev) and " (msec)" or ""))
    local p = pct(e.enabled, e.running)
    if p < 100 then line = line .. string.format(" (%.2f%%)", p) end
    w:write(line, "\n")
  end
end

local function write_cost(res, w)
  local function each(list)
    local parts = {}
    for i, ev in ipairs(res.events) do
      parts[i] = string.format("%s %s%s", ev, (string.format("%.1f", list[i]):gsub("%.0$", "")),
        is_clock(ev) and " ns" or "")
    end
    return table.concat(parts, ", ")
  end
  w:write(string.format("\n A begin/end pair costs %.0f ns; a region around one counts %s more, and an empty " ..
    "region counts %s (the quickest of %d batches of %d pairs at the start)\n", res.cost.ns,
    each(res.cost.outer), each(res.cost.self), res.cost.batches, res.cost.pairs))
end

-- The table of perf stat's: a block per region, the whole program's
-- counts, the pair's cost, what went wrong, the elapsed time.
local function write_std(res, w)
  local cmd = {}
  for i, a in ipairs(res.command) do cmd[i] = a end
  local what = text.inert(table.concat(cmd, " "))
  if #res.regions == 0 then
    w:write(string.format("\n No region of '%s' was counted: was it built with pmcsh's marker library " ..
      "(pkg-config --libs pmcsh-marker)?\n", what))
  end
  for _, m in ipairs(res.regions) do
    if m.calls > 0 then
      write_region(res, w, m, what)
    else
      w:write(string.format("\n Region '%s' of '%s': no call of it ended (registered only, or begun and never " ..
        "ended)\n", text.inert(m.name), what))
    end
  end
  write_program(res, w, what)
  if res.cost then write_cost(res, w) end
  for _, n in ipairs(res.notes) do w:write(" pmcsh: ", text.inert(n), "\n") end
  w:write(string.format("\n%18.9f seconds time elapsed\n\n", res.elapsed or 0))
end

local function check_result(func, res)
  if type(res) ~= "table" or type(res.regions) ~= "table" or type(res.events) ~= "table" then
    errors.argument(func, 1, "a result of regions.run expected", 3)
  end
end

-- Writes result res to w (anything with :write) as perf stat's table,
-- its -x SEP rows (how.sep) or its -j lines (how.json).
M.write = doc(function(res, w, how)
  check_result("write", res)
  if type(w) ~= "table" and type(w) ~= "userdata" then errors.argument("write", 2, "a file (with :write) expected", 2) end
  how = how or {}
  if how.json then write_json(res, w)
  elseif how.sep then write_csv(res, w, how.sep)
  else write_std(res, w) end
  if how.json or how.sep then
    for _, n in ipairs(res.notes) do io.stderr:write("pmcsh stat: ", text.inert(n), "\n") end
  end
end, "regions.write", [[
regions.write(res, file[, {sep = ",", json = true}]) writes a result of
regions.run as pmcsh stat --regions does: perf stat's table, -x SEP rows or
-j lines (a row per region, thread and event, then the whole program's;
their columns and keys: man pmcsh, --regions).]])

-- The metric records of process p's regions (pmcsh compare reads any file
-- of them): per region and event its inclusive count per call and per
-- iteration, each thread's a sample.
M.metrics = doc(function(res, p)
  check_result("metrics", res)
  if type(p) ~= "table" or not p.pid then errors.argument("metrics", 2, "a process of res.processes expected", 2) end
  local out = {}
  for _, m in ipairs(res.regions) do
    local threads = {}
    for _, t in ipairs(m.threads) do if t.pid == p.pid then threads[#threads + 1] = t end end
    if #threads > 0 then
      for i, ev in ipairs(res.events) do
        for _, per in ipairs({{"call", "calls"}, {"iteration", "iterations"}}) do
          local sum, d, samples = 0, 0, {}
          for _, t in ipairs(threads) do
            sum, d = sum + t.inclusive[i], d + t[per[2]]
            if t[per[2]] > 0 then samples[#samples + 1] = t.inclusive[i] / t[per[2]] end
          end
          if d > 0 then
            out[#out + 1] = {type = "metric", name = string.format("region %s: %s per %s", m.name, ev, per[1]),
              value = sum / d, unit = unit_of(ev) ~= "" and "ns" or "count", samples = samples,
              calls = m.calls, pid = p.pid, rank = p.rank}
          end
        end
      end
    end
  end
  return out
end, "regions.metrics", [[
regions.metrics(res, process) -> the metric records pmcsh compare reads
({type = "metric", name = "region R: EVENT per call", value, unit, samples}),
for one process of res.processes: per region and event its inclusive count
per call and per iteration, each thread's a sample.]])

-- One results file per process in folder dir (results.path: DIR/regions-
-- HOST-JOB-TASK.jsonl, the task being Slurm's; a process of several gets
-- its rank or pid in the name): a header, the metric records of M.metrics,
-- "done".  true, or nil, message.
M.save = doc(function(res, dir)
  check_result("save", res)
  if type(dir) ~= "string" then errors.argument("save", 2, "a folder name expected", 2) end
  local fp = machine.fingerprint()
  local seen = {}
  for _, p in ipairs(res.processes) do
    local tag = "regions"
    if #res.processes > 1 then
      tag = p.rank and not seen[p.rank] and ("regions-rank" .. p.rank) or ("regions-pid" .. p.pid)
      if p.rank then seen[p.rank] = true end
    end
    local path, perr = results.path(dir, tag, fp)
    if not path then return nil, perr end
    local w, werr = results.create(path, "remove it or name another folder")
    if not w then return nil, werr end
    local ok, e = w:write({type = "header", recipe = "regions", format = M.FORMAT, fingerprint = fp,
      command = res.command, events = res.events, pid = p.pid, rank = p.rank, started = os.time()})
    for _, rec in ipairs(M.metrics(res, p)) do if ok then ok, e = w:write(rec) end end
    if ok then ok, e = w:write({type = "done"}) end
    local closed, cerr = w:close()
    if not ok or not closed then return nil, e or cerr end
  end
  return true
end, "regions.save", [[
regions.save(res, dir) -> true | nil, msg: a results file per process of a
result of regions.run in folder dir (regions-HOST-JOB-TASK.jsonl), the
metric records of regions.metrics, for pmcsh compare.]])

return doc(M, "regions", [[
regions: your program's regions (#include <pmcsh/marker.h>), counted by
the marker library inside it on each thread's own counters.
  regions.run{events=, cmd=}        run and read back: plain data
  regions.write(res, file, how)     perf stat's table, -x or -j
  regions.metrics(res, process)     pmcsh compare's records
  regions.save(res, dir)            a results file per process
pmcsh stat --regions -e EVENTS -- ./app is the same from the shell.]])
