-- pmcsh.numbers: how a number prints where a table or a name shows it,
-- written once: a size in binary units, a table cell's fixed or exponent
-- form.
local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")

local M = {}

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

return M
