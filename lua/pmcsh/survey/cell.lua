-- What a survey cell rests on: the samples it kept of those it made (pairs
-- of windows; a chase's windows each), and the class those allow.  Written
-- once: the run classes a cell with it, the checks, the table, CSV, JSON
-- and the heat map ask it what a cell may claim.
local M = {}

-- How a cell's slopes behave over the kept pairs: zero (no count in any
-- kept window), exact (every pair the same slope, to one count), linear (within
-- 5%), noisy; multiplexed when any window was scaled.
M.LINEAR = 0.05

-- The fewest samples a class of agreement (exact, linear, noisy) rests on:
-- with one pair "every pair the same" holds by construction, with two it is
-- one comparison and one stray pair moves the median half way; three are
-- the fewest whose median outvotes a stray pair.  --reps 10 makes 5 pairs:
-- two may be dropped.  Zero (no count in any kept window) compares nothing
-- and needs one.
M.MIN_KEPT = 3

-- The pairs of windows a run of reps windows makes: reps / 2, rounded up
-- (the same elements run as reps windows of n).
function M.pairs(reps) return (reps + 1) // 2 end

-- What a cell's samples are called: pairs of windows, or windows.
function M.samples(c)
  return c and c.method == "ratio" and "windows" or "pairs"
end

-- The samples a cell kept and made, or nil for a cell of an older file
-- that does not say.
function M.kept(c)
  if not (c and c.kept) then return nil end
  return c.kept, c.kept + (c.dropped or 0)
end

-- The Poisson variance of one kept slope of a cell of counts, whatever few
-- equal slopes it kept say: pair p's slope (c2 - c1) / dw varies as
-- (c1 + c2) / dw^2; the mean over the pairs kept (c.kept_pairs), on the
-- windows' work of the cell's run.  nil for a cell that counts time (it
-- has a unit), has no windows (a chase's), or does not say which pairs it
-- kept (an older file).
function M.floor(c, run)
  local w, win = run and run.work, c.windows
  if c.unit or not (w and win and c.kept_pairs) then return nil end
  local sum, n = 0, 0
  for _, p in ipairs(c.kept_pairs) do
    local dw = (w[2 * p] or 0) - (w[2 * p - 1] or 0)
    if dw > 0 and win[2 * p] and win[2 * p - 1] then
      sum, n = sum + (win[2 * p] + win[2 * p - 1]) / dw ^ 2, n + 1
    end
  end
  return n > 0 and sum / n or nil
end

-- Whether a cell has nothing under it: no window counted (no value; an
-- older file's cell whose every pair was disturbed also kept none).
function M.dropped(c)
  return c ~= nil and c.value == nil and (c.disturbed == true or (c.kept or 0) == 0)
end

-- Whether every pair of a cell's windows was disturbed and its value is
-- the best estimate those allow (their statistics): no class, no check.
function M.disturbed(c)
  return c ~= nil and c.value ~= nil and (c.disturbed == true or (c.kept == 0 and (c.dropped or 0) > 0))
end

-- What keeps a cell from a class, or nil: "dropped" (no window at all),
-- "disturbed" (every pair disturbed: a value, no class) or "few" (fewer
-- than MIN_KEPT kept, and not zero).
function M.standing(c)
  if M.dropped(c) then return "dropped" end
  if M.disturbed(c) then return "disturbed" end
  if c and c.kept and c.kept < M.MIN_KEPT and not (c.zero or c.class == "zero") then return "few" end
  return nil
end

-- Why a cell has no class (or no value), in words, or nil.
function M.why(c)
  local s = M.standing(c)
  if s == "dropped" then
    return string.format("no window counted (0 of %d %s kept, none left to estimate from)", c.dropped or 0,
      M.samples(c))
  elseif s == "disturbed" then
    return string.format("every pair of windows disturbed (0 of %d kept): the value is the disturbed pairs' " ..
      "estimate, no class", c.dropped or 0)
  elseif s == "few" then
    local kept, total = M.kept(c)
    return string.format("%d of %d %s kept: too few to class (at least %d)", kept, total, M.samples(c), M.MIN_KEPT)
  end
end

-- The cell's class, or nil where it may claim none (M.standing).
function M.classify(c)
  if M.standing(c) then return nil end
  if c.multiplexed then return "multiplexed" end
  if c.zero then return "zero" end
  -- pairs within one count of each other: the count itself agrees
  if c.min == c.max or (c.resolution and c.max - c.min <= c.resolution * (1 + 1e-9)) then return "exact" end
  if c.spread and c.spread <= M.LINEAR then return "linear" end
  return "noisy"
end

-- A cell's class as a reader shows it: the recorded one unless the cell
-- cannot claim one (a file written before the minimum held), nil for none.
function M.class_of(c)
  if not c or not c.class or M.standing(c) then return nil end
  return c.class
end

return M
