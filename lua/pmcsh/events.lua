-- pmcsh.events: the data files of events/ (groups, pair lists, uncore
-- controllers), loaded as Lua tables into an empty environment, and what
-- they mean on this machine: whether a file's PMU is the one here, and the
-- events a survey counts by default.
local help = require("pmcsh.help")
local machine = require("pmcsh.machine")
local options = require("pmcsh.options")
local pmc = require("pmcsh.pmc")
local sys = require("pmcsh.sys")

local M = {}

local function file_exists(p)
  local f = io.open(p, "r")
  if f then f:close(); return true end
  return false
end

M.dir = sys.events_dir

-- The names of the data files in events/ ("memory-skl", "pairs-zen", ...), sorted.
function M.names()
  local out = {}
  for _, f in ipairs(sys.dir(M.dir()) or {}) do
    out[#out + 1] = f:match("^([%w_%-]+)%.lua$")
  end
  table.sort(out)
  return out
end

-- Loads an events/ data file by name ("pairs-skl", from events/ only) or
-- by path (a name with a "/": ./mine.lua), as recipes are found: a file of
-- the current folder is never taken for a name.  Returns the table and its
-- path, or nil and a message.
function M.load(name)
  local path = name
  if not name:find("/", 1, true) then
    path = M.dir() .. "/" .. name .. (name:match("%.lua$") and "" or ".lua")
    if not file_exists(path) then
      return nil, string.format("no events file %q in %s/%s", name, M.dir(), file_exists(name) and
        string.format(" (a file of this folder needs a path: ./%s)", name) or "")
    end
  elseif not file_exists(path) then
    return nil, string.format("no events file %s", name)
  end
  local t, err = sys.load_data(path)
  if not t then return nil, err end
  return t, path
end

-- A list of pairs given as tables: each 2..4 event names.
local function check_pairs(spec)
  local out = {}
  for i, p in ipairs(spec) do
    if type(p) ~= "table" then return nil, string.format("pair %d is not a list of events", i) end
    local q = {}
    for j, e in ipairs(p) do
      if type(e) ~= "string" or e == "" then
        return nil, string.format("pair %d: member %d is not an event name", i, j)
      end
      q[j] = e
    end
    if #q < 2 or #q > 4 then
      return nil, string.format("pair %d (%s) must name 2 to 4 events", i, table.concat(q, ","))
    end
    out[i] = q
  end
  if #out == 0 then return nil, "the pair list is empty" end
  return out
end

-- "A,B C,D" or "A,B;C,D": pairs separated by spaces or ';', members by ','
-- outside pmu/.../ terms (options.split_list).
local function split_pairs(spec)
  local out = {}
  for item in spec:gmatch("[^%s;]+") do out[#out + 1] = options.split_list(item, true) end
  return out
end

-- Whether path is a file of events/ (pmcsh's own data): its name, or nil.
function M.own(path)
  local dir = sys.realpath(M.dir())
  local real = type(path) == "string" and sys.realpath(path)
  local name = real and dir and real:sub(1, #dir + 1) == dir .. "/" and real:sub(#dir + 2):match("^([%w_%-]+)%.lua$")
  return name or nil
end

-- Parses a pair list: a file/data name, a list of lists, or "A,B C,D" /
-- "A,B;C,D".  Returns a list of pairs (each a list of 2..4 event names)
-- and, for a file, {path=, name=, pmu=, cpu=}; or nil, message.
function M.pairs(spec)
  if type(spec) == "table" then return check_pairs(spec) end
  if type(spec) ~= "string" or spec == "" then return nil, "empty pair list" end
  if spec:find("\0", 1, true) then return nil, "the pair list holds a NUL byte" end
  local looks_like_file = spec:match("%.lua$") or spec:match("^[%w_.-]+$") and not spec:find(",")
  if not (looks_like_file or spec:find("/", 1, true) and file_exists(spec)) then return check_pairs(split_pairs(spec)) end
  local t, path = M.load(spec)
  if not t then return nil, path end
  if type(t.pairs) ~= "table" then return nil, string.format("%s has no 'pairs' list", path) end
  local out, perr = check_pairs(t.pairs)
  if not out then return nil, perr end
  -- the file's name and PMU, for the check against this machine's PMU
  return out, {path = path, name = t.name, pmu = t.pmu, cpu = t.cpu}
end

-- A group file (events/NAME.lua with an `events` list and optional
-- `metrics`, as memory-skl.lua).  Returns the table and its path, or nil
-- and a message.
function M.group(name)
  local t, path = M.load(name)
  if not t then return nil, path end
  if type(t.events) ~= "table" or #t.events == 0 then
    return nil, string.format("%s has no 'events' list: not a group (pairs files go to --pairs)", path)
  end
  for i, e in ipairs(t.events) do
    if type(e) ~= "string" or e == "" then return nil, string.format("%s: event %d is not an event name", path, i) end
  end
  for i, m in ipairs(t.metrics or {}) do
    if type(m) ~= "table" or type(m.name) ~= "string" or type(m.fn) ~= "function" then
      return nil, string.format("%s: metric %d needs a name and a function fn(e, c)", path, i)
    end
  end
  local models, named = M.models(t), {}
  for _, m in ipairs(models) do named[m] = true end
  if t.models ~= nil and (type(t.models) ~= "table" or #models == 0 or #models ~= #t.models) then
    return nil, string.format("%s: 'models' must list libpfm4 PMU names", path)
  end
  local listed = {}
  for _, e in ipairs(t.events) do listed[e] = true end
  for model, map in pairs(t.rename or {}) do
    if not named[model] or type(map) ~= "table" then
      return nil, string.format("%s: rename.%s is not one of its models' spellings", path, tostring(model))
    end
    for from, to in pairs(map) do
      if not listed[from] or type(to) ~= "string" or to == "" then
        return nil, string.format("%s: rename.%s renames %s, which is not one of its events", path, model, tostring(from))
      end
    end
  end
  for model, k in pairs(t.constants or {}) do
    if not named[model] or type(k) ~= "table" then
      return nil, string.format("%s: constants.%s is not a table for one of its models", path, tostring(model))
    end
  end
  return t, path
end

-- The libpfm4 PMUs a file is written for: its `models` list, or its `pmu`
-- (one model); {} for a file of any PMU (software).
function M.models(t)
  local out = {}
  if type(t.models) == "table" then
    for _, m in ipairs(t.models) do if type(m) == "string" and m ~= "" then out[#out + 1] = m end end
  elseif type(t.pmu) == "string" then
    out[1] = t.pmu
  end
  return out
end

-- A group as model `model` spells it: its events renamed by rename[model]
-- (events a model names differently: DRAM_IO_NEAR on Zen 4 for Zen 3's
-- MEM_IO_LCL), and metrics that read each event under the name counted and
-- get constants[model] (the model's own numbers: an allocation width) as
-- their third argument, fn(e, ctx, k).  The file's table is left as it is.
function M.for_model(t, model)
  local map, k = (t.rename or {})[model], (t.constants or {})[model]
  local out = {}
  for key, v in pairs(t) do out[key] = v end
  out.model = model
  if not map and not k then return out end
  local function name(e) return map and map[e] or e end
  out.events = {}
  for i, e in ipairs(t.events) do out.events[i] = name(e) end
  out.metrics = {}
  for i, m in ipairs(t.metrics or {}) do
    local evs = {}
    for j, e in ipairs(m.events or {}) do evs[j] = name(e) end
    local fn, spelled = m.fn, nil
    if map then
      spelled = function(e, c) return fn(setmetatable({}, {__index = function(_, key) return e[name(key)] end}), c, k) end
    else
      spelled = function(e, c) return fn(e, c, k) end
    end
    out.metrics[i] = setmetatable({events = evs, fn = spelled}, {__index = m})
  end
  return out
end

-- A sysfs group's events (pmu/name/, events/energy-*.lua) against the
-- kernel's PMU folders (pmus.root, else machine.SYSFS_PMUS): nil when one
-- of them is there (the others are <not supported> rows), else a sentence
-- saying what the kernel has instead.
local function sysfs_check(t, path, pmus)
  local root = pmus and pmus.root or machine.SYSFS_PMUS
  local names, order = {}, {}
  for _, e in ipairs(t.events or {}) do
    local pmu, name = e:match("^([^/]+)/([^/=,]+)/$")
    if pmu and not names[pmu] then names[pmu] = {}; order[#order + 1] = pmu end
    if pmu then table.insert(names[pmu], name) end
  end
  local said = {}
  for _, pmu in ipairs(order) do
    local files = sys.dir(root .. "/" .. pmu .. "/events")
    local here, has = {}, {}
    for _, f in ipairs(files or {}) do
      here[f] = true
      if not f:find(".", 1, true) then has[#has + 1] = f end   -- not its .scale, .unit
    end
    for _, n in ipairs(names[pmu]) do if here[n] then return nil end end
    table.sort(has)
    said[#said + 1] = files and string.format("this machine's %s PMU has %s (%s/%s/events)", pmu,
      #has > 0 and ("only " .. table.concat(has, ", ")) or "no events", root, pmu)
      or string.format("this machine has no %s PMU (no %s/%s)", pmu, root, pmu)
  end
  if #said == 0 then return nil end
  return string.format("%s counts %s; %s", path, table.concat(t.events, ", "), table.concat(said, "; "))
end

-- The model of a file's that is here (the first of its models libpfm4
-- finds), or nil and pmu_check's sentence; nil, nil for a file of any PMU.
-- A sysfs group fits where the kernel has one of its events, whatever
-- the core PMU.
function M.model_of(t, path, pmus)
  if t.sysfs then
    local why = sysfs_check(t, path, pmus)
    if why then return nil, why end
  end
  local models = M.models(t)
  if #models == 0 then return nil end
  pmus = pmus or M.machine_pmus()
  local present = {}
  for _, p in ipairs(pmus.names) do present[p] = true end
  for _, m in ipairs(models) do if present[m] then return m end end
  if t.sysfs then return nil end
  return nil, M.pmu_check(t, path, pmus)
end

-- Whether a group or pairs file counts here: written for this machine
-- (model_of) and one of its events, as this model spells it, opens on this
-- process.  true | false and why not.
function M.counts_here(t, path, pmus)
  local model, why = M.model_of(t, path, pmus)
  if why then return false, why end
  local list = t.events and (model and M.for_model(t, model) or t).events or {}
  for _, p in ipairs(t.pairs or {}) do table.move(p, 1, #p, #list + 1, list) end
  local first
  for _, e in ipairs(list) do
    local g, msg = pmc.group({e})
    if g then g:close(); return true end
    first = first or string.format("%s: %s", e, msg)
  end
  return false, string.format("none of its %d events opens here (%s)", #list, first or "it names none")
end

-- The groups of events/ (names, sorted), and perf's metric group names
-- events/perf-metricgroups.lua maps to them ({[perf's] = {ours...}}).
function M.group_names()
  local out = {}
  for _, n in ipairs(M.names()) do
    local t = M.load(n)
    if t and type(t.events) == "table" then out[#out + 1] = n end
  end
  local map = M.load("perf-metricgroups")
  return out, map and map.map or {}
end

-- A group by name: an events/ file, a path, or perf's metric group name
-- mapped to the first of its groups written for this CPU (else the first); an
-- unknown name is nil and a message listing the names there are.
local function group_named(name, pmus)
  if name:find("/", 1, true) then return M.group(name) end
  local here, no_file = M.load(name)
  if here then return M.group(name) end
  local ours, perfs = M.group_names()
  local alike = perfs[name]
  if not alike then
    local theirs = {}
    for k in pairs(perfs) do theirs[#theirs + 1] = k end
    table.sort(theirs)
    return nil, string.format("%s, nor a perf metric group pmcsh maps; the groups: %s; perf's names: %s " ..
      "(pmcsh list --groups says which count here)", no_file, table.concat(ours, ", "), table.concat(theirs, ", "))
  end
  for _, g in ipairs(alike) do
    local t, path = M.group(g)
    if t and M.model_of(t, path, pmus) then return t, path end   -- written for this CPU's model
  end
  return M.group(alike[1])
end

-- events.group(name) spelled for this machine's model when it is one of
-- the file's: the group, its path, and why it does not fit here (nil when
-- it does).  name may be perf's metric group name (group_named).
function M.group_here(name, pmus)
  local t, path = group_named(name, pmus)
  if not t then return nil, path end
  local model, why = M.model_of(t, path, pmus)
  if model then return M.for_model(t, model), path end
  return t, path, why
end

-- A core PMU's events are counted per thread; uncore, L3, data fabric,
-- memory controller and RAPL PMUs count per socket and are left out.
local NOT_CORE = {software = true, tracepoint = true, breakpoint = true, uprobe = true,
                  kprobe = true, msr = true, power = true, perf = true, perf_raw = true}
function M.core_pmu(pmu)
  if NOT_CORE[pmu] then return false end
  for _, pat in ipairs({"uncore", "rapl", "_l3$", "_df", "_umc", "_nb$", "power", "cstate"}) do
    if pmu:match(pat) then return false end
  end
  return true
end

-- This machine's PMUs: {names = the PMUs libpfm4 finds, exposed = whether
-- the kernel exposes a hardware PMU at all}.
function M.machine_pmus()
  local names, seen = {}, {}
  for _, e in ipairs(pmc.list() or {}) do
    if e.pmu and not seen[e.pmu] then seen[e.pmu] = true; names[#names + 1] = e.pmu end
  end
  return {names = names, exposed = pmc.environment().cpu_pmu ~= false}
end

-- An events/ file written for one PMU (its `pmu` field, libpfm4's name)
-- against this machine's: nil when it matches (or the file names none),
-- else a sentence saying which PMU the file is for and how this machine's
-- differs.
function M.pmu_check(t, path, pmus)
  if type(t) == "table" and t.sysfs then return sysfs_check(t, path, pmus) end
  local models = type(t) == "table" and M.models(t) or {}
  if #models == 0 then return nil end
  pmus = pmus or M.machine_pmus()
  local present, core, exposed = {}, {}, pmus.exposed
  for _, p in ipairs(pmus.names) do
    present[p] = true
    if M.core_pmu(p) then core[#core + 1] = p end
  end
  local here
  for _, m in ipairs(models) do here = here or present[m] and m end
  local what = string.format("%s is for the %s PMU%s", path, table.concat(models, " or "),
    t.cpu and (" (" .. t.cpu .. ")") or "")
  local no_hw = "the kernel exposes no hardware PMU (" .. machine.SYSFS_PMUS .. " has no cpu PMU: " ..
                "a VM without PMU passthrough?)"
  if not here then
    return string.format("%s; this machine's PMU differs: libpfm4 finds %s%s", what,
      #core > 0 and table.concat(core, ", ") or "no core PMU it knows", exposed and "" or (", and " .. no_hw))
  elseif not exposed then
    return string.format("%s, which libpfm4 recognises in this CPU; but this machine's PMU differs: %s", what, no_hw)
  end
  return nil
end

-- The events a survey counts by default: events/software.lua everywhere,
-- plus the core PMU's events that open here when a hardware PMU is exposed.
-- The Arm common events (numbers 0x00..0x3f) this machine's Arm PMUs
-- implement: what their kernel driver lists in sysfs events/, read from
-- PMCEID0/1.  A set {[number] = file}, and the folders read; nil where no
-- Arm PMU is here (elsewhere events/ lists a few aliases, not what exists).
M.SYSFS = machine.SYSFS_PMUS
function M.arm_implemented(root)
  root = root or M.SYSFS
  local set, dirs = nil, {}
  for _, pmu in ipairs(sys.dir(root) or {}) do
    if pmu:match("^armv[78]") then
      local dir = root .. "/" .. pmu .. "/events"
      for _, f in ipairs(sys.dir(dir) or {}) do
        local fh = io.open(dir .. "/" .. f)
        local code = fh and (fh:read(64) or ""):match("^event=0x(%x+)")
        if fh then fh:close() end
        if code then set = set or {}; set[tonumber(code, 16)] = f end
      end
      dirs[#dirs + 1] = pmu .. "/events"
    end
  end
  return set, dirs
end
M.ARM_COMMON_LAST = 0x3f

function M.defaults()
  local out, seen, skipped, also = {}, {}, {}, {}
  local implemented, dirs = M.arm_implemented()
  local t = M.load("software")
  for _, e in ipairs(t and t.events or {}) do
    local id = pmc.identity(e) or e
    if not seen[id] then seen[id] = true; out[#out + 1] = e end
  end
  -- one row per event: a libpfm4 name and the sysfs event it equals
  -- (arm_ac57::INST_RETIRED, armv8_pmuv3/inst_retired/) are one
  for _, e in ipairs(pmc.list() or {}) do
    local id = e.opens and M.core_pmu(e.pmu or "") and (pmc.identity(e.name) or e.name)
    if id and seen[id] and seen[id] ~= true and seen[id] ~= e.name then   -- another name of a kept event
      also[seen[id]] = also[seen[id]] or {}
      table.insert(also[seen[id]], e.name)
    end
    if id and not seen[id] then
      seen[id] = e.name
      local info = implemented and pmc.info(e.name)
      local code = info and info.config
      if code and code <= M.ARM_COMMON_LAST and not implemented[code] then
        skipped[#skipped + 1] = {event = e.name, reason = string.format("not implemented by this PMU " ..
          "(common event 0x%02x is not in its PMCEID, as sysfs %s says)", code, table.concat(dirs, ", "))}
      else
        out[#out + 1] = e.name
      end
    end
  end
  return out, skipped, also
end

-- What an event counts (pmc.identity: aliases of one event have one).
local identity = pmc.identity

-- The name perf writes for a libpfm4 perf-PMU name: perf::PAGE-FAULTS is
-- page-faults; the enum spelling (perf::PERF_COUNT_SW_PAGE_FAULTS) has none.
local function common_name(name)
  local short = name:match("^perf::(.*)$")
  if not short then return name end
  if short:match("^PERF_COUNT_") then return nil end
  return short:lower()
end

-- Events named by pattern (pmc.list's, on names and descriptions) that open
-- here, after `given` (the user's own names, kept as they are): one name per
-- event, aliases of one (the same type and config) kept once, under the
-- user's name, else perf's commonest (page-faults for perf::PAGE-FAULTS,
-- perf::FAULTS and perf::PERF_COUNT_SW_PAGE_FAULTS: the spelled-out,
-- longest).  Returns the names, and the matching events that do not open
-- here {{event=, reason=}}.
function M.matching(pattern, given)
  local out, unopened, seen, at = {}, {}, {}, {}
  for _, name in ipairs(given or {}) do
    local id = identity(name) or name
    if not seen[id] then seen[id] = true; out[#out + 1] = name end
  end
  for _, e in ipairs(pmc.list(pattern) or {}) do
    if e.opens == false then
      local _, why = pmc.group({e.name})
      unopened[#unopened + 1] = {event = e.name, reason = why or "does not open here"}
    else
      local id = identity(e.name) or e.name
      local name = common_name(e.name)
      if name and identity(name) ~= id then name = nil end   -- perf's name must be this event
      if not seen[id] then
        seen[id] = true
        out[#out + 1] = name or e.name
        at[id] = {k = #out, common = name ~= nil}
      elseif at[id] and name and (not at[id].common or #name > #out[at[id].k]) then
        out[at[id].k], at[id].common = name, true   -- a better name for an event of the pattern's
      end
    end
  end
  return out, unopened
end

do
  help.doc(M, "events", [[
events: the data files of events/ (Lua tables loaded into an empty environment).
  events.load(name_or_path)    -> table, path  (or nil, message)
  events.group(name)           -> a group file (events, metrics, models, rename, constants), path
  events.group_here(name)      -> the group spelled for this machine's model, path,
                               and why it does not fit here (nil when it does)
  events.models(t)             the libpfm4 PMUs a file is for ({} for any PMU)
  events.model_of(t, path)     the one of them here, or nil and why not
  events.counts_here(t, path)  true, or false and why: written for this machine, an event opens
  events.group_names()         the groups of events/, and perf's -M names mapped to them
  events.for_model(t, model)   the group as model spells its events (rename), with its constants
  events.pairs("A,B C,D" | file) -> list of pairs, {path=, pmu=, cpu=} for a file
  events.pmu_check(t, path[, pmus]) -> nil, or why the file's PMU is not this
                               machine's (pmus: events.machine_pmus() by default)
  events.machine_pmus()        {names = the PMUs libpfm4 finds, exposed = a hardware PMU is}
  events.defaults()            the events a survey counts by default, one name per
                               event; those an Arm PMU does not implement {{event=,
                               reason=}}; the other names of each {[name] = {...}}
  events.matching(pattern, given) the events of pmc.list(pattern) that open,
                               aliases of one event once; those that do not open
  events.arm_implemented()     the Arm common events the PMUs implement (PMCEID)]])
end

return M
