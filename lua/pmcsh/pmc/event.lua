-- pmcsh.pmc.event: what an event name is: its syntax as perf reads it
-- (parse_name, modified, split), its encoding on this machine or another
-- model (info, info_all, corrected where libpfm4 is known wrong),
-- what it counts (identity), and the catalogues (list, models, the generic
-- names, completion).  The C binding is pmcsh._events; pmcsh.pmc gathers
-- these under its own name.
local C = require("pmcsh._events")
local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")
local format = require("pmcsh.format")
local complete = require("pmcsh.complete")
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
-- on this machine (pmc.group and pmc.run refuse it).
function pmc.defect(events)
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

pmc.parse_name = errors.facade("parse_name", C.parse_name)
doc(pmc.parse_name, "pmc.parse_name", [=[
pmc.parse_name(name) -> {name, form, base, pmu?, modifiers, privilege?, plain, members?}
An event name's syntax, as perf reads it (core/evname.c, the one parser):
form "name" (cycles:u, INST_RETIRED:ANY_P:k, r01c0, sched:sched_switch),
"sysfs" (msr/tsc/, cpu/event=0x3c/k: modifiers after the slash) or "group"
({a,b}:u, whose members each get the group's modifiers: members = {"a:u",
"b:u"}; weak = true for perf's weak group, {a,b}:W).  modifiers: the letters of u, k, h, G, H, p (up to ppp) and P as
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

pmc.environment = C.environment
doc(pmc.environment, "pmc.environment", [=[
pmc.environment() -> {cpu_pmu=, paranoid=, forced=?}
Whether the kernel exposes a hardware (cpu) PMU, kernel.perf_event_paranoid,
and the libpfm4 PMU forced by LIBPFM_FORCE_PMU if any.]=])

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
    -- after "EVENT:" its umasks and modifiers, and the names that go on
    -- (a tracepoint's SUBSYS:EVENT, libpfm4's PMU::EVENT)
    local base = word:match("^(.*):[^:/]*$")
    local out = {}
    for _, pool in ipairs({base and modifiers_of(base) or {}, all_names()}) do
      for _, n in ipairs(pool) do
        if n:sub(1, #word) == word or n:lower():sub(1, #word) == word:lower() then out[#out + 1] = n end
      end
    end
    table.sort(out)
    return out
  end)
end

return pmc
