-- pmcsh stat: perf-stat-like counting of a command (or of cpus, processes
-- or threads), with mean and relative standard error over repeated runs,
-- in perf stat 6.1's three output formats: the table, -x SEP and --json,
-- with its fields in its order in every mode (-I, -A, --per-*).
local errors = require("pmcsh.errors")
local events = require("pmcsh.events")
local metrics = require("pmcsh.metrics")
local machine = require("pmcsh.machine")
local options = require("pmcsh.options")
local pmc = require("pmcsh.pmc")
local recipe = require("pmcsh.recipe")
local results = require("pmcsh.results")
local sys = require("pmcsh.sys")
local text = require("pmcsh.text")

-- perf's tool events (duration_time): no counter, the run's own clock
local TOOLS = (events.load("generic") or {}).tools or {}

-- perf shows clocks in msec
local function is_clock(name)
  local base = pmc.parse_name(name).base
  return base == "task-clock" or base == "cpu-clock"
end

-- perf stat's number format: clocks "%.2f" msec; counts "%.0f" (the mean of
-- -r runs rounded), "%.2f" for events with a fractional sysfs .scale.
local function fmtnum(v, unit, scale)
  if unit == "msec" or (scale and scale ~= math.floor(scale)) then return string.format("%.2f", v) end
  return string.format("%.0f", v)
end

-- perf's shadow metric of an event: a clock's CPUs utilized (over the
-- elapsed time); any other event's rate over the clock's time of the same
-- aggregate, in /sec, K/sec, M/sec or G/sec (decimal).
local function metric_of(name, mean, clock_ns, elapsed_s)
  if is_clock(name) then
    if elapsed_s > 0 then return mean / (elapsed_s * 1e9), "CPUs utilized" end
    return nil
  end
  if not clock_ns or clock_ns <= 0 then return nil end
  local rate, unit = 1e9 * mean / clock_ns, "/sec"
  if rate > 1e9 then rate, unit = rate / 1e9, "G/sec"
  elseif rate > 1e6 then rate, unit = rate / 1e6, "M/sec"
  elseif rate > 1e3 then rate, unit = rate / 1e3, "K/sec" end
  return rate, unit
end

-- A JSON string: quote, backslash and every control character escaped
-- (C1 too), and each byte of a string that is not UTF-8 (a thread's name
-- is any 15 bytes) as the code point of its value.
local function json_str(s)
  local esc = function(c) return string.format("\\u%04x", c:byte()) end
  if not utf8.len(s) then
    s = s:gsub('[%c"\\\128-\255]', esc)
  else
    s = s:gsub('[%c"\\]', esc):gsub("\194([\128-\159])", esc)
  end
  return '"' .. s .. '"'
end

-- ---- aggregation modes: perf's prefix fields per mode ----------------------
-- key(inst) names an instance's aggregate; std/csv/json write its fields
-- (perf 6.1's aggr_printout); header is the -I table's first line.
local MODES = {
  global = {key = function() return "" end, csv = function() return {} end,
    std = function() return "" end, json = function() return "" end,
    header = "#           time             counts unit events"},
  none = {key = function(i) return string.format("%06d", i.cpu) end,
    csv = function(a) return {"CPU" .. a.cpu} end,
    std = function(a) return string.format("CPU%-7d ", a.cpu) end,
    json = function(a) return string.format('"cpu" : "%d", ', a.cpu) end,
    header = "#           time CPU                    counts unit events"},
  socket = {key = function(i) return string.format("%06d", i.socket) end,
    csv = function(a) return {"S" .. a.socket, tostring(a.nr)} end,
    std = function(a) return string.format("S%-5d %4d ", a.socket, a.nr) end,
    json = function(a) return string.format('"socket" : "S%d", "aggregate-number" : %d, ', a.socket, a.nr) end,
    header = "#           time socket cpus             counts unit events"},
  die = {key = function(i) return string.format("%06d-%06d", i.socket, i.die) end,
    csv = function(a) return {string.format("S%d-D%d", a.socket, a.die), tostring(a.nr)} end,
    std = function(a) return string.format("S%d-D%-8d %4d ", a.socket, a.die, a.nr) end,
    json = function(a)
      return string.format('"die" : "S%d-D%d", "aggregate-number" : %d, ', a.socket, a.die, a.nr)
    end,
    header = "#           time die          cpus             counts unit events"},
  core = {key = function(i) return string.format("%06d-%06d-%06d", i.socket, i.die, i.core) end,
    csv = function(a) return {string.format("S%d-D%d-C%d", a.socket, a.die, a.core), tostring(a.nr)} end,
    std = function(a) return string.format("S%d-D%d-C%-8d %4d ", a.socket, a.die, a.core, a.nr) end,
    json = function(a)
      return string.format('"core" : "S%d-D%d-C%d", "aggregate-number" : %d, ', a.socket, a.die, a.core, a.nr)
    end,
    header = "#           time core            cpus             counts unit events"},
  node = {key = function(i) return string.format("%06d", i.node) end,
    csv = function(a) return {"N" .. a.node, tostring(a.nr)} end,
    std = function(a) return string.format("N%-5d %4d ", a.node, a.nr) end,
    json = function(a) return string.format('"node" : "N%d", "aggregate-number" : %d, ', a.node, a.nr) end,
    header = "#           time node   cpus             counts unit events"},
  -- a thread's name is the thread's to choose (prctl PR_SET_NAME): inert
  -- in the table and -x, a JSON string in --json
  thread = {key = function(i) return string.format("%010d", i.tid) end,
    csv = function(a) return {text.inert(a.comm) .. "-" .. a.tid} end,
    std = function(a) return string.format("%16s-%-8d ", text.inert(a.comm), a.tid) end,
    json = function(a) return string.format('"thread" : %s, ', json_str(a.comm .. "-" .. a.tid)) end,
    header = "#           time             comm-pid                  counts unit events"},
}
-- perf prints aggregates first, events within, except for -A and --per-thread
local EVENT_MAJOR = {none = true, thread = true}

local function usage(msg) error(options.usage("stat: " .. msg), 0) end

-- Option name as the user typed it with its value ("-C 0,,1", "--pid=''"),
-- for a message about the value.
local function as_typed(opts, name)
  local t = recipe.typed(opts)(name)
  if opts[name] == "" then t = t .. "''" end
  return text.inert(t)
end

-- The stat's context, c below: the options checked and turned into what the
-- phases share.  The format (sep, json, out), the target (cpus, or tids with
-- until_pid, what names it in the header; the command in args), the
-- aggregation mode (mode, M = MODES[mode]), interval and repeats; then the
-- events (all: the rows, events: those counted, idx: name -> index in
-- events, counted, scale, unit_of, metrics) and where each instance
-- counted (place, targets); prev and printed carry -I from tick to tick.

-- -p and -t: the threads to count (all of a process's) into c.tids, each
-- thread once (-p P,P, or -p P -t P, names P's threads once), the first
-- process into c.until_pid.  nil, status, message when one is gone.  The
-- lists are decimal ids, nothing else (machine.parse_list's "ids").
local function read_ids(opts, c)
  local topo = machine
  local seen = {}
  for _, o in ipairs{{"pid", "process id"}, {"tid", "thread id"}} do
    local v = opts[o[1]]
    if v then
      c.tids = c.tids or {}
      local ids, why = machine.parse_list(v, "ids")
      if not ids then usage(string.format("%s: %s (give %ss: N[,N...])", as_typed(opts, o[1]), why, o[2])) end
      for _, n in ipairs(ids) do
        local list, msg = {n}, nil
        if o[1] == "pid" then
          list, msg = topo.threads(n)
          if not list then return nil, nil, msg end
          c.until_pid = c.until_pid or n
        elseif not io.open("/proc/" .. n .. "/comm") then
          io.stderr:write("pmcsh stat: no thread ", n, "\n"); return nil, 1
        end
        for _, t in ipairs(list) do
          if not seen[t] then seen[t] = true; c.tids[#c.tids + 1] = t end
        end
      end
      c.what = string.format("%s '%s'", o[2], v)
    end
  end
  return c
end

local MODE_FLAGS = {{"no-aggr", "none"}, {"per-socket", "socket"}, {"per-die", "die"}, {"per-core", "core"},
                    {"per-node", "node"}, {"per-thread", "thread"}}

-- The context from the options, or nil, status, message.
local function setup(opts, args)
  local c = {sep = opts["field-separator"], json = opts.json, args = args, inherit = not opts["no-inherit"],
             interval = opts["interval-print"], repeats = opts["repeat"], printed = 0}
  if c.sep == "" then usage("-x needs a separator (such as -x ,)") end
  if c.sep and c.json then usage("-x and --json exclude each other") end
  if opts.append and not opts.output then usage("--append needs -o FILE") end

  -- the target: the command, cpus (-a, -C) or threads (-p, -t)
  if opts["all-cpus"] and opts.cpu then usage("-a and -C exclude each other") end
  if (opts["all-cpus"] or opts.cpu) and (opts.pid or opts.tid) then usage("-a/-C and -p/-t exclude each other") end
  if opts["all-cpus"] then c.cpus, c.what = machine.online(), "'system wide'"
  elseif opts.cpu then
    local msg
    c.cpus, msg = machine.parse_list(opts.cpu, "cpus")
    if not c.cpus then usage(string.format("%s: %s (give cpus: N or N-M, comma-separated)", as_typed(opts, "cpu"), msg)) end
    -- a cpu that is not online opens nothing (EINVAL, ENODEV): said before any event is tried
    local online, is_online = machine.online(), {}
    for _, cpu in ipairs(online) do is_online[cpu] = true end
    for _, cpu in ipairs(c.cpus) do
      if not is_online[cpu] then
        usage(string.format("-C %s: cpu %d is not online (online cpus %s)", opts.cpu, cpu,
          machine.format_list(online)))
      end
    end
    c.what = "'CPU(s) " .. opts.cpu .. "'"
  end
  local ok, status, msg = read_ids(opts, c)
  if not ok then return nil, status, msg end
  c.mode = "global"
  for _, m in ipairs(MODE_FLAGS) do
    if opts[m[1]] then
      if c.mode ~= "global" then usage("give one of -A, --per-socket, --per-die, --per-core, --per-node, --per-thread") end
      c.mode = m[2]
    end
  end
  c.M = MODES[c.mode]
  if c.mode == "thread" and not c.tids then
    if not opts["all-cpus"] then usage("--per-thread counts the threads of -p PID or -t TID, or with -a every thread") end
    -- perf's -a --per-thread: every thread of the machine, each counted as a task
    c.cpus, c.system_threads = nil, true
    c.tids = machine.all_threads()
  end
  if c.mode ~= "global" and c.mode ~= "thread" and not c.cpus then
    usage("-A and --per-socket/die/core/node count cpus: give -a or -C LIST")
  end
  if #args == 0 and not c.cpus and not c.tids then usage("no command given (pmcsh stat -e EV -- cmd args, or -a, -C, -p, -t)") end
  if c.interval and c.repeats > 1 then usage("-I and -r exclude each other") end
  return c
end

-- The events: -e lists with {a,b} groups flattened, then -M groups; the
-- list and the -M metrics.
local function event_list(opts, cpus)
  local all, metrics = {}, {}
  for _, item in ipairs(opts.events or {}) do
    -- {a,b}:u is a:u,b:u, as perf writes a group's modifier (pmc.parse_name)
    local ok, p = pcall(pmc.parse_name, item)
    if not ok then
      if errors.is(p, "argument") then usage(p.message) end
      error(p, 0)
    end
    for _, name in ipairs(p.members or {item}) do all[#all + 1] = name end
  end
  for _, gname in ipairs(opts.metrics or {}) do
    local g, gpath = events.group(gname)
    if not g then usage("-M: " .. gpath) end
    for _, e in ipairs(g.events) do all[#all + 1] = e end
    for _, m in ipairs(g.metrics or {}) do metrics[#metrics + 1] = m end
  end
  if #all == 0 then
    all = {cpus and "cpu-clock" or "task-clock", "context-switches", "cpu-migrations", "page-faults",
           "cycles", "instructions", "branches", "branch-misses"}
  end
  -- the same event twice is counted once
  local seen, uniq = {}, {}
  for _, e in ipairs(all) do if not seen[e] then seen[e] = true; uniq[#uniq + 1] = e end end
  return uniq, metrics
end

-- Where the counts go: every row, header and footer is written through
-- out:write, so every write is checked; the first failure is kept (err)
-- and out:close() (a flush for stderr) returns false, message.  What was
-- written stays: nothing is truncated or removed after a failure.
local Out = {}
Out.__index = Out

function Out:write(...)
  local ok, msg = self.f:write(...)
  if not ok and not self.err then self.err = msg end
end

function Out:flush()
  local ok, msg = self.f:flush()
  if not ok and not self.err then self.err = msg end
end

function Out:close()
  local ok, msg
  if self.f == io.stderr then ok, msg = self.f:flush() else ok, msg = self.f:close() end
  if not ok and not self.err then self.err = msg end
  if self.err then return false, string.format("cannot write %s: %s", self.name, self.err) end
  return true
end

-- The file of -o, opened before the run, as perf does: a bad path costs no
-- run.  stderr without -o; nil, message when it cannot be opened.
local function open_output(opts)
  if not opts.output then return setmetatable({f = io.stderr, name = "the counts to stderr"}, Out) end
  local f, msg = sys.create(opts.output, opts.append)   -- never through another user's link
  if not f then return nil, msg end
  local out = setmetatable({f = f, name = opts.output}, Out)
  out:write(string.format("# started on %s\n\n", os.date("%a %b %e %H:%M:%S %Y")))
  return out
end

-- perf stat's answers to an event that does not open on the target
-- (stat_handle_error, evsel__fallback): one this machine cannot count is a
-- <not supported> row and the run goes on; one refused because it counts
-- the kernel at perf_event_paranoid > 1 is counted in user space only,
-- named as perf names it (cycles:u, msr/tsc/u); any other refusal ends the
-- run with the message of the event as the user wrote it (exit 1), and a
-- name that does not resolve is a usage error (exit 2).
local NOT_SUPPORTED = {[sys.ENOENT] = true, [sys.EOPNOTSUPP] = true, [sys.ENODEV] = true, [sys.EINVAL] = true,
                       [sys.ENOSYS] = true, [sys.ENXIO] = true}

-- perf's name of an event counted without the kernel (pmc.modified: cycles:u,
-- msr/tsc/u, cycles:Hu).
local function user_only_name(name)
  return pmc.modified(name, "u")
end

-- name's row: the name counted (name, or its :u form), or false for
-- <not supported>, and the row's name; nil, message, exit status.
local function probe_one(pmc, name, target)
  local info, bad = pmc.info(name)
  if not info then return nil, bad, 2 end   -- the user's words do not name an event
  local g, msg, errno = pmc.group({name}, target)
  if g then g:close(); return name, name end
  if NOT_SUPPORTED[errno] then return false, name end
  if (errno == sys.EACCES or errno == sys.EPERM) and not info.exclude_kernel and not info.exclude_user
      and pmc.environment().paranoid > 1 then
    local u = user_only_name(name)
    local gu, _, uerr = pmc.group({u}, target)
    if gu then gu:close(); return u, u end
    if NOT_SUPPORTED[uerr] then return false, u end
  end
  return nil, msg, 1
end

-- Sets c.events (the names counted, fallen back ones as :u), idx, all (the
-- rows, renamed alike), counted, scale and unit_of; nil, exit status when
-- an event cannot be counted here at all.
local function probe_events(c)
  -- every thread of the machine: tried on this process, the first listed may be gone
  local target = c.cpus and {cpus = {c.cpus[1]}} or c.system_threads and {pid = sys.getpid()} or
    c.tids and {pid = c.tids[1], inherit = c.inherit} or nil
  c.events, c.idx, c.tool, c.typed = {}, {}, {}, table.move(c.all, 1, #c.all, 1, {})
  for k, name in ipairs(c.all) do
    local counted, row, status
    if TOOLS[name] then counted, row = false, name; c.tool[name] = true
    else counted, row, status = probe_one(pmc, name, target) end
    if counted == nil then io.stderr:write("pmcsh stat: ", row, "\n"); return nil, status end
    c.all[k] = row
    if counted then c.events[#c.events + 1] = counted; c.idx[counted] = #c.events end
  end
  c.counted = #c.events > 0
  -- counted for the run, not shown: the software event nothing refuses to
  -- count in a process's own user space
  if not c.counted then c.events = {"dummy:u"} end
  c.scale, c.unit_of = {}, {}
  for _, name in ipairs(c.all) do
    local info = not c.tool[name] and pmc.info(name)
    c.scale[name] = info and info.scale
    c.unit_of[name] = is_clock(name) and "msec" or c.tool[name] and "ns" or (info and info.unit) or ""
  end
  return c
end

-- Where each instance counted (c.place: cpu topology, or the thread) and
-- pmc.run's targets.
local function place_targets(c)
  local topo = machine
  c.place = {}
  if c.cpus then
    for _, cpu in ipairs(c.cpus) do c.place[cpu] = topo.of(cpu) end
    c.targets = {{cpus = c.cpus}}
  elseif c.tids then
    c.targets = {}
    -- inherit: the threads and children a target starts while counted are
    -- counted with it, as perf's attr.inherit (off with -i)
    for k, t in ipairs(c.tids) do
      c.targets[k] = {pid = t, inherit = c.inherit}
      c.place[k] = {tid = t, comm = topo.comm(t)}
    end
  end
end

-- inst[i]: event i's instances {key..., value, enabled, running} in reading r
local function instances(c, r)
  local inst = {}
  for i = 1, #c.events do
    local list = {}
    if c.cpus then
      for _, x in ipairs(r[1][i].cpus or {}) do
        local p = c.place[x.cpu] or machine.of(x.cpu)
        list[#list + 1] = {cpu = x.cpu, socket = p.socket, die = p.die, core = p.core, node = p.node,
                           value = x.value, enabled = x.enabled, running = x.running}
      end
    elseif c.tids then
      for k, rd in ipairs(r) do
        if rd then   -- false: a thread gone before it was opened
          list[#list + 1] = {tid = c.place[k].tid, comm = c.place[k].comm,
                             value = rd[i].value, enabled = rd.enabled, running = rd.running}
        end
      end
    else
      list[1] = {value = r[i].value, enabled = r.enabled, running = r.running}
    end
    inst[i] = list
  end
  return inst
end

-- instances minus the previous cumulative ones (for -I)
local function minus(cur, prev)
  if not prev then return cur end
  local d = {}
  for i, list in ipairs(cur) do
    d[i] = {}
    for k, x in ipairs(list) do
      local p = prev[i][k] or {value = 0, enabled = 0, running = 0}
      local y = {}
      for kk, v in pairs(x) do y[kk] = v end
      y.value, y.enabled, y.running = x.value - p.value, x.enabled - p.enabled, x.running - p.running
      d[i][k] = y
    end
  end
  return d
end

-- the aggregates of mode M: {key -> {fields..., nr, [i] = {value, enabled, running}}}, and their keys in order
local function aggregate(M, inst)
  local aggs, keys = {}, {}
  for i, list in ipairs(inst) do
    for _, x in ipairs(list) do
      local k = M.key(x)
      local a = aggs[k]
      if not a then
        a = {cpu = x.cpu, socket = x.socket, die = x.die, core = x.core, node = x.node, tid = x.tid,
             comm = x.comm, nr = 0, sum = {}}
        aggs[k] = a
        keys[#keys + 1] = k
      end
      if i == 1 then a.nr = a.nr + 1 end
      local s = a.sum[i] or {value = 0, enabled = 0, running = 0}
      s.value, s.enabled, s.running = s.value + x.value, s.enabled + x.enabled, s.running + x.running
      a.sum[i] = s
    end
  end
  table.sort(keys)
  return aggs, keys
end

-- ---- output: a row's fields w (see row) in each of perf's formats ----
local function json_row(c, w)
  local s = {"{"}
  if w.pre then s[#s + 1] = string.format('"interval" : %s, ', w.pre:match("%S+")) end
  s[#s + 1] = c.M.json(w.a)
  s[#s + 1] = string.format('"counter-value" : "%s", "unit" : %s, "event" : %s, ', w.status or string.format("%f", w.v),
    json_str(w.unit), json_str(w.name))
  if w.n > 1 then s[#s + 1] = string.format('"variance" : %.2f, ', w.rse) end
  s[#s + 1] = string.format('"event-runtime" : %d, "pcnt-running" : %.2f, "metric-value" : %f, "metric-unit" : %s}',
    w.runtime, w.pct, w.metric or 0, json_str(w.munit or ""))
  c.out:write(table.concat(s), "\n")
end

-- perf stat -x: [interval,] [aggregate fields,] value, unit, event,
-- [variance with -r > 1,] run time, percent running, metric value, metric unit
local function csv_row(c, w)
  local f = {}
  if w.pre then f[1] = w.pre end
  for _, x in ipairs(c.M.csv(w.a)) do f[#f + 1] = x end
  f[#f + 1] = w.status or fmtnum(w.v, w.unit, c.scale[w.name])
  f[#f + 1] = w.unit
  f[#f + 1] = w.name
  if w.n > 1 then f[#f + 1] = string.format("%.2f%%", w.rse) end
  f[#f + 1] = tostring(w.runtime)
  f[#f + 1] = string.format("%.2f", w.pct)
  f[#f + 1] = w.metric and string.format("%.3f", w.metric) or ""
  f[#f + 1] = w.munit or ""
  c.out:write(table.concat(f, c.sep), "\n")
end

local function std_row(c, w)
  local line = (w.pre and w.pre .. " " or "") .. c.M.std(w.a) ..
    string.format("%18s %-4s %-32s", w.status or fmtnum(w.v, w.unit, c.scale[w.name]), w.unit, w.name)   -- perf: unit width 4
  if w.metric then line = line .. string.format(" # %8.3f %-23s", w.metric, w.munit)
  else line = line .. string.rep(" ", 38) end
  -- perf leaves out a zero noise
  if w.n > 1 and not w.status and w.rse ~= 0 then line = line .. string.format("  ( +- %5.2f%% )", w.rse) end
  if not w.status and w.pct < 100 then line = line .. string.format(" (%.2f%%)", w.pct) end
  c.out:write((line:gsub("%s+$", "")), "\n")
end

-- One row of perf stat's in the chosen format: event name of aggregate a,
-- t its cell (see fold); metric_v: its -M metric {value, unit}, if any.
local function row(c, prefix_t, a, name, t, el_s, clock_ns, metric_v)
  local ens, runs = t.enabled, t.running
  local w = {a = a, name = name, n = t.stats.n, unit = c.unit_of[name], rse = 0}
  local m = 0
  if not c.tool[name] and (not c.idx[name] or not c.counted) then w.status = "<not supported>"; w.unit = ""
  elseif not c.tool[name] and runs == 0 then w.status = "<not counted>"
  else m = t.stats.mean; w.rse = select(2, metrics.mean_error(t.stats)) end
  w.v = w.unit == "msec" and m / 1e6 or m
  w.pct = (not w.status and ens > 0) and 100 * runs / ens or 100
  w.runtime = w.status and 0 or math.floor(runs / w.n + 0.5)
  if not w.status and not c.tool[name] then
    if metric_v then w.metric, w.munit = metric_v[1], metric_v[2]
    else w.metric, w.munit = metric_of(name, m, clock_ns, el_s) end
  end
  w.pre = prefix_t and string.format("%6d.%09d", math.floor(prefix_t), math.floor(prefix_t % 1 * 1e9 + 0.5)) or nil
  if c.json then json_row(c, w) elseif c.sep then csv_row(c, w) else std_row(c, w) end
end

-- -M metrics of one aggregate: {[event] = {value, unit}} on the row of each
-- metric's first event; one that cannot be evaluated here is left out
-- (metrics.eval: a Ctrl-C inside one stops the stat, as elsewhere).
local function metric_rows(list, means, el_s)
  local at = {}
  for _, mt in ipairs(list) do
    local first = mt.events and mt.events[1]
    if first and not at[first] then
      local v = metrics.eval(mt, means, {seconds = el_s})
      if v then at[first] = {v, mt.name} end
    end
  end
  return at
end

-- The rows of a table, summed run by run as perf stat sums them: the
-- first run's aggregates (aggs, their keys in order), the elapsed times'
-- running statistics (elapsed), and per key and event a cell {stats,
-- enabled, running, first, nonzero}: the running statistics of its value
-- (metrics.running), its enabled and running times summed over the runs,
-- the first run's value and whether any run's was not 0.  Nothing grows
-- with the runs: -r 1000000 keeps what -r 2 keeps.
local function table_acc()
  return {elapsed = metrics.running(), cells = {}}
end

-- Adds a run's (or an interval's) length elapsed (seconds) and its
-- aggregates aggs, keys (aggregate's two results) to acc.
local function fold(c, acc, elapsed, aggs, keys)
  if not acc.keys then acc.aggs, acc.keys = aggs, keys end
  metrics.update(acc.elapsed, elapsed)
  for _, k in ipairs(acc.keys) do
    local cell = acc.cells[k]
    if not cell then cell = {}; acc.cells[k] = cell end
    for _, name in ipairs(c.all) do
      local t = cell[name]
      if not t then t = {stats = metrics.running(), enabled = 0, running = 0}; cell[name] = t end
      local i, v = c.idx[name], 0
      if c.tool[name] then   -- duration_time: each run's (or interval's) length
        v = math.floor(elapsed * 1e9 + 0.5)
        t.enabled, t.running = t.enabled + v, t.running + v
      elseif i and c.counted then
        local s = aggs[k] and aggs[k].sum[i] or {value = 0, enabled = 0, running = 0}
        v, t.enabled, t.running = s.value, t.enabled + s.enabled, t.running + s.running
      end
      metrics.update(t.stats, v)
      if t.first == nil then t.first = v end
      t.nonzero = t.nonzero or v ~= 0
    end
  end
end

-- Per aggregate key of acc: the means of its counted events (means), its
-- clock's mean (clock_ns) and its -M metrics (metric).
local function means_of(c, acc, el_s)
  local out = {}
  for _, k in ipairs(acc.keys) do
    local cell, o = acc.cells[k], {means = {}}
    for _, name in ipairs(c.all) do
      if c.idx[name] and c.counted and cell[name].running > 0 then
        o.means[name] = cell[name].stats.mean
        if is_clock(name) and not o.clock_ns then o.clock_ns = o.means[name] end
      end
    end
    o.metric = metric_rows(c.metrics, o.means, el_s)
    out[k] = o
  end
  return out
end

-- perf's order of threads for an event: by count, the largest first, uncounted last
local function by_count(keys, cells, name)
  local order = {}
  for j, k in ipairs(keys) do order[j] = k end
  local function val(k) local t = cells[k][name]; return t.running > 0 and t.first or -1 end
  table.sort(order, function(x, y)
    local vx, vy = val(x), val(y)
    if vx ~= vy then return vx > vy end
    return x < y
  end)
  return order
end

-- an uncounted event's aggregate has 1 member in perf's --per-socket/die/core/node
local ONE_MEMBER = {socket = true, die = true, core = true, node = true}

-- prints one table of rows from acc (fold): per aggregate, the events (or
-- per event, the aggregates), in the first run's keys
local function print_table(c, prefix_t, acc, el_s)
  local keys, cells = acc.keys, acc.cells
  local derived = means_of(c, acc, el_s)
  local function one(k, name)
    local d, a = derived[k], acc.aggs[k]
    if not c.idx[name] and ONE_MEMBER[c.mode] then a = setmetatable({nr = 1}, {__index = a}) end
    row(c, prefix_t, a, name, cells[k][name], el_s, d.clock_ns, d.metric[name])
  end
  -- perf leaves out the threads that counted nothing when it lists every thread of the machine
  local function shown(k, name)
    return not c.system_threads or cells[k][name].nonzero
  end
  if EVENT_MAJOR[c.mode] then
    for _, name in ipairs(c.all) do
      for _, k in ipairs(c.mode == "thread" and by_count(keys, cells, name) or keys) do
        if shown(k, name) then one(k, name) end
      end
    end
  else
    for _, k in ipairs(keys) do
      for _, name in ipairs(c.all) do one(k, name) end
    end
  end
end

-- ---- the runs ----
-- the -I rows of instances d at time t, under a header every 25 intervals
local function interval_rows(c, d, t)
  if not c.sep and not c.json and c.printed % 25 == 0 then c.out:write(c.M.header, "\n") end
  local acc = table_acc()
  fold(c, acc, t - (c.last_t or 0), aggregate(c.M, d))
  c.last_t = t
  print_table(c, t, acc, c.interval / 1000)
end

local function tick(c, r, t)
  local inst = instances(c, r)
  local d = minus(inst, c.prev)
  c.prev = inst
  interval_rows(c, d, t)
  c.printed = c.printed + 1
  c.out:flush()
end

-- The runs (one with -I, its rows printed as they come), summed as they
-- end: their table (acc, see fold), the number of runs (n), the first
-- run's user and sys times, and the exit status (the command's, or 128 +
-- the signal that stopped it).  nil, status when a run fails.
local function count(c)
  local runs = {acc = table_acc(), n = 0, status = 0}
  for rep = 1, c.repeats do
    c.prev, c.last_t = nil, nil
    -- every thread of the machine: one that ends before it is opened is left out (false)
    local r, info, _, cmd_status = pmc.run{events = c.events, cmd = #c.args > 0 and c.args or nil,
      targets = c.targets, until_pid = #c.args == 0 and c.until_pid or nil, missing_ok = c.system_threads,
      inherit = c.inherit,
      interval_ms = c.interval, on_interval = c.interval and function(rr, t) tick(c, rr, t) end or nil}
    if not r then   -- a command that cannot run: 127 or 126, as env(1) and nohup exit
      if not c.counted and not cmd_status then
        -- the placeholder failed: the user's events and then why the target opens nothing
        io.stderr:write(string.format("pmcsh stat: %s: not supported here; and %s refuses even the " ..
          "placeholder a run counts: ", table.concat(c.typed, ", "), c.what or "the command"))
      else
        io.stderr:write("pmcsh stat: ")
      end
      io.stderr:write(info, "\n")
      return nil, cmd_status or 1
    end
    if c.interval then
      -- the last, partial interval, as perf prints it
      local inst = instances(c, r)
      local t = info.elapsed
      if not c.prev or t - (c.printed * c.interval / 1000) > 1e-3 then interval_rows(c, minus(inst, c.prev), t) end
    else
      fold(c, runs.acc, info.elapsed, aggregate(c.M, instances(c, r)))
    end
    runs.n = rep
    if rep == 1 then runs.user, runs.sys = info.user or 0, info.sys or 0 end
    runs.status = info.status or runs.status
    if info.stopped_by then   -- Ctrl-C or SIGTERM: print what was counted, exit 128 + signal
      runs.status = 128 + info.stopped_by
      break
    end
  end
  return runs
end

-- the table of the runs, with perf's header and times in the table format
local function print_summary(c, runs)
  local n, el = runs.n, runs.acc.elapsed.mean
  local se, rse = metrics.mean_error(runs.acc.elapsed)
  local tabular = not c.sep and not c.json
  if tabular then
    c.out:write(string.format("\n Performance counter stats for %s%s:\n\n",
      text.inert(c.what or ("'" .. table.concat(c.args, " ") .. "'")),
      n > 1 and string.format(" (%d runs)", n) or ""))
  end
  print_table(c, nil, runs.acc, el)
  if not tabular then return end
  if n > 1 then
    -- perf: the mean and the standard error of the mean, to two digits
    -- past the error's first significant one (perf's get_precision + 2)
    local prec = (se > 1 or se <= 0) and 2 or math.ceil(-math.log(se, 10)) + 2
    c.out:write(string.format("\n %17." .. prec .. "f +- %." .. prec .. "f seconds time elapsed  ( +- %5.2f%% )\n\n",
      el, se, rse))
  else
    c.out:write(string.format("\n%18.9f seconds time elapsed\n\n", el))
  end
  -- perf prints user/sys for one run of a command it started
  if n == 1 and not c.cpus and not c.tids then
    c.out:write(string.format("%18.9f seconds user\n%18.9f seconds sys\n\n", runs.user, runs.sys))
  end
end

return {
  description = "count events of a command, cpus or threads, like perf stat (-a, -C, -p, -t, -I, -A, --per-*)",
  usage = "[[--] cmd [args...]]",
  command = true,   -- options end at the command's name, as perf stat's do
  help = [[
  pmcsh stat -e task-clock,page-faults:u,page-faults:k -- dd if=/dev/zero of=/dev/null bs=1M count=100
  pmcsh stat -e task-clock -r 10 -x , -- ls       CSV in perf stat's field order
  pmcsh stat -e page-faults --json -- ls          JSON lines with perf stat's keys
  pmcsh stat -a -I 500 -- sleep 2                 every cpu, a row per event every 500 ms
  pmcsh stat -a --per-socket -- sleep 1           one row per socket and event
  pmcsh stat -p 1234 --per-thread -- sleep 1      the threads of process 1234 for a second
  pmcsh stat -a --per-thread -- sleep 1           every thread of the machine that counted something
  pmcsh stat -e '{task-clock,page-faults}' -M software -- ls
The command is counted from its exec, children included; the output goes to
stderr, like perf stat's (the command keeps stdout).  With -a, -C, -p or -t
those are counted instead, while the command runs (or until Ctrl-C, or the
process of -p ends, when no command is given), with the threads and children
they start meanwhile (not with -i).  The default events are perf
stat 6.1's (cpu-clock instead of task-clock for cpus); an event this machine
cannot count is a <not supported> row and the run goes on.]],
  options = {
    {name = "events", short = "e", type = "list",
      help = "comma-separated events; {a,b} groups them; repeated -e add (default: perf stat 6.1's list)"},
    {name = "metrics", short = "M", type = "list", help = "the events and metrics of groups in events/ (software, memory-skl)"},
    {name = "repeat", short = "r", type = "int", default = 1, min = 1, max = 1000000, help = "runs to average"},
    {name = "all-cpus", short = "a", type = "flag", help = "count every online cpu (system wide)"},
    {name = "cpu", short = "C", type = "string", help = "count these cpus: 0-3,8"},
    {name = "pid", short = "p", type = "string", help = "count these processes (all their threads): PID[,PID]"},
    {name = "tid", short = "t", type = "string", help = "count these threads: TID[,TID]"},
    {name = "no-inherit", short = "i", type = "flag",
      help = "leave out the threads and children the command (or -p, -t) starts while counted"},
    {name = "interval-print", short = "I", type = "int", min = 10, max = 86400000, help = "print the counts every N ms"},
    {name = "no-aggr", short = "A", type = "flag", help = "with -a/-C: a row per cpu"},
    {name = "per-socket", type = "flag", help = "with -a/-C: a row per socket"},
    {name = "per-die", type = "flag", help = "with -a/-C: a row per die"},
    {name = "per-core", type = "flag", help = "with -a/-C: a row per core"},
    {name = "per-node", type = "flag", help = "with -a/-C: a row per NUMA node"},
    {name = "per-thread", type = "flag", help = "with -p/-t: a row per thread; with -a: every thread of the machine"},
    -- perf merges the instances of a PMU an event names by its prefix
    -- (uncore_imc/x/ over uncore_imc_0..N); pmcsh opens the one PMU a sysfs
    -- name gives, so its rows are perf's --no-merge rows already
    {name = "no-merge", type = "flag",
      help = "perf's: a row per PMU instance (pmcsh's rows always are: a sysfs event names one PMU)"},
    {name = "field-separator", short = "x", type = "string", help = "CSV output with this separator"},
    {name = "json", short = "j", type = "flag", help = "JSON lines (perf stat's keys)"},
    {name = "output", short = "o", type = "string", help = "write the counts to this file instead of stderr"},
    {name = "append", type = "flag", help = "with -o: append to the file"},
  },
  run = function(opts, args)
    local c, status, msg = setup(opts, args)
    if not c then return status, msg end
    c.all, c.metrics = event_list(opts, c.cpus or c.system_threads)
    c.out, msg = open_output(opts)
    if not c.out then return nil, msg end
    -- perf's JSON lines after one line naming the machine (pmcsh.results.head)
    if c.json then c.out:write(results.head("stat"), "\n") end
    local ok, runs
    ok, status = probe_events(c)
    if ok then
      place_targets(c)
      runs, status = count(c)
      if runs and not c.interval then print_summary(c, runs) end
    end
    local written, werr = c.out:close()
    if not written then return nil, werr end   -- the counts are lost: exit 1, whatever the command's status
    return runs and runs.status or status
  end,
}
