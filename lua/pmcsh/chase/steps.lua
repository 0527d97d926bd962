-- pmcsh.chase.steps: the steps of a latency curve (chase.sweep's rows)
-- matched to the caches sysfs reports, and the step to memory.
local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")
local machine = require("pmcsh.machine")
local numbers = require("pmcsh.numbers")
local format = require("pmcsh.format")

local M = {}

local STEPS = format.kind("pmcsh.chase_steps")

local STEP = 1.25   -- a point this much above the one before it is part of a step
local NEAR_MEMORY = 0.6   -- at half the LLC, this share of memory's latency or more: no LLC serves the chain

M.steps = doc(errors.facade("steps", function(rows, caches)
  if type(rows) ~= "table" then errors.argument("steps", 1, "rows {{size=, ns=}, ...} expected", 1) end
  caches = caches or machine.caches()
  -- smoothed by a running median of 3, so that one stray sample makes no step
  local sm = {}
  for i, row in ipairs(rows) do
    local a, b, c = rows[math.max(1, i - 1)].ns, row.ns, rows[math.min(#rows, i + 1)].ns
    sm[i] = math.max(math.min(a, b), math.min(math.max(a, b), c))
  end
  local steps = {}
  local i = 2
  while i <= #sm do
    if sm[i] >= STEP * sm[i - 1] then
      local j = i
      while j + 1 <= #sm and sm[j + 1] >= STEP * sm[j] do j = j + 1 end
      local lo, hi = rows[i - 1], rows[j]
      local step = {from = lo.size, to = hi.size, ratio = sm[j] / sm[i - 1]}
      for _, c in ipairs(caches) do
        if c.size >= lo.size / 2 and c.size <= hi.size * 2 then step.cache_level, step.cache_size = c.level, c.size end
      end
      steps[#steps + 1] = step
      i = j + 1
    end
    i = i + 1
  end
  local res = setmetatable({steps = steps}, STEPS)
  -- the step to memory: the highest beyond the level below the LLC, where
  -- the curve runs past twice the LLC
  local llc, below = nil, 0
  for _, c in ipairs(caches) do
    if not llc or c.size > llc.size then llc = c end
  end
  if not llc or #rows == 0 or rows[#rows].size < 2 * llc.size then return res end
  for _, c in ipairs(caches) do
    if c.size < llc.size then below = math.max(below, c.size) end
  end
  local function middle(st) return math.sqrt(st.from * st.to) end   -- a step's place: the geometric middle
  local mem
  for _, st in ipairs(steps) do
    if middle(st) > 2 * below and (not mem or st.ratio > mem.ratio) then mem = st end
  end
  -- and, whatever the steps: at half the LLC an LLC this chain owns still
  -- serves nearly every load, far below memory's latency (the first point
  -- past twice the LLC); a curve already near memory there has no such LLC
  local half, far
  for k, row in ipairs(rows) do
    if row.size <= llc.size / 2 then half = k end
    if not far and row.size >= 2 * llc.size then far = k end
  end
  local near_memory = half and sm[half] >= NEAR_MEMORY * sm[far]
  if near_memory and not (mem and middle(mem) < llc.size / 2) then
    mem = nil   -- the rise into memory lies below half the LLC: the last step there
    for _, st in ipairs(steps) do
      if middle(st) < llc.size / 2 then mem = st end
    end
  end
  if mem and middle(mem) < llc.size / 2 or near_memory then
    if mem then
      mem.below_llc = true
      if mem.cache_size == llc.size then mem.cache_level, mem.cache_size = nil, nil end
    end
    res.below_llc = true
    res.note = string.format("%s well below the L%d of %s that sysfs reports%s: this machine does not own the "
      .. "last-level cache it reports (a virtual machine's other tenants, or other core complexes, hold the rest)",
      mem and string.format("the step to memory (%s -> %s) comes", numbers.size(mem.from), numbers.size(mem.to))
        or "the curve reaches memory's latency", llc.level, numbers.size(llc.size),
      near_memory and string.format("; at %s, half of it, a load already takes %.0f%% of memory's %.1f ns",
        numbers.size(rows[half].size), 100 * sm[half] / sm[far], sm[far]) or "")
  end
  return res
end), "chase.steps", [[
chase.steps(rows[, caches]) -> {steps={{from=, to=, ratio=, cache_level=?, cache_size=?, below_llc=?}, ...},
  below_llc=?, note=?}
The steps of a latency curve (rows {{size=, ns=}, ...} by size, as
chase.sweep gives): on the curve smoothed by a running median of 3, runs
of points each at least 25% above the one before; from is the last size
before the step, to the first after it, ratio the rise.  A step gets the
sysfs cache (caches: machine.caches() by default) within a factor of 2 of
it.  Where the curve runs past twice the last-level cache, the step to
memory is its highest step above twice the level below.  When that lies
below half the LLC (the geometric middle of from and to), or when at half
the LLC a load already takes 60% or more of memory's latency (the first
point past twice the LLC: an LLC the chain owns serves it far faster), the
step into memory is below_llc (not matched to the LLC; it may be the step
out of the level below, merged), res.below_llc is true and note says so
in words: a machine that does not own the LLC it reports.]])

return M
