-- The every-event survey of the STREAM loops (Heller's PMC survey, generalised).
--
-- For each event (or user/OS split, or dual-event pair) and each kernel, the
-- survey reports events per loop iteration: the count divided by n times the
-- timed repetitions.  Events are packed into as few groups as the PMU
-- schedules without multiplexing (try-open and back off); each group is one
-- run per kernel.  Every finished run is appended to a JSON-lines file and
-- flushed, so an interrupted survey keeps its rows and can be resumed.
--
-- The file, one object per line:
--   {"type":"header", "format":"pmcsh-survey/1", options..., "units":[...], "rows":[...]}
--   {"type":"unopened", "event":..., "reason":..., "errno":...}
--   {"type":"baseline", "kernel":..., "mbps":..., "times":[...]}
--   {"type":"run", "kernel":..., "group":i, "mbps":..., "cells":[{key, event, value, ...}]}
--   {"type":"done"}
local metrics = require("pmcsh.metrics")
local cjson = require("cjson").new()
cjson.encode_number_precision(14)
cjson.encode_invalid_numbers(false)

local M = {}

local ok_help, help = pcall(require, "pmcsh.help")
local doc = ok_help and help.doc or function(obj) return obj end

local results = require("pmcsh.results")
M.FORMAT = results.FORMAT
M.MAX_REPS = 1000000
M.DEFAULT_KERNELS = {"copy", "scale", "add", "triad"}

local function lazy(name)
  local ok, mod = pcall(require, name)
  if ok then return mod end
  return nil, mod
end

-- Usage errors (exit 2 through the recipe host); plain error elsewhere.
local function usage(msg)
  local ok, recipe = pcall(require, "pmcsh.recipe")
  if ok and recipe.usage then error(recipe.usage(msg), 0) end
  error(msg, 0)
end
M.usage = usage

local function title(k)
  return (k:gsub("^%l", string.upper))
end

-------------------------------------------------------------------------------
-- Event sets and pair lists (data files in events/, loaded into an empty env)
-------------------------------------------------------------------------------

local function sys_realpath(p)
  local sys = lazy("pmcsh._sys")
  return sys and sys.realpath and sys.realpath(p)
end

local function events_dir()
  local ok, paths = pcall(require, "pmcsh.paths")
  if ok and paths.events then return paths.events end
  return "events"
end

local function file_exists(p)
  local f = io.open(p, "r")
  if f then f:close(); return true end
  return false
end

-- Loads an events/ data file by name ("pairs-skl") or path.  Returns the
-- table, or nil and a message.
function M.load_data(name)
  local path = name
  if not file_exists(path) then
    path = events_dir() .. "/" .. name .. (name:match("%.lua$") and "" or ".lua")
  end
  if not file_exists(path) then
    return nil, string.format("no events file %q (looked in ./ and %s/)", name, events_dir())
  end
  local chunk, err = loadfile(path, "t", {})
  if not chunk then return nil, string.format("cannot load %s: %s", path, err) end
  local ok, t = pcall(chunk)
  if not ok then return nil, string.format("cannot load %s: %s", path, t) end
  if type(t) ~= "table" then return nil, string.format("%s does not return a table", path) end
  return t, path
end

-- Parses a pair list: a file/data name, or "A,B B,C" / "A,B;C,D" (pairs
-- separated by spaces or ';', members by ',').  Returns a list of pairs
-- (each a list of 2..4 event names), or nil, message.
function M.parse_pairs(spec)
  if type(spec) == "table" then
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
  if type(spec) ~= "string" or spec == "" then return nil, "empty pair list" end
  local looks_like_file = spec:match("%.lua$") or spec:match("^[%w_.-]+$") and not spec:find(",")
  if looks_like_file or file_exists(spec) then
    local t, err = M.load_data(spec)
    if not t then return nil, err end
    if type(t.pairs) ~= "table" then
      return nil, string.format("%s has no 'pairs' list", err)
    end
    local out, perr = M.parse_pairs(t.pairs)
    if not out then return nil, perr end
    -- the file's name and PMU, for the check against this machine's PMU
    return out, {path = err, name = t.name, pmu = t.pmu, cpu = t.cpu}
  end
  local out = {}
  for item in spec:gmatch("[^%s;]+") do
    local p = {}
    -- members split on ',' outside pmu/.../ terms
    local depth, cur = 0, {}
    for ch in item:gmatch(".") do
      if ch == "/" then depth = 1 - depth end
      if ch == "," and depth == 0 then p[#p + 1] = table.concat(cur); cur = {}
      else cur[#cur + 1] = ch end
    end
    p[#p + 1] = table.concat(cur)
    out[#out + 1] = p
  end
  return M.parse_pairs(out)
end

-- The :u / :k variants of an event name (sysfs names pmu/.../ take the
-- modifier after the closing slash, as perf writes them: pmu/ev/u).
function M.modified(name, mod)
  if name:match("/$") then return name .. mod end
  if name:match(":[ukhHG]+$") then
    return nil, string.format("%s already has a privilege modifier; give the plain name with --split/--pairs", name)
  end
  return name .. ":" .. mod
end

-- A group file (events/NAME.lua with an `events` list and optional
-- `metrics`, as memory-skl.lua).  Returns the table and its path, or raises
-- a usage error.
function M.load_group(name)
  local t, path = M.load_data(name)
  if not t then usage(path) end
  if type(t.events) ~= "table" or #t.events == 0 then
    usage(string.format("%s has no 'events' list: not a group (pairs files go to --pairs)", path))
  end
  for i, e in ipairs(t.events) do
    if type(e) ~= "string" or e == "" then usage(string.format("%s: event %d is not an event name", path, i)) end
  end
  for i, m in ipairs(t.metrics or {}) do
    if type(m) ~= "table" or type(m.name) ~= "string" or type(m.fn) ~= "function" then
      usage(string.format("%s: metric %d needs a name and a function fn(e, c)", path, i))
    end
  end
  return t, path
end

-- The chase workload: "ORDER:SIZE[:STRIDE]", any part left out taking its
-- default (random, 256M, 64): "random:256M", "64M", "page:64M:128".
-- Returns {order=, size=, stride=} or nil, message.
M.DEFAULT_CHASE = {order = "random", size = 256 * 1024 * 1024, stride = 64}
function M.parse_chase(spec)
  local c = {order = M.DEFAULT_CHASE.order, size = M.DEFAULT_CHASE.size, stride = M.DEFAULT_CHASE.stride}
  if spec == nil or spec == "" then return c end
  if type(spec) == "table" then
    for k, v in pairs(spec) do c[k] = v end
    return c
  end
  local orders = {}
  local ok, chase = pcall(require, "pmcsh.chase")
  if ok then for _, o in ipairs(chase.orders()) do orders[o.name] = true end end
  local parse_size = require("pmcsh.recipe").parse_size
  local sizes = 0
  for part in (spec .. ":"):gmatch("([^:]*):") do
    if orders[part] then c.order = part
    else
      local n = parse_size(part)
      if not n or n <= 0 then
        local names = {}
        for name in pairs(orders) do names[#names + 1] = name end
        table.sort(names)
        return nil, string.format("bad chase %q: %q is neither an order (%s) nor a size (256M, 4K)",
          spec, part, table.concat(names, ", "))
      end
      sizes = sizes + 1
      if sizes == 1 then c.size = n elseif sizes == 2 then c.stride = n
      else return nil, string.format("bad chase %q: ORDER:SIZE[:STRIDE] expected", spec) end
    end
  end
  -- the chain this asks for, checked as chase.chain would, before anything runs
  local cok, why = pcall(require("pmcsh._chase").check, {size = c.size, stride = c.stride, order = c.order})
  if not cok then
    return nil, string.format("bad chase %q: %s", spec, (tostring(why):gsub("^.-bad argument #%d+ to '[%w_.]*' %((.*)%)$", "%1")))
  end
  return c
end

local function chase_text(c)
  local size = c.size % 2^20 == 0 and string.format("%d MiB", c.size // 2^20)
    or string.format("%d KiB", c.size // 1024)
  return string.format("%s order over %s, %d-byte elements", c.order, size, c.stride)
end

-- This machine's PMUs: those libpfm4 finds (a set), the core ones among
-- them (a list), and whether the kernel exposes a hardware PMU at all.
local function machine_pmus(pmc)
  local present, core = {}, {}
  local ok, list = pcall(pmc.list)
  if ok and type(list) == "table" then
    for _, e in ipairs(list) do
      if e.pmu and not present[e.pmu] then
        present[e.pmu] = true
        if M.core_pmu(e.pmu) then core[#core + 1] = e.pmu end
      end
    end
  end
  local exposed = true
  if pmc.environment then
    local ok2, env = pcall(pmc.environment)
    if ok2 and type(env) == "table" and env.cpu_pmu == false then exposed = false end
  end
  return present, core, exposed
end

-- An events/ file written for one PMU (its `pmu` field, libpfm4's name)
-- against this machine's: nil when it matches (or the file names none),
-- else a sentence saying which PMU the file is for and how this machine's
-- differs.
function M.pmu_check(t, path, pmc)
  if type(t) ~= "table" or type(t.pmu) ~= "string" then return nil end
  local present, core, exposed = machine_pmus(pmc)
  local what = string.format("%s is for the %s PMU%s", path, t.pmu, t.cpu and (" (" .. t.cpu .. ")") or "")
  local no_hw = "the kernel exposes no hardware PMU (/sys/bus/event_source/devices has no cpu PMU: " ..
                "a VM without PMU passthrough?)"
  if not present[t.pmu] then
    return string.format("%s; this machine's PMU differs: libpfm4 finds %s%s", what,
      #core > 0 and table.concat(core, ", ") or "no core PMU it knows", exposed and "" or (", and " .. no_hw))
  elseif not exposed then
    return string.format("%s, which libpfm4 recognises in this CPU; but this machine's PMU differs: %s", what, no_hw)
  end
  return nil
end

-------------------------------------------------------------------------------
-- The default size
-------------------------------------------------------------------------------

local ARRAYS = 3              -- STREAM's a, b and c
M.MEM_FRACTION = 1 / 8        -- of the memory available, at most, by default

-- Bytes of memory available now (/proc/meminfo MemAvailable), or nil.
local function mem_available()
  local f = io.open("/proc/meminfo")
  if not f then return nil end
  local t = f:read("a")
  f:close()
  local kb = t:match("MemAvailable:%s*(%d+) kB")
  return kb and tonumber(kb) * 1024
end

local mib = metrics.size

-- STREAM's rule (`rule_n`: each array 4x the last-level caches), capped so
-- the arrays take at most MEM_FRACTION of `avail` bytes.  Returns n and a
-- note saying what it needs, and why when capped.
function M.default_n(rule_n, avail)
  local n = rule_n
  local note
  if avail and rule_n * 8 * ARRAYS > M.MEM_FRACTION * avail then
    n = math.max(1 << 20, math.floor(M.MEM_FRACTION * avail / (8 * ARRAYS)) // 4096 * 4096)
    note = string.format("; STREAM's rule (each array 4x the last-level caches) asks n = %d, %s in all: " ..
      "capped at 1/%d of the %s available (--n %d for the full rule)",
      rule_n, mib(rule_n * 8 * ARRAYS), math.floor(1 / M.MEM_FRACTION + 0.5), mib(avail), rule_n)
  end
  return n, note
end

-- The line stating n and its memory, before anything is measured.
local function size_line(n, note)
  return string.format("pmcsh survey: n = %d per array, %d arrays of %s = %s%s\n",
    n, ARRAYS, mib(n * 8), mib(n * 8 * ARRAYS), note or "")
end

-------------------------------------------------------------------------------
-- Planning: units (events that must share a run), rows, packing
-------------------------------------------------------------------------------

-- A unit is a list of labels (event strings as given to pmc.group) that
-- must be counted in the same run, with the row key of each label.
-- Returns units, rows or raises a usage error.
function M.plan(o)
  local units, rows, seen = {}, {}, {}
  local function add_unit(labels, keys, kind, extra)
    local u = {labels = labels, keys = keys, kind = kind}
    for i, key in ipairs(keys) do
      if not seen[key] then
        seen[key] = true
        rows[#rows + 1] = {key = key, event = labels[i], kind = kind, pair = extra}
      end
    end
    units[#units + 1] = u
  end
  for _, ev in ipairs(o.events or {}) do
    if o.split then
      local u, err = M.modified(ev, "u")
      if not u then usage(err) end
      local k = M.modified(ev, "k")
      add_unit({u, k}, {u, k}, "split")
      -- a PMU that cannot filter by privilege (msr/tsc/) counts both in one row
      units[#units].fallback = {labels = {ev}, keys = {ev}, kind = "single"}
      rows[#rows + 1] = {key = ev, event = ev, kind = "single", fallback = true}
    else
      add_unit({ev}, {ev}, "single")
    end
  end
  for _, p in ipairs(o.pairs or {}) do
    local tag = table.concat(p, "+")
    for _, mod in ipairs({"u", "k"}) do
      local labels, keys = {}, {}
      for i, ev in ipairs(p) do
        local l, err = M.modified(ev, mod)
        if not l then usage(err) end
        labels[i] = l
        keys[i] = l .. " [" .. tag .. "]"
      end
      add_unit(labels, keys, "pair", tag)
    end
  end
  return units, rows
end

-- Packs units into groups with `try(labels)` -> true | nil, msg, errno
-- (opens a group, checks it counts without multiplexing, closes it).
-- First fit over the groups made so far, in order, so a survey takes as few
-- runs as the hardware allows.  A unit that does not open alone is unopened;
-- when it has several labels, each is tried alone for the reason.
-- A split unit whose event ignores the user/OS filter (`privilege(u, k)`
-- -> false, why) is counted in its one row, with the reason.
-- Returns groups {{labels=, keys=}}, unopened {{event=, reason=, errno=}}.
function M.pack(units, try, max_events, privilege)
  max_events = max_events or 64
  local groups, unopened = {}, {}
  for _, u in ipairs(units) do
    local placed = false
    if u.fallback and privilege then
      local filters, why = privilege(u.labels[1], u.labels[2])
      if filters == false then
        unopened[#unopened + 1] = {event = u.fallback.keys[1], fallback = true, reason = why}
        u = u.fallback
      end
    end
    for _, g in ipairs(groups) do
      if #g.labels + #u.labels <= max_events then
        local labels = {table.unpack(g.labels)}
        for _, l in ipairs(u.labels) do labels[#labels + 1] = l end
        if try(labels) then
          for i, l in ipairs(u.labels) do
            g.labels[#g.labels + 1] = l
            g.keys[#g.keys + 1] = u.keys[i]
          end
          placed = true
          break
        end
      end
    end
    if not placed then
      local ok, msg, errno = try(u.labels)
      if not ok and u.fallback and try(u.fallback.labels) then
        unopened[#unopened + 1] = {event = u.fallback.keys[1], fallback = true,
          reason = "counted without the user/OS split (" .. tostring(msg) .. ")"}
        u = u.fallback
        for _, g in ipairs(groups) do
          if #g.labels + #u.labels <= max_events then
            local labels = {table.unpack(g.labels)}
            for _, l in ipairs(u.labels) do labels[#labels + 1] = l end
            if try(labels) then
              for i, l in ipairs(u.labels) do g.labels[#g.labels + 1] = l; g.keys[#g.keys + 1] = u.keys[i] end
              placed = true
              break
            end
          end
        end
        ok = true
      end
      if placed then -- the fallback joined a group
      elseif ok then
        groups[#groups + 1] = {labels = {table.unpack(u.labels)}, keys = {table.unpack(u.keys)}}
      else
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
        if not blamed then
          local why = msg or "cannot be opened"
          if #u.labels > 1 then why = "cannot be counted together: " .. why end
          for i = 1, #u.labels do
            unopened[#unopened + 1] = {event = u.keys[i], reason = why, errno = errno}
          end
        end
      end
    end
  end
  return groups, unopened
end

-- The real try-open: opens the group, counts a few microseconds of work,
-- and refuses a group that multiplexed or never ran.
function M.pmc_try(pmc)
  return function(labels)
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
    for i = 1, #labels do
      local e = r[i]
      if e and (e.multiplexed or (e.enabled or 0) > 0 and (e.running or 0) == 0) then
        return nil, "the PMU multiplexes this group (too many events for its counters)"
      end
    end
    return true
  end
end

-- The default events: events/software.lua everywhere, plus the core PMU's
-- events that open here when a hardware PMU is exposed.
local NOT_CORE = {software = true, tracepoint = true, breakpoint = true, uprobe = true,
                  kprobe = true, msr = true, power = true, perf = true, perf_raw = true}

-- A core PMU's events are counted per thread; uncore, L3, data fabric,
-- memory controller and RAPL PMUs count per socket and are left out.
local function core_pmu(pmu)
  if NOT_CORE[pmu] then return false end
  for _, pat in ipairs({"uncore", "rapl", "_l3$", "_df", "_umc", "_nb$", "power", "cstate"}) do
    if pmu:match(pat) then return false end
  end
  return true
end
M.core_pmu = core_pmu

function M.default_events(pmc)
  local out, seen = {}, {}
  local t = M.load_data("software")
  for _, e in ipairs(t and t.events or {}) do
    if not seen[e] then seen[e] = true; out[#out + 1] = e end
  end
  if pmc and pmc.list then
    local ok, list = pcall(pmc.list)
    if ok and type(list) == "table" then
      for _, e in ipairs(list) do
        local pmu = e.pmu or ""
        if e.opens and core_pmu(pmu) and not seen[e.name] then
          seen[e.name] = true
          out[#out + 1] = e.name
        end
      end
    end
  end
  return out
end

-------------------------------------------------------------------------------
-- The JSON-lines file
-------------------------------------------------------------------------------

local function encode(obj) return cjson.encode(obj) end

-- Reads a survey file (every line checked by pmcsh.results; a torn line,
-- from a kill mid-write, is skipped).  Returns state {header,
-- baseline[kernel], cells[key][kernel], unopened, runs, done} or nil, message.
function M.load(path)
  local records, torn = results.read(path)
  if not records then return nil, torn end
  local st = {baseline = {}, cells = {}, unopened = {}, runs = {}, done = false, torn = torn}
  for _, obj in ipairs(records) do
    if obj.type == "header" then
      for _, k in ipairs({"n", "reps", "threads", "started"}) do
        obj[k] = obj[k] and (math.tointeger(obj[k]) or obj[k])
      end
      st.header = obj
    elseif obj.type == "unopened" then
      st.unopened[#st.unopened + 1] = obj
    elseif obj.type == "baseline" then
      st.baseline[obj.kernel] = obj
    elseif obj.type == "run" then
      st.runs[#st.runs + 1] = obj
      for _, c in ipairs(obj.cells) do
        st.cells[c.key] = st.cells[c.key] or {}
        c.mbps = obj.mbps
        st.cells[c.key][obj.kernel] = c
      end
    elseif obj.type == "done" then
      st.done = true
    end
  end
  return st
end

-------------------------------------------------------------------------------
-- Progress on stderr (only when it is a terminal)
-------------------------------------------------------------------------------

local function stderr_is_tty()
  local sys = lazy("pmcsh._sys")
  if sys and sys.isatty then return sys.isatty("stderr") end
  return os.execute("test -t 2") == true
end

local function clock()
  local sys = lazy("pmcsh._sys")
  if sys and sys.now then return sys.now end
  return os.time
end

local function progress(enabled)
  if not enabled then return function() end end
  local now = clock()
  local t0 = now()
  return function(done, total, what)
    if done == nil then io.stderr:write("\r\27[K"); io.stderr:flush(); return end
    local el = now() - t0
    local left = done > 0 and el / done * (total - done) or nil
    io.stderr:write(string.format("\r\27[Ksurvey: %d/%d runs, %.0fs elapsed%s%s",
      done, total, el, left and string.format(", ~%.0fs left", left) or "",
      what and ("  " .. what) or ""))
    io.stderr:flush()
  end
end

-------------------------------------------------------------------------------
-- Running
-------------------------------------------------------------------------------

local function default_opts(o)
  local t = {}
  for k, v in pairs(o) do t[k] = v end
  t.kernels = t.kernels or M.DEFAULT_KERNELS
  t.reps = t.reps or 10
  t.threads = t.threads or 1
  t.pages = t.pages or "4k"
  t.baseline = t.baseline ~= false
  return t
end

-- Cells of one run: per event, the per-iteration value (total / iterations,
-- the seed's number) and statistics over the per-repetition values.
function M.cells(res, labels, keys)
  local reps = #(res.per_rep or {})
  local iters = res.iterations
  local per_rep_iters = reps > 0 and iters / reps or iters
  local cells = {}
  for i, label in ipairs(labels) do
    local tot = res.counts and (res.counts[label] or res.counts[i])
    local per = {}
    local mux = tot and tot.multiplexed or false
    for r = 1, reps do
      local e = res.per_rep[r][label] or res.per_rep[r][i]
      per[r] = e.value / per_rep_iters
      if e.multiplexed then mux = true end
    end
    local st = metrics.stats(per)
    cells[i] = {
      key = keys[i], event = label,
      value = tot and metrics.per_iteration(tot.value, iters),
      count = tot and tot.value,
      median = st.median, min = st.min, max = st.max, spread = st.spread,
      per_rep = per, multiplexed = mux, unit = tot and tot.unit,
      enabled = tot and tot.enabled, running = tot and tot.running,
    }
  end
  return cells
end

-- Runs (or resumes) a survey.  Options: events (list), pattern, umasks,
-- split, pairs (list of lists or a pair-list string), kernels, n, reps,
-- threads, pages, fresh (first touch inside the first timed repetition:
-- new arrays per run, no warm-up), baseline (default true), out (path),
-- resume (path: options come from its header), progress (nil = auto),
-- quiet (no warning about a small n), group (an events/ group: its
-- events, its metrics in the report), chase ("ORDER:SIZE[:STRIDE]" or a
-- table: adds the chase kernel), sample_ms (per chase sample),
-- pmc/stream (modules, for tests).
-- Returns the state table (see load) or nil, message, errno.
function M.run(o)
  o = o or {}
  local pmc = o.pmc or assert(lazy("pmcsh.pmc"))
  local stream = o.stream or require("pmcsh.stream")
  local st, f, hdr, size_note
  if o.resume then
    local err
    st, err = M.load(o.resume)
    if not st then return nil, err end
    hdr = st.header
    if st.done then
      if not o.quiet then io.stderr:write(string.format("pmcsh survey: %s is complete: nothing to resume\n", o.resume)) end
      return st
    end
    f, err = results.append(o.resume)
    if not f then return nil, err end
    o.written = true
  else
    local opt = default_opts(o)
    -- events: explicit list, pattern, umasks, or the machine's default
    local events = opt.events
    if opt.pattern then
      events = events and {table.unpack(events)} or {}
      local list = pmc.list(opt.pattern)
      for _, e in ipairs(list) do
        if e.opens ~= false then events[#events + 1] = e.name end
      end
      if #events == 0 then usage(string.format("no event matches %q (see pmcsh list)", opt.pattern)) end
    end
    if opt.events and pmc.info then
      for _, e in ipairs(opt.events) do
        local info, msg, errno = pmc.info(e)
        if not info and (errno == 2 or (msg or ""):match("[Uu]nknown")) then
          usage(msg or string.format("unknown event %q", e))
        end
      end
    end
    -- a group file: its events first, then any given with -e
    local grp, gpath
    if opt.group then
      grp, gpath = M.load_group(opt.group)
      local evs = {}
      for _, e in ipairs(grp.events) do evs[#evs + 1] = e end
      for _, e in ipairs(events or {}) do evs[#evs + 1] = e end
      events = evs
    end
    if not events and not opt.pairs then events = M.default_events(pmc) end
    if opt.umasks then
      local out = {}
      for _, e in ipairs(events or {}) do
        local info = pmc.info and pmc.info(e)
        local um = {}
        for _, a in ipairs(info and info.umasks or {}) do um[#um + 1] = e .. ":" .. (a.name or a) end
        if #um == 0 then out[#out + 1] = e else for _, x in ipairs(um) do out[#out + 1] = x end end
      end
      events = out
    end
    local prs, psrc
    if opt.pairs then
      local err
      prs, err = M.parse_pairs(opt.pairs)
      if not prs then usage("bad pair list: " .. err) end
      psrc = err
    end
    -- --chase alone adds the chase to the kernels
    local kernels = {table.unpack(opt.kernels)}
    local has_chase = false
    for _, k in ipairs(kernels) do if k == "chase" then has_chase = true end end
    if opt.chase and not has_chase then kernels[#kernels + 1] = "chase"; has_chase = true end
    opt.kernels = kernels
    local chase_spec
    if has_chase then
      local err
      chase_spec, err = M.parse_chase(opt.chase)
      if not chase_spec then usage(err) end
    end
    for _, k in ipairs(opt.kernels) do
      local found = k == "chase"
      for _, d in ipairs(stream.kernels()) do if d.name == k then found = true end end
      if not found then
        local names = {}
        for _, d in ipairs(stream.kernels()) do names[#names + 1] = d.name end
        names[#names + 1] = "chase"
        usage(string.format("unknown kernel %q (kernels: %s)", k, table.concat(names, ", ")))
      end
    end
    -- an events/ file written for another PMU: say so (checked after packing)
    local files = {}
    if grp then
      local set = {}
      for _, e in ipairs(grp.events) do set[e] = true end
      files[#files + 1] = {path = gpath, data = grp, owns = function(u) return set[u.keys[1]] or
        set[(u.keys[1]:gsub(":[uk]$", ""):gsub("/[uk]$", "/"))] end, count = #grp.events}
    end
    if psrc then
      local n, seen = 0, {}
      for _, p in ipairs(prs) do
        for _, e in ipairs(p) do if not seen[e] then seen[e] = true; n = n + 1 end end
      end
      files[#files + 1] = {path = psrc.path, data = psrc, owns = function(u) return u.kind == "pair" end, count = n}
    end
    if math.type(opt.reps) ~= "integer" or opt.reps < 1 or opt.reps > M.MAX_REPS then
      usage(string.format("reps must be an integer from 1 to %d", M.MAX_REPS))
    end
    if opt.n ~= nil and (math.type(opt.n) ~= "integer" or opt.n < 1) then
      usage(string.format("n must be a positive integer (elements per array), not %s", tostring(opt.n)))
    end
    local units, rows = M.plan{events = events, split = opt.split, pairs = prs}
    if not opt.n and stream.machine then
      local ok, m = pcall(stream.machine)
      if ok and m then opt.n, size_note = M.default_n(m.default_n, mem_available()) end
    end
    hdr = {
      type = "header", format = M.FORMAT, kernels = opt.kernels, n = opt.n, reps = opt.reps,
      threads = opt.threads, pages = opt.pages, fresh = opt.fresh or false,
      split = opt.split or false, baseline = opt.baseline,
      units = units, rows = rows, started = os.time(), emulated = os.getenv("PMCSH_EMULATED"),
      group = opt.group and (sys_realpath(gpath) or gpath), chase = chase_spec, sample_ms = has_chase and (opt.sample_ms or 20) or nil,
    }
    hdr.files = files
    st = {header = hdr, baseline = {}, cells = {}, unopened = {}, runs = {}, done = false}
    if opt.out then
      local err
      f, err = results.create(opt.out)
      if not f then return nil, err end
      o.written = true
    end
  end

  local function emit(obj)
    if not f then return true end
    return f:write(obj)
  end

  -- pack (again, on resume: the environment decides)
  local groups, unopened = M.pack(hdr.units, o.try or M.pmc_try(pmc), o.max_events,
    o.privilege or pmc.privilege_filter)
  -- a group or pair file for another PMU: nothing of it opened is an
  -- error saying so; some of it opened, a note first in the unopened list
  local files = hdr.files or {}
  hdr.files = nil
  for _, file in ipairs(files) do
    local why = M.pmu_check(file.data, file.path, pmc)
    if why then
      local opened = false
      for _, g in ipairs(groups) do
        for _, key in ipairs(g.keys) do
          for _, u in ipairs(hdr.units) do
            for _, k in ipairs(u.keys) do if k == key and file.owns(u) then opened = true end end
          end
        end
      end
      if not opened then
        if f then f:close() end
        return nil, string.format("%s: none of its %d events can be counted here (pmc.info(NAME, " ..
          "{pmu = %q}) encodes them, to plan; run it where the kernel exposes that PMU)",
          why, file.count, file.data.pmu), 95
      end
      -- the file's own unknown events get the hint too
      for _, u in ipairs(unopened) do
        for _, unit in ipairs(hdr.units) do
          for _, k in ipairs(unit.keys) do
            if k == u.event and file.owns(unit) and (u.reason or ""):match("unknown event") then
              u.reason = u.reason .. string.format(" [the file is for the %s PMU]", file.data.pmu)
            end
          end
        end
      end
      table.insert(unopened, 1, {event = file.path, reason = why:sub(#file.path + 2)})
    end
  end
  -- what does not open now: every reason in the file, on resume the new ones
  local known = {}
  for _, u in ipairs(st.unopened) do known[u.event] = true end
  local wok, werr = true, nil
  if not o.resume then wok, werr = emit(hdr) end
  for _, u in ipairs(unopened) do
    if wok and not known[u.event] then
      u.type = "unopened"
      wok, werr = emit(u)
      st.unopened[#st.unopened + 1] = u
    end
  end
  if not wok then
    f:close()
    return nil, werr
  end

  -- the work list, minus what a resumed file already holds
  -- kernel by kernel, the uncounted run next to the counted ones, so a
  -- drift of the machine does not pass for perturbation
  local todo = {}
  for _, k in ipairs(hdr.kernels) do
    if hdr.baseline and not st.baseline[k] then todo[#todo + 1] = {kernel = k} end
    for gi, g in ipairs(groups) do
      local finished = true
      for _, key in ipairs(g.keys) do
        if not (st.cells[key] and st.cells[key][k]) then finished = false end
      end
      if not finished then todo[#todo + 1] = {kernel = k, group = gi} end
    end
  end

  local streams = false
  for _, k in ipairs(hdr.kernels or {}) do streams = streams or k ~= "chase" end
  if streams and hdr.n and not o.quiet then io.stderr:write(size_line(hdr.n, size_note)) end
  local tell = progress(o.progress == nil and stderr_is_tty() or o.progress)
  local shared, made = nil, 0
  -- the stream module warns about a small n once, not once per fresh run
  local function get_stream()
    if shared then return shared end
    local args = {n = hdr.n, threads = hdr.threads, pages = hdr.pages, quiet = (made > 0 or o.quiet) or nil}
    if hdr.fresh then args.touch = false end
    local s, err, errno = stream.new(args)
    if not s then return nil, err, errno end
    made = made + 1
    if not hdr.fresh then shared = s end
    return s
  end
  -- the chase's chain: built (and touched) once, chased by every chase run
  local chain
  local function get_chain()
    if chain then return chain end
    local chase = o.chase_module or require("pmcsh.chase")
    local c = hdr.chase
    local ch, err, errno = chase.chain{size = c.size, order = c.order, stride = c.stride, pages = hdr.pages}
    if not ch then return nil, err, errno end
    chain = ch
    return ch
  end
  -- one chase run: reps samples of sample_ms each, the group (if any)
  -- around each sample only; one iteration is one dependent load
  local function run_chase(g)
    local ch, err, errno = get_chain()
    if not ch then return nil, err, errno end
    local chase = o.chase_module or require("pmcsh.chase")
    local r
    r, err, errno = chase.latency{chain = ch, samples = hdr.reps, sample_ms = hdr.sample_ms, group = g}
    if not r then return nil, err, errno end
    local times = {}
    for i, ns in ipairs(r.samples) do times[i] = ns * r.loads * 1e-9 end
    return {times = times, min = r.ns * r.loads * 1e-9, median = r.median_ns * r.loads * 1e-9,
      iterations = r.loads * #r.samples, loads = r.loads, ns = r.ns, median_ns = r.median_ns,
      samples = r.samples, counts = r.counts, per_rep = r.per_rep}
  end
  local warned = {}
  local function stop(...)
    if f then
      local ok, err = f:close()
      if not ok and select(1, ...) ~= nil then return nil, err end
    end
    if chain then chain:close() end
    tell()
    return ...
  end

  local total = #todo
  for i, job in ipairs(todo) do
    tell(i - 1, total, job.kernel .. (job.group and (" group " .. job.group) or " no counters"))
    local s, serr, serrno
    if job.kernel ~= "chase" then
      s, serr, serrno = get_stream()
      if not s then return stop(nil, serr, serrno) end
    end
    local g, res, err, errno
    if job.group then
      g, err, errno = pmc.group(groups[job.group].labels)
      if not g then return stop(nil, err, errno) end
    end
    -- an interrupt (Ctrl-C) or a failed validation raises inside run
    local ok, r1, r2, r3
    if s then
      ok, r1, r2, r3 = pcall(s.run, s, job.kernel, {reps = hdr.reps, group = g, warmup = not hdr.fresh,
                                                   quiet = true})
    else
      ok, r1, r2, r3 = pcall(run_chase, g)
    end
    if ok then res, err, errno = r1, r2, r3
    else res, err, errno = nil, tostring(r1), tostring(r1):match("interrupted") and 4 or nil end
    if g then g:close() end
    if s and hdr.fresh and s.close then s:close() end
    if not res then return stop(nil, err, errno) end
    for _, w in ipairs(res.warnings or {}) do
      local gist = w:gsub("[%d.]+", "#")
      if not warned[gist] then warned[gist] = true; tell(); io.stderr:write("pmcsh survey: warning: ", w, "\n") end
    end
    local rec = {
      kernel = job.kernel, mbps = res.mbps, mbps_wa = res.mbps_wa,
      times = res.times, min = res.min, median = res.median,
      bytes_per_iter = res.bytes_per_iter, iterations = res.iterations,
      tsc_hz = res.tsc_hz, warnings = res.warnings,
      ns = res.ns, median_ns = res.median_ns, samples = res.samples, loads = res.loads,
    }
    if job.group then
      rec.type = "run"; rec.group = job.group
      rec.cells = M.cells(res, groups[job.group].labels, groups[job.group].keys)
      st.runs[#st.runs + 1] = rec
      for _, c in ipairs(rec.cells) do
        st.cells[c.key] = st.cells[c.key] or {}
        c.mbps = rec.mbps
        st.cells[c.key][job.kernel] = c
      end
    else
      rec.type = "baseline"
      st.baseline[job.kernel] = rec
    end
    local ok, werr2 = emit(rec)
    if not ok then return stop(nil, werr2) end
  end
  if chain then chain:close() end
  chain = nil
  tell()
  local ok, werr2 = emit({type = "done", finished = os.time()})
  if not ok then return stop(nil, werr2) end
  st.done = true
  if shared and shared.close then shared:close() end
  return stop(st)
end

-------------------------------------------------------------------------------
-- Reports
-------------------------------------------------------------------------------

local function cell_stat(c, stat)
  if not c then return nil end
  if stat == nil or stat == "mean" or stat == "value" then return c.value end
  return c[stat]
end

local function spread_text(c)
  if not c then return "" end
  local s
  if c.spread == nil then s = c.max and c.max ~= c.min and "±inf" or ""
  elseif c.spread == 0 then s = "±0%"
  elseif c.spread < 0.1 then s = string.format("±%.1f%%", c.spread * 100)
  elseif c.spread < 10 then s = string.format("±%.0f%%", c.spread * 100)
  else s = ">±999%" end
  if c.multiplexed then s = s .. "*" end
  return s
end

local function pad_right(s, w)
  local len = utf8.len(s) or #s
  return s .. string.rep(" ", math.max(0, w - len))
end

local function median_of(list)
  local st = metrics.stats(list)
  return st.median
end

-- Counted bandwidth per kernel: median over the runs of that kernel.
local function counted_mbps(st)
  local per = {}
  for _, r in ipairs(st.runs) do
    per[r.kernel] = per[r.kernel] or {}
    table.insert(per[r.kernel], r.mbps)
  end
  local out = {}
  for k, l in pairs(per) do out[k] = median_of(l) end
  return out
end
M.counted_mbps = counted_mbps

-- Time per iteration of a run record, ns: the chase's best ns per load, a
-- stream kernel's best repetition over its n iterations.
local function ns_of(rec)
  if not rec then return nil end
  if rec.ns then return rec.ns end
  if rec.min and rec.iterations and rec.times and #rec.times > 0 then
    return rec.min / (rec.iterations / #rec.times) * 1e9
  end
end

-- Counted ns per iteration per kernel: median over the runs of that kernel.
local function counted_ns(st)
  local per = {}
  for _, r in ipairs(st.runs) do
    local v = ns_of(r)
    if v then per[r.kernel] = per[r.kernel] or {}; table.insert(per[r.kernel], v) end
  end
  local out = {}
  for k, l in pairs(per) do out[k] = median_of(l) end
  return out
end

-- The reading a group's metrics see for one kernel: each counted event's
-- value per iteration (a :u and a :k row of the same run also summed
-- under the plain name), with ctx per iteration too: iterations = 1,
-- bytes = bytes per iteration (STREAM convention; none for the chase),
-- seconds = the counted runs' median time per iteration.  Ratios of
-- events come out as ratios of counts; per-iteration metrics as such.
local function metric_reading(st, kernel)
  local reading, sums = {}, {}
  for key, cells in pairs(st.cells) do
    local c = cells[kernel]
    if c and c.value then
      reading[c.event] = {value = c.value}
      local base, mod = c.event:match("^(.*):([uk])$")
      if not base then base, mod = c.event:match("^(.*/)([uk])$") end
      if base and key == c.event then
        sums[base] = sums[base] or {}
        sums[base][mod] = c.value
      end
    end
  end
  for base, t in pairs(sums) do
    if t.u and t.k and not reading[base] then reading[base] = {value = t.u + t.k} end
  end
  local secs, bytes = {}, nil
  for _, r in ipairs(st.runs) do
    if r.kernel == kernel and r.times and r.iterations and r.iterations > 0 then
      local sum = 0
      for _, t in ipairs(r.times) do sum = sum + t end
      secs[#secs + 1] = sum / r.iterations
      bytes = bytes or r.bytes_per_iter
    end
  end
  return reading, {iterations = 1, bytes = bytes, seconds = median_of(secs)}
end

-- The metrics of the survey's group (header.group, an events/ file), each
-- evaluated per kernel after the runs.  Returns {path=, rows={{name=,
-- unit=, desc=, values={kernel=v}, reasons={kernel=why}}}}, or nil and a
-- message (no group, or its file no longer loads).
function M.group_metrics(st)
  local name = st.header and st.header.group
  if not name then return nil, "the survey has no group" end
  local ok, t, path = pcall(M.load_group, name)
  if not ok then return nil, tostring(t) end
  local out = {path = path, rows = {}}
  for _, m in ipairs(t.metrics or {}) do
    local row = {name = m.name, unit = m.unit, desc = m.desc, values = {}, reasons = {}}
    for _, k in ipairs(st.header.kernels) do
      local reading, ctx = metric_reading(st, k)
      local v, why = metrics.eval(m, reading, ctx)
      -- a formula over c.bytes on the chase, which moves no STREAM bytes
      local field = why and why:match("field '(%w+)'")
      if field and ctx[field] == nil then
        why = string.format("needs %s per iteration, which %s does not have", field,
          k == "chase" and "a pointer chase" or "this run")
      end
      row.values[k], row.reasons[k] = v, why
    end
    out.rows[#out.rows + 1] = row
  end
  return out
end

-- Renders the classic table: one row per event, one column per kernel, the
-- value (events per loop iteration) and the spread over repetitions.
-- o.stat picks the statistic shown: mean (the seed's count/(n*reps),
-- default), median, min or max.
function M.report(st, o)
  o = o or {}
  local hdr = st.header
  local kernels = hdr.kernels
  -- a row says its unit when the event has one (task-clock: ns per iteration)
  local function label(r)
    for _, c in pairs(st.cells[r.key] or {}) do
      if c.unit then return r.key .. " (" .. c.unit .. ")" end
    end
    return r.key
  end
  -- one notation per column: scientific when a value needs it, for all
  local sci = {}
  for _, k in ipairs(kernels) do
    for _, r in ipairs(hdr.rows) do
      local v = st.cells[r.key] and cell_stat(st.cells[r.key][k], o.stat)
      if v and v ~= 0 and (math.abs(v) < 1e-3 or math.abs(v) >= 1e7) then sci[k] = true end
    end
  end
  local function num(v, k)
    if v == nil then return string.format("%10s", "n/a") end
    if sci[k] then return v == 0 and string.format("%10s", "0") or string.format("%10.3e", v) end
    return string.format("%10.4f", v)
  end
  local w = 26
  for _, r in ipairs(hdr.rows) do w = math.max(w, #label(r) + 1) end
  for _, k in ipairs(kernels) do if k == "chase" then w = math.max(w, 31) end end
  local out = {}
  local line = {pad_right("Events per loop iteration", w)}
  for _, k in ipairs(kernels) do line[#line + 1] = string.format("%11s%-7s", title(k), "") end
  out[#out + 1] = (table.concat(line):gsub("%s+$", ""))
  local shown = 0
  for _, r in ipairs(hdr.rows) do
    local cells = st.cells[r.key]
    if cells then
      shown = shown + 1
      line = {pad_right(label(r), w)}
      for _, k in ipairs(kernels) do
        local c = cells[k]
        line[#line + 1] = " " .. num(cell_stat(c, o.stat), k) .. " " .. pad_right(spread_text(c), 6)
      end
      out[#out + 1] = (table.concat(line):gsub("%s+$", ""))
    end
  end
  -- bandwidth beside the counted runs', so the perturbation is visible
  local cm = counted_mbps(st)
  local function bw_line(name, get, fmt)
    local l = {pad_right(name, w)}
    local any = false
    for _, k in ipairs(kernels) do
      local v = get(k)
      if v then any = true end
      l[#l + 1] = " " .. (v and string.format(fmt or "%10.1f", v) or string.format("%10s", "n/a")) .. string.rep(" ", 7)
    end
    if any then out[#out + 1] = (table.concat(l):gsub("%s+$", "")) end
  end
  out[#out + 1] = ""
  bw_line("MB/s, no counters", function(k) return st.baseline[k] and st.baseline[k].mbps end)
  bw_line("MB/s, counted (median run)", function(k) return cm[k] end)
  local chased = false
  for _, k in ipairs(kernels) do if k == "chase" then chased = true end end
  local cn = chased and counted_ns(st) or {}
  if chased then
    bw_line("ns per iteration, no counters", function(k) return ns_of(st.baseline[k]) end, "%10.2f")
    bw_line("ns per iteration, counted", function(k) return cn[k] end, "%10.2f")
  end
  -- as a rate either way: negative when counting slows the kernel down
  bw_line("counted/uncounted - 1, %", function(k)
    local b = st.baseline[k] and st.baseline[k].mbps
    if b and cm[k] and b > 0 then return (cm[k] / b - 1) * 100 end
    local bn = ns_of(st.baseline[k])
    if k == "chase" and bn and cn[k] and cn[k] > 0 then return (bn / cn[k] - 1) * 100 end
  end)
  local gm = hdr.group and M.group_metrics(st)
  if gm and #gm.rows > 0 then
    out[#out + 1] = ""
    local mw = w
    for _, r in ipairs(gm.rows) do mw = math.max(mw, #r.name + (r.unit and #r.unit + 3 or 0) + 1) end
    local l = {pad_right("Metrics (" .. (gm.path:match("[^/]*/[^/]*$") or gm.path) .. ")", mw)}
    for _, k in ipairs(kernels) do l[#l + 1] = string.format("%11s%-7s", title(k), "") end
    out[#out + 1] = (table.concat(l):gsub("%s+$", ""))
    -- n/a cells: one line per kernel and reason, naming the metrics
    local why = {}
    for _, r in ipairs(gm.rows) do
      l = {pad_right(r.name .. (r.unit and (" (" .. r.unit .. ")") or ""), mw)}
      for _, k in ipairs(kernels) do
        l[#l + 1] = " " .. metrics.fmt(r.values[k], 10) .. string.rep(" ", 7)
        local reason = r.values[k] == nil and r.reasons[k]
        if reason then
          reason = reason:gsub("^metric " .. r.name:gsub("%p", "%%%0") .. " ", "")
          local tag = k .. "\0" .. reason
          if not why[tag] then why[tag] = {k = k, reason = reason, names = {}}; why[#why + 1] = why[tag] end
          table.insert(why[tag].names, r.name)
        end
      end
      out[#out + 1] = (table.concat(l):gsub("%s+$", ""))
    end
    for _, x in ipairs(why) do
      out[#out + 1] = string.format("  n/a for %s: %s: %s", x.k, table.concat(x.names, ", "), x.reason)
    end
  end
  out[#out + 1] = ""
  out[#out + 1] = string.format("n = %s, %d timed repetitions per run%s, %d thread%s, %s pages%s; " ..
    "value = count / (n * reps)%s; ± = (max - min) / mean over repetitions; * = multiplexed (scaled)",
    tostring(hdr.n or "default"), hdr.reps, hdr.fresh and " (fresh arrays, no warm-up)" or "",
    hdr.threads or 1, (hdr.threads or 1) == 1 and "" or "s", tostring(hdr.pages),
    hdr.split and ", :u user / :k OS" or "",
    (o.stat and o.stat ~= "mean") and (" [showing " .. o.stat .. "]") or "")
  if chased and hdr.chase then
    out[#out + 1] = string.format("chase: %s, %s pages, %d samples of ~%d ms per run; " ..
      "one iteration = one dependent load: value = count / loads", chase_text(hdr.chase),
      tostring(hdr.pages), hdr.reps, hdr.sample_ms or 20)
  end
  if hdr.emulated then
    out[#out + 1] = "measured on an emulated machine (" .. hdr.emulated .. "): counts of instructions are exact, " ..
      "times and bandwidth mean nothing"
  end
  -- :u and :k rows with identical nonzero counts: the event ignores the
  -- privilege filter (the kernel's software clocks do), say so
  local notes = {}
  for _, u in ipairs(hdr.units or {}) do
    if u.kind == "split" and st.cells[u.keys[1]] and st.cells[u.keys[2]] then
      local same, any = true, false
      for _, k in ipairs(kernels) do
        local a, b = st.cells[u.keys[1]][k], st.cells[u.keys[2]][k]
        if a and b then
          if a.count ~= b.count then same = false end
          if (a.count or 0) > 0 then any = true end
        end
      end
      if same and any then
        notes[#notes + 1] = {event = u.labels[1]:gsub(":u$", ""):gsub("/u$", "/"), fallback = true,
          reason = "the :u and :k rows are equal: this event ignores the user/OS filter (each counts both)"}
      end
    end
  end
  local listed = {table.unpack(st.unopened)}
  for _, n in ipairs(notes) do listed[#listed + 1] = n end
  for _, part in ipairs({{false, "Not counted here:"}, {true, "Counted user+OS together:"}}) do
    local lines = {}
    for _, u in ipairs(listed) do
      if (u.fallback or false) == part[1] then
        lines[#lines + 1] = string.format("  %-30s %s", u.event, u.reason or "")
      end
    end
    if #lines > 0 then
      out[#out + 1] = ""
      out[#out + 1] = part[2]
      for _, l in ipairs(lines) do out[#out + 1] = l end
    end
  end
  if not st.done then
    out[#out + 1] = ""
    out[#out + 1] = "(incomplete survey: resume it with --resume FILE)"
  end
  if shown == 0 then
    out[#out + 1] = "(no event counted)"
  end
  return table.concat(out, "\n") .. "\n"
end

local function csv_field(s)
  s = tostring(s)
  if s:find('[,"\n]') then return '"' .. s:gsub('"', '""') .. '"' end
  return s
end

local function num(v)
  if v == nil then return "" end
  return string.format("%.10g", v)
end

-- CSV: header event,copy,scale,... and one row per counted event.
function M.csv(st, o)
  o = o or {}
  local out = {"event," .. table.concat(st.header.kernels, ",")}
  for _, r in ipairs(st.header.rows) do
    local cells = st.cells[r.key]
    if cells then
      local l = {csv_field(r.key)}
      for _, k in ipairs(st.header.kernels) do l[#l + 1] = num(cell_stat(cells[k], o.stat)) end
      out[#out + 1] = table.concat(l, ",")
    end
  end
  return table.concat(out, "\n") .. "\n"
end

-- JSON lines: one object per counted event, {"event":..., "copy":..., ...}.
function M.json(st, o)
  o = o or {}
  local out = {}
  for _, r in ipairs(st.header.rows) do
    local cells = st.cells[r.key]
    if cells then
      local obj = {event = r.key}
      for _, k in ipairs(st.header.kernels) do obj[k] = cell_stat(cells[k], o.stat) end
      out[#out + 1] = encode(obj)
    end
  end
  -- a group's metrics: {"metric":..., "unit":..., "copy":..., ...}
  local gm = st.header.group and M.group_metrics(st)
  for _, r in ipairs(gm and gm.rows or {}) do
    local obj = {metric = r.name, unit = r.unit}
    for _, k in ipairs(st.header.kernels) do obj[k] = r.values[k] end
    out[#out + 1] = encode(obj)
  end
  return table.concat(out, "\n") .. (#out > 0 and "\n" or "")
end

doc(M, "survey", [[
survey: the every-event survey of the STREAM loops (events per loop iteration).
  survey.run{events=, pattern=, split=, pairs=, group=, kernels=, chase=, n=, reps=, fresh=, out=, resume=}
      -> state (rows, cells per kernel, baseline bandwidth, unopened events)
      kernels: stream kernels and "chase" (chase="random:256M": per dependent load)
      group: an events/ file (software, memory-skl, ...); survey.group_metrics(state)
      evaluates its metrics per kernel
  survey.load(path)             a JSON-lines file written by survey.run{out=...}
  survey.report(state, {stat=}) the table; survey.csv(state), survey.json(state)
  survey.parse_pairs("A,B C,D") / survey.pack(units, try) / survey.plan{...}]])

return M
