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

M.FORMAT = "pmcsh-survey/1"
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
    return M.parse_pairs(t.pairs)
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
-- Returns groups {{labels=, keys=}}, unopened {{event=, reason=, errno=}}.
function M.pack(units, try, max_events)
  max_events = max_events or 64
  local groups, unopened = {}, {}
  for _, u in ipairs(units) do
    local placed = false
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

-- Reads a survey file; a torn last line (a kill mid-write) is skipped.
-- Returns state {header, baseline[kernel], cells[key][kernel], unopened,
-- runs, done} or nil, message.
function M.load(path)
  local f, err = io.open(path, "r")
  if not f then return nil, string.format("cannot read survey file: %s", err) end
  local st = {baseline = {}, cells = {}, unopened = {}, runs = {}, done = false, torn = 0}
  local lineno = 0
  for line in f:lines() do
    lineno = lineno + 1
    if line:match("%S") then
      local ok, obj = pcall(cjson.decode, line)
      if not ok or type(obj) ~= "table" then
        st.torn = st.torn + 1
      elseif obj.type == "header" then
        if obj.format ~= M.FORMAT then
          f:close()
          return nil, string.format("%s: not a pmcsh survey file (format %s)", path, tostring(obj.format))
        end
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
        for _, c in ipairs(obj.cells or {}) do
          st.cells[c.key] = st.cells[c.key] or {}
          c.mbps = obj.mbps
          st.cells[c.key][obj.kernel] = c
        end
      elseif obj.type == "done" then
        st.done = true
      end
    end
  end
  f:close()
  if not st.header then
    return nil, string.format("%s: no survey header (empty, or not written by pmcsh survey)", path)
  end
  return st
end

local function open_out(path, append)
  local f, err
  if append then
    -- a torn last line stays alone on its line, so load() skips it
    local r = io.open(path, "rb")
    local needs_nl = false
    if r then
      local size = r:seek("end")
      if size > 0 then r:seek("set", size - 1); needs_nl = r:read(1) ~= "\n" end
      r:close()
    end
    f, err = io.open(path, "a")
    if f and needs_nl then f:write("\n") end
  else
    f, err = io.open(path, "w")
  end
  if not f then return nil, string.format("cannot write survey file: %s", err) end
  f:setvbuf("full")
  return f
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
      per_rep = per, multiplexed = mux,
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
-- quiet (no warning about a small n),
-- pmc/stream (modules, for tests).
-- Returns the state table (see load) or nil, message, errno.
function M.run(o)
  o = o or {}
  local pmc = o.pmc or assert(lazy("pmcsh.pmc"))
  local stream = o.stream or require("pmcsh.stream")
  local st, f, hdr
  if o.resume then
    local err
    st, err = M.load(o.resume)
    if not st then return nil, err end
    hdr = st.header
    f, err = open_out(o.resume, true)
    if not f then return nil, err end
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
    local prs
    if opt.pairs then
      local err
      prs, err = M.parse_pairs(opt.pairs)
      if not prs then usage("bad pair list: " .. err) end
    end
    for _, k in ipairs(opt.kernels) do
      local found = false
      for _, d in ipairs(stream.kernels()) do if d.name == k then found = true end end
      if not found then
        local names = {}
        for _, d in ipairs(stream.kernels()) do names[#names + 1] = d.name end
        usage(string.format("unknown kernel %q (kernels: %s)", k, table.concat(names, ", ")))
      end
    end
    if opt.reps < 1 then usage("reps must be at least 1") end
    local units, rows = M.plan{events = events, split = opt.split, pairs = prs}
    if not opt.n and stream.machine then
      local ok, m = pcall(stream.machine)
      if ok and m then opt.n = m.default_n end
    end
    hdr = {
      type = "header", format = M.FORMAT, kernels = opt.kernels, n = opt.n, reps = opt.reps,
      threads = opt.threads, pages = opt.pages, fresh = opt.fresh or false,
      split = opt.split or false, baseline = opt.baseline,
      units = units, rows = rows, started = os.time(),
    }
    st = {header = hdr, baseline = {}, cells = {}, unopened = {}, runs = {}, done = false}
    if opt.out then
      local err
      f, err = open_out(opt.out, false)
      if not f then return nil, err end
    end
  end

  local function emit(obj)
    if f then f:write(encode(obj), "\n"); f:flush() end
  end

  -- pack (again, on resume: the environment decides)
  local groups, unopened = M.pack(hdr.units, o.try or M.pmc_try(pmc), o.max_events)
  if not o.resume then
    emit(hdr)
    for _, u in ipairs(unopened) do
      u.type = "unopened"; emit(u)
      st.unopened[#st.unopened + 1] = u
    end
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
  local warned = {}

  local total = #todo
  for i, job in ipairs(todo) do
    tell(i - 1, total, job.kernel .. (job.group and (" group " .. job.group) or " no counters"))
    local s, serr, serrno = get_stream()
    if not s then if f then f:close() end; tell(); return nil, serr, serrno end
    local g, res, err, errno
    if job.group then
      g, err, errno = pmc.group(groups[job.group].labels)
      if not g then if f then f:close() end; tell(); return nil, err, errno end
    end
    -- an interrupt (Ctrl-C) or a failed validation raises inside run
    local ok, r1, r2, r3 = pcall(s.run, s, job.kernel, {reps = hdr.reps, group = g, warmup = not hdr.fresh,
                                        quiet = true})
    if ok then res, err, errno = r1, r2, r3
    else res, err, errno = nil, tostring(r1), tostring(r1):match("interrupted") and 4 or nil end
    if g then g:close() end
    if hdr.fresh and s.close then s:close() end
    if not res then if f then f:close() end; tell(); return nil, err, errno end
    for _, w in ipairs(res.warnings or {}) do
      local gist = w:gsub("[%d.]+", "#")
      if not warned[gist] then warned[gist] = true; tell(); io.stderr:write("pmcsh survey: warning: ", w, "\n") end
    end
    local rec = {
      kernel = job.kernel, mbps = res.mbps, mbps_wa = res.mbps_wa,
      times = res.times, min = res.min, median = res.median,
      bytes_per_iter = res.bytes_per_iter, iterations = res.iterations,
      tsc_hz = res.tsc_hz, warnings = res.warnings,
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
    emit(rec)
  end
  tell()
  emit({type = "done", finished = os.time()})
  st.done = true
  if shared and shared.close then shared:close() end
  if f then f:close() end
  return st
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

-- Renders the classic table: one row per event, one column per kernel, the
-- value (events per loop iteration) and the spread over repetitions.
-- o.stat picks the statistic shown: mean (the seed's count/(n*reps),
-- default), median, min or max.
function M.report(st, o)
  o = o or {}
  local hdr = st.header
  local kernels = hdr.kernels
  local w = 26
  for _, r in ipairs(hdr.rows) do w = math.max(w, #r.key + 1) end
  local out = {}
  local line = {pad_right("Events per loop iteration", w)}
  for _, k in ipairs(kernels) do line[#line + 1] = string.format("%11s%-7s", title(k), "") end
  out[#out + 1] = (table.concat(line):gsub("%s+$", ""))
  local shown = 0
  for _, r in ipairs(hdr.rows) do
    local cells = st.cells[r.key]
    if cells then
      shown = shown + 1
      line = {pad_right(r.key, w)}
      for _, k in ipairs(kernels) do
        local c = cells[k]
        line[#line + 1] = " " .. metrics.fmt(cell_stat(c, o.stat), 10) .. " " .. pad_right(spread_text(c), 6)
      end
      out[#out + 1] = (table.concat(line):gsub("%s+$", ""))
    end
  end
  -- bandwidth beside the counted runs', so the perturbation is visible
  local cm = counted_mbps(st)
  local function bw_line(name, get)
    local l = {pad_right(name, w)}
    local any = false
    for _, k in ipairs(kernels) do
      local v = get(k)
      if v then any = true end
      l[#l + 1] = " " .. (v and string.format("%10.1f", v) or string.format("%10s", "n/a")) .. string.rep(" ", 7)
    end
    if any then out[#out + 1] = (table.concat(l):gsub("%s+$", "")) end
  end
  out[#out + 1] = ""
  bw_line("MB/s, no counters", function(k) return st.baseline[k] and st.baseline[k].mbps end)
  bw_line("MB/s, counted (median run)", function(k) return cm[k] end)
  bw_line("counted/uncounted - 1, %", function(k)
    local b = st.baseline[k] and st.baseline[k].mbps
    if b and cm[k] and b > 0 then return (cm[k] / b - 1) * 100 end
  end)
  out[#out + 1] = ""
  out[#out + 1] = string.format("n = %s, %d timed repetitions per run%s, %d thread%s, %s pages%s; " ..
    "value = count / (n * reps)%s; ± = (max - min) / mean over repetitions; * = multiplexed (scaled)",
    tostring(hdr.n or "default"), hdr.reps, hdr.fresh and " (fresh arrays, no warm-up)" or "",
    hdr.threads or 1, (hdr.threads or 1) == 1 and "" or "s", tostring(hdr.pages),
    hdr.split and ", :u user / :k OS" or "",
    (o.stat and o.stat ~= "mean") and (" [showing " .. o.stat .. "]") or "")
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
  return table.concat(out, "\n") .. (#out > 0 and "\n" or "")
end

doc(M, "survey", [[
survey: the every-event survey of the STREAM loops (events per loop iteration).
  survey.run{events=, pattern=, split=, pairs=, kernels=, n=, reps=, fresh=, out=, resume=}
      -> state (rows, cells per kernel, baseline bandwidth, unopened events)
  survey.load(path)             a JSON-lines file written by survey.run{out=...}
  survey.report(state, {stat=}) the table; survey.csv(state), survey.json(state)
  survey.parse_pairs("A,B C,D") / survey.pack(units, try) / survey.plan{...}]])

return M
