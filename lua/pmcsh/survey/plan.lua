-- Planning a survey: the options become a header (events, rows, units that
-- must share a run, workloads, n), and the units are packed into as few
-- groups as the PMU schedules without multiplexing (try-open and back off).
local errors = require("pmcsh.errors")
local events = require("pmcsh.events")
local machine = require("pmcsh.machine")
local numbers = require("pmcsh.numbers")
local options = require("pmcsh.options")
local pmc = require("pmcsh.pmc")
local stream = require("pmcsh.stream")
local workloads = require("pmcsh.survey.workloads")
local engine_stream = require("pmcsh.survey.engine_stream")
local D = require("pmcsh.survey.defaults")
local text = require("pmcsh.text")
local results = require("pmcsh.results")
local sys = require("pmcsh._sys")

local M = {}

M.MAX_REPS = D.max_reps
M.DEFAULT_KERNELS = D.kernels

-- Usage errors (exit 2 through the recipe host).
function M.usage(msg)
  error(options.usage(msg), 0)
end
local usage = M.usage

-- The options a results file's header repeats, declared once: the survey
-- recipe's declarations are these, and a header read back by --resume or
-- --report is checked by the same checks (pmcsh.options) before it is used.
M.OPTIONS = {
  sample_ms = {name = "sample_ms", type = "int", default = D.sample_ms, min = 1, max = 60000,
    help = "chase: ms per timed sample (one per rep)"},
  n = {name = "n", type = "size", min = 1, help = "elements per array (2M = 2*2^20; default: STREAM's 4x LLC rule)"},
  reps = {name = "reps", short = "r", type = "int", default = D.reps, min = 1, max = M.MAX_REPS,
    help = "timed windows per run: the loops' in pairs (10: 5 pairs), a chase's a sample each"},
  threads = {name = "threads", short = "t", type = "int", default = D.threads, min = 1, max = 1024, help = "stream threads"},
  pages = {name = "pages", type = "string", choices = {"4k", "thp", "2m", "1g"}, default = D.pages, help = "page policy"},
  budget = {name = "budget", type = "number", default = D.budget, min = 0, max = 86400,
    help = "seconds the runs may take: pairs are made until --reps/2 are kept, or this is spent"},
}

-------------------------------------------------------------------------------
-- Units, rows and packing
-------------------------------------------------------------------------------

-- An event name's syntax (pmc.parse_name); a bad name is a usage error.
local function parsed(name)
  local ok, p = pcall(pmc.parse_name, name)
  if ok then return p end
  if errors.is(p, "argument") then usage(p.message) end
  error(p, 0)
end

-- The :u / :k variant of an event name, in its form's syntax (pmc.modified:
-- msr/tsc/u, cycles:u); nil, message for a name with a privilege already.
function M.modified(name, mod)
  local p = parsed(name)
  if p.privilege then
    return nil, string.format("%s already has a privilege modifier; give the plain name with --split/--pairs", name)
  end
  return pmc.modified(name, mod)
end

local function both(ev)
  local out = {}
  for i, mod in ipairs({"u", "k"}) do
    local l, err = M.modified(ev, mod)
    if not l then usage(err) end
    out[i] = l
  end
  return out
end

-- A unit is a list of labels (event strings as given to pmc.group) that
-- must be counted in the same run, with the row key of each label.  An
-- event given twice is planned once.  Returns units, rows or raises a
-- usage error.
function M.plan(o)
  local units, rows, seen = {}, {}, {}
  local function row(key, event, kind, extra)
    if seen[key] then return end
    seen[key] = true
    rows[#rows + 1] = {key = key, event = event, kind = kind, pair = extra.pair, fallback = extra.fallback}
  end
  local function add_unit(labels, keys, kind, extra)
    for i, key in ipairs(keys) do row(key, labels[i], kind, extra or {}) end
    units[#units + 1] = {labels = labels, keys = keys, kind = kind}
  end
  local given = {}
  for _, ev in ipairs(o.events or {}) do
    if given[ev] then -- planned already
    elseif o.split and not parsed(ev).privilege then   -- an event with its own privilege: its one row
      local uk = both(ev)
      add_unit(uk, uk, "split")
      -- a PMU that cannot filter by privilege (msr/tsc/) counts both in one row
      units[#units].fallback = {labels = {ev}, keys = {ev}, kind = "single"}
      row(ev, ev, "single", {fallback = true})
    else
      add_unit({ev}, {ev}, "single")
    end
    given[ev] = true
  end
  for _, p in ipairs(o.pairs or {}) do
    local tag = table.concat(p, "+")
    for m = 1, 2 do
      local labels, keys = {}, {}
      for i, ev in ipairs(p) do
        labels[i] = both(ev)[m]
        keys[i] = labels[i] .. " [" .. tag .. "]"
      end
      add_unit(labels, keys, "pair", {pair = tag})
    end
  end
  return units, rows
end

-- First fit: the unit joins the first group, in order, that still opens
-- with it (at most max_events labels).  Returns true when it joined one.
local function first_fit(groups, u, try, max_events)
  for _, g in ipairs(groups) do
    if #g.labels + #u.labels <= max_events then
      local labels = {table.unpack(g.labels)}
      for _, l in ipairs(u.labels) do labels[#labels + 1] = l end
      if try(labels) then
        for i, l in ipairs(u.labels) do
          g.labels[#g.labels + 1] = l
          g.keys[#g.keys + 1] = u.keys[i]
        end
        return true
      end
    end
  end
  return false
end

-- A unit that does not open alone: when it has several labels, each is
-- tried alone for the reason; else (or when each opens) the unit's reason.
local function blame(u, try, msg, errno, unopened)
  local blamed = false
  if #u.labels > 1 then
    for i, l in ipairs(u.labels) do
      local ok1, msg1, errno1 = try({l})
      if not ok1 then
        unopened[#unopened + 1] = {event = u.keys[i], reason = msg1, errno = errno1}
        blamed = true
      end
    end
  end
  if blamed then return end
  local why = msg or "cannot be opened"
  if #u.labels > 1 then why = "cannot be counted together: " .. why end
  for i = 1, #u.labels do
    unopened[#unopened + 1] = {event = u.keys[i], reason = why, errno = errno}
  end
end

-- Packs units into groups with `try(labels)` -> true | nil, msg, errno
-- (opens a group, checks it counts without multiplexing, closes it:
-- plan.try on this machine's PMU; a list of events, whatever opens them).
-- First fit over the groups made so far, so a survey takes as few runs as
-- the hardware allows.  A unit that does not open alone is unopened.  A
-- split unit whose event ignores the user/OS filter (pmc.privilege_filter
-- says false, why), or whose split does not open, is counted in its one row,
-- with the reason.  Returns groups {{labels=, keys=}}, unopened {{event=,
-- reason=, errno=, fallback=}}.
function M.pack(units, try)
  local max_events = M.MAX_EVENTS
  local groups, unopened = {}, {}
  for _, u in ipairs(units) do
    if u.fallback then
      local filters, why = pmc.privilege_filter(u.labels[1], u.labels[2])
      if filters == false then
        unopened[#unopened + 1] = {event = u.fallback.keys[1], fallback = true, reason = why}
        u = u.fallback
      end
    end
    if not first_fit(groups, u, try, max_events) then
      local ok, msg, errno = try(u.labels)
      local fell_back = false
      if not ok and u.fallback and try(u.fallback.labels) then
        unopened[#unopened + 1] = {event = u.fallback.keys[1], fallback = true,
          reason = "counted without the user/OS split (" .. tostring(msg) .. ")"}
        u, ok, fell_back = u.fallback, true, true
      end
      if fell_back and first_fit(groups, u, try, max_events) then -- the fallback joined a group
      elseif ok then groups[#groups + 1] = {labels = {table.unpack(u.labels)}, keys = {table.unpack(u.keys)}}
      else blame(u, try, msg, errno, unopened) end
    end
  end
  return groups, unopened
end

-- The real try-open: opens the group, counts a few microseconds of work,
-- and refuses a group that multiplexed or never ran.
function M.try(labels)
  local g, msg, errno = pmc.group(labels)
  if not g then return nil, msg, errno end
  local ok, r = pcall(function()
    g:start()
    local x = 0
    for i = 1, 20000 do x = x + i end
    g:stop()
    return g:read()
  end)
  g:close()
  if not ok then return nil, tostring(r) end
  if not r then return nil, "the group could not be read" end
  if r.multiplexed or r.enabled > 0 and r.running == 0 then
    return nil, "the PMU multiplexes this group (too many events for its counters)"
  end
  return true
end

-------------------------------------------------------------------------------
-- The default size
-------------------------------------------------------------------------------

M.ARRAYS, M.MEM_FRACTION = stream.ARRAYS, stream.MEM_FRACTION

local mem_available = machine.mem_available

local mib = numbers.size

-- stream.default_n (the one rule, stream.new's too) and a note saying what
-- it needs, and why when capped.
function M.default_n(rule_n, avail)
  local n, capped = stream.default_n(rule_n, avail)
  local note
  if capped then
    note = string.format("; STREAM's rule (each array 4x the last-level caches) asks n = %d, %s in all: " ..
      "capped at 1/%d of the %s available (--n %d for the full rule)",
      rule_n, mib(rule_n * 8 * M.ARRAYS), math.floor(1 / M.MEM_FRACTION + 0.5), mib(avail), rule_n)
  end
  return n, note
end

-- The line stating n and its memory, before anything is measured.
function M.size_line(n, note, own)
  if own then   -- loops on their own data only: n is theirs, no arrays of pmcsh's
    return string.format("pmcsh survey: n = %d elements of the loops' own data%s\n", n, note or "")
  end
  return string.format("pmcsh survey: n = %d per array, %d arrays of %s = %s%s\n",
    n, M.ARRAYS, mib(n * 8), mib(n * 8 * M.ARRAYS), note or "")
end

-------------------------------------------------------------------------------
-- From the options to the header
-------------------------------------------------------------------------------

-- The events of the options: a group file's first, then those given (or
-- matching a pattern), else the machine's default; each expanded into its
-- umasks with umasks.  Returns events (or nil with pairs only), the group
-- and its path.
local function events_of(opt)
  local evs = opt.events
  local unopened
  if opt.pattern then
    evs, unopened = events.matching(opt.pattern, evs)
    if #evs == 0 and #unopened == 0 then usage(string.format("no event matches %q (see pmcsh list)", opt.pattern)) end
    if #evs == 0 then   -- the machine's doing, not the user's: exit 1
      local names = {}
      for i = 1, math.min(#unopened, 5) do names[i] = unopened[i].event end
      local e = options.usage(string.format("%d %s %q but none can be opened here: %s%s; %s",
        #unopened, #unopened == 1 and "event matches" or "events match", opt.pattern, table.concat(names, ", "),
        #unopened > 5 and string.format(" and %d more", #unopened - 5) or "", unopened[1].reason))
      e.status = 1
      error(e, 0)
    end
  end
  for _, e in ipairs(opt.events or {}) do
    local info, msg, errno = pmc.info(e)
    if not info and (errno == sys.ENOENT or errno == sys.EINVAL) then
      usage(msg or string.format("unknown event %q", e))
    end
  end
  local grp, gpath
  if opt.group then
    grp, gpath = events.group_here(opt.group)
    if not grp then usage(gpath) end
    local all = {table.unpack(grp.events)}
    for _, e in ipairs(evs or {}) do all[#all + 1] = e end
    evs = all
  end
  local skipped, also
  if not evs and not opt.pairs then evs, skipped, also = events.defaults() end
  skipped = skipped or unopened
  if opt.umasks then
    local out = {}
    for _, e in ipairs(evs or {}) do
      local info = pmc.info(e)
      local n = #out
      for _, a in ipairs(info and info.umasks or {}) do out[#out + 1] = e .. ":" .. (a.name or a) end
      if #out == n then out[#out + 1] = e end
    end
    evs = out
  end
  -- one row per event: its other names said under the table
  local aliases = {}
  for _, e in ipairs(evs or {}) do
    if also and also[e] then aliases[#aliases + 1] = {event = e, also = also[e]} end
  end
  return evs, grp, gpath, skipped, #aliases > 0 and aliases or nil
end

-- The events/ files the survey reads (a group, a pair list), each with the
-- units it owns: checked against this machine's PMU after packing.
local function files_of(grp, gpath, prs, psrc)
  local files = {}
  if grp then
    local set = {}
    for _, e in ipairs(grp.events) do set[e] = true end
    files[#files + 1] = {path = gpath, data = grp, group = true, count = #grp.events, owns = function(u)
      return set[u.keys[1]] or u.kind ~= "pair" and set[parsed(u.keys[1]).plain] end}
  end
  if psrc then
    local n, seen = 0, {}
    for _, p in ipairs(prs) do
      for _, e in ipairs(p) do if not seen[e] then seen[e] = true; n = n + 1 end end
    end
    files[#files + 1] = {path = psrc.path, data = psrc, count = n, owns = function(u) return u.kind == "pair" end}
  end
  return files
end

local function check_sizes(opt)
  if math.type(opt.reps) ~= "integer" or opt.reps < 1 or opt.reps > M.MAX_REPS then
    usage(string.format("reps must be an integer from 1 to %d", M.MAX_REPS))
  end
  if opt.n ~= nil and (math.type(opt.n) ~= "integer" or opt.n < 1) then
    usage(string.format("n must be a positive integer (elements per array), not %s", tostring(opt.n)))
  end
end

local function realpath(p)
  return sys.realpath(p) or p
end

-- The header of a new survey from its options (see survey.run), the
-- events/ files it reads, and the note on a capped default n.  Raises a
-- usage error for bad options.
function M.header(o)
  local opt = setmetatable({}, {__index = o})
  opt.reps, opt.threads, opt.pages = o.reps or D.reps, o.threads or D.threads, o.pages or D.pages
  opt.split = o.split ~= false   -- user and OS apart unless asked not to
  local evs, grp, gpath, skipped, aliases = events_of(opt)
  local prs, psrc
  if opt.pairs then
    prs, psrc = events.pairs(opt.pairs)
    if not prs then usage("bad pair list: " .. psrc) end
  end
  local hdr = {type = "header", format = results.FORMAT, kernels = {table.unpack(opt.kernels or M.DEFAULT_KERNELS)}}
  workloads.configure(opt, hdr, usage)
  check_sizes(opt)
  local units, rows = M.plan{events = evs, split = opt.split, pairs = prs}
  local n, note = opt.n, nil
  if not n then n, note = M.default_n(stream.machine().default_n, mem_available()) end
  hdr.n, hdr.reps, hdr.threads, hdr.pages = n, opt.reps, opt.threads, opt.pages
  hdr.budget = o.budget or D.budget
  -- the loops' windows: a slice of each thread's part (pmcsh.survey.engine_stream)
  hdr.slice = engine_stream.slice(n, opt.threads, opt.fresh)
  hdr.fresh, hdr.split, hdr.baseline = opt.fresh or false, opt.split or false, opt.baseline ~= false
  hdr.units, hdr.rows, hdr.started, hdr.emulated = units, rows, os.time(), os.getenv("PMCSH_EMULATED")
  hdr.group = opt.group and (events.own(gpath) or realpath(gpath))   -- a name of events/, or the path
  hdr.fingerprint = machine.fingerprint()
  hdr.aliases = aliases
  -- how the user's loops were built is part of what was measured: where two
  -- hosts' surveys differ, compare names it beside the machines' facts
  for _, l in ipairs(hdr.loops or {}) do
    hdr.fingerprint.loops = hdr.fingerprint.loops or {}
    table.insert(hdr.fingerprint.loops, l.name .. ": " .. (l.command or l.path))
  end
  -- what the engines will refuse, refused now, before a file is written
  local typed = o.typed or function(k) return "--" .. k:gsub("_", "-") .. " " .. tostring(hdr[k]) end
  workloads.validate(hdr, {}, function(k, why) usage(string.format("survey: %s: %s", typed(k), why)) end)
  return hdr, files_of(grp, gpath, prs, psrc), note, skipped
end

M.MAX_EVENTS = 64      -- labels in one unit, as in one group (pack's bound)
local KINDS = {single = true, split = true, pair = true}

-- A header read back (--resume, --report), checked as strictly as the
-- command line: its options by the options' own declarations (OPTIONS,
-- pmcsh.options), its units and rows by the shapes plan() makes, then by
-- each engine.  true, or nil and what is wrong.
function M.check_header(hdr)
  for _, k in ipairs({"n", "reps", "threads", "sample_ms", "pages", "budget"}) do
    if hdr[k] ~= nil then
      local ok, e = pcall(options.convert, M.OPTIONS[k], hdr[k])
      if not ok then return nil, string.format("%s %s: %s", k, tostring(hdr[k]), errors.message(e)) end
      hdr[k] = e
    end
  end
  for i, u in ipairs(hdr.units) do
    if #u.labels < 1 or #u.labels > M.MAX_EVENTS then
      return nil, string.format("units[%d]: %d labels, a unit has 1 to %d", i, #u.labels, M.MAX_EVENTS)
    end
    if #u.keys ~= #u.labels then
      return nil, string.format("units[%d]: %d labels but %d keys", i, #u.labels, #u.keys)
    end
    if not KINDS[u.kind] then return nil, string.format("units[%d]: unknown kind %q", i, u.kind) end
  end
  return workloads.check(hdr)
end

-- A header read back to resume: its kernels must be this build's, and the
-- engines must take its options (as plan.header checks a new survey's).
function M.check_resume(hdr)
  -- a survey resumes on the machine that started it: another's runs
  -- appended would be one host's rows measured on two
  local fp, here = hdr.fingerprint, machine.fingerprint()
  if type(fp) == "table" then
    for _, k in ipairs({"host", "arch", "cpu_model"}) do
      if fp[k] ~= nil and fp[k] ~= here[k] then
        return nil, string.format("it was measured on %s (%s, %s), this is %s (%s, %s): resume it there, or start " ..
          "a new survey with --out", text.inert(tostring(fp.host)), text.inert(tostring(fp.arch)),
          text.inert(tostring(fp.cpu_model)), here.host, here.arch, here.cpu_model)
      end
    end
  end
  local env = {loops = hdr.loops}
  local known = {}
  for _, n in ipairs(workloads.names(env)) do known[n] = true end
  for _, k in ipairs(hdr.kernels) do
    if not known[k] then return nil, string.format("unknown kernel %q (this pmcsh has %s)", k,
      table.concat(workloads.names(env), ", ")) end
  end
  local ok, err = pcall(workloads.validate, hdr, env, function(k, why)
    error(string.format("%s %s: %s", k, tostring(hdr[k]), why), 0)
  end)
  if not ok then return nil, tostring(err) end
  return true
end

-- The events/ files written for another PMU: nothing of one opened is an
-- error saying so (nil, message, sys.EOPNOTSUPP); some of it opened, a note heads the
-- unopened list and the file's unknown events say which PMU it is for.
function M.check_files(files, groups, unopened, units)
  local owner = {}
  for _, u in ipairs(units) do
    for _, k in ipairs(u.keys) do owner[k] = owner[k] or {} table.insert(owner[k], u) end
  end
  local function owns(file, key)
    for _, u in ipairs(owner[key] or {}) do if file.owns(u) then return true end end
    return false
  end
  for _, file in ipairs(files) do
    local why = events.pmu_check(file.data, file.path)
    if why then
      local opened = false
      for _, g in ipairs(groups) do
        for _, key in ipairs(g.keys) do opened = opened or owns(file, key) end
      end
      if not opened then
        return nil, string.format("%s: none of its %d events can be counted here (pmc.info(NAME, " ..
          "{pmu = %q}) encodes them, to plan; run it where the kernel exposes that PMU)",
          why, file.count, events.models(file.data)[1]), sys.EOPNOTSUPP
      end
      for _, u in ipairs(unopened) do
        if owns(file, u.event) and u.errno == sys.ENOENT then   -- not an event of this machine's PMUs
          u.reason = u.reason .. string.format(" [the file is for the %s PMU]",
            table.concat(events.models(file.data), " or "))
        end
      end
      table.insert(unopened, 1, {event = file.path, reason = why:sub(#file.path + 2)})
    end
  end
  return true
end

return M
