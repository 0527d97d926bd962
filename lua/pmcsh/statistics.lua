-- pmcsh.statistics: the statistics every recipe shares, written once:
-- order statistics over a list (nanoBench's trimmed mean), perf stat -r's
-- running mean and its error, the robust z-score of a fleet, Student's t
-- and Welch's interval of an A/B, and the two-window estimate of a
-- per-iteration figure.  Plain numbers in, plain numbers out.
local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")

local M = {}

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
  if s[n] == s[1] then spread = 0 elseif mean ~= 0 then spread = (s[n] - s[1]) / math.abs(mean) end
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
-- the slopes (count per iteration) and intercepts (count per window, what
-- a window costs beyond its iterations) of the pairs whose work differs,
-- and pair[j], the pair number i of slope j: a pair with no difference
-- of work has no slope, so the j-th slope is pair pair[j]'s, not pair j's.
-- Counts and work are integers: the differences stay exact 64-bit
-- integers until the one division.
-- Argument arg of two_window, a list: each of its first n entries a number,
-- else a bad argument naming the entry (a reading is a table of counts:
-- its count is r[1].value).
local function check_numbers(arg, name, list, n)
  for i = 1, n do
    local v = list[i]
    if type(v) ~= "number" then
      -- its kind: a protected metatable's name (__metatable, as a reading's) or __name
      local mt = getmetatable(v)
      local got = type(mt) == "string" and mt
        or type(mt) == "table" and type(rawget(mt, "__name")) == "string" and rawget(mt, "__name")
        or (v == nil and "nil" or type(v))
      errors.argument("two_window", arg, string.format("%s[%d]: a number expected, got %s%s", name, i, got,
        type(v) == "table" and " (a count per window: a reading's is r[1].value)" or ""), 2)
    end
  end
end

function M.two_window(work, counts)
  errors.check("two_window", 1, work, "table")
  errors.check("two_window", 2, counts, "table")
  local n = #counts - #counts % 2
  check_numbers(1, "work", work, n)
  check_numbers(2, "counts", counts, n)
  local slopes, intercepts, pair = {}, {}, {}
  for i = 2, #counts, 2 do
    local w1, w2, c1, c2 = work[i - 1], work[i], counts[i - 1], counts[i]
    local dw = w2 - w1
    if dw > 0 then
      local slope = (c2 - c1) / dw
      slopes[#slopes + 1] = slope
      intercepts[#intercepts + 1] = c1 - slope * w1
      pair[#pair + 1] = i // 2
    end
  end
  return slopes, intercepts, pair
end
doc(M.two_window, "metrics.two_window", [[
metrics.two_window(work, counts) -> slopes, intercepts, pair: windows 2i-1
and 2i ran the same code over work[2i-1] < work[2i] iterations; each pair's
slope (count per iteration) and intercept (count per window: its fixed
cost), as nanoBench estimates, and pair[j]: the pair number of slope j (a
pair whose work does not differ has none).]])

return M
