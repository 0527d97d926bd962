-- Running a survey: each workload once with no counters (the baseline) and
-- once per packed group, every finished run appended to the results file
-- (pmcsh.results) and flushed, so an interrupted survey keeps its rows and
-- resumes where it stopped.
--
-- The file, one object per line:
--   {"type":"header", "format":"pmcsh-survey/1", options..., "units":[...], "rows":[...]}
--   {"type":"unopened", "event":..., "reason":..., "errno":...}
--   {"type":"baseline", "kernel":..., "mbps":..., "times":[...]}
--   {"type":"run", "kernel":..., "group":i, "mbps":..., "cells":[{key, event, value, ...}]}
--   {"type":"done"}
local sys = require("pmcsh._sys")
local EINTR = sys.EINTR
local metrics = require("pmcsh.metrics")
local results = require("pmcsh.results")
local plan = require("pmcsh.survey.plan")
local progress = require("pmcsh.survey.progress")
local workloads = require("pmcsh.survey.workloads")

local M = {}

-- A run record into the state: a baseline, or a run's cells by row and kernel.
local function add(st, rec)
  if rec.type == "baseline" then st.baseline[rec.kernel] = rec; return end
  st.runs[#st.runs + 1] = rec
  for _, c in ipairs(rec.cells) do
    st.cells[c.key] = st.cells[c.key] or {}
    c.mbps = rec.mbps
    st.cells[c.key][rec.kernel] = c
  end
end

-- Reads a survey file (every line checked by pmcsh.results; a torn line,
-- from a kill mid-write, is skipped).  Returns state {header,
-- baseline[kernel], cells[key][kernel], unopened, runs, done} or nil, message.
function M.load(path)
  local records, torn, valid_bytes = results.read(path)
  if not records then return nil, torn end
  local st = {baseline = {}, cells = {}, unopened = {}, runs = {}, done = false, torn = torn,
    valid_bytes = valid_bytes}
  for _, obj in ipairs(records) do
    if obj.type == "header" then
      for _, k in ipairs({"n", "reps", "threads", "started"}) do
        obj[k] = obj[k] and (math.tointeger(obj[k]) or obj[k])
      end
      local ok, why = plan.check_header(obj)
      if not ok then return nil, string.format("%s (header): %s", path, why) end
      st.header = obj
    elseif obj.type == "unopened" then st.unopened[#st.unopened + 1] = obj
    elseif obj.type == "done" then st.done = true
    else add(st, obj) end
  end
  return st
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

-- A new survey, or the one in o.resume: its state, the results file to
-- append to (if any), the events/ files to check and the note on n.
-- Returns st, f, files, note; or nil, message.
local function open(o, pmc, stream)
  if o.resume then
    local st, err = M.load(o.resume)
    if not st or st.done then return st, err end
    local ok, why = plan.check_resume(st.header, stream)
    if not ok then return nil, string.format("%s (header): %s", o.resume, why) end
    local f
    f, err = results.append(o.resume, st.valid_bytes)
    if not f then return nil, err end
    o.written = #st.runs > 0 or next(st.baseline) ~= nil
    return st, f, {}
  end
  local hdr, files, note = plan.header(o, pmc, stream)
  local st = {header = hdr, baseline = {}, cells = {}, unopened = {}, runs = {}, done = false}
  if not o.out then return st, nil, files, note end
  local f, err = results.create(o.out)
  if not f then return nil, err end
  return st, f, files, note
end

-- The work list, minus what a resumed file already holds: kernel by
-- kernel, the uncounted run next to the counted ones, so a drift of the
-- machine does not pass for perturbation.
local function work_list(st, groups)
  local hdr, todo = st.header, {}
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
  return todo
end

-- One run of workload w, with the group g ({labels=, keys=}) or none: the
-- record for the file, or nil, message, errno (an interrupt: nil,
-- "interrupted", EINTR from the engine).  A failed validation raises
-- inside the engine, and so may Ctrl-C outside it (the REPL's hook): the
-- same tiers come out.
local function measure(w, g, reps, pmc)
  local group, err, errno
  if g then
    group, err, errno = pmc.group(g.labels)
    if not group then return nil, err, errno end
  end
  local ok, res, e2, e3 = pcall(w.run, group, reps)
  if group then group:close() end
  -- Ctrl-C (the REPL's hook raises it anywhere) is known by the flag, and
  -- said without the location the hook's error carries
  if not ok and sys.interrupted() then return nil, "interrupted", EINTR end
  if not ok then return nil, tostring(res) end
  if not res then return nil, e2, e3 end
  local rec = {type = g and "run" or "baseline", kernel = w.name, times = res.times,
    iterations = res.iterations, warnings = res.warnings}
  for k, v in pairs(res.record or {}) do rec[k] = v end
  if g then rec.cells = M.cells(res, g.labels, g.keys) end
  return rec
end

-- Writes the header (a new survey) and what does not open now: every
-- reason in a new file, on resume the new ones.
local function begin(st, f, unopened, resumed)
  local known = {}
  for _, u in ipairs(st.unopened) do known[u.event] = true end
  local ok, err = true, nil
  if f and not resumed then ok, err = f:write(st.header) end
  for _, u in ipairs(unopened) do
    if ok and not known[u.event] then
      u.type = "unopened"
      if f then ok, err = f:write(u) end
      st.unopened[#st.unopened + 1] = u
    end
  end
  return ok, err
end

-- Runs (or resumes) a survey; see survey.run for the options.  Returns the
-- state table (see load) or nil, message, errno.
function M.run(o)
  o = o or {}
  local pmc, stream = o.pmc or require("pmcsh.pmc"), o.stream or require("pmcsh.stream")
  local st, f, files, note = open(o, pmc, stream)
  if not st then return nil, f end
  local hdr = st.header
  if st.done then
    if not o.quiet then io.stderr:write(string.format("pmcsh survey: %s is complete: nothing to resume\n", o.resume)) end
    return st
  end
  -- pack (again, on resume: the environment decides)
  local groups, unopened = plan.pack(hdr.units, o.try or plan.pmc_try(pmc), o.max_events,
    o.privilege or pmc.privilege_filter)
  local ws, free = workloads.of(hdr, {stream = stream, chase = o.chase_module, quiet = o.quiet})
  local tell = progress.new(o.progress == nil and progress.stderr_is_tty() or o.progress)
  local function stop(...)
    local ok, err = true, nil
    if f then ok, err = f:close() end
    free(); tell()
    if not ok and select(1, ...) ~= nil then return nil, err end
    return ...
  end
  local ok, err, errno = plan.check_files(files, groups, unopened, hdr.units, pmc)
  if ok then ok, err = begin(st, f, unopened, o.resume) end
  if not ok then return stop(nil, err, errno) end
  local todo, warned = work_list(st, groups), {}
  for _, w in ipairs(ws) do
    if w.sized and hdr.n and not o.quiet then io.stderr:write(plan.size_line(hdr.n, note)); break end
  end
  for i, job in ipairs(todo) do
    tell(i - 1, #todo, job.kernel .. (job.group and (" group " .. job.group) or " no counters"))
    local rec, merr, merrno = measure(ws[job.kernel], groups[job.group], hdr.reps, pmc)
    if not rec then return stop(nil, merr, merrno) end
    for _, w in ipairs(rec.warnings or {}) do
      local gist = w:gsub("[%d.]+", "#")
      if not warned[gist] then warned[gist] = true; tell(); io.stderr:write("pmcsh survey: warning: ", w, "\n") end
    end
    rec.group = job.group
    add(st, rec)
    if f then ok, err = f:write(rec) end
    if not ok then return stop(nil, err) end
    o.written = f ~= nil
  end
  if f then ok, err = f:write({type = "done", finished = os.time()}) end
  if not ok then return stop(nil, err) end
  st.done = true
  return stop(st)
end

return M
