-- pmc: performance counter groups (perf_event_open, event names from
-- libpfm4 and sysfs).  The C binding pmcsh._pmc does the work; this module
-- gives it the friendly API, documentation and completion.
local C = require("pmcsh._pmc")
local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")
local format = require("pmcsh.format")
local complete = require("pmcsh.complete")
local metrics = require("pmcsh.metrics")
local sys = require("pmcsh._sys")
local datafiles = require("pmcsh.sys")

local pmc = {}

-- events/encodings.lua: libpfm4's encodings perf's per-model tables
-- correct, read once ({} without the file).
local fixes
local function encoding_fixes()
  if fixes == nil then
    local t = datafiles.load_data(datafiles.events_dir() .. "/encodings.lua")
    fixes = type(t) == "table" and type(t.fixes) == "table" and t.fixes or {}
  end
  return fixes
end

-- The fix for an encoding e (C.info's), or nil: libpfm4's event and umask
-- code on the model the fix names, with no MSR value given.
local PERF_TYPE_HARDWARE, PERF_TYPE_RAW = 0, 4
local function fix_of(e)
  if e.type ~= PERF_TYPE_RAW or not e.config or e.config1 ~= 0 then return nil end
  for _, f in ipairs(encoding_fixes()) do
    if e.pmu == f.model and e.config & 0xffff == f.libpfm then return f end
  end
  return nil
end

-- The fixes whose model is this machine's (libpfm4 encodes its event
-- here), found once: only there does an open need the check.
local fixes_here
local function host_fixes()
  if fixes_here == nil then
    fixes_here = {}
    for _, f in ipairs(encoding_fixes()) do
      local e = C.info(f.event)
      if e and fix_of(e) == f then fixes_here[#fixes_here + 1] = f end
    end
  end
  return fixes_here
end

-- nil, or the message refusing the first of events libpfm4 encodes wrong
-- on this machine.
local function defect(events)
  if #host_fixes() == 0 then return nil end
  for _, name in ipairs(events) do
    local e = type(name) == "string" and C.info(name)
    local f = e and fix_of(e)
    if f then
      return string.format("%s: libpfm4 encodes it as config 0x%x, another event (%s); perf's table says " ..
        "config 0x%x, config1 0x%x (%s): count it as %s", name, e.config, f.why, f.config, f.config1, f.source, f.sysfs)
    end
  end
  return nil
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
  local bad = defect(events)
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

pmc.parse_name = errors.facade("parse_name", C.parse_name)
doc(pmc.parse_name, "pmc.parse_name", [=[
pmc.parse_name(name) -> {name, form, base, pmu?, modifiers, privilege?, plain, members?}
An event name's syntax, as perf reads it (core/evname.c, the one parser):
form "name" (cycles:u, INST_RETIRED:ANY_P:k, r01c0, sched:sched_switch),
"sysfs" (msr/tsc/, cpu/event=0x3c/k: modifiers after the slash) or "group"
({a,b}:u, whose members each get the group's modifiers: members = {"a:u",
"b:u"}).  modifiers: the letters of u, k, h, G, H, p (up to ppp) and P as
written; privilege: its u, k and h letters (nil: both user and OS); plain:
the name without them.  A bad
name (two modifier strings, an unknown letter, unbalanced braces or
slashes) raises an error of kind "argument".]=])

pmc.modified = errors.facade("modified", C.modified)
doc(pmc.modified, "pmc.modified", [=[
pmc.modified(name, priv) -> the name counted at privilege priv ("u", "k"),
written as its form takes it: cycles:u, msr/tsc/u, {a,b}:u, cycles:Gu.
A name that has a privilege modifier already raises (kind "argument").]=])

-- {"a", "b"} -> {"a:u", "a:k", "b:u", "b:k"}
pmc.split = errors.facade("split", function(list)
  if type(list) ~= "table" then
    errors.argument("split", 1, "table of event names expected, got " .. type(list) .. "", 1)
  end
  local out = {}
  for i, e in ipairs(list) do
    if type(e) ~= "string" then errors.argument("split", 1, string.format("entry %d is not a string", i), 1) end
    out[#out + 1] = C.modified(e, "u")
    out[#out + 1] = C.modified(e, "k")
  end
  return out
end)

doc(pmc.split, "pmc.split", [=[
pmc.split{ev, ...} -> {ev:u, ev:k, ...}: the user/OS pairs of each event
(msr/tsc/u for a sysfs event), for pmc.group(pmc.split{"page-faults",
"task-clock"}); an event with a privilege modifier already raises.]=])

-- Runs a command once under counters.
local function run_once(o)
  local extra
  if o.targets or o.interval_ms or o.until_pid or o.inherit ~= nil or o.delay_ms or o.control or o.env then
    extra = {targets = o.targets, interval_ms = o.interval_ms, on_interval = o.on_interval, until_pid = o.until_pid,
             missing_ok = o.missing_ok, inherit = o.inherit, delay_ms = o.delay_ms, control = o.control, env = o.env}
  end
  local bad = defect(o.events)
  if bad then return nil, bad, sys.EINVAL end
  return C.run(o.events, o.cmd, extra)
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
  local reps = o.reps or 1
  if math.type(reps) ~= "integer" or reps < 1 then errors.argument("run", 1, "reps must be >= 1", 1) end
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
on_interval=, until_pid=, missing_ok=, inherit=, delay_ms=, control=, env=]}
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
reading(s) every N ms while the command runs (perf stat -I).
missing_ok = true: a {pid=} target whose thread is gone before it is opened
(ESRCH) is left out, false in the list of readings (perf stat -a --per-thread).
delay_ms = N: counting starts N ms after the exec; -1: at the first `enable`
on the control channel (perf stat -D).  control = {ctl=, ack=}: perf stat
--control's channel, each a FIFO path (opened as perf opens it, never
waiting) or an inherited fd: `enable` and `disable` lines switch the counters
(in C, while the command runs), `ping`, `stop` and `evlist` are answered
"ack\n" on ack; info.control_log lists what they did ("enabled", "disabled",
"malformed", "named").  env = {NAME = value, ...}: the command's environment
is pmcsh's with these added or replaced.]=])

local function forced(opts)
  if opts == nil then return nil end
  if type(opts) == "string" then return opts end
  if type(opts) ~= "table" then errors.argument("?", 2, "options table expected", 2) end
  return opts.pmu
end

-- pmc.info's table: libpfm4's encoding corrected where it is known wrong
-- (events/encodings.lua), the attributes split into umasks and modifiers.
local function split_attributes(t)
  local f = fix_of(t)
  if f then   -- perf's encoding, and what libpfm4 gave
    t.corrected = {config = t.config, config1 = t.config1, why = f.why, source = f.source}
    t.config, t.config1 = (t.config & ~0xffff) | f.config, f.config1
  end
  t.umasks, t.modifiers = {}, {}
  for _, a in ipairs(t.attributes) do
    local into = a.kind == "umask" and t.umasks or t.modifiers
    into[#into + 1] = a
  end
  return setmetatable(t, format.kind("pmcsh.event_info"))   -- print(t) shows the encoding
end

function pmc.info(name, opts)
  if type(name) ~= "string" then errors.argument("info", 1, "event name expected", 1) end
  if name:find("\0", 1, true) then errors.argument("info", 1, "the event name holds a NUL byte", 1) end
  local t, msg, errno = C.info(name, forced(opts))
  if not t then return nil, msg, errno end
  return split_attributes(t)
end

function pmc.info_all(names, opts)
  if type(names) ~= "table" then errors.argument("info_all", 1, "list of event names expected", 1) end
  for i, name in ipairs(names) do
    if type(name) ~= "string" then errors.argument("info_all", 1, "event " .. i .. " is not a name", 1) end
    if name:find("\0", 1, true) then errors.argument("info_all", 1, "event " .. i .. " holds a NUL byte", 1) end
  end
  local infos, whys = {}, {}
  local pmu = forced(opts)
  if pmu and #names > 0 then
    local got, msg, errno = C.info_all(names, pmu)
    if not got then return nil, msg, errno end
    infos, whys = got, msg
    for i = 1, #names do if infos[i] then split_attributes(infos[i]) end end
  else
    for i, name in ipairs(names) do infos[i], whys[i] = pmc.info(name, opts) end
  end
  for i = 1, #names do infos[i] = infos[i] or false end
  return infos, whys
end

doc(pmc.info, "pmc.info", [=[
pmc.info(name[, {pmu="skl"}]) -> {name, canonical, pmu, description, type,
config, config1, config2, exclude_user, exclude_kernel, exclude_hv,
precise_ip?, scale, unit?, umasks, modifiers, opens, corrected?} | nil, msg,
errno
The exact perf_event_attr encoding of an event.  pmu= encodes for another CPU
model through libpfm4's forced PMU (LIBPFM_FORCE_PMU, in a child pmcsh: this
process keeps its own), e.g. {pmu="skl"} or {pmu="amd64_fam19h_zen3"}: for
planning a survey on another machine.
encoded is false for a bare libpfm4 event that needs a umask to be counted
(LS_DISPATCH on Zen 3): then there is no type/config, reason says why, and
umasks lists the choices (LS_DISPATCH:LD_DISPATCH encodes).
Where libpfm4's encoding differs from the vendor's table as perf carries it
(events/encodings.lua, each fix with its source), config and config1 are
perf's and corrected = {config, config1, why, source} keeps libpfm4's; on
such a machine pmc.group and pmc.run refuse the event and name the sysfs
form that counts it.]=])

doc(pmc.info_all, "pmc.info_all", [=[
pmc.info_all(names[, {pmu="skl"}]) -> infos, whys | nil, msg, errno
pmc.info for each name of a list: infos[i] is its table, or false where the
name does not encode (whys[i] then says why).  With pmu= one child pmcsh
answers for the whole list (pmc.info starts one per name): for checking a
group's events on another model.  nil, msg, errno only where the child
cannot answer at all.]=])

-- The PMU a raw config goes to (PERF_TYPE_RAW): the core PMU's sysfs name
-- and type ("cpu" on x86, armv8_pmuv3* on Arm), read once; nil without one.
local core
local function core_pmu()
  if core == nil then
    core = false
    local root = C.sysfs_pmus
    local names = sys.dir(root) or {}
    table.sort(names)
    for _, n in ipairs(names) do
      if n == "cpu" or n == "cpu_core" or n:match("^armv[78]") then
        local f = io.open(root .. "/" .. n .. "/type")
        local t = f and math.tointeger(tonumber(f:read("l")))
        if f then f:close() end
        if t then core = {name = n, type = t}; break end
      end
    end
  end
  return core or nil
end

-- The kernel's own names, in the core PMU's sysfs events/, of perf's generic
-- hardware events (its config): where the generic event and a PMU's
-- event are one.
local HW_ALIASES = {[0] = {"cpu-cycles", "cpu_cycles"}, [1] = {"instructions", "inst_retired"},
  [4] = {"branch-instructions", "br_retired"}, [5] = {"branch-misses", "br_mis_pred_retired"}}

function pmc.identity(name)
  if type(name) ~= "string" then errors.argument("identity", 1, "event name expected", 1) end
  local info = C.info(name)
  if not info or info.type == nil then return nil end
  local t, cfg = info.type, info.config
  local c = core_pmu()
  if t == PERF_TYPE_RAW and c then t = c.type end
  if t == PERF_TYPE_HARDWARE and c and HW_ALIASES[cfg] then
    for _, alias in ipairs(HW_ALIASES[cfg]) do
      local f = io.open(C.sysfs_pmus .. "/" .. c.name .. "/events/" .. alias)
      if f then
        f:close()
        local a = C.info(c.name .. "/" .. alias .. "/")
        if a and a.type then t, cfg, info = a.type, a.config, a; break end
      end
    end
  end
  return string.format("%d:%s:%s:%s", t, tostring(cfg), tostring(info.config1 or 0), tostring(info.config2 or 0))
end
doc(pmc.identity, "pmc.identity", [=[
pmc.identity(name) -> "type:config:config1:config2", or nil where it does
not encode: what the event counts, as the kernel is asked for it.  Two names
of one event have one identity: aliases (page-faults, perf::FAULTS), a
libpfm4 name and the sysfs event it equals (arm_ac57::INST_RETIRED and
armv8_pmuv3/inst_retired/: a raw config is the core PMU's), and perf's
generic event and the core PMU's own (instructions and INST_RETIRED, where
sysfs names it).  Modifiers (:u, :k) are not part of it.]=])

function pmc.list(pattern, opts)
  if pattern ~= nil and type(pattern) ~= "string" then
    errors.argument("list", 1, "pattern string expected", 1)
  end
  local list, msg, errno = C.list(pattern, forced(opts))
  if not list then return nil, msg, errno end
  return setmetatable(list, format.kind("pmcsh.records"))
end

doc(pmc.list, "pmc.list", [=[
pmc.list([substring[, {pmu="skl"}]]) -> {{name, pmu, description, opens}, ...}
Every event of the present PMUs (libpfm4 and sysfs) whose name or description
contains substring (case-insensitive); opens tells whether it opens here.
With pmu=, the events of another CPU model (opens is false).]=])

function pmc.models()
  local list, msg, errno = C.models()
  if not list then return nil, msg, errno end
  return setmetatable(list, format.kind("pmcsh.records"))
end
doc(pmc.models, "pmc.models", [=[
pmc.models() -> {{name, description, present, events}, ...}
Every PMU model this libpfm4 knows (skl "Intel Skylake", amd64_fam19h_zen3
"AMD64 Fam19h Zen3", ...), present here or not: the names pmc.list and
pmc.info take as {pmu=}.]=])

pmc.distance = C.distance
doc(pmc.distance, "pmc.distance", [=[
pmc.distance(a, b) -> the edit distance between two names, case-insensitive:
the measure of an unknown event's "did you mean" (recipes use it for theirs).]=])

-- The same empty window driven from Lua, two ways: g:start(); g:stop(r)
-- (stop and read into r in one call) and g:start(); g:stop(); g:read(r).
-- Blocks interleaved with C's, order rotated: ns per window and the median
-- of the paired Lua/C ratios, per way.
local LUA_WAYS = {
  function(g, r, per) for _ = 1, per do g:start(); g:stop(r) end end,
  function(g, r, per) for _ = 1, per do g:start(); g:stop(); g:read(r) end end,
}

local function lua_window(g, n)
  local now, stats = sys.now, metrics.stats
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
        c_ns, msg, errno = C.windows(g, per)
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
  t, msg, errno = C.overhead(g, n)
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

pmc.probe = errors.facade("probe", C.probe)

doc(pmc.probe, "pmc.probe", [=[
pmc.probe(g, kind, arg) -> reading, wall_ns
Calibration work measured in one C call: "touch" (first touch of arg bytes of
a fresh anonymous mapping, 4 KiB pages), "read" (read() of arg bytes from
/dev/zero into a fresh mapping: the faults are taken in the kernel), "spin"
(busy loop for arg ns), "sleep" (arg ns), "empty", "loop" (arg iterations of
an asm loop of pmc.probe_loop_insns instructions), "syscalls" (arg getppid
system calls).  Ctrl-C stops any of them within milliseconds, with lua's
error "interrupted!".]=])
pmc.probe_loop_insns = C.probe_loop_insns

-- ev:u and ev:k over a user-mode spin: a filtering event counts the spin
-- under :u only; one that ignores the filter (the kernel's task-clock and
-- cpu-clock: time, whatever the mode) counts it fully under both.
local PRIV_SPIN_NS = 2e6
function pmc.privilege_filter(u, k)
  errors.check("privilege_filter", 1, u, "string")
  errors.check("privilege_filter", 2, k, "string")
  local g, msg, errno = pmc.group{u, k}
  if not g then return nil, msg, errno end
  local r, err, code = C.probe(g, "spin", PRIV_SPIN_NS)
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

pmc.scale = C.scale
doc(pmc.scale, "pmc.scale", [=[
pmc.scale(raw, enabled, running[, scale]) -> value, multiplexed | nil, msg, errno
The multiplexing arithmetic: raw * scale * enabled / running; an event that
was enabled but never running cannot be extrapolated (an error, not zero).]=])

pmc.replay = C.replay
doc(pmc.replay, "pmc.replay", [=[
pmc.replay{events={...}, base={enabled=, running=, raw={...}}, cur={...}}
pmc.replay{events={...}, instances={{cpu=, socket=, base=, cur=}, ...}}
-> reading | nil, msg, errno
Recorded snapshots (raw counts, time enabled and running) turned into a
reading by the same delta and scaling code as g:read(): for specs and for
checking what a recorded run would have printed.]=])

pmc.environment = C.environment
doc(pmc.environment, "pmc.environment", [=[
pmc.environment() -> {cpu_pmu=, paranoid=, forced=?}
Whether the kernel exposes a hardware (cpu) PMU, kernel.perf_event_paranoid,
and the libpfm4 PMU forced by LIBPFM_FORCE_PMU if any.]=])

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

-- perf's generic names as perf spells them (L1-dcache-loads, LLC-loads,
-- dTLB-load-misses), a list; libpfm4 gives them upper case.
pmc.generic_names = doc(function() return table.move(C.generic_names, 1, #C.generic_names, 1, {}) end,
  "pmc.generic_names", [=[
pmc.generic_names() -> the list of perf's generic event names, spelled as perf spells them]=])

-- Completion of event names inside strings on lines that mention pmc.
local names
local function all_names()
  if names then return names end
  names = table.move(C.generic_names, 1, #C.generic_names, 1, {})
  local ok, list = pcall(C.list, nil, nil, true)
  if ok and list then
    for _, e in ipairs(list) do names[#names + 1] = e.name end
  end
  return names
end

-- After "EVENT:" propose its umasks and modifiers (from pmc.info), else
-- the event names themselves.
local function modifiers_of(base)
  local ok, info = pcall(pmc.info, base)
  if not ok or type(info) ~= "table" then return {} end
  local out = {}
  for _, a in ipairs(info.attributes or {}) do
    if a.kind == "umask" or a.kind == "bool" then out[#out + 1] = base .. ":" .. a.name end
  end
  if #out == 0 and info.pmu ~= "perf" then out = {base .. ":u", base .. ":k"} end
  return out
end

do
  complete.register(function(line, word)
    if not line:find("pmc%.") or not complete.in_string(line) then return nil end
    local base = word:match("^(.*):[^:/]*$")
    local pool = base and modifiers_of(base) or all_names()
    local out = {}
    for _, n in ipairs(pool) do
      if n:sub(1, #word) == word or n:lower():sub(1, #word) == word:lower() then out[#out + 1] = n end
    end
    table.sort(out)
    return out
  end)
end

return pmc
