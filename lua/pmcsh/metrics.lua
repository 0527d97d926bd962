-- pmcsh.metrics: the scripts' and the REPL's one name for the arithmetic
-- every recipe shares, which lives in three homes: pmcsh.statistics (lists
-- of numbers to estimates), pmcsh.formulas (readings to numbers, derived
-- metrics) and pmcsh.numbers (how a number prints).  pmcsh's own modules
-- require the home they use; this door only names them together.
local doc = require("pmcsh.help").doc
local formulas = require("pmcsh.formulas")
local numbers = require("pmcsh.numbers")
local statistics = require("pmcsh.statistics")

local M = {}
for _, home in ipairs({statistics, formulas, numbers}) do
  for k, v in pairs(home) do M[k] = v end
end

doc(M, "metrics", [[
metrics: the arithmetic shared by the recipes (statistics, formulas, number formats).
  metrics.stats(list)                   {n, mean, trimmed, median, min, max, spread}
  metrics.median(list), metrics.mad(list), metrics.robust_z(x, median, mad)   0.6745 (x - median) / MAD
  metrics.welch(a, b, level, fa, fb)    mean(b) - mean(a) with Welch's interval (t_quantile, t_cdf)
  metrics.two_window(work, counts)      per pair of windows: slopes (per iteration), intercepts, pair numbers
  metrics.normalize(reading, by, ctx)   by = "iteration"|"byte"|"second"|EVENT
  metrics.eval(metric, reading, ctx)    metric = {name=, events={...}, fn=function(e, ctx)}
  metrics.per_iteration / per_byte / per_second / ratio (nil on a zero denominator)
  metrics.size(bytes), metrics.fmt(v, width)   a size in binary units; a table cell]])

return M
