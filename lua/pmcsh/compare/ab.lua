-- Two sides, A and B, compared against run-to-run noise: per metric the
-- difference of the runs' means with Welch's interval over the runs, the
-- intervals together at one level (Bonferroni), and where the sides'
-- fingerprints and settings differ.
local fleet = require("pmcsh.compare.fleet")
local sets = require("pmcsh.compare.sets")
local statistics = require("pmcsh.statistics")

local M = {}

M.LEVEL = 0.95

-- Two sides, A and B, each a list of sets (a set is one run): per metric
-- both have, each run's value (its headline: best, trimmed mean, as the
-- recipe states it), and B - A between the means of the runs with
-- Welch's interval over the runs, so the interval holds the run-to-run
-- variance that the repetitions inside one run never show.  The
-- intervals hold together at o.level (Bonferroni: each at 1 - (1 -
-- level) / m for m intervals): "no significant difference" then means
-- for every metric at once, as an A/A of many metrics must read.  A side
-- of one run gives no interval (why = "one run each", "one run in A").
-- A metric zero in every run of both sides is left out (counted).
-- Returns rows {metric=, unit=, better=, a=, b=, diff=, rel=, lo=, hi=,
-- runs_a=, runs_b=, significant= (nil: no interval), why=, sd_runs= (the
-- runs' values' SD, pooled over the sides), sd_reps= (the median SD of
-- the repetitions inside a run, where runs kept them)}, significant ones
-- first, then by |rel|; and {level=, each= (each interval's level),
-- intervals=, zero=, disturbances= (the events left out)}.
-- Per metric the runs of a side that hold it: values, the least variance
-- of one run's value (a count's Poisson floor over the samples its value
-- rests on), the SDs of its repetitions, and the first run's metric.
local function gather(runs, name)
  local xs, floor, sds, first = {}, 0, {}, nil
  for _, r in ipairs(runs) do
    local e = r[name]
    if e then
      first = first or e
      xs[#xs + 1] = e.value
      floor = math.max(floor, e.floor / math.max(1, #e.samples))
      if #e.samples >= 2 then sds[#sds + 1] = select(3, statistics.mean_rse(e.samples)) end
    end
  end
  return xs, floor, sds, first
end

-- A metric's row, before its interval: nil where B has no run of it;
-- "zero" where every run of both sides is 0.
local function row_of(name, ra, rb)
  local xs, fa, sa, e = gather(ra, name)
  local ys, fb, sb = gather(rb, name)
  if #ys == 0 then return nil end
  local zero = true
  for _, v in ipairs(xs) do zero = zero and v == 0 end
  for _, v in ipairs(ys) do zero = zero and v == 0 end
  if zero then return "zero" end
  local row = {metric = name, unit = e.unit, better = e.better, runs_a = #xs, runs_b = #ys, fa = fa, fb = fb,
    xs = xs, ys = ys}
  local sds = {}
  table.move(sa, 1, #sa, 1, sds); table.move(sb, 1, #sb, #sds + 1, sds)
  row.sd_reps = #sds > 0 and statistics.median(sds) or nil
  if #xs >= 2 and #ys >= 2 then
    local sdx, sdy = select(3, statistics.mean_rse(xs)), select(3, statistics.mean_rse(ys))
    row.sd_runs = math.sqrt(((#xs - 1) * sdx ^ 2 + (#ys - 1) * sdy ^ 2) / (#xs + #ys - 2))
  else
    row.why = #xs < 2 and #ys < 2 and "one run each" or #xs < 2 and "one run in A" or "one run in B"
  end
  return row
end

-- A row's means, difference and (with two runs a side) Welch's interval
-- at each interval's level.
local function judge(row, each)
  local s = 0
  for _, v in ipairs(row.xs) do s = s + v end
  row.a = s / #row.xs
  s = 0
  for _, v in ipairs(row.ys) do s = s + v end
  row.b = s / #row.ys
  if not row.why then
    local w = statistics.welch(row.xs, row.ys, each, row.fa, row.fb)
    row.a, row.b, row.lo, row.hi = w.mean_a, w.mean_b, w.lo, w.hi
    row.significant = w.lo > 0 or w.hi < 0
  end
  row.diff = row.b - row.a
  row.rel = row.a ~= 0 and row.diff / math.abs(row.a) or (row.diff == 0 and 0 or nil)
  row.xs, row.ys, row.fa, row.fb = nil, nil, nil, nil
end

function M.ab(a_sets, b_sets, o)
  o = o or {}
  local level = o.level or M.LEVEL
  local left = {}
  local function side(list)
    local runs = {}
    for i, s in ipairs(list) do runs[i] = sets.merge({s}, o.filter, left) end
    return runs
  end
  local ra, rb = side(a_sets), side(b_sets)
  local order, seen = {}, {}
  for _, r in ipairs(ra) do
    for _, e in pairs(r) do
      if not seen[e.name] then seen[e.name] = true; order[#order + 1] = e.name end
    end
  end
  table.sort(order)
  local rows, info = {}, {level = level, zero = 0, disturbances = left}
  for _, name in ipairs(order) do
    local row = row_of(name, ra, rb)
    if row == "zero" then info.zero = info.zero + 1
    elseif row then rows[#rows + 1] = row end
  end
  local m = 0
  for _, r in ipairs(rows) do if not r.why then m = m + 1 end end
  info.intervals = m
  info.each = m > 0 and 1 - (1 - level) / m or level
  for _, row in ipairs(rows) do judge(row, info.each) end
  local rank = function(r) return r.significant == true and 0 or r.significant == nil and 1 or 2 end
  table.sort(rows, function(p, q)
    if rank(p) ~= rank(q) then return rank(p) < rank(q) end
    local rp, rq = math.abs(p.rel or math.huge), math.abs(q.rel or math.huge)
    if rp ~= rq then return rp > rq end
    return p.metric < q.metric
  end)
  return rows, info
end

-- Where two sets of sets differ: {field=, a=, b=} for the fingerprints
-- (identity included: an A/B of two machines says so) and the settings.
function M.ab_differences(a_sets, b_sets)
  local function one(list, what)
    local out = {}
    for _, s in ipairs(list) do
      local t = what == "fingerprint" and fleet.flat(s.fingerprint) or s.settings
      if what == "fingerprint" then t.host = s.host end
      for k, v in pairs(t) do if out[k] == nil then out[k] = tostring(v) end end
    end
    return out
  end
  local res = {}
  for _, what in ipairs({"fingerprint", "settings"}) do
    local x, y, keys = one(a_sets, what), one(b_sets, what), {}
    for k in pairs(x) do keys[k] = true end
    for k in pairs(y) do keys[k] = true end
    local names = {}
    for k in pairs(keys) do names[#names + 1] = k end
    table.sort(names)
    res[what] = {}
    for _, k in ipairs(names) do
      if x[k] ~= y[k] then table.insert(res[what], {field = k, a = x[k] or "(absent)", b = y[k] or "(absent)"}) end
    end
  end
  return res
end

return M
