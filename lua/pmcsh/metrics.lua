-- Normalization and derived metrics: the small arithmetic every recipe shares.
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

local M = {}

local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")

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

-- A size in pmcsh's one notation, binary units: 512, 4K, 1M, 256M, 1.5G.
function M.size(bytes)
  errors.check("size", 1, bytes, "number")
  for _, u in ipairs{{2^40, "T"}, {2^30, "G"}, {2^20, "M"}, {2^10, "K"}} do
    if bytes >= u[1] then
      local v = bytes / u[1]
      return (v == math.floor(v) and string.format("%d", v) or string.format("%.1f", v)) .. u[2]
    end
  end
  return string.format("%d", bytes)
end
doc(M.size, "metrics.size", [[
metrics.size(bytes) -> "512", "4K", "1.5M", "256M", "1G": pmcsh's one notation
for sizes, binary units.]])

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

-- The midpoint of a and b, (a + b) / 2 without its overflow: halves
-- of numbers from 1 up are exact, so a / 2 + b / 2 is the same double
-- wherever a + b is one (+-1.7e308 made +-inf and "-nan" of a median).
local function midpoint(a, b)
  if math.abs(a) < 1 and math.abs(b) < 1 then return (a + b) / 2 end
  return a / 2 + b / 2
end

-- Order statistics over a list of numbers: {n, mean, trimmed, median,
-- min, max, spread}; trimmed is the mean of the middle 60% (nanoBench's
-- 20th to 80th percentile: the sorted values from floor(n/5)+1 to
-- n-floor(n/5)); spread is (max - min) relative to the mean (0 when all
-- equal, nil when the mean is 0 but values differ).
function M.stats(list)
  errors.check("stats", 1, list, "table")
  local n = #list
  if n == 0 then return {n = 0} end
  local s, sum = {}, 0
  for i = 1, n do s[i] = list[i]; sum = sum + list[i] end
  table.sort(s)
  local median = (n % 2 == 1) and s[(n + 1) // 2] or midpoint(s[n // 2], s[n // 2 + 1])
  local mean = sum / n
  local cut, mid = n // 5, 0
  for i = cut + 1, n - cut do mid = mid + s[i] end
  local spread
  if s[n] == s[1] then spread = 0 else spread = ratio(s[n] - s[1], math.abs(mean)) end
  return {n = n, mean = mean, trimmed = mid / (n - 2 * cut), median = median, min = s[1], max = s[n],
    spread = spread}
end
doc(M.stats, "metrics.stats", [[
metrics.stats(list) -> {n, mean, trimmed, median, min, max, spread} of a list
of numbers ({n = 0} for an empty one).  trimmed: the mean of the middle 60%
(nanoBench's 20th to 80th percentile); spread: (max - min) / |mean|, 0 when
all are equal, nil when the mean is 0 but the values differ.]])

-- perf stat -r's statistics, perf's struct stats (tools/perf/util/stat.c):
-- the count, the running mean and the sum of squared deviations from it,
-- updated a value at a time (Welford), so a million runs keep three numbers.
function M.running()
  return {n = 0, mean = 0, m2 = 0}
end
doc(M.running, "metrics.running", [[
metrics.running() -> {n = 0, mean = 0, m2 = 0}: perf stat's running statistics
of repeated runs, as plain data; metrics.update adds a value, metrics.mean_error
gives the standard error of the mean.]])

local function check_running(func, s)
  if type(s.n) ~= "number" or type(s.mean) ~= "number" or type(s.m2) ~= "number" then
    errors.argument(func, 1, "running statistics (metrics.running()) expected", 2)
  end
end

function M.update(s, x)
  errors.check("update", 1, s, "table")
  check_running("update", s)
  errors.check("update", 2, x, "number")
  s.n = s.n + 1
  local d = x - s.mean
  s.mean = s.mean + d / s.n
  s.m2 = s.m2 + d * (x - s.mean)
  return s
end
doc(M.update, "metrics.update", [[
metrics.update(s, x) -> s: adds x to the running statistics s (metrics.running),
Welford's update of the mean and the sum of squared deviations.]])

-- perf's stddev_stats: the standard deviation of the mean, sqrt(m2 / (n - 1) / n)
function M.mean_error(s)
  errors.check("mean_error", 1, s, "table")
  check_running("mean_error", s)
  if s.n < 2 then return 0, 0 end
  local se = math.sqrt(s.m2 / (s.n - 1) / s.n)
  return se, s.mean ~= 0 and 100 * se / math.abs(s.mean) or 0
end
doc(M.mean_error, "metrics.mean_error", [[
metrics.mean_error(s) -> se, rse: the standard error of the mean of the running
statistics s (perf stat's "+-": the standard deviation over sqrt(n)) and it
relative to the mean, in percent (0, 0 for fewer than two values; rse 0 for
a zero mean).]])

-- A list's perf stat -r figures, through the running statistics above.
function M.mean_rse(xs)
  errors.check("mean_rse", 1, xs, "table")
  local s = M.running()
  for _, x in ipairs(xs) do M.update(s, x) end
  local se, rse = M.mean_error(s)
  return s.n > 0 and s.mean or 0 / 0, rse, se * math.sqrt(s.n)
end
doc(M.mean_rse, "metrics.mean_rse", [[
metrics.mean_rse(list) -> mean, rse, sd: perf stat -r's figures of a list
of numbers: the mean, the relative standard error of the mean in percent
(0 for one value or a zero mean) and the sample standard deviation.]])

-- The median of a list of numbers, nil for an empty one.
function M.median(list)
  errors.check("median", 1, list, "table")
  local n = #list
  if n == 0 then return nil end
  local s = table.move(list, 1, n, 1, {})
  table.sort(s)
  return n % 2 == 1 and s[(n + 1) // 2] or midpoint(s[n // 2], s[n // 2 + 1])
end
doc(M.median, "metrics.median", [[
metrics.median(list) -> the median of a list of numbers (the list is left as
it is), nil for an empty one.]])

-- The median absolute deviation from m (the list's median by default).
function M.mad(list, m)
  errors.check("mad", 1, list, "table")
  errors.check("mad", 2, m, "number?")
  m = m or M.median(list)
  if not m then return nil end
  local d = {}
  for i, x in ipairs(list) do d[i] = math.abs(x - m) end
  return M.median(d)
end
doc(M.mad, "metrics.mad", [[
metrics.mad(list[, m]) -> the median absolute deviation from m (default: the
list's median), nil for an empty list.]])

-- Iglewicz and Hoaglin's modified z-score, 0.6745 (x - median) / MAD: the
-- 0.6745 makes it a normal sample's z.  With a MAD of 0 (most of the list
-- equal) it is 0 at the median and infinite anywhere else.
M.ROBUST_Z = 0.6745
function M.robust_z(x, median, mad)
  errors.check("robust_z", 1, x, "number")
  errors.check("robust_z", 2, median, "number")
  errors.check("robust_z", 3, mad, "number")
  if mad > 0 then return M.ROBUST_Z * (x - median) / mad end
  if x == median then return 0 end
  return x > median and math.huge or -math.huge
end
doc(M.robust_z, "metrics.robust_z", [[
metrics.robust_z(x, median, mad) -> 0.6745 (x - median) / mad (Iglewicz and
Hoaglin's modified z-score); with mad 0: 0 at the median, +-inf elsewhere.]])

-- log Gamma(x), x > 0 (Lanczos, g = 7, 9 terms: 15 digits).
local LANCZOS = {0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
  -176.61503916999185, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7}
local function lgamma(x)
  if x < 0.5 then return math.log(math.pi / math.abs(math.sin(math.pi * x))) - lgamma(1 - x) end
  x = x - 1
  local a, t = LANCZOS[1], x + 7.5
  for i = 2, 9 do a = a + LANCZOS[i] / (x + i - 1) end
  return 0.5 * math.log(2 * math.pi) + (x + 0.5) * math.log(t) - t + math.log(a)
end

-- The regularised incomplete beta I_x(a, b), by its continued fraction
-- (Lentz), on the side where it converges.
local function betacf(a, b, x)
  local tiny, c, d = 1e-300, 1, 1 - (a + b) * x / (a + 1)
  if math.abs(d) < tiny then d = tiny end
  d = 1 / d
  local h = d
  for m = 1, 300 do
    local m2 = 2 * m
    local aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2))
    d = 1 + aa * d; if math.abs(d) < tiny then d = tiny end
    c = 1 + aa / c; if math.abs(c) < tiny then c = tiny end
    d = 1 / d; h = h * d * c
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))
    d = 1 + aa * d; if math.abs(d) < tiny then d = tiny end
    c = 1 + aa / c; if math.abs(c) < tiny then c = tiny end
    d = 1 / d
    local del = d * c
    h = h * del
    if math.abs(del - 1) < 1e-15 then break end
  end
  return h
end
local function ibeta(x, a, b)
  if x <= 0 then return 0 elseif x >= 1 then return 1 end
  local front = math.exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * math.log(x) + b * math.log(1 - x))
  if x < (a + 1) / (a + b + 2) then return front * betacf(a, b, x) / a end
  return 1 - front * betacf(b, a, 1 - x) / b
end

-- Student's t distribution with df degrees of freedom: P(T <= t), and the
-- t with P(T <= t) = p (bisection on it, 1e-12 relative).
function M.t_cdf(t, df)
  errors.check("t_cdf", 1, t, "number")
  errors.check("t_cdf", 2, df, "number")
  local tail = 0.5 * ibeta(df / (df + t * t), df / 2, 0.5)
  return t >= 0 and 1 - tail or tail
end
doc(M.t_cdf, "metrics.t_cdf", [[
metrics.t_cdf(t, df) -> P(T <= t) for Student's t with df degrees of freedom.]])
function M.t_quantile(p, df)
  errors.check("t_quantile", 1, p, "number")
  errors.check("t_quantile", 2, df, "number")
  if p == 0.5 then return 0 end
  if p < 0.5 then return -M.t_quantile(1 - p, df) end
  local lo, hi = 0, 1
  while M.t_cdf(hi, df) < p do lo, hi = hi, hi * 2 end
  for _ = 1, 200 do
    local mid = (lo + hi) / 2
    if M.t_cdf(mid, df) < p then lo = mid else hi = mid end
    if hi - lo <= 1e-12 * hi then break end
  end
  return (lo + hi) / 2
end
doc(M.t_quantile, "metrics.t_quantile", [[
metrics.t_quantile(p, df) -> the t with P(T <= t) = p for Student's t with df
degrees of freedom (1e-12 relative): t_quantile(0.975, df) for a 95% interval.]])

-- Welch's interval for mean(b) - mean(a) at `level` (0.95): {diff=, lo=,
-- hi=, se=, df=, mean_a=, mean_b=, n_a=, n_b=}; nil and why with fewer
-- than 2 values on a side.  floor_a, floor_b: the least variance one value
-- of a side can have (counts: their Poisson variance), which a few equal
-- values would otherwise hide.  With no spread on either side the interval
-- is the difference itself (exact counts that differ, differ).
function M.welch(a, b, level, floor_a, floor_b)
  errors.check("welch", 1, a, "table")
  errors.check("welch", 2, b, "table")
  errors.check("welch", 3, level, "number?")
  errors.check("welch", 4, floor_a, "number?")
  errors.check("welch", 5, floor_b, "number?")
  level = level or 0.95
  if #a < 2 or #b < 2 then
    return nil, string.format("%d and %d repetitions: an interval needs 2 on each side", #a, #b)
  end
  local function mv(x, floor)
    local s = 0
    for _, v in ipairs(x) do s = s + v end
    local m, ss = s / #x, 0
    for _, v in ipairs(x) do ss = ss + (v - m) ^ 2 end
    return m, math.max(ss / (#x - 1), floor or 0)
  end
  local ma, va = mv(a, floor_a)
  local mb, vb = mv(b, floor_b)
  local qa, qb = va / #a, vb / #b
  local se = math.sqrt(qa + qb)
  -- Welch-Satterthwaite, (qa + qb)^2 / (qa^2 / (na - 1) + qb^2 / (nb - 1)),
  -- as shares of qa + qb: no fourth power of the values to overflow
  local ra, rb = qa / (qa + qb), qb / (qa + qb)
  local df = se > 0 and 1 / (ra ^ 2 / (#a - 1) + rb ^ 2 / (#b - 1)) or #a + #b - 2
  local half = se > 0 and M.t_quantile(1 - (1 - level) / 2, df) * se or 0
  local diff = mb - ma
  return {diff = diff, lo = diff - half, hi = diff + half, se = se, df = df, mean_a = ma, mean_b = mb,
    n_a = #a, n_b = #b, level = level}
end
doc(M.welch, "metrics.welch", [=[
metrics.welch(a, b[, level[, floor_a[, floor_b]]]) -> {diff, lo, hi, se, df,
mean_a, mean_b, n_a, n_b, level}: mean(b) - mean(a) with Welch's interval at
level (0.95), or nil, message with fewer than 2 values on a side.  floor_a,
floor_b: the least variance of one value of a side (a count's Poisson variance).]=])

-- The two-window estimate (nanoBench's): windows 2i-1 and 2i run the same
-- code over work[2i-1] < work[2i] iterations, so the difference of their
-- counts is the work's alone and the window's fixed cost cancels.  Returns
-- the per-pair slopes (count per iteration) and intercepts (count per
-- window, what a window costs beyond its iterations).  Counts and work are
-- integers: the differences stay exact 64-bit integers until the one
-- division.
function M.two_window(work, counts)
  errors.check("two_window", 1, work, "table")
  errors.check("two_window", 2, counts, "table")
  local slopes, intercepts = {}, {}
  for i = 2, #counts, 2 do
    local w1, w2, c1, c2 = work[i - 1], work[i], counts[i - 1], counts[i]
    local dw = w2 - w1
    if dw > 0 then
      local slope = (c2 - c1) / dw
      slopes[#slopes + 1] = slope
      intercepts[#intercepts + 1] = c1 - slope * w1
    end
  end
  return slopes, intercepts
end
doc(M.two_window, "metrics.two_window", [[
metrics.two_window(work, counts) -> slopes, intercepts: windows 2i-1 and 2i
ran the same code over work[2i-1] < work[2i] iterations; each pair's slope
(count per iteration) and intercept (count per window: its fixed cost), as
nanoBench estimates.]])

-- A derived metric is {name=, unit=, desc=, events={...}, fn=function(e, ctx)}.
-- `e` is a table name -> number of the reading; ctx carries iterations,
-- bytes, seconds.  Returns value or nil, reason (missing event, zero
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
seconds); a missing event, an error or a division by zero is nil and why,
never NaN passed off as a number.]])

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

-- Formats a number for a table cell: fixed 4 decimals in the usual range,
-- exponent form for very large and very small nonzero values (a stray
-- context switch per million iterations is not 0.0000), "n/a" for nil.
function M.fmt(v, width)
  errors.check("fmt", 1, v, "number?")
  errors.check("fmt", 2, width, "integer?")
  width = width or 10
  if v == nil then return string.format("%" .. width .. "s", "n/a") end
  local a = math.abs(v)
  if a >= 1e7 or (a > 0 and a < 1e-3) then return string.format("%" .. width .. ".3e", v) end
  return string.format("%" .. width .. ".4f", v)
end
doc(M.fmt, "metrics.fmt", [[
metrics.fmt(v[, width]) -> a table cell of width (10): 4 decimals, exponent
form below 1e-3 and from 1e7 (a stray count per million iterations is not
0.0000), "n/a" for nil.]])

doc(M, "metrics", [[
metrics: normalization and derived metrics shared by the recipes.
  metrics.normalize(reading, by, ctx)   by = "iteration"|"byte"|"second"|EVENT
  metrics.stats(list)                   {n, mean, trimmed, median, min, max, spread}
  metrics.median(list), metrics.mad(list), metrics.robust_z(x, median, mad)   0.6745 (x - median) / MAD
  metrics.welch(a, b, level, fa, fb)    mean(b) - mean(a) with Welch's interval (t_quantile, t_cdf)
  metrics.two_window(work, counts)      per pair of windows: slopes (per iteration), intercepts
  metrics.eval(metric, reading, ctx)    metric = {name=, events={...}, fn=function(e, ctx)}
  metrics.per_iteration / per_byte / per_second / ratio (nil on a zero denominator)]])

return M
