-- pmcsh stat: perf-stat-like counting of a command (or of cpus, processes
-- or threads), with mean and relative standard error over repeated runs.
-- The options a recipe parsed (scripts/stat.lua's) become a context (the
-- target, the aggregation mode, the events probed), the runs are summed
-- into one table of plain data, and pmcsh.stat.format writes it in perf
-- stat 6.1's formats.
local errors = require("pmcsh.errors")
local events = require("pmcsh.events")
local aggregate = require("pmcsh.stat.aggregate")
local format = require("pmcsh.stat.format")
local record = require("pmcsh.stat.record")
local machine = require("pmcsh.machine")
local options = require("pmcsh.options")
local pmc = require("pmcsh.pmc")
local regions = require("pmcsh.regions")
local results = require("pmcsh.results")
local sys = require("pmcsh.sys")
local text = require("pmcsh.text")

local M = {}

-- perf's tool events (duration_time, user_time, system_time): no counter,
-- the run's own clock and rusage
local TOOLS = (events.load("generic") or {}).tools or {}

local function usage(msg) error(options.usage("stat: " .. msg), 0) end

-- Option name as the user typed it with its value ("-C 0,,1", "--pid=''"),
-- for a message about the value (c.typed_as: the host's, recipe.typed).
local function as_typed(c, opts, name)
  local t = c.typed_as and c.typed_as(name) or "--" .. name
  if opts[name] == "" then t = t .. "''" end
  return text.inert(t)
end

-- The stat's context, c below: the options checked and turned into what the
-- phases share.  The format (sep, json, out), the target (cpus, or tids with
-- until_pid, what names it in the header; the command in args), the
-- aggregation mode (mode, M = MODES[mode]), interval and repeats; then the
-- events (all: the rows' names, an event given twice two rows, as perf's;
-- events: those counted, idx: row -> index in events, counted, scale,
-- unit_of, metrics) and where each instance
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
      if not ids then usage(string.format("%s: %s (give %ss: N[,N...])", as_typed(c, opts, o[1]), why, o[2])) end
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

-- perf's --control: fifo:CTL[,ACK] (FIFO paths pmcsh opens) or fd:CTL[,ACK]
-- (descriptors pmcsh inherits): pmc.run's control table.  An empty ACK
-- after the comma is none for fifo: and wrong for fd:, as perf reads them.
local function control_of(spec)
  local kind, rest = spec:match("^(%a+):(.*)$")
  local ctl, comma, ack = (rest or ""):match("^([^,]*)(,?)(.*)$")
  if kind == "fifo" and ctl ~= "" then
    return {ctl = ctl, ack = ack ~= "" and ack or nil}
  elseif kind == "fd" and ctl:match("^%d+$") and (comma == "" or ack:match("^%d+$")) then
    for _, fd in ipairs({ctl, ack}) do   -- a descriptor is an int: one past it is open nowhere
      local n = math.tointeger(tonumber(fd))
      if fd ~= "" and not (n and n <= 0x7fffffff) then
        usage(string.format("--control %s: fd %s is not open (fd:CTL,ACK names descriptors pmcsh inherits)",
          text.inert(spec), fd))
      end
    end
    return {ctl = math.tointeger(tonumber(ctl)), ack = ack ~= "" and math.tointeger(tonumber(ack)) or nil}
  end
  usage(string.format("--control %s: give fifo:CTL[,ACK] (FIFO paths) or fd:CTL[,ACK] (open descriptors)",
    text.inert(spec)))
end

-- perf's --topdown: Level 1 from the cpu PMU's topdown events, where it
-- has them; perf's own refusals where it has none (exit 1, as perf's -1).
local function topdown(c)
  local function refuse(msg) io.stderr:write(msg, "\n"); return nil, 1 end
  if pmc.info("cpu/topdown-retiring/") or pmc.info("cpu/topdown-total-slots/") then
    return refuse("pmcsh stat: --topdown: this PMU has topdown events; pmcsh does not count them yet " ..
      "(give them with -e cpu/slots/,cpu/topdown-retiring/,...)")
  end
  if c.mode ~= "global" and c.mode ~= "core" then return refuse("top down event configuration requires --per-core mode") end
  if not c.cpus then return refuse("top down event configuration requires system-wide mode (-a)") end
  return refuse("System does not support topdown")
end

local MODE_FLAGS = {{"no-aggr", "none"}, {"per-socket", "socket"}, {"per-die", "die"}, {"per-core", "core"},
                    {"per-node", "node"}, {"per-thread", "thread"}}

-- The context from the options, or nil, status, message.
local function setup(opts, args, typed_as)
  local c = {typed_as = typed_as, sep = opts["field-separator"], json = opts.json, args = args, inherit = not opts["no-inherit"],
             interval = opts["interval-print"], repeats = opts["repeat"], printed = 0}
  c.verbose, c.null, c.metric_only = opts.verbose or 0, opts.null, opts["metric-only"]
  c.privilege = opts["all-kernel"] and "k" or opts["all-user"] and "u" or nil
  if opts["all-user"] and opts["all-kernel"] then usage("--all-user and --all-kernel exclude each other") end
  -- perf's -B: thousands' separators in the table, on by default; refused with -x, as perf refuses it
  if opts["big-num"] and c.sep then usage("-B option not supported with -x") end
  c.big_num = not opts["no-big-num"] and not c.sep and not c.json
  if c.sep == "" then usage("-x needs a separator (such as -x ,)") end
  if c.sep and c.json then usage("-x and --json exclude each other") end
  if opts.append and not opts.output then usage("--append needs -o FILE") end

  -- the target: the command, cpus (-a, -C) or threads (-p, -t)
  -- no command and no target: every cpu, as perf counts then
  local all = opts["all-cpus"] or (#args == 0 and not opts.cpu and not opts.pid and not opts.tid)
  if all and opts.cpu then usage("-a and -C exclude each other") end
  if (all or opts.cpu) and (opts.pid or opts.tid) then usage("-a/-C and -p/-t exclude each other") end
  if all then c.cpus, c.what = machine.online(), "'system wide'"
  elseif opts.cpu then
    local msg
    c.cpus, msg = machine.parse_list(opts.cpu, "cpus")
    if not c.cpus then usage(string.format("%s: %s (give cpus: N or N-M, comma-separated)", as_typed(c, opts, "cpu"), msg)) end
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
  c.M = format.MODES[c.mode]
  if c.mode == "thread" and not c.tids then
    if not all then usage("--per-thread counts the threads of -p PID or -t TID, or with -a every thread") end
    -- perf's -a --per-thread: every thread of the machine, each counted as a task
    c.cpus, c.system_threads = nil, true
    c.tids = machine.all_threads()
  end
  if c.mode ~= "global" and c.mode ~= "thread" and not c.cpus then
    usage("-A and --per-socket/die/core/node count cpus: give -a or -C LIST")
  end
  if c.interval and c.repeats > 1 then usage("-I and -r exclude each other") end
  -- perf's --interval-count and --summary: N intervals, and the table of their sum after them
  c.interval_count, c.summary, c.no_csv_summary = opts["interval-count"], opts.summary, opts["no-csv-summary"]
  if c.interval_count and not c.interval then usage("--interval-count needs -I MS") end
  c.delay = opts.delay or 0
  c.control = opts.control and control_of(opts.control)
  if opts.topdown then return topdown(c) end
  return c
end

-- perf stat's -d (L1 and last level data caches), -dd (instruction
-- cache and TLBs) and -ddd (L1 data prefetches)
local DETAILED = {
  {"L1-dcache-loads", "L1-dcache-load-misses", "LLC-loads", "LLC-load-misses"},
  {"L1-icache-loads", "L1-icache-load-misses", "dTLB-loads", "dTLB-load-misses", "iTLB-loads", "iTLB-load-misses"},
  {"L1-dcache-prefetches", "L1-dcache-prefetch-misses"},
}

-- The events: -e lists with {a,b} groups flattened, then -M groups; the
-- list, the -M metrics, and the events of a group written for another
-- model ({[name] = true}: <not supported> rows, said once on stderr).
local function event_list(opts, cpus)
  local all, metrics, unfit = {}, {}, {}
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
    local g, gpath, why = events.group_here(gname)
    if not g then usage("-M: " .. gpath) end
    if why then
      io.stderr:write("pmcsh stat: -M ", gname, ": ", why, "; its ", #g.events, " events are <not supported> here\n")
      for _, e in ipairs(g.events) do unfit[e] = true end
    end
    for _, e in ipairs(g.events) do all[#all + 1] = e end
    for _, m in ipairs(g.metrics or {}) do metrics[#metrics + 1] = m end
  end
  -- -n counts nothing but the events given
  if #all == 0 and not opts.null then
    all = {cpus and "cpu-clock" or "task-clock", "context-switches", "cpu-migrations", "page-faults",
           "cycles", "instructions", "branches", "branch-misses"}
  end
  -- -d, -dd, -ddd: perf's detailed events, appended to the list (given or default)
  if not opts.null then
    for level = 1, math.min(opts.detailed or 0, #DETAILED) do
      for _, e in ipairs(DETAILED[level]) do all[#all + 1] = e end
    end
  end
  -- the same event twice is counted twice, a row each, as perf counts it
  return all, metrics, unfit
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

-- name counted in user space only (--all-user) or the kernel only
-- (--all-kernel), a privilege modifier of its own replaced, as perf's
-- options override it.
local function privileged(c, name)
  if not c.privilege then return name end
  local ok, m = pcall(pmc.modified, name, c.privilege)
  if ok then return m end
  local pok, p = pcall(pmc.parse_name, name)
  return pok and p.base and pmc.modified(p.base, c.privilege) or name
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
    if TOOLS[name] then counted, row = false, name; c.tool[name] = TOOLS[name].time
    elseif c.unfit[name] then counted, row = false, name
    else
      counted, row, status = probe_one(pmc, privileged(c, name), target)
      -- --all-user, --all-kernel: the row keeps the name given, as perf's
      if c.privilege and counted ~= nil then row = name end
    end
    if counted == nil then io.stderr:write("pmcsh stat: ", row, "\n"); return nil, status end
    c.all[k] = row
    if counted then c.events[#c.events + 1] = counted; c.idx[k] = #c.events
    elseif c.verbose > 0 and not c.tool[name] then
      io.stderr:write("Warning:\n", row, " event is not supported by the kernel.\n")   -- perf -v's
    end
  end
  c.counted = #c.events > 0
  -- counted for the run, not shown: the software event nothing refuses to
  -- count in a process's own user space
  if not c.counted then c.events = {"dummy:u"} end
  c.scale, c.unit_of = {}, {}
  for _, name in ipairs(c.all) do
    local info = not c.tool[name] and not c.unfit[name] and pmc.info(name)
    c.scale[name] = info and info.scale
    c.unit_of[name] = format.is_clock(name) and "msec" or c.tool[name] and "ns" or (info and info.unit) or ""
  end
  return c
end

-- ---- the runs ----
-- the -I rows of instances d at time t, under a header every 25 intervals
local function interval_rows(c, d, t)
  if not c.sep and not c.json and c.printed % 25 == 0 then c.out:write(c.M.header, "\n") end
  local acc = aggregate.acc()
  aggregate.fold(c, acc, {elapsed = t - (c.last_t or 0)}, aggregate.aggregate(c.M, d))
  c.last_t = t
  format.table(c, t, acc, c.interval / 1000)
end

local function tick(c, r, t)
  local inst = aggregate.instances(c, r)
  local d = aggregate.minus(inst, c.prev)
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
  local runs = {acc = aggregate.acc(), n = 0, status = 0}
  for rep = 1, c.repeats do
    c.prev, c.last_t = nil, nil
    -- every thread of the machine: one that ends before it is opened is left out (false)
    local r, info, _, cmd_status = pmc.run{events = c.events, cmd = #c.args > 0 and c.args or nil,
      targets = c.targets, until_pid = #c.args == 0 and c.until_pid or nil, missing_ok = c.system_threads,
      inherit = c.inherit, delay_ms = c.delay ~= 0 and c.delay or nil, control = c.control,
      interval_ms = c.interval, interval_count = c.interval_count,
      on_interval = c.interval and function(rr, t) tick(c, rr, t) end or nil,
      -- perf's, on stderr whatever -o says: after the channel's refusals, before the command
      on_start = c.delay ~= 0 and function() format.said_control({"disabled"}) end or nil}
    if r then format.said_control(info.control_log, info.control_log_dropped) end
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
      -- the last, partial interval, as perf prints it, unless --interval-count's were all printed
      local inst = aggregate.instances(c, r)
      local t = info.elapsed
      local more = not c.interval_count or c.printed < c.interval_count
      if more and (not c.prev or t - (c.printed * c.interval / 1000) > 1e-3) then
        interval_rows(c, aggregate.minus(inst, c.prev), t)
        c.prev = inst
      end
      -- --summary: the intervals printed, summed, over the whole run's time (perf's)
      if c.summary then aggregate.fold(c, runs.acc, info, aggregate.aggregate(c.M, c.prev)) end
    else
      local inst = aggregate.instances(c, r)
      if c.verbose > 0 then format.said_counts(c, inst) end
      if c.record then record.run(c.record, inst, info) end
      aggregate.fold(c, runs.acc, info, aggregate.aggregate(c.M, inst))
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

-- The context from the recipe's options (opts, args: the command) with its
-- events probed and its targets placed: c | nil, exit status[, message].
-- typed_as(name): the option as the user typed it, for messages.
function M.setup(opts, args, typed_as)
  local c, status, msg = setup(opts, args, typed_as)
  if not c then return nil, status, msg end
  c.all, c.metrics, c.unfit = event_list(opts, c.cpus or c.system_threads)
  return c
end

-- The runs of context c (after M.setup and out set): runs = {acc (the
-- summed table), n, user, sys, status} | nil, exit status.  -I rows are
-- written to c.out as they come.
function M.count(c)
  if c.verbose > 0 then   -- perf -v's first line: the cpu it took its event tables for
    local fp = machine.fingerprint()
    if fp.cpu_vendor and fp.cpu_family and fp.cpu_model_id then
      io.stderr:write(string.format("Using CPUID %s-%d-%X-%X\n", fp.cpu_vendor, fp.cpu_family, fp.cpu_model_id,
        fp.cpu_stepping or 0))
    end
  end
  local ok, status = probe_events(c)
  if not ok then return nil, status end
  aggregate.place(c)
  if c.record then record.header(c.record, c) end
  return count(c)
end

-- Where the counts go (format.open), with the machine's fingerprint
-- (pmcsh.results.head) where it is asked for: perf's lines are left as
-- perf writes them, so the fingerprint is a JSON record of its own before
-- them with --fingerprint --json, and otherwise a '#' comment line, as
-- perf writes its own header: always in a -o file, with --fingerprint on
-- stderr.
local function open_output(opts, json)
  local as_record = opts.fingerprint and json
  local note = not as_record and (opts.fingerprint or opts.output) and results.head("stat") or nil
  local out, msg = format.open(opts.output, opts.append, note)
  if out and as_record then out:write(results.head("stat"), "\n") end
  return out, msg
end

-- stat --regions: the regions of the command's marker library, counted on
-- opts.events (default: task-clock and page-faults, with cycles and
-- instructions where a cpu PMU opens them), written in the chosen format,
-- and with --out one results file per process for pmcsh compare.
local REGIONS_NOT = {"all-cpus", "cpu", "pid", "tid", "interval-print", "no-aggr", "per-socket", "per-die",
  "per-core", "per-node", "per-thread", "metrics", "delay", "control"}
local function run_regions(opts, args, typed_as)
  for _, k in ipairs(REGIONS_NOT) do
    if opts[k] then usage(string.format("--regions counts the command's own regions: %s does not go with it", typed_as(k))) end
  end
  if (opts["repeat"] or 1) > 1 then usage("--regions runs the command once: -r does not go with it") end
  if #args == 0 then usage("--regions needs a command: pmcsh stat --regions -e EVENTS -- ./app") end
  local evs = opts.events
  if not evs or #evs == 0 then
    evs = {"task-clock", "page-faults"}
    for _, e in ipairs({"cycles", "instructions"}) do
      local i = pmc.info(e)
      if i and i.opens then evs[#evs + 1] = e end
    end
  end
  if #evs > regions.MAX_EVENTS then
    usage(string.format("--regions counts at most %d events (%d given)", regions.MAX_EVENTS, #evs))
  end
  local dir = opts.out and (opts.out:match("/$") and opts.out or opts.out .. "/")
  if dir then   -- made before the run: a bad folder costs no run
    local p, perr, perrno = results.path(dir, "regions")
    if not p then return nil, perr, perrno end
  end
  local out, msg = open_output(opts, opts.json)
  if not out then return nil, msg end
  local res, why = regions.run{events = evs, cmd = args}
  if not res then
    out:close()
    io.stderr:write("pmcsh stat: ", tostring(why), "\n")
    return 1
  end
  regions.write(res, out, {sep = opts["field-separator"], json = opts.json})
  local written, werr = out:close()
  if not written then return nil, werr end
  if dir then
    local ok, werr2 = regions.save(res, dir)
    if not ok then return nil, werr2 end
  end
  return res.stopped_by and 128 + res.stopped_by or res.status or 0
end

-- perf stat, whole: the counts of opts and args written as perf stat 6.1
-- writes them; the exit status (the command's), or nil, message.  With
-- record_to (perf stat record's -o: a path, "-" stdout) the runs are
-- written there too, and the table is not shown with "-", as perf's.
function M.run(opts, args, typed_as, record_to)
  if opts.regions then return run_regions(opts, args, typed_as) end
  local c, status, msg = M.setup(opts, args, typed_as)
  if not c then return status, msg end
  if record_to then c.record, msg = record.open(record_to, c) end
  if record_to and not c.record then return nil, msg end
  if record_to == "-" then c.out = record.SINK else c.out, msg = open_output(opts, c.json) end
  if not c.out then return nil, msg end
  local runs
  runs, status = M.count(c)
  if runs and (not c.interval or c.summary) then format.summary(c, runs) end
  local written, werr = c.out:close()
  if written and c.record then written, werr = record.close(c.record) end
  if not written then return nil, werr end   -- the counts are lost: exit 1, whatever the command's status
  return runs and runs.status or status
end

-- perf stat report: a record's runs printed (pmcsh.stat.record)
M.report = record.report

return M
