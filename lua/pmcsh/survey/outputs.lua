-- The survey as data: CSV and JSON lines of its records (pmcsh.survey.records,
-- the table's), one per row and workload (tidy: a spreadsheet or a data
-- frame reads it as is).  CSV carries M.FIELDS, JSON each line a typed
-- metric (pmcsh.results.metric: its workload in context.kernel, the samples
-- under its value) with the same fields beside; every record all of them
-- (empty in CSV, null in JSON when there is no value):
--   kind       "event" (a row of the table), "kernel" (a workload's own
--              figure: MB/s, ns per iteration) or "metric" (the group's)
--   name       the row's key (event, :u/:k, pair), the figure's or the metric's name
--   unit       events per loop iteration, ns per dependent load, GHz, ...
--   kernel     the workload (copy, triad, chase, ...)
--   stat       which statistic value is (--stat: trimmed, median, min, max,
--              mean; a figure: median slope, median sample, median run)
--   value      the cell as the table shows it: events per iteration; null
--              (and so are intercept to spread) where no window was
--              counted (table: "dropped")
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
--   mbps, ns_per_iteration   the counted run's (metrics: the median run's),
--              by the median of its pairs' slopes (a chase: of its samples)
--   mbps_no_counters, ns_per_iteration_no_counters   the baseline's
--   note       why a metric or a cell has no value, or a cell no class
--   pairs_kept, pairs_total   pairs of windows kept and made (null for a
--              chase, whose windows are each a sample: reps)
--   disturbed  true where every pair was disturbed: value and the rest are
--              those pairs' (the best estimate they allow), class null,
--              no check passed (table: "!")
-- Numbers in a CSV column share one notation and about 5 significant
-- digits; JSON numbers keep 6 significant digits.  The JSON lines start
-- with the fingerprint of the machine that measured (pmcsh.results.head).
local json = require("pmcsh.json")
local records = require("pmcsh.survey.records")
local results = require("pmcsh.results")
local text = require("pmcsh.text")

local M = {}

M.FIELDS = {"kind", "name", "unit", "kernel", "stat", "value", "intercept", "mean", "median", "min", "max", "spread",
  "class", "expected", "verdict", "reps", "dropped", "n", "isa", "multiplexed", "mbps", "mbps_no_counters",
  "ns_per_iteration", "ns_per_iteration_no_counters", "note", "pairs_kept", "pairs_total", "disturbed"}

-- A JSON line's fields: the typed metric's, then the rest of FIELDS (the
-- kernel is the metric's context).
M.JSON_FIELDS = {"type"}
do
  local typed = {}
  for _, f in ipairs(results.METRIC_FIELDS) do M.JSON_FIELDS[#M.JSON_FIELDS + 1], typed[f] = f, true end
  for _, f in ipairs(M.FIELDS) do
    if not typed[f] and f ~= "kernel" then M.JSON_FIELDS[#M.JSON_FIELDS + 1] = f end
  end
end

-- The records, in the table's order (pmcsh.survey.records).
function M.records(st, o)
  return (records.of(st, o))
end

-- A record as the typed metric a JSON line and pmcsh compare read.
function M.typed(r)
  local m = {context = {kernel = r.kernel}}
  for _, f in ipairs(results.METRIC_FIELDS) do
    if f ~= "context" then m[f] = r[f] end
  end
  local t = results.metric(m)
  for _, f in ipairs(M.FIELDS) do
    if t[f] == nil and f ~= "kernel" then t[f] = r[f] end
  end
  return t
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
  if type(v) == "table" then
    local out = {}
    for k, x in pairs(v) do out[k] = round(x) end
    return out
  end
  if type(v) ~= "number" or math.type(v) == "integer" then return v end
  if v == math.floor(v) and math.abs(v) < 2^53 then return math.tointeger(v) end
  return tonumber(string.format("%.6g", v))
end

-- JSON lines: the fingerprint's line, then a typed metric per record with
-- every field of M.JSON_FIELDS, in that order.
function M.json(st, o)
  local out = {results.head("survey", st.header.fingerprint or {})}
  for _, r in ipairs(M.records(st, o)) do
    local t, parts = M.typed(r), {}
    for i, f in ipairs(M.JSON_FIELDS) do
      local v = t[f]
      parts[i] = json.encode(f) .. ":" .. (v == nil and "null" or json.encode(round(v)))
    end
    out[#out + 1] = "{" .. table.concat(parts, ",") .. "}"
  end
  return table.concat(out, "\n") .. "\n"
end

return M
