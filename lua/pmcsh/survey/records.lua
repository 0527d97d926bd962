-- The survey as records: the one row shape after the results file.  The
-- table, the heat map, CSV, JSON and pmcsh compare all read these; none of
-- them reaches back into the runs.  A record per row and workload:
--   kind "event"   a cell: a counted row's events per iteration
--   kind "kernel"  a workload's own figure (M.FIGURES: MB/s and ns per
--                  iteration, with and without counters)
--   kind "metric"  a formula of the survey's group (pmcsh.survey.derived)
-- Each is a typed metric as every recipe writes them (pmcsh.results.metric:
-- name, unit, value, stat: the estimator, samples: what the value rests
-- on, event, floor, better) with the survey's own fields beside it
-- (pmcsh.survey.outputs.FIELDS) and, for the renderers, what a cell may
-- claim (standing, class, zero, kept, made, resolution, check).
local cell = require("pmcsh.survey.cell")
local D = require("pmcsh.survey.defaults")
local derived = require("pmcsh.survey.derived")
local figures = require("pmcsh.survey.figures")
local statistics = require("pmcsh.statistics")
local workloads = require("pmcsh.survey.workloads")

local M = {}

-- The statistic a cell shows: the trimmed mean of its pairs' slopes (its
-- value), median, min, max or mean.  A cell of an older file has only
-- the mean, as its value.
function M.cell_stat(c, stat)
  if not c then return nil end
  if (stat or D.stat) == "trimmed" or stat == "value" then return c.value end
  if stat == "mean" then return c.mean or c.value end
  return c[stat]
end

-- Whether a cell counts as zero: classed zero, or (a file without classes)
-- exactly 0.  A cell with nothing under it is not zero.
local function zero_cell(c)
  if cell.standing(c) then return false end
  if c.class then return c.class == "zero" end
  return c.value == 0
end

-- ns per iteration of a run record, by figures.median_seconds.
local function ns_of(rec)
  local s = figures.median_seconds(rec)
  return s and s * 1e9
end

-- A cell's record.  run: the cell's run record ({} where the state has
-- none), rate: its workload's figures (kernel_figures), col: its column.
local function event_record(hdr, row, k, c, run, rate, col, stat)
  local v = not cell.dropped(c) and c or {}
  local kept, made = cell.kept(c)
  local pairs = cell.samples(c) == "pairs"
  return {kind = "event", name = row.key, unit = (c.unit or "events") .. " per " .. col.unit,
    kernel = k, stat = stat, value = M.cell_stat(v, stat), intercept = v.intercept,
    mean = v.mean or v.value, median = v.median, min = v.min, max = v.max, spread = v.spread,
    class = cell.class_of(c), expected = c.expected, verdict = c.verdict,
    reps = c.kept or (c.per_rep and #c.per_rep) or hdr.reps, dropped = c.dropped,
    n = not run.work and run.iterations and run.times and #run.times > 0 and run.iterations // #run.times or hdr.n,
    isa = run.isa, multiplexed = c.multiplexed or false, mbps = run.mbps, mbps_no_counters = rate.mbps,
    ns_per_iteration = ns_of(run), ns_per_iteration_no_counters = rate.ns, note = cell.why(c),
    pairs_kept = pairs and kept or nil, pairs_total = pairs and made or nil,
    -- the typed metric's own: what the value rests on, the event it counts
    samples = v.per_rep, event = c.event, floor = cell.floor(c, run),
    -- what a renderer asks of a cell
    disturbed = cell.standing(c) == "disturbed",
    standing = cell.standing(c), zero = zero_cell(c), kept = kept, made = made, sample_kind = cell.samples(c),
    resolution = c.resolution, count = c.count, count_unit = c.unit, check = c.check, basis = c.basis,
    checked = c.check == "intercept" and c.intercept or c.value}
end

-- A workload's own figures, in the table's order: name, unit, which is
-- better, and its field in kernel_figures.
M.FIGURES = {
  {figure = "mbps", name = "MB/s, no counters", unit = "MB/s", better = "higher"},
  {figure = "mbps_counted", name = "MB/s, counted (median run)", unit = "MB/s", better = "higher"},
  {figure = "ns", name = "ns per iteration, no counters", unit = "ns", better = "lower"},
  {figure = "ns_counted", name = "ns per iteration, counted (median run)", unit = "ns", better = "lower"},
  {figure = "mbps_aa", name = "MB/s, no counters again (A/A)", unit = "MB/s", better = "higher"},
  {figure = "ns_aa", name = "ns per iteration, no counters again (A/A)", unit = "ns", better = "lower"},
}

-- MB/s of each sample of a run without counters: the bytes of an iteration
-- over each pair's time slope (a slope <= 0: noise outweighed the work).
local function mbps_samples(b)
  if not (b and b.bytes_per_iter and b.sec_per_iter) then return nil end
  local out = {}
  for _, s in ipairs(b.sec_per_iter) do
    if s > 0 then out[#out + 1] = 1e-6 * b.bytes_per_iter / s end
  end
  return out
end

local function ns_samples(rec)
  local per, how = figures.samples(rec)
  if not per then return nil end
  local out = {}
  for i, s in ipairs(per) do out[i] = s * 1e9 end
  return out, how
end

-- Per kernel: each figure's value, samples and estimator ({figure = {value,
-- samples, stat}}), from the runs without counters and the counted runs
-- (their median: the samples are the runs' own figures).
local function kernel_figures(st, k)
  local counted = {mbps = {}, ns = {}}
  for _, r in ipairs(st.runs or {}) do
    if r.kernel == k then
      counted.mbps[#counted.mbps + 1] = r.mbps
      counted.ns[#counted.ns + 1] = ns_of(r)
    end
  end
  local b, b2 = st.baseline and st.baseline[k], st.baseline2 and st.baseline2[k]
  local out = {}
  local function put(figure, value, samples, stat)
    if value then out[figure] = {value = value, samples = samples, stat = stat} end
  end
  local ns, how = ns_samples(b)
  put("mbps", b and b.mbps, mbps_samples(b), figures.SLOPE)
  put("ns", ns and statistics.median(ns), ns, how)
  put("mbps_counted", statistics.median(counted.mbps), counted.mbps, "median run")
  put("ns_counted", statistics.median(counted.ns), counted.ns, "median run")
  ns, how = ns_samples(b2)
  put("mbps_aa", b2 and b2.mbps, mbps_samples(b2), figures.SLOPE)
  put("ns_aa", ns and statistics.median(ns), ns, how)
  return out
end

-- The records of the group's metrics, per metric and kernel; and the
-- group's file, or why there are none.
local function metric_records(st, rates)
  local gm, why = derived.group_metrics(st)
  local out = {}
  for _, m in ipairs(gm and gm.rows or {}) do
    for _, k in ipairs(st.header.kernels) do
      local rate = rates[k]
      out[#out + 1] = {kind = "metric", name = m.name, unit = m.unit, kernel = k, value = m.values[k],
        mbps = rate.mbps_counted and rate.mbps_counted.value, mbps_no_counters = rate.mbps and rate.mbps.value,
        ns_per_iteration = rate.ns_counted and rate.ns_counted.value, ns_per_iteration_no_counters =
        rate.ns and rate.ns.value, note = m.values[k] == nil and m.reasons[k] or nil, samples = m.samples[k],
        stat = m.values[k] ~= nil and "trimmed" or nil, desc = m.desc}
    end
  end
  return out, gm and gm.path, why
end

-- The records of a survey's state, in the table's order: the counted rows
-- (a record per row and kernel that has a cell), each workload's figures,
-- the group's metrics.  o.stat picks a cell's value (D.stat).  Returns the
-- records and {group = the group's file, or nil, group_why = why none}.
function M.of(st, o)
  o = o or {}
  local hdr, stat = st.header, o.stat or D.stat
  local cols, rates = workloads.columns(hdr), {}
  for _, k in ipairs(hdr.kernels) do rates[k] = kernel_figures(st, k) end
  local out = {}
  for _, row in ipairs(hdr.rows) do
    for _, k in ipairs(st.cells[row.key] and hdr.kernels or {}) do
      local c = st.cells[row.key][k]
      if c then
        local flat = {}
        for f, x in pairs(rates[k]) do flat[f] = x.value end
        out[#out + 1] = event_record(hdr, row, k, c, st.runs and st.runs[c.run or 0] or {}, flat, cols[k], stat)
      end
    end
  end
  for _, f in ipairs(M.FIGURES) do
    for _, k in ipairs(hdr.kernels) do
      local x = rates[k][f.figure]
      if x then
        out[#out + 1] = {kind = "kernel", name = f.name, figure = f.figure, unit = f.unit, better = f.better,
          kernel = k, value = x.value, samples = x.samples, stat = x.stat}
      end
    end
  end
  local metrics, path, why = metric_records(st, rates)
  for _, r in ipairs(metrics) do out[#out + 1] = r end
  return out, {group = path, group_why = hdr.group and why or nil}
end

-- The records by what reads them: events[key][kernel] and the keys in
-- order, figures[figure][kernel], and the metrics in order ({name=, unit=,
-- desc=, [kernel] = record}).
function M.index(recs)
  local ix = {events = {}, keys = {}, figures = {}, metrics = {}}
  local metric = {}
  for _, r in ipairs(recs) do
    if r.kind == "event" then
      if not ix.events[r.name] then ix.events[r.name] = {}; ix.keys[#ix.keys + 1] = r.name end
      ix.events[r.name][r.kernel] = r
    elseif r.kind == "kernel" then
      ix.figures[r.figure] = ix.figures[r.figure] or {}
      ix.figures[r.figure][r.kernel] = r
    elseif r.kind == "metric" then
      if not metric[r.name] then
        metric[r.name] = {name = r.name, unit = r.unit, desc = r.desc}
        ix.metrics[#ix.metrics + 1] = metric[r.name]
      end
      metric[r.name][r.kernel] = r
    end
  end
  return ix
end

return M
