-- A run's time per iteration, by two estimators, each named where it is
-- shown (STYLE 16): written once for the workloads (a run's MB/s), the
-- records (the kernel figures) and the group's formulas (ctx.seconds, by
-- the slope).
local statistics = require("pmcsh.statistics")

local M = {}

M.SLOPE, M.SAMPLE = "median slope", "median sample"

-- Seconds per iteration of a run or baseline record, one sample per pair
-- or window, by the estimator the counts use: each pair's time slope
-- above 0 (the window's fixed cost cancelled; a pair whose shorter window
-- was preempted has none), else, for a run of equal windows (a chase's
-- samples), each window's time over its iterations.  The list and the
-- estimator's name (M.SLOPE or M.SAMPLE, said of their median); nil for a
-- record without times.
function M.samples(rec)
  if not rec then return nil end
  local positive = {}
  for _, x in ipairs(rec.sec_per_iter or {}) do if x > 0 then positive[#positive + 1] = x end end
  if #positive > 0 then return positive, M.SLOPE end
  local per = {}
  for i, t in ipairs(rec.times or {}) do
    local w = rec.work and rec.work[i] or (rec.iterations and rec.iterations / #rec.times)
    if w and w > 0 then per[#per + 1] = t / w end
  end
  if #per > 0 then return per, M.SAMPLE end
end

-- The median of those: the seconds and the estimator's name.
function M.median_seconds(rec)
  local per, how = M.samples(rec)
  if per then return statistics.median(per), how end
end

-- MB/s of a run at `bytes` per iteration, by median_seconds; nil where
-- either is unknown.
function M.mbps(rec, bytes)
  local s = M.median_seconds(rec)
  return bytes and s and s > 0 and 1e-6 * bytes / s or nil
end

return M
