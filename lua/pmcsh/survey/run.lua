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
local clock = require("pmcsh.sys")
local statistics = require("pmcsh.statistics")
local results = require("pmcsh.results")
local pmc = require("pmcsh.pmc")
local loops = require("pmcsh.loops")
local plan = require("pmcsh.survey.plan")
local progress = require("pmcsh.survey.progress")
local workloads = require("pmcsh.survey.workloads")
local engine_stream = require("pmcsh.survey.engine_stream")
local cell = require("pmcsh.survey.cell")

local M = {}

-- A run record into the state: a baseline, or a run's cells by row and
-- kernel, each cell keeping its run (c.run: its index in st.runs; the
-- state's, not the file's: added after the record is written).
local function add(st, rec)
  if rec.type == "baseline" then
    if rec.second then st.baseline2[rec.kernel] = rec else st.baseline[rec.kernel] = rec end
    return
  end
  st.runs[#st.runs + 1] = rec
  for _, c in ipairs(rec.cells) do
    st.cells[c.key] = st.cells[c.key] or {}
    c.run = #st.runs
    st.cells[c.key][rec.kernel] = c
  end
end

-- Reads a survey file (every line checked by pmcsh.results; a torn line,
-- from a kill mid-write, is skipped).  Returns state {header,
-- baseline[kernel], cells[key][kernel], unopened, runs, done} or nil, message.
function M.load(path, from)
  local records, torn, valid_bytes, lines = results.read(path, from)
  if not records then return nil, torn end
  local st = {baseline = {}, baseline2 = {}, cells = {}, unopened = {}, runs = {}, done = false, torn = torn,
    valid_bytes = valid_bytes}
  for i, obj in ipairs(records) do
    local ok, why = true, nil
    if obj.type == "header" then
      for _, k in ipairs({"n", "reps", "threads", "started"}) do
        obj[k] = obj[k] and (math.tointeger(obj[k]) or obj[k])
      end
      ok, why = plan.check_header(obj)
      st.header = obj
    elseif obj.type == "unopened" then st.unopened[#st.unopened + 1] = obj
    elseif obj.type == "done" then st.done = true
    else
      ok, why = workloads.check_record(st.header, obj)
      add(st, obj)
    end
    if not ok then return nil, string.format("%s:%d (%s): %s", path, lines[i], obj.type, why) end
  end
  return st
end

-- What disturbs a window, counted beside every group (software events and
-- the SMI count: no core counter spent): a pair of windows in which either
-- counted one of these is left out of the estimate (Weaver and McKee: an
-- interrupt adds to user-mode counts; nanoBench checks SMIs).  Those that
-- open here (msr/smi/ is Intel's, and needs privilege).
M.DISTURBANCES = {"context-switches", "cpu-migrations", "msr/smi/"}

-- The windows after which a run makes no more calls (its last call may
-- add up to engine_stream.MAX_CALL_PAIRS pairs): its record stays well
-- under a results line's bound (results.fits).
M.MAX_WINDOWS = 6144

-- Whether event `name` counts one of the disturbances, known by what it
-- counts (pmc.identity: cs, context-switches:k and perf::CONTEXT-SWITCHES
-- are one); false for a name that does not encode here.
local disturbing
function M.disturbance(name)
  if not disturbing then
    disturbing = {}
    for _, d in ipairs(M.DISTURBANCES) do
      local id = pmc.identity(d)
      if id then disturbing[id] = true end
    end
  end
  local id = pmc.identity(name)
  return id ~= nil and disturbing[id] == true
end
local known = {}   -- whether each opens here
local function disturbances()
  local out = {}
  for _, d in ipairs(M.DISTURBANCES) do
    if known[d] == nil then
      local g = pmc.group{d}
      known[d] = g ~= nil
      if g then g:close() end
    end
    if known[d] then out[#out + 1] = d end
  end
  return out
end

-- The pairs of windows to keep: those where no disturbance counted.
local function undisturbed(res, nlabels)
  local keep = {}
  for i = 2, #(res.per_rep or {}), 2 do
    local quiet = true
    for w = i - 1, i do
      for j = nlabels + 1, #res.per_rep[w] do
        if res.per_rep[w][j].value ~= 0 then quiet = false end
      end
    end
    keep[i // 2] = quiet
  end
  return keep
end

-- One cell from a window-pair run (res.work: iterations per window):
-- slopes and intercepts per kept pair (statistics.two_window), their
-- statistics, the numbers of the pairs kept (kept_pairs[j]: the pair of
-- per_rep[j]) and the window counts for the file.  Where every pair was
-- disturbed the cell rests on them all, marked disturbed (no class).
local function pair_cell(res, i, keep)
  local windows, mux, zero = {}, false, true
  for w, rd in ipairs(res.per_rep) do
    windows[w] = rd[i].value
    mux = mux or rd.multiplexed
  end
  local slopes, intercepts, pair = statistics.two_window(res.work, windows)
  local ks, ki, kp = {}, {}, {}
  for j, sl in ipairs(slopes) do
    local p = pair[j]
    if keep[p] ~= false then
      ks[#ks + 1], ki[#ki + 1], kp[#kp + 1] = sl, intercepts[j], p
      zero = zero and windows[2 * p - 1] == 0 and windows[2 * p] == 0   -- no count in a kept window
    end
  end
  local c = {windows = windows, kept = #ks, dropped = #slopes - #ks, multiplexed = mux, zero = zero,
    method = "two-window"}
  if #ks == 0 and #slopes > 0 then
    -- every pair disturbed: the best estimate they allow, marked, no class
    ks, ki, c.disturbed, c.zero = slopes, intercepts, true, false
  else
    c.kept_pairs = kp
  end
  if #ks > 0 then
    c.per_rep, c.intercepts = ks, ki
    local st, it = statistics.stats(ks), statistics.stats(ki)
    c.value, c.trimmed, c.median, c.min, c.max, c.mean, c.spread = st.trimmed, st.trimmed, st.median, st.min, st.max,
      st.mean, st.spread
    c.intercept = it.trimmed
  end
  -- one count of difference between two pairs, per iteration
  for w = 2, #res.work, 2 do
    local dw = res.work[w] - res.work[w - 1]
    if dw > 0 then c.resolution = math.max(c.resolution or 0, 1 / dw) end
  end
  return c
end

-- One cell from a run of equal windows (a chase's samples): count over
-- iterations per window, as the seed divides.
local function ratio_cell(res, i)
  local reps = #(res.per_rep or {})
  local per, mux = {}, false
  for r = 1, reps do
    local rd = res.per_rep[r]
    per[r] = rd[i].value / (res.work and res.work[r] or res.iterations / reps)
    mux = mux or rd.multiplexed
  end
  local st = statistics.stats(per)
  return {value = st.trimmed, trimmed = st.trimmed, median = st.median, min = st.min, max = st.max, mean = st.mean,
    spread = st.spread, per_rep = per, multiplexed = mux, zero = res.counts[i].value == 0, kept = reps, dropped = 0,
    method = "ratio"}
end

-- Cells of one run: per event, the per-iteration value and its spread,
-- by the two-window estimate where the run made pairs (res.pairs), else
-- by the ratio; the disturbance events after the labels decide which
-- pairs are kept.
function M.cells(res, labels, keys)
  local keep = {}
  if res.pairs then keep = undisturbed(res, #labels) end
  local cells = {}
  for i, label in ipairs(labels) do
    local c = res.pairs and pair_cell(res, i, keep) or ratio_cell(res, i)
    c.key, c.event = keys[i], label
    c.count, c.unit = res.counts[i].value, res.counts[i].unit
    c.enabled, c.running = res.counts.enabled, res.counts.running
    c.class = cell.classify(c)
    c.zero = nil
    cells[i] = c
  end
  return cells, keep
end

-- A new survey, or the one in o.resume: its state, the results file to
-- append to (if any), the events/ files to check and the note on n.
-- Returns st, f, files, note; or nil, message.
local function open(o)
  if o.resume then
    -- opened once (this user's, locked) and read through the same handle:
    -- the header that names its loops is the file's that runs are added to
    local f, ferr = results.append(o.resume)
    if not f then return nil, ferr end
    local st, err = M.load(o.resume, f.f)
    if not st or st.done then f:close(); return st, err end
    local ok, why = plan.check_resume(st.header)
    if ok then ok, why = engine_stream.loop.resume(st.header, o, o.quiet) end
    if not ok then f:close(); return nil, string.format("%s (header): %s", o.resume, why) end
    local rok, rerr = f:resume(st.valid_bytes)
    if not rok then f:close(); return nil, rerr end
    o.written = #st.runs > 0 or next(st.baseline) ~= nil
    return st, f, {}
  end
  local hdr, files, note, skipped = plan.header(o)
  local st = {header = hdr, baseline = {}, baseline2 = {}, cells = {}, unopened = {}, runs = {}, done = false,
    skipped = skipped}
  for _, file in ipairs(files) do   -- the group the user named, loaded here (a file's header loads none)
    if file.group then st.group = {data = file.data, path = file.path} end
  end
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
    -- a second run without counters after them: the A/A noise floor
    if hdr.baseline and not st.baseline2[k] then todo[#todo + 1] = {kernel = k, second = true} end
  end
  return todo
end

-- One run of workload w, with the group g ({labels=, keys=}) or none: the
-- record for the file and the kinds of its warnings, or nil, message,
-- errno (an interrupt: nil, "interrupted", EINTR from the engine).  A
-- failed validation raises inside the engine, and so may Ctrl-C outside it
-- (the REPL's hook): the same tiers come out.
local function measure(w, g, hdr, deadline)
  local reps = hdr.reps
  local group, err, errno
  if g then
    local labels = {table.unpack(g.labels)}
    for _, d in ipairs(disturbances()) do labels[#labels + 1] = d end
    group, err, errno = pmc.group(labels)
    if not group then group, err, errno = pmc.group(g.labels) end
    if not group then return nil, err, errno end
  end
  -- more pairs while fewer than the header's are kept and time is left
  local want, nlabels = cell.pairs(reps), g and #g.labels
  local function more(res)
    if not (group and deadline) or clock.now() >= deadline or #res.times >= M.MAX_WINDOWS // 2 then return false end
    local kept = 0
    for _, quiet in pairs(undisturbed(res, nlabels)) do kept = kept + (quiet and 1 or 0) end
    return kept < want
  end
  local ok, res, e2, e3 = pcall(w.run, group, reps, more, deadline)
  if group then group:close() end
  -- Ctrl-C (the REPL's hook raises it anywhere) is known by the flag, and
  -- said without the location the hook's error carries
  if not ok and sys.interrupted() then return nil, "interrupted", EINTR end
  if not ok then return nil, tostring(res) end
  if not res then return nil, e2, e3 end
  local rec = {type = g and "run" or "baseline", kernel = w.name, times = res.times,
    iterations = res.iterations, work = res.work, warnings = res.warnings}
  for k, v in pairs(res.record or {}) do rec[k] = v end
  if g then
    local keep
    rec.cells, keep = M.cells(res, g.labels, g.keys)
    -- what the workload can predict of its cells, checked (its descriptor's checks)
    local x = {w = w, rec = rec, res = res, hdr = hdr, keep = keep}
    for _, c in ipairs(rec.cells) do
      for _, check in ipairs(w.checks or {}) do check(c, x) end
    end
  end
  return rec, res.warning_kinds
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
  local st, f, files, note = open(o)
  if not st then return nil, f end
  local hdr = st.header
  if st.done then
    if not o.quiet then io.stderr:write(string.format("pmcsh survey: %s is complete: nothing to resume\n", o.resume)) end
    return st
  end
  -- pack (again, on resume: the environment decides)
  local groups, unopened = plan.pack(hdr.units, plan.try)
  -- a record the file's readers would refuse is refused before measuring
  for _, g in ipairs(f and groups or {}) do
    local fits, most = results.fits(#g.keys, math.max(cell.pairs(hdr.reps), M.MAX_WINDOWS // 2))
    if not fits then
      f:close()
      plan.usage(string.format("--reps %d: a run of %d counts would write a record over the %d MiB a results " ..
        "line may hold; at most --reps %d with these events, or fewer events at once", hdr.reps, #g.keys,
        results.MAX_LINE >> 20, most))
    end
  end
  -- events the PMU does not implement: not measured, said so
  for _, u in ipairs(st.skipped or {}) do unopened[#unopened + 1] = u end
  st.skipped = nil
  local ws, free = workloads.of(hdr, {quiet = o.quiet})
  local tell = progress.new(o.progress == nil and progress.stderr_is_tty() or o.progress)
  local function stop(...)
    loops.note(nil)
    local ok, err = true, nil
    if f then ok, err = f:close() end
    free(); tell()
    if not ok and select(1, ...) ~= nil then return nil, err end
    return ...
  end
  local ok, err, errno = plan.check_files(files, groups, unopened, hdr.units)
  if ok then ok, err = begin(st, f, unopened, o.resume) end
  if not ok then return stop(nil, err, errno) end
  local todo, warned = work_list(st, groups), {}
  -- the budget, shared by the runs left: a counted run may make more pairs
  -- until its share is spent, any run makes its first call whatever is left
  local budget_end = clock.now() + (hdr.budget or 0)
  local sized = false
  for _, w in ipairs(ws) do sized = sized or w.sized end
  if sized and hdr.n and not o.quiet then io.stderr:write(plan.size_line(hdr.n, note, engine_stream.own_data_only(hdr))) end
  if not o.quiet and not pmc.environment().cpu_pmu then
    io.stderr:write("pmcsh survey: no hardware PMU is exposed here: cycles, instructions and the other hardware " ..
      "events are not counted, only software events, tracepoints and msr/tsc/ are (pmcsh machine says why, " ..
      "pmcsh list shows what counts)\n")
  end
  for i, job in ipairs(todo) do
    tell(i - 1, #todo, job.kernel .. (job.group and (" group " .. job.group) or " no counters"))
    -- what a crash of a user's loop says, with how to go on
    local file = o.out or o.resume
    loops.note(string.format("survey run %d of %d (%s, %s)%s", i, #todo, job.kernel,
      job.group and ("group " .. job.group) or "no counters", file and string.format("; the runs finished are " ..
      "kept in %s: pmcsh survey --resume %s continues", file, file) or ""))
    local deadline = clock.now() + math.max(0, budget_end - clock.now()) / (#todo - i + 1)
    local rec, merr, merrno = measure(ws[job.kernel], groups[job.group], hdr, deadline)
    if not rec then return stop(nil, merr, merrno) end
    local kinds = merr or {}   -- measure's second value: the kind of each of rec.warnings
    for i, w in ipairs(rec.warnings or {}) do   -- each kind said once
      local kind = kinds[i] or w
      if not warned[kind] then warned[kind] = true; tell(); io.stderr:write("pmcsh survey: warning: ", w, "\n") end
    end
    rec.group, rec.second = job.group, job.second
    if f then ok, err = f:write(rec) end
    if not ok then return stop(nil, err) end
    add(st, rec)
    o.written = f ~= nil
  end
  if f then ok, err = f:write({type = "done", finished = os.time()}) end
  if not ok then return stop(nil, err) end
  st.done = true
  return stop(st)
end

return M
