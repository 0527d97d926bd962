-- pmcsh.chase.mlp: memory-level parallelism: chase.mlp reads one round of
-- rows k = 1..max, chase.mlp_rounds combines rounds, chase.parallelism
-- measures them (lmbench par_mem, multichase's parallel chases).
local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")
local numbers = require("pmcsh.numbers")
local statistics = require("pmcsh.statistics")
local format = require("pmcsh.format")
local complete = require("pmcsh.complete")
local engine = require("pmcsh.chase.engine")

local check_opts, chain_for, describe, size_of = engine.check_opts, engine.chain_for, engine.describe, engine.size_of
local stats = statistics.stats
local function median(xs) return stats(xs).median end
local function min(xs) return stats(xs).min end

local M = {}

M.DEFAULT_MAX = 16   -- chase.parallelism's k = 1..16 unless told more: a fourth of the time of MAX_K
local OWN_KEYS = {max = true, chains = true, rounds = true}   -- beside the chain's (engine.check_opts)
local PARALLELISM = format.kind("pmcsh.chase_parallelism")

local SUPERLINEAR = 1.05   -- speedup / k above this: not memory-level parallelism
local DRIFT = 0.10         -- t1 first and last further apart than this: the residency changed

-- A speedup above k: near a cache's size k chains revisit each line k times
-- sooner and keep lines one chain loses; far beyond the caches a machine
-- may serve a lone miss slower than misses under load.
M.SUPERLINEAR_WHY = "a speedup above k cannot come from overlapping misses: each of the k chains ran faster than " ..
  "one chain alone (t1), either because k chains revisit their lines k times sooner and a cache keeps more of " ..
  "them (near a cache's size: compare the footprint with the caches), or because the machine serves a lone miss " ..
  "slower than misses under load (far beyond the caches; multichase's simple/parallelN ratio is then as far " ..
  "above N); such rows are marked superlinear and left out of mlp, and peak " ..
  "keeps the raw best speedup"

local NO_OVERLAP = "no k > 1 ran faster per load than one chain: the misses did not overlap (mlp 1, at k = 1)"

-- The row mlp reads: the fastest of the rows k > 1 that are not above k,
-- or k = 1 (speedup 1) where those are all slower than one chain; nil
-- where no row k > 1 is left to measure an overlap.  value(row): the
-- speedup mlp reads from a row left in (its own by default).
local function best_row(rows, value)
  value = value or function(row) return row.speedup end
  local best
  for _, row in ipairs(rows) do
    if row.k > 1 and not row.superlinear and (not best or value(row) > value(best)) then best = row end
  end
  if best and value(best) < value(rows[1]) then return rows[1] end
  return best
end

M.mlp = doc(errors.facade("mlp", function(rows, t1_last)
  if type(rows) ~= "table" or #rows < 1 or rows[1].k ~= 1 then
    errors.argument("mlp", 1, "rows {{k=1, ns=}, {k=2, ns=}, ...} expected, k=1 first", 1)
  end
  local t1_first, t1 = rows[1].ns, rows[1].ns
  if t1_last and t1_last < t1 then t1 = t1_last end
  rows[1].ns = t1
  local res = {rows = rows, peak = 0, t1 = t1}
  local kmax = rows[#rows].k
  for _, row in ipairs(rows) do
    row.speedup = t1 / row.ns
    row.superlinear = nil
    res.peak = math.max(res.peak, row.speedup)
    if row.speedup > row.k * SUPERLINEAR then
      row.superlinear = true
      res.superlinear = (res.superlinear or 0) + 1
    end
  end
  local notes = {}
  local best = best_row(rows)
  if best then
    res.mlp, res.mlp_k = best.speedup, best.k
    if best.k == 1 then notes[#notes + 1] = NO_OVERLAP end
    -- as many misses overlapped as chains were run: the limit was --max, not the hierarchy
    if res.mlp >= kmax / SUPERLINEAR then res.at_least, res.engine_limit = kmax, kmax >= engine.MAX_K or nil end
  elseif kmax == 1 then
    res.why = "one chain only (max = 1): nothing to overlap"
  else
    res.why = "every k > 1 ran above k (superlinear)"
  end
  if res.superlinear then
    notes[#notes + 1] = string.format("%d of %d rows show a speedup above k (superlinear, left out of mlp)",
      res.superlinear, #rows)
  end
  if t1_last then
    res.t1_drift = t1_last / t1_first - 1
    if math.abs(res.t1_drift) > DRIFT then
      res.unsettled = true
      notes[#notes + 1] = string.format("t1 moved %+.0f%% between the first and the last k=1 run (%.1f -> %.1f " ..
        "ns): the level serving the chain changed under the measurement", res.t1_drift * 100, t1_first, t1_last)
    end
  end
  if #notes > 0 then res.note = table.concat(notes, "; ") end
  return res
end), "chase.mlp", [[
chase.mlp(rows[, t1_last]) -> {rows=, mlp=?, mlp_k=?, at_least=?, engine_limit=?, why=?, peak=, t1=,
  superlinear=?, t1_drift=?, unsettled=?, note=?}
The analysis chase.parallelism applies to each round of its rows, for rows
measured any way: rows = {{k=1, ns=}, {k=2, ns=}, ...}, ns per load with k
chains; t1_last, a k=1 ns measured after the others.  t1 is the smaller of
rows[1].ns and t1_last (rows[1].ns becomes t1); each row gets speedup = t1
/ ns.  A speedup above k * 1.05 cannot come from overlapped misses
(chase.SUPERLINEAR_WHY says why it happens): the row is marked superlinear
and left out.  mlp is the best speedup of the rows k > 1 left, mlp_k its
k; where all of them ran slower than one chain, mlp is 1 at mlp_k = 1 (no
overlap, as par_mem reads it) and note says so; where none is left mlp is
nil and why says so.  at_least is
the largest k when mlp reaches it (within 5%): as many misses overlapped as
chains ran, so more chains may show more; engine_limit where that k is
chase.MAX_K, the most the engine runs (chase.MAX_K_WHY says why).  peak is
the best speedup of all
rows (multichase's simple/parallelN ratio).  t1_drift is t1_last /
rows[1].ns - 1; beyond +-10% the result is unsettled (the level serving
the chain changed during the run).  note says that in words.]])

-- The rounds of chase.parallelism as one result: per k the median ns and
-- speedup over the rounds and their range, superlinear where that median
-- is above k; mlp the best row left, read from the same rounds as its
-- range: those in which that row was within k (row.within), so that no
-- round left out of mlp stretches its range above k.
local function combine(rounds)
  local rows, R = {}, #rounds
  for i = 1, #rounds[1].rows do
    local k = rounds[1].rows[i].k
    local ns, med, sp, kept, sl = {}, {}, {}, {}, 0
    for r, a in ipairs(rounds) do
      local row = a.rows[i]
      ns[r], med[r], sp[r] = row.ns, row.median_ns, row.speedup
      if row.superlinear then sl = sl + 1 else kept[#kept + 1] = row.speedup end
    end
    local st = stats(sp)
    local row = {k = k, ns = median(ns), median_ns = median(med), speedup = st.median, speedup_min = st.min,
      speedup_max = st.max, speedups = sp, superlinear = st.median > k * SUPERLINEAR or nil,
      superlinear_rounds = sl > 0 and sl or nil}
    if not row.superlinear then   -- a median within k: half the rounds or more were
      local w = stats(kept)
      row.within = {speedup = w.median, min = w.min, max = w.max, rounds = #kept}
    end
    rows[i] = row
  end
  local res = {rows = rows, rounds = R}
  local peaks, drift = {}, nil
  for r, a in ipairs(rounds) do
    peaks[r] = a.peak
    if a.unsettled then res.unsettled = true end
    if a.t1_drift and (not drift or math.abs(a.t1_drift) > math.abs(drift)) then drift = a.t1_drift end
  end
  res.peak, res.t1_drift = median(peaks), drift
  for _, row in ipairs(rows) do
    if row.superlinear then res.superlinear = (res.superlinear or 0) + 1 end
  end
  local best = best_row(rows, function(row) return row.within.speedup end)
  local kmax = rows[#rows].k
  if best then
    local w = best.within
    res.mlp, res.mlp_k, res.mlp_min, res.mlp_max, res.mlp_rounds = w.speedup, best.k, w.min, w.max, w.rounds
    -- as many misses overlapped as chains ran: the limit was max, not the hierarchy
    if res.mlp >= kmax / SUPERLINEAR then res.at_least, res.engine_limit = kmax, kmax >= engine.MAX_K or nil end
  elseif kmax == 1 then
    res.why = "one chain only (max = 1): nothing to overlap"
  else
    res.why = "every k > 1 ran above k (superlinear)" .. (R > 1 and ", as the median of the rounds" or "")
  end
  local notes = {}
  if best and best.k == 1 then notes[#notes + 1] = NO_OVERLAP end
  if res.superlinear then
    notes[#notes + 1] = string.format("%d of %d rows above k (superlinear, left out of mlp)", res.superlinear, #rows)
  end
  if res.unsettled then
    notes[#notes + 1] = string.format("t1 moved up to %+.0f%% between the first and the last k=1 run of a round: the " ..
      "level serving the chain changed under the measurement", drift * 100)
  end
  if #notes > 0 then res.note = table.concat(notes, "; ") end
  return res
end

M.mlp_rounds = doc(errors.facade("mlp_rounds", function(rounds)
  if type(rounds) ~= "table" or #rounds < 1 then
    errors.argument("mlp_rounds", 1, "a list of chase.mlp results expected", 1)
  end
  for r, a in ipairs(rounds) do
    if type(a) ~= "table" or type(a.rows) ~= "table" or #a.rows ~= #rounds[1].rows or a.rows[1].speedup == nil
      or a.rows[1].k ~= 1 then
      errors.argument("mlp_rounds", 1, string.format("round %d: a chase.mlp result with as many rows as round 1 "
        .. "expected", r), 1)
    end
  end
  return combine(rounds)
end), "chase.mlp_rounds", [[
chase.mlp_rounds(rounds) -> the fields chase.parallelism adds to its result
(rows, mlp, mlp_k, mlp_min, mlp_max, mlp_rounds, rounds, at_least, peak,
...) from a list of chase.mlp results over the same k's, one per round,
for rounds measured any way (see chase.parallelism).]])

M.parallelism = doc(errors.facade("parallelism", function(opts)
  opts = check_opts(opts, "parallelism", OWN_KEYS)
  local max = opts.max or M.DEFAULT_MAX
  if math.type(max) ~= "integer" or max < 1 or max > engine.MAX_K then
    errors.argument("parallelism", 1, string.format("max: the number of chains must be in 1..%d, got %s%s", engine.MAX_K,
      tostring(max), math.type(max) == "integer" and max > engine.MAX_K and " (" .. engine.MAX_K_WHY .. ")" or ""), 1)
  end
  local nrounds = opts.rounds or 1
  if math.type(nrounds) ~= "integer" or nrounds < 1 or nrounds > 1000 then
    errors.argument("parallelism", 1, string.format("rounds: an integer in 1..1000 expected, got %s",
      tostring(nrounds)), 1)
  end
  -- separate cycles (multichase's parallel chases) where every element has a
  -- word for each chain, else k heads on one cycle (lmbench's par_mem)
  local chains = opts.chains
  if chains ~= nil and chains ~= "separate" and chains ~= "heads" then
    errors.argument("parallelism", 1, string.format("chains: \"separate\" or \"heads\", got %s", tostring(chains)), 1)
  end
  if opts.chain then
    chains = opts.chain:info().ways > 1 and "separate" or "heads"
  elseif chains == nil then
    local stride = size_of(opts.stride, "stride") or engine.default_stride(opts.order) or 64
    chains = max * 8 <= stride and "separate" or "heads"
  end
  if chains == "separate" and not opts.chain then opts = setmetatable({ways = max}, {__index = opts}) end
  local c, msg, errno = chain_for(opts)
  if not c then return nil, msg, errno end
  -- each round: k = 1..max, then t1 once more: the better of both is t1, so
  -- that a slow first measurement on a noisy machine does not inflate every
  -- speedup, and the two apart say the chain's residency moved (chase.mlp)
  local rounds, err = {}, nil
  for r = 1, nrounds do
    local rows, t1_last = {}, nil
    for k = 1, max do
      local run, rmsg, rerr = c:run{k = k, samples = opts.samples, sample_ms = opts.sample_ms}
      if not run then err = {rmsg, rerr}; break end
      rows[k] = {k = k, ns = min(run.samples), median_ns = median(run.samples)}
    end
    if not err and max > 1 then
      local run, rmsg, rerr = c:run{k = 1, samples = opts.samples, sample_ms = opts.sample_ms}
      if not run then err = {rmsg, rerr} else t1_last = min(run.samples) end
    end
    if err then break end
    rounds[r] = M.mlp(rows, t1_last)
  end
  local res = describe({chains = chains}, c)
  if opts.chain == nil then c:close() end
  if err then return nil, err[1], err[2] end
  for k, v in pairs(combine(rounds)) do res[k] = v end
  if res.note then res.note = res.note .. string.format(" (footprint %s of lines)", numbers.size(res.footprint)) end
  return setmetatable(res, PARALLELISM)
end), "chase.parallelism", [[
chase.parallelism{size=, max=16, rounds=1, order=, stride=, pages=, samples=, sample_ms=, chains=, chain=}
  -> {rows={{k=, ns=, median_ns=, speedup=, speedup_min=, speedup_max=, speedups=, superlinear=?,
      superlinear_rounds=?, within=?}, ...}, mlp=?, mlp_k=?, mlp_min=?, mlp_max=?, mlp_rounds=?, rounds=,
      at_least=?, engine_limit=?, why=?, peak=, size=, chains=, footprint=, superlinear=?, t1_drift=?,
      unsettled=?, note=?, ...}
Memory-level parallelism: k = 1..max chains (max up to chase.MAX_K, 64)
chased together in one
unrolled loop; ns is ns per load with k chains (tk/k, tk the time of one
step of all k), speedup = t1 / (tk/k), and mlp the best speedup: how many
misses the hierarchy overlaps at this size.  chains="separate" (the default
where each element has a word for every chain: stride >= 8 * max, as with
the tlb and page orders' 256) runs k independent cycles over the same
elements, each with its own order and its own word of every element, as
multichase's parallel chases; chains="heads" (the default otherwise) is
lmbench par_mem: k pointers start evenly spaced along ONE cycle.  Each ns is
the best of `samples`; t1 is measured first and again last, the better
kept.  Each of `rounds` rounds measures every k and goes through
chase.mlp (rows above k marked superlinear, a t1 that moved more than 10%
unsettled).  A row's ns and speedup are the medians over the rounds,
speedup_min..speedup_max the range (speedups each), superlinear where
that median is above k * 1.05 (superlinear_rounds: in how many rounds the
row was): left out of mlp.  A row left in has within = {speedup=, min=,
max=, rounds=}: the median and range of its speedup over the rounds in
which it was within k.  mlp is the best within.speedup of the rows k > 1
left (1 at k = 1 where all are slower than one chain), mlp_k its k,
mlp_min..mlp_max its range over those same rounds (mlp_rounds of them;
one round: no range), so that a round above k never stretches the range.
Where no row k > 1 is left, mlp is nil and why says why.  at_least = max
where mlp reaches max (within 5%): more chains may overlap more;
engine_limit where max is chase.MAX_K, the most the engine runs
(chase.MAX_K_WHY).  peak is the median over the rounds of the best
speedup of all rows (multichase's simple/parallelN ratio).  note says all
that in words; chase.SUPERLINEAR_WHY why rows go above k.]])

complete.options(M.parallelism, engine.option_keys(OWN_KEYS), engine.option_values)

return M
