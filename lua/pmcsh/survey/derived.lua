-- The survey group's metrics (an events/ file's formulas), evaluated per
-- workload after the runs, on the runs' cells: what the records of kind
-- "metric" show.
local cell = require("pmcsh.survey.cell")
local errors = require("pmcsh.errors")
local events = require("pmcsh.events")
local figures = require("pmcsh.survey.figures")
local formulas = require("pmcsh.formulas")
local pmc = require("pmcsh.pmc")
local statistics = require("pmcsh.statistics")
local text = require("pmcsh.text")
local workloads = require("pmcsh.survey.workloads")

local M = {}

local median_of = function(list) return statistics.stats(list).median end

-- The syntax of an event name counted at exactly u or k (cycles:u,
-- cpu/event=0x3c/k, {a,b}:u; pmc.parse_name, the one parser), or nil:
-- a name without that one modifier, or one a results file holds that
-- does not parse.
local function privileged(name)
  local ok, p = pcall(pmc.parse_name, name)
  if not ok then
    if errors.is(p, "argument") then return nil end
    error(p, 0)
  end
  if p.modifiers == "u" or p.modifiers == "k" then return p end
end

-- The reading of a list of cells: value(c) per event, and a :u and a :k
-- row of one event also summed under the plain name.  A cell whose every
-- pair was disturbed gives a formula nothing (the metric says it is absent).
local function reading_of(cells, value)
  local reading, sums = {}, {}
  for _, c in ipairs(cells) do
    local v = c.event and not cell.disturbed(c) and value(c)
    if v then   -- a cell naming no event (the file may omit it) gives no formula one
      reading[c.event] = {value = v}
      local p = privileged(c.event)
      local base, mod = p and p.plain, p and p.modifiers
      if p and (c.key == nil or c.key == c.event) then
        sums[base] = sums[base] or {}
        sums[base][mod] = v
      end
    end
  end
  for base, t in pairs(sums) do
    if t.u and t.k and not reading[base] then reading[base] = {value = t.u + t.k} end
  end
  return reading
end

-- The reading a group's metrics see for one kernel: each counted event's
-- value per iteration (a :u and a :k row of the same run also summed
-- under the plain name), with ctx per iteration too: iterations = 1,
-- bytes = bytes per iteration (STREAM convention; none for the chase),
-- seconds = the counted runs' median of figures.median_seconds (the time's
-- own slopes: the estimator of the counts, so a rate over seconds holds no
-- window's fixed cost on one side only).  Ratios of events come out as
-- ratios of counts; per-iteration metrics as such.
local function metric_reading(st, kernel)
  local cells = {}
  for _, byk in pairs(st.cells) do cells[#cells + 1] = byk[kernel] end
  local reading = reading_of(cells, function(c) return c.value end)
  local secs, bytes = {}, nil
  for _, r in ipairs(st.runs) do
    local s = r.kernel == kernel and figures.median_seconds(r)
    if s then
      secs[#secs + 1] = s
      bytes = bytes or r.bytes_per_iter
    end
  end
  return reading, {iterations = 1, bytes = bytes, seconds = median_of(secs)}
end

-- A metric whose events one run counted together, evaluated pair by pair
-- (window by window for a chase) on that run's kept slopes, then reduced
-- by the survey's statistic: a ratio of two trimmed means would pair one
-- event's windows with another's.  The value and the pairs' values (its
-- samples); nil, nil where no run holds them all.
-- ctx for the p-th value of run r's cells: seconds that pair's (or that
-- window's) own, as its counts are; the run's where it has none.
local function pair_ctx(r, p, ctx)
  local c = r.cells[1]
  local s
  if c.kept_pairs then
    s = r.sec_per_iter and r.sec_per_iter[c.kept_pairs[p]]
  elseif r.times and r.work and r.work[p] and r.work[p] > 0 then
    s = r.times[p] / r.work[p]
  end
  if not (s and s > 0) then return ctx end
  return {iterations = ctx.iterations, bytes = ctx.bytes, seconds = s}
end

local function joint_value(st, kernel, m, whole, ctx)
  for _, r in ipairs(st.runs) do
    local n = r.kernel == kernel and r.cells and r.cells[1] and r.cells[1].per_rep and #r.cells[1].per_rep
    local mine = n and reading_of(r.cells, function(c) return c.value end)
    local all = n and n > 0 and #(m.events or {}) > 0
    for _, e in ipairs(all and m.events or {}) do all = all and mine[e] ~= nil end
    if all then
      local vals = {}
      for p = 1, n do
        local rd = reading_of(r.cells, function(c) return c.per_rep and c.per_rep[p] end)
        for e, x in pairs(whole) do if rd[e] == nil then rd[e] = x end end
        local v, why, absent = formulas.eval(m, rd, pair_ctx(r, p, ctx))
        if v == nil then return nil, why, absent end
        vals[p] = v
      end
      return statistics.stats(vals).trimmed, nil, nil, vals
    end
  end
  return nil
end

-- The metrics of the survey's group (header.group, an events/ file), each
-- evaluated per kernel after the runs.  Returns {path=, rows={{name=,
-- unit=, desc=, values={kernel=v}, reasons={kernel=why}, samples={kernel=
-- the pairs' values}}}}, or nil and a
-- message (no group, or its file no longer loads).  A survey just run has
-- the group the user named (st.group); one read from a results file, which
-- may come from another node, loads only a group of events/, never code a
-- path in the file names.
function M.group_metrics(st)
  local name = st.header and st.header.group
  if not name then return nil, "the survey has no group" end
  local t, path
  if st.group then
    t, path = st.group.data, st.group.path
  else
    local own = name:find("/", 1, true) and events.own(name) or name
    if own:find("/", 1, true) or not own:match("^[%w_%-]+$") then
      return nil, string.format("the group's metrics are in %s, which pmcsh does not load for a results file " ..
        "(it loads no code a file names)", text.inert(name))
    end
    t, path = events.group_here(own)
    if not t then return nil, path end
  end
  local ws = workloads.columns(st.header)
  local out = {path = path, rows = {}}
  for _, m in ipairs(t.metrics or {}) do
    local row = {name = m.name, unit = m.unit, desc = m.desc, values = {}, reasons = {}, samples = {}}
    for _, k in ipairs(st.header.kernels) do
      local reading, ctx = metric_reading(st, k)
      local v, why, field, samples = joint_value(st, k, m, reading, ctx)
      if v == nil and why == nil then v, why, field = formulas.eval(m, reading, ctx) end
      -- a formula over c.bytes on a workload that moves no STREAM bytes
      if field then
        why = string.format("needs %s per iteration, which %s does not have", field, ws[k].what)
      end
      row.values[k], row.reasons[k], row.samples[k] = v, why, samples
    end
    out.rows[#out.rows + 1] = row
  end
  return out
end

return M
