-- Driver (spec/fuzz/lua.c): a baseline file, as pmcsh health reads it
-- before measuring (pmcsh.compare.read_baseline), then used as health uses
-- it: each metric's bounds and median printed and compared with a value,
-- the band as a percentage.  nil and a message is the reader's answer to
-- a bad file; an error raised after it accepted one is a finding, and so
-- is a field it let through that health could not use.
local compare = require("pmcsh.compare")
local path = os.tmpname()

local function finite(v) return type(v) == "number" and v == v and math.abs(v) <= compare.LIMIT end

return function(data)
  local f = assert(io.open(path, "wb"))
  assert(f:write(data))
  f:close()
  local b, err = compare.read_baseline(path)
  if not b then
    assert(type(err) == "string", "read_baseline failed without a message")
    return
  end
  assert(finite(b.z) and b.z > 0, "z")
  assert(finite(b.band) and b.band >= 0, "band")
  for name, m in pairs(b.metrics) do
    assert(type(name) == "string" and type(m) == "table", "a metric")
    assert(finite(m.median), "median")
    for _, k in ipairs({"low", "high"}) do assert(m[k] == nil or finite(m[k]), k) end
    assert(not (m.low and m.high) or m.low <= m.high, "low above high")
    -- bounds that exclude their own median fail every healthy node
    assert(not m.low or m.low <= m.median, "low above its median")
    assert(not m.high or m.high >= m.median, "high below its median")
    -- what health does with it (scripts/health.lua: bounds, judge)
    local why = string.format("the baseline's median %.6g, band %g%%", m.median, b.band * 100)
    local v = 1.5
    if m.low and v < m.low then why = string.format("%.6g < %.6g (%s)", v, m.low, why) end
    if m.high and v > m.high then why = string.format("%.6g > %.6g (%s)", v, m.high, why) end
    assert(type(why) == "string")
  end
end
