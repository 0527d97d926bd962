-- pmcsh.formulas: a reading made plain numbers, and derived metrics.
--
-- A reading (from pmc or from stream/chase `counts`) is a list of entries
-- {name=, value=}, found by name through its metatable (r["page-faults:u"]),
-- with the group's enabled, running and multiplexed.  Here it becomes
-- plain numbers: per loop iteration, per byte, per second, or per another
-- event; and derived metrics are Lua functions over event names, evaluated
-- after the read (never inside a measured window).
--
-- Nothing here divides by zero silently: a ratio with a zero or missing
-- denominator is nil, and the caller prints it as "n/a".
local sys = require("pmcsh._sys")
local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")

local M = {}

-- The scaled value of `name` in a reading, or nil when the event is absent.
local function value_of(reading, name)
  local e = reading and reading[name]
  if type(e) == "table" then return e.value end
  if type(e) == "number" then return e end
  return nil
end
function M.value(reading, name)
  errors.check("value", 1, reading, "table?")
  return value_of(reading, name)
end
doc(M.value, "metrics.value", [[
metrics.value(reading, name) -> the value of event `name` in a reading (an
entry's value, or a number stored under the name), nil when it is absent.]])

-- a / b, or nil when either is missing or b is zero.
local function ratio(a, b)
  if type(a) ~= "number" or type(b) ~= "number" or b == 0 then return nil end
  return a / b
end
M.ratio = ratio
doc(M.ratio, "metrics.ratio", [[
metrics.ratio(a, b) -> a / b, or nil when either is not a number or b is 0
(a missing denominator prints as n/a, never as inf or 0).]])

function M.per_iteration(count, iterations) return ratio(count, iterations) end
function M.per_byte(count, bytes) return ratio(count, bytes) end
function M.per_second(count, seconds) return ratio(count, seconds) end
doc(M.per_iteration, "metrics.per_iteration", [[
metrics.per_iteration(count, iterations) -> count / iterations, or nil when
iterations is 0 or missing.  metrics.per_byte and metrics.per_second alike.]])
doc(M.per_byte, "metrics.per_byte", [[
metrics.per_byte(count, bytes) -> count / bytes, or nil when bytes is 0 or missing.]])
doc(M.per_second, "metrics.per_second", [[
metrics.per_second(count, seconds) -> count / seconds, or nil when seconds is 0 or missing.]])

-- Every event of a reading (a list of entries, or a map name -> entry or
-- number) as name -> number.
function M.values(reading)
  errors.check("values", 1, reading, "table?")
  local out = {}
  for _, e in ipairs(reading or {}) do
    if type(e) == "table" and e.name and type(e.value) == "number" then out[e.name] = e.value end
  end
  for k, e in pairs(reading or {}) do
    if type(k) == "string" then
      local v = value_of(reading, k)
      if v then out[k] = v end
    end
  end
  return out
end
doc(M.values, "metrics.values", [[
metrics.values(reading) -> {[name] = value, ...}: every event of a reading (a
list of entries {name=, value=}, or a map name -> entry or number) as plain
numbers, what a metric's fn(e, ctx) gets as e.]])

-- The names of a reading's events, in the order they were given (r[1], r[2]...).
function M.names(reading)
  errors.check("names", 1, reading, "table?")
  local out = {}
  for i = 1, #(reading or {}) do
    local e = reading[i]
    out[i] = e.name or e.event
  end
  return out
end
doc(M.names, "metrics.names", [[
metrics.names(reading) -> the names of a reading's events in their order
(r[1].name, r[2].name, ...).]])

-- Normalises every event of `reading` by one denominator.
--   by = "iteration" (ctx.iterations), "byte" (ctx.bytes), "second"
--   (ctx.seconds), or the name of another event in the reading.
-- Returns name -> number (nil entries where the denominator is missing/0).
function M.normalize(reading, by, ctx)
  ctx = ctx or {}
  local denom
  if by == "iteration" then denom = ctx.iterations
  elseif by == "byte" then denom = ctx.bytes
  elseif by == "second" then denom = ctx.seconds
  elseif type(by) == "string" then denom = value_of(reading, by)
    if denom == nil then
      return nil, string.format("cannot normalize by %q: no such event in the reading", by)
    end
  else
    errors.argument("normalize", 2, "iteration, byte, second or an event name expected", 1)
  end
  local out = {}
  for name, v in pairs(M.values(reading)) do out[name] = ratio(v, denom) end
  return out
end
doc(M.normalize, "metrics.normalize", [[
metrics.normalize(reading, by, ctx) -> {[name] = value / denominator}
by = "iteration" (ctx.iterations), "byte" (ctx.bytes), "second" (ctx.seconds)
or the name of another event of the reading (nil, message when it is not
there); an entry is nil where the denominator is 0.]])

-- A derived metric is {name=, unit=, desc=, events={...}, fn=function(e, ctx)}.
-- `e` is a table name -> number of the reading; ctx carries iterations,
-- bytes, seconds, by the estimator the counts have (a survey: per
-- iteration, the time's own two-window slope, pair by pair).  Returns value or nil, reason (missing event, zero
-- denominator, error in the formula: never NaN passed off as a number).
function M.eval(metric, reading, ctx)
  errors.check("eval", 1, metric, "table")
  errors.check("eval", 2, reading, "table?")
  errors.check("eval", 3, ctx, "table?")
  local vals = M.values(reading)
  for _, name in ipairs(metric.events or {}) do
    if vals[name] == nil then
      return nil, string.format("metric %s needs event %s, not in the reading", metric.name or "?", name)
    end
  end
  -- the context's fields the formula read and found absent: the third result
  local absent
  local seen = setmetatable({}, {__index = function(_, k)
    local v = (ctx or {})[k]
    if v == nil then absent = absent or k end
    return v
  end})
  local ok, v = pcall(metric.fn, vals, seen)
  -- Ctrl-C inside a metric stops the command, as it stops a measurement
  if not ok and sys.interrupted() then error(v, 0) end
  if not ok then return nil, string.format("metric %s failed: %s", metric.name or "?", v), absent end
  if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge then
    return nil, string.format("metric %s is undefined here (division by zero?)", metric.name or "?")
  end
  return v
end
doc(M.eval, "metrics.eval", [[
metrics.eval(metric, reading[, ctx]) -> value | nil, reason
metric = {name=, unit=, events={...}, fn=function(e, ctx)}: fn gets the
reading's values by name (metrics.values) and ctx (iterations, bytes,
seconds, as the counts are taken: a survey's per iteration, by the time's
own two-window slope, pair by pair); a missing
event, an error or a division by zero is nil and why, never NaN passed off
as a number.]])

-- Evaluates a list of metrics; returns a list of {name=, value=, unit=, reason=}.
function M.eval_all(metrics, reading, ctx)
  errors.check("eval_all", 1, metrics, "table")
  errors.check("eval_all", 2, reading, "table?")
  errors.check("eval_all", 3, ctx, "table?")
  local out = {}
  for i, m in ipairs(metrics) do
    local v, why = M.eval(m, reading, ctx)
    out[i] = {name = m.name, value = v, unit = m.unit, reason = why}
  end
  return out
end
doc(M.eval_all, "metrics.eval_all", [[
metrics.eval_all(metrics, reading[, ctx]) -> {{name, value, unit, reason}, ...}:
metrics.eval of each, in order (metrics.common: IPC, GHz, faults/page, tsc GHz).]])

-- Common derived metrics over generic perf names (used when those events exist).
M.common = {
  {name = "IPC", events = {"instructions", "cycles"}, desc = "instructions per cycle",
   fn = function(e) return e.instructions / e.cycles end},
  {name = "GHz", events = {"cycles", "task-clock"}, desc = "cycles per ns of task clock",
   fn = function(e) return e.cycles / e["task-clock"] end},
  {name = "faults/page", events = {"page-faults"}, unit = "per 4 KiB page",
   desc = "page faults per 4 KiB page of the bytes moved",
   fn = function(e, c) return e["page-faults"] / (c.bytes / 4096) end},
  {name = "tsc GHz", events = {"msr/tsc/"}, desc = "TSC ticks per ns of wall time",
   fn = function(e, c) return e["msr/tsc/"] / c.seconds / 1e9 end},
}

return M
