-- What pmcsh can predict of a survey's cells without the counter, checked:
-- first touch, the TSC, instructions retired.  A workload lists the checks
-- that fit it (pmcsh.survey.workloads: its descriptor's `checks`); each is
-- check(cell, {w=, rec=, res=, hdr=}) and sets c.expected, c.check,
-- c.basis and c.verdict where it applies.  A check that applies but
-- cannot be made (every pair of windows disturbed, or none counted) says
-- so: unresolved, with the reason in its basis, never passed.
local cell = require("pmcsh.survey.cell")
local statistics = require("pmcsh.statistics")
local paths = require("pmcsh.paths")
local pmc = require("pmcsh.pmc")

local M = {}

-- The events the checks know, by what they count (pmc.identity), never by
-- their spelling: instructions retired is also INST_RETIRED, INST_RETIRED:ANY_P,
-- armv8_pmuv3/inst_retired/ and their PMU-qualified names.
local KNOWN = {faults = {"page-faults", "minor-faults"}, tsc = {"msr/tsc/"}, instructions = {"instructions"}}
local known_ids = {}
local function is(kind, name)
  if not name then return false end
  if not known_ids[kind] then
    known_ids[kind] = {}
    for _, n in ipairs(KNOWN[kind]) do
      local id = pmc.identity(n)
      if id then known_ids[kind][id] = true end
    end
  end
  local id = pmc.identity(name)
  return id ~= nil and known_ids[kind][id] == true
end

-- A check that applies to c but has nothing to judge: unresolved, saying
-- why (every pair of windows disturbed, or none counted).  True when so.
local function untrusted(c)
  local s = cell.standing(c)
  return s == "dropped" or s == "disturbed"
end
local function unmade(c)
  if not untrusted(c) then return false end
  c.verdict = "unresolved"
  c.basis = (c.basis and c.basis .. "; " or "") .. cell.why(c) .. ": nothing to check"
  return true
end

-- What pmcsh can predict of a cell, checked: first touch of fresh arrays
-- on 4 KiB pages faults once per page of each array the loop touches (a
-- read maps the zero page, a write a new one), in user mode, once per
-- window: the intercept.  Sets c.expected, c.check, c.basis, c.verdict.
function M.first_touch(c, x)
  local w, hdr = x.w, x.hdr
  local p = c.event and pmc.parse_name(c.event)
  local base = p and p.form == "name" and (p.modifiers == "" or p.modifiers == "u") and p.plain
  if not (hdr.fresh and hdr.pages == "4k" and base and is("faults", base) and w.bytes and hdr.n) then return end
  local arrays = w.bytes // 8
  -- a window over a slice of each thread's part touches that slice only
  local elements = hdr.slice and hdr.slice * (hdr.threads or 1) or hdr.n
  local pages = math.ceil(elements * 8 / 4096)
  c.expected = arrays * pages
  c.check, c.basis = "intercept", string.format("first touch: %d arrays of %d pages%s", arrays, pages,
    hdr.slice and " (each window's slice)" or "")
  if unmade(c) then return end
  -- an array's first page may start mid-page (its offset): one more each;
  -- a sanitized pmcsh (make asan) faults in up to a shadow page per 8 too,
  -- in the process's first window only: twice that in the intercept
  local shadow = paths.sanitized and math.ceil(c.expected / 4) or 0
  local edge = arrays * (hdr.slice and (hdr.threads or 1) or 1)   -- a slice may start mid-page: one more each
  c.verdict = c.intercept >= c.expected - 0.5 and c.intercept <= c.expected + edge + shadow + 0.5 and "pass" or "fail"
end

-- The TSC counter against the engine's own rdtsc around the same windows
-- (read outside the counters' window: its edges cancel in the slope), pair
-- by pair on the pairs kept: a task's TSC count stops only when it is
-- switched out, and those pairs are dropped.  The median pair within 2%.
-- The edges (enable and disable between rdtsc and the counters: the
-- clock's intercept less the counter's) cancel only as far as they repeat,
-- and they vary by about their own cost: a pair resolves 2% where its
-- windows differ by CLOCK_RESOLUTION times the edges; closer, the check
-- is unresolved, not failed.
M.CLOCK_TOLERANCE, M.CLOCK_RESOLUTION = 0.02, 50
function M.clock(c, x)
  local res, keep = x.res, x.keep or {}
  local p = c.event and pmc.parse_name(c.event)
  if not (res.pairs and p and p.modifiers == "" and is("tsc", p.plain)) then return end
  local ticks = res.record and res.record.tsc
  if not (ticks and #ticks == #res.work and c.windows and #c.windows == #ticks) then return end
  c.check, c.basis = "value", "rdtsc around each window, by the stream engine"
  if unmade(c) then return end
  -- the same work, so the same pairs have slopes: slope j is pair pair[j]'s in both
  local clock, clock_icpt, pair = statistics.two_window(res.work, ticks)
  local counted, counted_icpt = statistics.two_window(res.work, c.windows)
  local ratios, kept, apart, edges = {}, {}, {}, {}
  for j, sl in ipairs(clock) do
    local p = pair[j]
    if keep[p] ~= false and sl > 0 and counted[j] then
      ratios[#ratios + 1], kept[#kept + 1] = counted[j] / sl, sl
      apart[#apart + 1] = sl * (res.work[2 * p] - res.work[2 * p - 1])
      edges[#edges + 1] = math.abs(clock_icpt[j] - counted_icpt[j])
    end
  end
  if #ratios == 0 then
    c.verdict, c.basis = "unresolved", c.basis .. "; no kept pair where the clock advanced"
    return
  end
  c.expected = statistics.stats(kept).median
  local gap, edge = statistics.stats(apart).median, statistics.stats(edges).median
  if gap < M.CLOCK_RESOLUTION * edge then
    c.verdict = "unresolved"
    -- slices of a survey's own size (x.hdr.slice) do not grow with n
    c.basis = string.format("%s; windows %.0f ticks apart, edges %.0f (under %dx): too close to judge %g%%%s",
      c.basis, gap, edge, M.CLOCK_RESOLUTION, M.CLOCK_TOLERANCE * 100, x.hdr and x.hdr.slice and "" or ", raise --n")
    return
  end
  c.verdict = math.abs(statistics.stats(ratios).median - 1) <= M.CLOCK_TOLERANCE and "pass" or "fail"
end

-- Instructions retired in user mode per loop iteration: the loop body's
-- instructions over the elements one trip handles, as the binary's own
-- disassembly says (stream.disasm; Heller's check).  The loop's instructions
-- only: rep-prefixed or remainder code is not in the body, hence 0.5%.
M.INSTRUCTIONS_TOLERANCE = 0.005
-- a workload's disassembly, per descriptor and ISA: a survey's own (a loop
-- of one name in another survey may be another file's)
local loop_cache = setmetatable({}, {__mode = "k"})
function M.instructions(c, x)
  local w, rec = x.w, x.rec
  local p = c.event and pmc.parse_name(c.event)
  local base = p and p.privilege == "u" and p.plain
  if not (base and w.disasm and is("instructions", base)) then return end
  if untrusted(c) then
    c.check, c.basis = "value", "the loop's disassembly"
    unmade(c)
    return
  end
  if not (c.value and c.value > 0) then return end
  local mine = loop_cache[w] or {}
  loop_cache[w] = mine
  local isa = tostring(rec.isa)
  if mine[isa] == nil then
    local loop, why = w.disasm(rec)
    mine[isa] = loop or {why = why}
  end
  local loop = mine[isa]
  if not loop.instructions then   -- no silent absence: the row says why
    c.check, c.verdict, c.basis = "value", "unresolved", "no loop to check against: " .. tostring(loop.why)
    return
  end
  local per, basis = loop.per_element, string.format("%s's loop: %d instructions per %g elements", loop.symbol,
    loop.instructions, loop.elements or 0)
  if not per then
    -- nothing says how many elements a trip handles: the nearest whole
    -- number to what was measured, said as such
    local e = math.max(1, math.floor(loop.instructions / c.value + 0.5))
    per = loop.instructions / e
    basis = string.format("%s's loop: %d instructions per trip; %d elements per trip taken from the measured " ..
      "value (the nearest whole number: nothing says them)", loop.symbol, loop.instructions, e)
  end
  c.expected = per
  c.check, c.basis = "value", basis
  c.verdict = math.abs(c.value / c.expected - 1) <= M.INSTRUCTIONS_TOLERANCE and "pass" or "fail"
end

return M
