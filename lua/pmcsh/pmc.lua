-- pmc: performance counter groups (perf_event_open, event names from
-- libpfm4 and sysfs).  The C bindings do the work, one module each:
-- pmcsh._pmc (groups), pmcsh._run (a command counted), pmcsh._calib
-- (probes, a window's cost), pmcsh._replay (recorded counts); this module
-- gives them the friendly API, documentation and completion, and gathers
-- what an event name is (pmcsh.pmc.event, over pmcsh._events) under its
-- own name.
local C = require("pmcsh._pmc")
local run_C = require("pmcsh._run")
local calib = require("pmcsh._calib")
local replay = require("pmcsh._replay")
local event = require("pmcsh.pmc.event")
local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")
local format = require("pmcsh.format")
local complete = require("pmcsh.complete")
local statistics = require("pmcsh.statistics")
local sys = require("pmcsh._sys")

local pmc = {}
for _, name in ipairs({"parse_name", "modified", "split", "info", "info_all", "identity", "list", "models",
  "distance", "environment", "generic_names"}) do
  pmc[name] = assert(event[name], name)
end

-- print(r) of a reading prints what the REPL shows (pmcsh.format's reading)
format.adopt(C.reading_meta)

-- Splits {"a", "b", pid = 1} into the event list and the option table.
local function split_spec(spec, opts)
  if type(spec) == "string" then spec = {spec} end
  if type(spec) ~= "table" then
    errors.argument("group", 1, "table of event names expected, got " .. type(spec) .. "", 2)
  end
  local events, o = {}, {}
  for i = 1, #spec do events[i] = spec[i] end
  for k, v in pairs(spec) do
    if type(k) ~= "number" then o[k] = v end
  end
  for k, v in pairs(opts or {}) do o[k] = v end
  return events, o
end

pmc.group = errors.facade("group", function(spec, opts)
  local events, o = split_spec(spec, opts)
  local bad = event.defect(events)
  if bad then return nil, bad, sys.EINVAL end
  return C.group(events, o)
end)

doc(pmc.group, "pmc.group", [=[
pmc.group{ev, ...[, pid=, cpus={...}, inherit=, pinned=]} -> group | nil, msg, errno
Opens the events as perf groups, one per PMU (events of different PMUs become
sibling groups transparently), disabled.  Targets: the calling thread
(default; a stream or chase run's worker threads are counted with it),
pid=N (that thread only: a process's main thread, not its other threads;
pmcsh stat -p counts them all; pid = the calling thread's own id is the
default), inherit=true (threads and children started after the group
opens count too), cpus={0,1} (cpu-wide, needs privileges; a cpu named
twice is counted once).  Inside g:measure's function the group can be
read, not started, stopped, reset or given to an engine.  Uncore PMUs (with a cpumask in sysfs) open on the cpus of their
cpumask.  Event names: libpfm4 (INST_RETIRED:ANY_P:u, perf::PAGE-FAULTS:k),
perf's generic names (cycles, task-clock, page-faults:u), raw r01c0, sysfs
pmu/event/ and pmu/k=v,.../ (msr/tsc/).
Methods (help(g.read) and so on for each): g:start, g:stop, g:reset,
g:read, g:measure, g:close, g:events, g:readpath, g:nfds.
A reading is plain data: the list of entries {name, value (scaled), unit?}
in the order given, with the group's enabled and running times (ns) and
whether it was multiplexed once, as r.enabled, r.running, r.multiplexed (a
perf group is scheduled as a unit; where the events span several PMUs, the
times of the one that ran the smallest share).  r["page-faults:u"] finds an
entry by its event string; cjson.encode(r) writes it as it is.  g:read(r)
and g:stop(r) write the new counts into r's own tables, entry k getting
event k's (nothing allocated).  An event counted on cpus (cpus={...}, or an
uncore PMU on its cpumask) also has cpus = {{cpu, socket, value, raw, enabled,
running, multiplexed}, ...} (value is their sum) and sockets = {[socket] =
value}: one reading per socket.  A group the PMU could not schedule is an
error (nil, msg, errno), never zeros.
g:read() of a counting group of hardware events on the calling thread reads
with rdpmc, without a system call, where the kernel allows it (see
g:readpath()); otherwise, and for every event off the PMU, with read().]=])

local methods = C.group_methods
complete.options(pmc.group, C.group_options)
doc(methods.start, "group:start", [=[
g:start() -> g, or nil, msg, errno: a new baseline (the counts so far are
dropped) and the counters enabled.]=])
doc(methods.stop, "group:stop", [=[
g:stop([r]) -> g, or nil, msg, errno: disables the counters; g:stop(r)
stops, then reads into the reading r (from this group's g:read()) in place,
as PAPI_stop does: the Lua-driven window, g:start(); work; g:stop(r).]=])
doc(methods.reset, "group:reset", [=[
g:reset() -> g, or nil, msg, errno: a new baseline while the group is idle;
the next reading counts from here.]=])
doc(methods.read, "group:read", [=[
g:read([r]) -> reading, or nil, msg, errno: the counts since the baseline
(see pmc.group for a reading's fields); g:read(r) refills the reading r
from this group in place, allocating nothing.]=])
doc(methods.measure, "group:measure", [=[
g:measure(fn, ...) -> reading, fn's results: starts the group, calls
fn(...), stops and reads it; an error in fn stops the group and is raised.
Inside fn the group can be read, not started, stopped, reset, closed or
given to an engine.]=])
doc(methods.close, "group:close", [=[
g:close(): closes the counters' file descriptors (also done by <close> and
the collector); a closed group can still be closed, nothing else.]=])
doc(methods.events, "group:events", [=[
g:events() -> {encoding, ...}, nsub: each event as it was opened (name,
canonical, pmu, config, the perf_event_attr's fields: pmc.info's form) and
the number of perf groups it took (one per PMU).]=])
doc(methods.readpath, "group:readpath", [=[
g:readpath() -> {rdpmc=, reason=?, fast_reads=, fallback_reads=}: whether
g:read() reads the counters with rdpmc (no system call), why not when it
does not, and how many reads took each path.]=])
doc(methods.nfds, "group:nfds", [=[
g:nfds() -> the number of perf file descriptors the group holds (0 once
closed).]=])

-- Runs a command at most this many times (stat -r's bound).
local MAX_REPS = 1000000

-- Runs a command once under counters.
local function run_once(o)
  local extra
  if o.targets or o.interval_ms or o.until_pid or o.inherit ~= nil or o.delay_ms or o.control or o.env or o.on_start then
    extra = {targets = o.targets, interval_ms = o.interval_ms, interval_count = o.interval_count,
             on_interval = o.on_interval, until_pid = o.until_pid,
             missing_ok = o.missing_ok, inherit = o.inherit, delay_ms = o.delay_ms, control = o.control, env = o.env,
             on_start = o.on_start}
  end
  local bad = event.defect(o.events)
  if bad then return nil, bad, sys.EINVAL end
  return run_C.run(o.events, o.cmd, extra)
end

function pmc.run(o)
  if type(o) ~= "table" then errors.argument("run", 1, "table expected", 1) end
  if type(o.events) ~= "table" or #o.events == 0 then
    errors.argument("run", 1, "events: list of event names expected", 1)
  end
  if o.targets == nil and (type(o.cmd) ~= "table" or #o.cmd == 0) then
    errors.argument("run", 1, "cmd: list {program, args...} expected", 1)
  end
  for i, w in ipairs(type(o.cmd) == "table" and o.cmd or {}) do   -- exec would take one cut at a NUL
    if type(w) == "string" and w:find("\0", 1, true) then
      errors.argument("run", 1, string.format("cmd: word %d holds a NUL byte", i), 1)
    end
  end
  if o.interval_ms ~= nil and type(o.on_interval) ~= "function" then
    errors.argument("run", 1, "interval_ms needs on_interval = function(reading, seconds)", 1)
  end
  local reps = math.tointeger(o.reps or 1)
  if not reps or reps < 1 or reps > MAX_REPS then
    errors.argument("run", 1, string.format("reps: a whole number in 1..%d expected, got %s", MAX_REPS,
      math.type(o.reps) == "float" and string.format("%.14g", o.reps) or tostring(o.reps)), 1)
  end
  if reps == 1 then return run_once(o) end
  local runs, infos = {}, {}
  for i = 1, reps do
    local r, info, errno, status = run_once(o)
    if not r then return nil, info, errno, status end
    runs[i], infos[i] = r, info
  end
  return runs, infos
end

doc(pmc.run, "pmc.run", [=[
pmc.run{events={...}, cmd={"prog", "arg", ...}[, reps=1, targets=, interval_ms=,
on_interval=, interval_count=, until_pid=, missing_ok=, inherit=, delay_ms=, control=, env=, on_start=]}
  -> reading, info | nil, msg, errno[, status]
Runs cmd as a child, counting from its exec (children and threads included,
the parent's work excluded; inherit = false: its first thread only, as perf
stat -i).  A command that cannot run: nil, "cannot run 'cmd': ...",
errno, and the status a shell gives it (127: not found, 126: not runnable).  info = {status=, signal=?, elapsed= seconds since the exec,
user=, sys=, stopped_by=?}.  With reps > 1 returns the list of readings and
the list of infos.
targets = {{cpus={0,1}}, {pid=N[, inherit=true]}, ...}: count these instead of
the command (perf stat -a, -C, -p, -t), enabled just before its exec; a
{pid=} target with inherit counts the threads and children it starts too; the reading is
then the list of the targets' readings.  With targets, cmd may be left out:
counting lasts until Ctrl-C or SIGTERM, or until process until_pid exits.
interval_ms = N, on_interval = function(reading, seconds): the cumulative
reading(s) every N ms while the command runs (perf stat -I); interval_count
= N: N of them, then without a command the count ends (perf's --interval-count).
missing_ok = true: a {pid=} target whose thread is gone before it is opened
(ESRCH) is left out, false in the list of readings (perf stat -a --per-thread).
delay_ms = N: counting starts N ms after the exec; -1: at the first `enable`
on the control channel (perf stat -D).  control = {ctl=, ack=}: perf stat
--control's channel, each a FIFO path (opened as perf opens it, never
waiting) or an inherited fd: `enable` and `disable` lines switch the counters
(in C, while the command runs), `ping`, `stop` and `evlist` are answered
"ack\n" on ack; info.control_log lists what they did ("enabled", "disabled",
"malformed", "named"), the first 4096 (info.control_log_dropped: how many
more).  on_start = function(): called once the counters and the channel are
open, just before the command is let go.  env = {NAME = value, ...}: the
command's environment is pmcsh's with these added or replaced.]=])

-- The same empty window driven from Lua, two ways: g:start(); g:stop(r)
-- (stop and read into r in one call) and g:start(); g:stop(); g:read(r).
-- Blocks interleaved with C's, order rotated: ns per window and the median
-- of the paired Lua/C ratios, per way.
local LUA_WAYS = {
  function(g, r, per) for _ = 1, per do g:start(); g:stop(r) end end,
  function(g, r, per) for _ = 1, per do g:start(); g:stop(); g:read(r) end end,
}

local function lua_window(g, n)
  local now, stats = sys.now, statistics.stats
  local r = assert(g:read())
  local blocks = 10
  local per = math.max(1, n // blocks)
  local ns, ratios = {{}, {}}, {{}, {}}
  for b = 1, blocks do
    local c_ns, l_ns = nil, {}
    for turn = 0, #LUA_WAYS do
      local way = (turn + b) % (#LUA_WAYS + 1)
      if way == 0 then
        local msg, errno
        c_ns, msg, errno = calib.windows(g, per)
        if not c_ns then return nil, msg, errno end  -- Ctrl-C
      else
        local t0 = now()
        LUA_WAYS[way](g, r, per)
        l_ns[way] = (now() - t0) * 1e9 / per
      end
    end
    for w = 1, #LUA_WAYS do ns[w][b], ratios[w][b] = l_ns[w], l_ns[w] / c_ns end
  end
  local out = {}
  for w = 1, #LUA_WAYS do out[w] = {ns = stats(ns[w]).median, ratio = stats(ratios[w]).median} end
  return out
end

function pmc.overhead(opts)
  opts = opts or {}
  if type(opts) ~= "table" or opts[1] ~= nil then
    errors.argument("overhead", 1, "options table expected: {events = {...}, n = 20000}", 1)
  end
  local g, msg, errno = pmc.group(opts.events or {"task-clock"})
  if not g then return nil, msg, errno end
  local n = opts.n or 20000
  local t, lua
  t, msg, errno = calib.overhead(g, n)
  if t then lua, msg, errno = lua_window(g, n) end
  g:close()
  if not lua then return nil, msg, errno end  -- Ctrl-C
  t.events = opts.events or {"task-clock"}
  t.lua_window_ns, t.lua_ratio = lua[1].ns, lua[1].ratio
  t.lua_read_window_ns, t.lua_read_ratio = lua[2].ns, lua[2].ratio
  return t
end

doc(pmc.overhead, "pmc.overhead", [=[
pmc.overhead([{events={...}, n=20000}]) -> {window_ns, enable_disable_ns,
read_ns, rdpmc={available, reason | read_ns, fast_reads, fallbacks},
counted_per_window, lua_window_ns, lua_ratio, lua_read_window_ns, lua_read_ratio}
The measured cost of an empty window: enable+disable ioctls, read() of the
group, and the same snapshot through rdpmc while counting where the kernel
allows it (hardware events: e.g. {events={"cycles"}});
counted_per_window is what the counters themselves see of one empty window;
lua_window_ns is the window driven from Lua (g:start(); g:stop(r), into one
reading), lua_ratio its median ratio to the same window from C, in
interleaved blocks; lua_read_window_ns and lua_read_ratio the same for
g:start(); g:stop(); g:read(r) (one Lua call more).  Ctrl-C stops it with lua's error "interrupted!".]=])

pmc.probe = errors.facade("probe", calib.probe)

doc(pmc.probe, "pmc.probe", [=[
pmc.probe(g, kind, arg) -> reading, wall_ns
Calibration work measured in one C call: "touch" (first touch of arg bytes of
a fresh anonymous mapping, 4 KiB pages), "read" (read() of arg bytes from
/dev/zero into a fresh mapping: the faults are taken in the kernel), "spin"
(busy loop for arg ns), "sleep" (arg ns), "empty", "loop" (arg iterations of
an asm loop of pmc.probe_loop_insns instructions), "syscalls" (arg getppid
system calls).  Ctrl-C stops any of them within milliseconds, with lua's
error "interrupted!".]=])
pmc.probe_loop_insns = calib.probe_loop_insns

-- ev:u and ev:k over a user-mode spin: a filtering event counts the spin
-- under :u only; one that ignores the filter (the kernel's task-clock and
-- cpu-clock: time, whatever the mode) counts it fully under both.
local PRIV_SPIN_NS = 2e6
function pmc.privilege_filter(u, k)
  errors.check("privilege_filter", 1, u, "string")
  errors.check("privilege_filter", 2, k, "string")
  local g, msg, errno = pmc.group{u, k}
  if not g then return nil, msg, errno end
  local r, err, code = calib.probe(g, "spin", PRIV_SPIN_NS)
  g:close()
  if not r then return nil, err, code end
  local a, b = r[1].value, r[2].value
  if a > 0 and b > 0 and math.abs(a - b) <= 0.02 * math.max(a, b) then
    return false, string.format("ignores the user/OS filter (%s and %s each counted %.4g in a %g ms user-mode spin)",
      u, k, a, PRIV_SPIN_NS / 1e6)
  end
  return true
end

doc(pmc.privilege_filter, "pmc.privilege_filter", [=[
pmc.privilege_filter(ev_u, ev_k) -> true | false, why | nil, msg, errno
Whether an event honours the user/OS split, measured: ev:u and ev:k count a
2 ms user-mode spin; an event whose two halves count it equally (task-clock,
cpu-clock) ignores the filter, and a split of it would only repeat the total.]=])

pmc.scale = replay.scale
doc(pmc.scale, "pmc.scale", [=[
pmc.scale(raw, enabled, running[, scale]) -> value, multiplexed | nil, msg, errno
The multiplexing arithmetic: raw * scale * enabled / running; an event that
was enabled but never running cannot be extrapolated (an error, not zero).]=])

pmc.replay = replay.replay
doc(pmc.replay, "pmc.replay", [=[
pmc.replay{events={...}, base={enabled=, running=, raw={...}}, cur={...}}
pmc.replay{events={...}, instances={{cpu=, socket=, base=, cur=}, ...}}
-> reading | nil, msg, errno
Recorded snapshots (raw counts, time enabled and running) turned into a
reading by the same delta and scaling code as g:read(): for specs and for
checking what a recorded run would have printed.]=])

-- One line per entry (format.reading_lines, as the REPL shows a reading).
function pmc.format(r)
  errors.check("format", 1, r, "table")
  return table.concat(format.reading_lines(r), "\n")
end

doc(pmc.format, "pmc.format", [=[
pmc.format(reading) -> string: one line per event (value, unit, name, and
the running percentage when multiplexed).]=])

doc(pmc, "pmc", [=[
Performance counters: perf_event groups with libpfm4 and sysfs event names.
  local g <close> = assert(pmc.group{"task-clock", "page-faults:u", "page-faults:k"})
  g:start(); ...; g:stop(); print(pmc.format(g:read()))
  pmc.run{events={"task-clock"}, cmd={"ls"}}     pmc.list("fault")   pmc.info("cycles")]=])

return pmc
