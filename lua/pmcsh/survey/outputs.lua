-- The survey as data: CSV and JSON lines with what the table shows, one
-- record per row and workload (tidy: a spreadsheet or a data frame reads
-- it as is).  Both carry the same fields in the same order, every record
-- all of them (empty in CSV, null in JSON when there is no value):
--   kind       "event" (a row of the table) or "metric" (the group's)
--   name       the row's key (event, :u/:k, pair) or the metric's name
--   unit       events per loop iteration, ns per dependent load, GHz, ...
--   kernel     the workload (copy, triad, chase, ...)
--   stat       which statistic value is (--stat: trimmed, median, min, max, mean)
--   value      the cell as the table shows it: events per iteration; null
--              (and so are intercept to spread) where every pair was
--              dropped (table: "dropped")
--   intercept  events per window beyond its iterations (the window's own
--              cost; first touch of fresh arrays), same statistic
--   mean median min max  over the kept pairs of windows
--   spread     (max - min) / mean over them, a fraction
--   class      exact, linear, noisy, zero or multiplexed; null where too
--              few pairs were kept (pmcsh.survey.cell.MIN_KEPT) or none
--   expected, verdict   what the count must be; pass, fail, or unresolved (too fine to judge)
--   reps       the samples under the value: pairs of windows kept (a
--              chase: windows); dropped: pairs left out (disturbed)
--   n: iterations per window; isa: the kernel's instruction-set variant
--   multiplexed  true when the kernel scaled the count
--   mbps, ns_per_iteration   the counted run's (metrics: the median run's)
--   mbps_no_counters, ns_per_iteration_no_counters   the baseline's
--   note       why a metric or a cell has no value, or a cell no class
--   pairs_kept, pairs_total   pairs of windows kept and made (null for a
--              chase, whose windows are each a sample: reps)
-- Numbers in a CSV column share one notation and about 5 significant
-- digits; JSON numbers keep 6 significant digits.  The JSON lines start
-- with the fingerprint of the machine that measured (pmcsh.results.head).
local json = require("pmcsh.json")
local report = require("pmcsh.survey.report")
local results = require("pmcsh.results")
local text = require("pmcsh.text")
local cell = require("pmcsh.survey.cell")
local D = require("pmcsh.survey.defaults")
local workloads = require("pmcsh.survey.workloads")

local M = {}

M.FIELDS = {"kind", "name", "unit", "kernel", "stat", "value", "intercept", "mean", "median", "min", "max", "spread",
  "class", "expected", "verdict", "reps", "dropped", "n", "isa", "multiplexed", "mbps", "mbps_no_counters", "ns_per_iteration", "ns_per_iteration_no_counters", "note",
  "pairs_kept", "pairs_total"}

-- The records, in the table's order: the counted rows, then the metrics.
function M.records(st, o)
  o = o or {}
  local hdr, stat = st.header, o.stat or D.stat
  local ws, rates = workloads.of(hdr), report.rates(st)
  local run_of = {}
  for _, r in ipairs(st.runs) do
    for _, c in ipairs(r.cells or {}) do run_of[c] = r end
  end
  local out = {}
  for _, row in ipairs(hdr.rows) do
    for _, k in ipairs(st.cells[row.key] and hdr.kernels or {}) do
      local c, rate = st.cells[row.key][k], rates[k]
      if c then
        local run = run_of[c] or {}
        -- a cell with nothing under it has no value here (an older file may hold one)
        local v = not cell.dropped(c) and c or {}
        local kept, made = cell.kept(c)
        local pairs = cell.samples(c) == "pairs"
        out[#out + 1] = {kind = "event", name = row.key, unit = (c.unit or "events") .. " per " .. ws[k].unit,
          kernel = k, stat = stat, value = report.cell_stat(v, stat), intercept = v.intercept,
          mean = v.mean or v.value, median = v.median, min = v.min, max = v.max, spread = v.spread,
          class = report.class_of(c), expected = c.expected, verdict = c.verdict,
          reps = c.kept or (c.per_rep and #c.per_rep) or hdr.reps, dropped = c.dropped,
          n = not run.work and run.iterations and run.times and #run.times > 0 and run.iterations // #run.times or hdr.n,
          isa = run.isa,
          multiplexed = c.multiplexed or false, mbps = run.mbps or c.mbps, mbps_no_counters = rate.mbps,
          ns_per_iteration = report.ns_of(run), ns_per_iteration_no_counters = rate.ns, note = cell.why(c),
          pairs_kept = pairs and kept or nil, pairs_total = pairs and made or nil}
      end
    end
  end
  local gm = hdr.group and report.group_metrics(st)
  for _, m in ipairs(gm and gm.rows or {}) do
    for _, k in ipairs(hdr.kernels) do
      local rate = rates[k]
      out[#out + 1] = {kind = "metric", name = m.name, unit = m.unit, kernel = k, value = m.values[k],
        mbps = rate.mbps_counted, mbps_no_counters = rate.mbps, ns_per_iteration = rate.ns_counted,
        ns_per_iteration_no_counters = rate.ns, note = m.values[k] == nil and m.reasons[k] or nil}
    end
  end
  return out
end

-- One notation for a column of numbers: integers as such; else fixed
-- point with 5 significant digits for its smallest nonzero value, or
-- scientific for all when a value is below 1e-3 or from 1e7.
local function column_format(values)
  local ints, sci, decimals = true, false, 0
  for _, v in pairs(values) do
    if math.type(v) ~= "integer" and v ~= math.floor(v) then ints = false end
    local a = math.abs(v)
    if a ~= 0 and (a < 1e-3 or a >= 1e7) then sci = true end
    if a ~= 0 then decimals = math.max(decimals, math.min(7, 4 - math.floor(math.log(a, 10)))) end
  end
  if ints and not sci then return function(v) return string.format("%d", v) end end
  if sci then return function(v) return v == 0 and "0" or string.format("%.4e", v) end end
  return function(v) return string.format("%." .. decimals .. "f", v) end
end

-- CSV: a header of M.FIELDS, then a line per record.
function M.csv(st, o)
  local recs = M.records(st, o)
  local fmt = {}
  for _, f in ipairs(M.FIELDS) do
    local nums = {}
    for i, r in ipairs(recs) do if type(r[f]) == "number" then nums[i] = r[f] end end
    if next(nums) then fmt[f] = column_format(nums) end
  end
  local out = {table.concat(M.FIELDS, ",")}
  for _, r in ipairs(recs) do
    local l = {}
    for i, f in ipairs(M.FIELDS) do
      local v = r[f]
      l[i] = v == nil and "" or type(v) == "number" and fmt[f](v) or text.csv(v)
    end
    out[#out + 1] = table.concat(l, ",")
  end
  return table.concat(out, "\n") .. "\n"
end

local function round(v)
  if type(v) ~= "number" or math.type(v) == "integer" then return v end
  if v == math.floor(v) and math.abs(v) < 2^53 then return math.tointeger(v) end
  return tonumber(string.format("%.6g", v))
end

-- JSON lines: the fingerprint's line, then an object per record with
-- every field of M.FIELDS.
function M.json(st, o)
  local out = {results.head("survey", st.header.fingerprint or {})}
  for _, r in ipairs(M.records(st, o)) do
    local parts = {}
    for i, f in ipairs(M.FIELDS) do
      local v = r[f]
      parts[i] = json.encode(f) .. ":" .. (v == nil and "null" or json.encode(round(v)))
    end
    out[#out + 1] = "{" .. table.concat(parts, ",") .. "}"
  end
  return table.concat(out, "\n") .. "\n"
end

return M
