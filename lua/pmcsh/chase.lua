-- pmcsh.chase: dependent-load chains (lmbench lat_mem_rd and par_mem,
-- multichase) for memory latency, memory-level parallelism, latency versus
-- size and loaded latency.  The engine is C (kernels/chase.c via
-- pmcsh._chase): a chain is built once, then chased in one C call per
-- measurement; this module adds sizes, statistics and documentation.
local C = require("pmcsh._chase")
local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")
local machine = require("pmcsh.machine")
local metrics = require("pmcsh.metrics")
local parse_size = require("pmcsh.options").parse_size
local format = require("pmcsh.format")
local complete = require("pmcsh.complete")

local M = {}

-- The engine's bounds (core/lchase.c), for option declarations; MAX_K_WHY
-- why no more chains than MAX_K run (kernels/chase.h).
M.MAX_K, M.MAX_DELAY, M.MAX_SAMPLES, M.MAX_SAMPLE_MS = C.max_k, C.max_delay, C.max_samples, C.max_sample_ms
M.MAX_K_WHY = C.max_k_why
M.DEFAULT_MAX = 16   -- chase.parallelism's k = 1..16 unless told more: a fourth of the time of MAX_K

-- The chain's options are the engine's list (core/lchase.c, C.chain_options);
-- the measurements forward these of c:run's to it.
local CHAIN_KEYS = {}
for _, k in ipairs(C.chain_options) do CHAIN_KEYS[k] = true end
local RUN_KEYS = {samples = true, sample_ms = true, group = true}

-- "64M", "1G", 4096 -> bytes; anything else is left for C to reject.
local function size_of(v, what)
  if type(v) == "string" then
    local n = parse_size(v)
    if not n then errors.argument("?", 1, string.format("%s: not a size: %q", what, v)) end
    return n
  end
  if type(v) == "number" and math.type(v) == "float" and v == math.floor(v) then
    return math.tointeger(v) or errors.argument("?", 1, string.format("%s: not a size: %s", what, tostring(v)))
  end
  if v ~= nil and math.type(v) ~= "integer" then
    errors.argument("?", 1, string.format("%s: bytes such as 262144 or \"256M\" expected, got %s", what,
      type(v) == "number" and tostring(v) or type(v)))
  end
  return v
end

-- Each function's options beyond the chain's, c:run's and chain=: the one
-- list check_opts checks and Tab proposes (option_keys, pmcsh.complete).
local OWN_KEYS = {
  chain = {}, latency = {k = true}, parallelism = {max = true, chains = true, rounds = true},
  sweep = {from = true, to = true, per_octave = true, k = true, each = true},
  loaded = {delays = true, threads = true, bw_size = true},
}

local function check_opts(opts, fname)
  local allowed = OWN_KEYS[fname]
  if opts == nil then opts = {} end
  if type(opts) ~= "table" then
    errors.argument(fname, 1, "table of options expected, got " .. type(opts))
  end
  for k in pairs(opts) do
    if not (allowed[k] or CHAIN_KEYS[k] or RUN_KEYS[k] or k == "chain") then
      errors.argument(fname, 1, string.format("unknown option '%s'", tostring(k)))
    end
  end
  return opts
end

-- The keys check_opts accepts for fname, sorted.
local function option_keys(fname)
  local out = {"chain"}
  for _, set in ipairs({OWN_KEYS[fname], CHAIN_KEYS, RUN_KEYS}) do
    for k in pairs(set) do out[#out + 1] = k end
  end
  table.sort(out)
  return out
end

local function pick(opts, keys)
  local t = {}
  for k in pairs(keys) do t[k] = opts[k] end
  return t
end

local stats = metrics.stats
local function median(xs) return stats(xs).median end
local function min(xs) return stats(xs).min end

-- The chain for opts: opts.chain when given (not closed by us), else a new
-- one.  Returns chain, owned (or nil, msg, errno).
local function chain_for(opts)
  if opts.chain then return opts.chain, false end
  local copts = pick(opts, CHAIN_KEYS)
  if copts.size == nil then errors.argument("?", 1, "size: required, bytes such as 262144 or \"256M\"") end
  copts.size = size_of(copts.size, "size")
  copts.stride = size_of(copts.stride, "stride")
  local c, msg, errno = C.chain(copts)
  if not c then return nil, msg, errno end
  return c, true
end

-- Results are plain tables (they serialise unchanged); the metatable only
-- names their kind and prints it compactly (pmcsh.format).
local KIND = {}
for _, k in ipairs({"latency", "parallelism", "sweep", "loaded", "steps"}) do KIND[k] = format.kind("pmcsh.chase_" .. k) end

local function describe(res, c)
  local info = c:info()
  res.size, res.stride, res.order, res.pages = info.size, info.stride, info.order, info.pages
  -- bytes of lines the chain touches: a line per element and cycle, at most the slot's
  res.footprint = info.n * math.min(info.stride, 64) * math.max(1, math.min(info.ways or 1, info.stride // 64))
  return res
end

M.orders = doc(function() return setmetatable(C.orders(), format.kind("pmcsh.records")) end, "chase.orders", [[
chase.orders() -> list of {name=, description=, stride=, stride_why=},
default (random) first; stride is the order's default stride:
  random  a random permutation of all elements (one cycle); stride 64
  stride  sequential at a fixed stride: prefetchable, kept for comparison; 64
  page    the elements of each 4 KiB page scrambled, pages in random order
          (TLB-friendly, as lmbench par_mem builds them); 256
  tlb     random within groups of tlb_pages 4 KiB pages (default 64),
          groups in random order (multichase's TLB locality); 256
stride_why says why: 64 puts one pointer per line, so the footprint is the
size; the grouped orders visit neighbours soon after each other, and at 64
the adjacent-line and page-local prefetchers would fetch the next element
(latency reads low), so 256-byte slots with each pointer on a random line.]])

local default_strides
-- The order's default stride, from the engine's order table (the one home).
M.default_stride = doc(function(order)
  if not default_strides then
    default_strides = {}
    for _, o in ipairs(C.orders()) do default_strides[o.name] = o.stride end
  end
  return default_strides[order or "random"]
end, "chase.default_stride", [[
chase.default_stride(order="random") -> bytes: the stride chase.chain uses
for that order when none is given (see chase.orders), nil for an unknown
order.]])

M.page_policies = doc(function() return setmetatable(C.page_policies(), format.kind("pmcsh.records")) end, "chase.page_policies", [[
chase.page_policies() -> list of {name=, description=}, default (4k) first:
4k (MADV_NOHUGEPAGE), thp (MADV_HUGEPAGE), 2m and 1g (MAP_HUGETLB: needs
pages reserved in /sys/kernel/mm/hugepages/*/nr_hugepages).]])


M.check = doc(errors.facade("check", function(opts, k)
  errors.check("check", 1, opts, "table")
  errors.check("check", 2, k, "integer?")
  local o = {}   -- a copy, sizes in bytes; the engine refuses a key it does not know
  for key, v in pairs(opts) do o[key] = v end
  o.size, o.stride = size_of(o.size, "size"), size_of(o.stride, "stride")
  return C.check(o, k)
end), "chase.check", [[
chase.check{size=, stride=, order=, pages=, ...}[, k] -> true, or nil, why
The options chase.chain takes, checked as chase.chain checks them, and k
chains over them (size / stride elements, at least k), building nothing:
why names a size too large for its stride or for this machine's memory, or
too few elements for k.  Recipes check their largest chain so before they
measure the small ones.  Malformed options raise as chase.chain's do.]])

M.chain = doc(errors.facade("chain", function(opts)
  opts = check_opts(opts, "chain")
  return chain_for(opts)
end), "chase.chain", [[
chase.chain{size=, stride=, order="random", pages="4k", tlb_pages=64, seed=1, mix=true, ways=1}
  -> chain, or nil, message, errno
Builds a chain: size bytes (a number or "256M") cut into elements of stride
bytes (a multiple of the pointer size), linked into ONE cycle through all
elements in the given order.  Each element's pointer sits at its own
pseudo-random word of the element (the mixer: a table of 64 offsets drawn
from the seed, element e using entry e % 64, the slot's lines used alike;
mix=false: one word for all, the layout a prefetcher can learn).  The
default stride is the order's (chase.orders): 64 for random and stride, one
pointer per line; 256 for page and tlb, whose neighbours follow each other
closely: a random line of a 256-byte slot gives neither the adjacent-line
nor a page-local prefetcher the next element (multichase's default).
ways=k links k independent cycles over the same elements, each with its
own order and its own word of every element (multichase's parallel
chases).  The chain owns its memory: c:close() (or <close>, or the
collector) frees it.
Methods (help(c.run) and so on for each): c:info, c:next, c:word, c:heads,
c:run, c:plain, c:loaded, c:close.]])

local methods = C.methods
doc(methods.info, "chain:info", [[
c:info() -> {size=, n=, stride=, order=, pages=, mix=, ways=, word=?,
  mixer={period=64, lines=, slot_lines=}?, tlb_pages=, seed=}: the chain's
shape (mixer.lines: how many of the slot's lines the pointers use).]])
doc(methods.next, "chain:next", [[
c:next(e[, w]) -> the element (0-based) that element e points to (in cycle w).]])
doc(methods.word, "chain:word", [[
c:word(e[, w]) -> the byte offset of element e's pointer (of cycle w) inside its stride.]])
doc(methods.heads, "chain:heads", [[
c:heads(k) -> the k starting elements: evenly spaced along the cycle, or
chain j on cycle j with ways; where the order has blocks (page, tlb), chain
j also starts j/k of a block in, so the chains, which advance in step, do
not cross into new pages together.]])
doc(methods.run, "chain:run", [[
c:run{k=1, samples=5, sample_ms=20, warmup_ms=, group=} -> {samples={ns...},
  loads=, loads_per_sample=, k=, warmup_ns=, warmup_s=, warmup_loads=, ends=, counts=, per_rep=}
The engine beneath chase.latency and chase.parallelism: k chains (1..64)
chased together, ns per load of each timed sample.  loads: over all timed
samples, as counts is their sum; each sample chases loads_per_sample, k
steps of every chain at a time.  Warm-up: one pass of the chain, at most
warmup_ms, by default max(200, 4 * sample_ms); a chain already warm needs
little; warmup_loads its loads.  ends: the k elements where the chains
stopped, (warmup_loads + loads) / k steps past where they started (the k
heads, or the last run's ends: each k goes on where it stopped).]])
doc(methods.plain, "chain:plain", [[
c:plain(loads) -> ns per load of the plain C loop `p = *p` over the chain
(bench-chase's reference).]])
doc(methods.loaded, "chain:loaded", [[
c:loaded{delays=, threads=, bw_size=, samples=, sample_ms=} -> rows of
{delay=, mbps=, samples={ns...}, ...}: the engine beneath chase.loaded.]])
doc(methods.close, "chain:close", [[
c:close(): frees the chain's memory (also done by <close> and the
collector); using the chain afterwards raises an error.]])

M.latency = doc(errors.facade("latency", function(opts)
  opts = check_opts(opts, "latency")
  local c, msg, errno = chain_for(opts)
  if not c then return nil, msg, errno end
  local r, rmsg, rerr = c:run{k = opts.k or 1, samples = opts.samples, sample_ms = opts.sample_ms,
    group = opts.group}
  local res
  if r then
    res = describe({ns = min(r.samples), median_ns = median(r.samples), samples = r.samples,
      k = r.k, loads = r.loads, loads_per_sample = r.loads_per_sample, warmup_ns = r.warmup_ns,
      counts = r.counts, per_rep = r.per_rep}, c)
    local secs = 0
    for _, v in ipairs(r.samples) do secs = secs + v * r.loads_per_sample * 1e-9 end
    res.elapsed_s = secs
  end
  if opts.chain == nil then c:close() end
  if not r then return nil, rmsg, rerr end
  return setmetatable(res, KIND.latency)
end), "chase.latency", [[
chase.latency{size=, order="random", stride=, pages="4k", samples=5,
              sample_ms=20, group=, k=1, tlb_pages=, seed=, chain=}
  -> {ns=, median_ns=, samples={...}, loads=, loads_per_sample=, elapsed_s=,
      size=, stride=, order=, pages=, warmup_ns=, counts=, per_rep=}, or nil, message, errno
Memory latency as ns per dependent load.  The first sample is a warm-up
(one pass of the chain, at most max(200 ms, 4 samples)) and is not kept;
then `samples` samples of about sample_ms each, loads_per_sample loads
each.  ns is the best sample, median_ns the median.  loads and elapsed_s
cover all timed samples.  With group (a pmc group) the counters run around
each timed sample only: counts is their sum (counts[i].value / loads is per
load), per_rep each sample's reading (per_rep[s][i].value /
loads_per_sample).  chain= reuses a chain from chase.chain.
Ctrl-C stops between samples and raises lua's error "interrupted!" (pcall
catches it; uncaught, it ends a script with status 1), as s:run does.]])

local SUPERLINEAR = 1.05   -- speedup / k above this: not memory-level parallelism
local DRIFT = 0.10         -- t1 first and last further apart than this: the residency changed

-- A speedup above k: near a cache's size k chains revisit each line k times
-- sooner and keep lines one chain loses; far beyond the caches some guests
-- serve a lone miss slower than misses under load.
M.SUPERLINEAR_WHY = "a speedup above k cannot come from overlapping misses: each of the k chains ran faster than " ..
  "one chain alone (t1), either because k chains revisit their lines k times sooner and a cache keeps more of " ..
  "them (near a cache's size: compare the footprint with the caches), or because the machine serves a lone miss " ..
  "slower than misses under load (seen far beyond the caches on a cloud guest, where multichase's " ..
  "simple/parallelN ratio is as far above N); such rows are marked superlinear and left out of mlp, and peak " ..
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
    if res.mlp >= kmax / SUPERLINEAR then res.at_least, res.engine_limit = kmax, kmax >= C.max_k or nil end
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
    if res.mlp >= kmax / SUPERLINEAR then res.at_least, res.engine_limit = kmax, kmax >= C.max_k or nil end
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
  opts = check_opts(opts, "parallelism")
  local max = opts.max or M.DEFAULT_MAX
  if math.type(max) ~= "integer" or max < 1 or max > C.max_k then
    errors.argument("parallelism", 1, string.format("max: the number of chains must be in 1..%d, got %s%s", C.max_k,
      tostring(max), math.type(max) == "integer" and max > C.max_k and " (" .. C.max_k_why .. ")" or ""), 1)
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
    local stride = size_of(opts.stride, "stride") or M.default_stride(opts.order) or 64
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
  if res.note then res.note = res.note .. string.format(" (footprint %s of lines)", metrics.size(res.footprint)) end
  return setmetatable(res, KIND.parallelism)
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

M.MAX_PER_OCTAVE = 64

-- What is wrong with a ladder's bounds, or nil: each an integer, 1 <=
-- from <= to, per_octave in 1..64, stride positive (a ladder from 0, or
-- of 2^63 sizes a doubling, would never end).
local function ladder_bounds(from, to, per_octave, stride)
  if math.type(from) ~= "integer" or from < 1 then return "from: a positive size expected" end
  if math.type(to) ~= "integer" or to < from then return "to: a size >= from expected" end
  if math.type(per_octave) ~= "integer" or per_octave < 1 or per_octave > M.MAX_PER_OCTAVE then
    return string.format("per_octave: an integer in 1..%d expected", M.MAX_PER_OCTAVE)
  end
  if math.type(stride) ~= "integer" or stride < 1 then return "stride: a positive size expected" end
  return nil
end

M.sizes = doc(errors.facade("sizes", function(from, to, per_octave, stride)
  local why = ladder_bounds(from, to, per_octave, stride)
  if why then errors.argument("sizes", 1, string.format("%s", why), 1) end
  local out, seen = {}, {}
  local i = 0
  while true do
    local s = math.floor(from * 2 ^ (i / per_octave) + 0.5)
    if s > to then break end
    s = s // stride * stride
    if s >= stride and not seen[s] then seen[s] = true; out[#out + 1] = s end
    i = i + 1
  end
  return out
end), "chase.sizes", [[
chase.sizes(from, to, per_octave, stride) -> the size ladder of chase.sweep and
pmcsh parallelism: geometric from `from` to `to`, per_octave sizes per
doubling (1..64), each rounded down to a multiple of stride, each once.
Bounds out of range raise (1 <= from <= to, integers).]])
local sizes = M.sizes

M.sweep = doc(errors.facade("sweep", function(opts)
  opts = check_opts(opts, "sweep")
  if opts.each ~= nil and type(opts.each) ~= "function" then
    errors.argument("sweep", 1, "each: a function called with each row expected", 1)
  end
  local from = size_of(opts.from or 4096, "from")
  local to = size_of(opts.to or 256 * 2 ^ 20 // 1, "to")
  local po = opts.per_octave or 4
  local stride = size_of(opts.stride, "stride") or M.default_stride(opts.order) or 64
  local why = ladder_bounds(from, to, po, stride)
  if why then errors.argument("sweep", 1, string.format("%s", why), 1) end
  if opts.chain then errors.argument("sweep", 1, "chain: a sweep builds its own chains", 1) end
  -- the largest chain is checked before the small ones take their time
  local last = pick(opts, CHAIN_KEYS)
  last.size, last.stride = to, stride
  local ok, bad = C.check(last)
  if not ok then errors.argument("sweep", 1, string.format("size %d, stride %d: %s", to, stride, bad), 1) end
  local res = {rows = {}, order = opts.order or "random", stride = stride, pages = opts.pages or "4k"}
  for _, s in ipairs(sizes(from, to, po, stride)) do
    local o = pick(opts, CHAIN_KEYS)
    o.size, o.stride, o.k = s, stride, opts.k
    o.samples, o.sample_ms = opts.samples, opts.sample_ms
    local r, msg, errno = M.latency(o)
    if not r then return nil, msg, errno end
    res.rows[#res.rows + 1] = {size = r.size, ns = r.ns, median_ns = r.median_ns, samples = r.samples}
    if opts.each then opts.each(res.rows[#res.rows], res) end
  end
  return setmetatable(res, KIND.sweep)
end), "chase.sweep", [[
chase.sweep{from=4096, to="256M", per_octave=4, order=, stride=, pages=, samples=, sample_ms=, each=}
  -> {rows={{size=bytes, ns=, median_ns=, samples={ns...}}, ...}, order=, stride=, pages=}
Latency versus size (lmbench lat_mem_rd): one chain per size, sizes
geometric from `from` to `to` with per_octave points per doubling (rounded
down to the stride).  The steps of the curve are the caches: compare with
machine.caches().]])

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
  local res = setmetatable({steps = steps}, KIND.steps)
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
    res.note = string.format("%s well below the L%d of %s that sysfs reports%s: this guest does not own the "
      .. "last-level cache it reports (other tenants, or other core complexes, hold the rest)",
      mem and string.format("the step to memory (%s -> %s) comes", metrics.size(mem.from), metrics.size(mem.to))
        or "the curve reaches memory's latency", llc.level, metrics.size(llc.size),
      near_memory and string.format("; at %s, half of it, a load already takes %.0f%% of memory's %.1f ns",
        metrics.size(rows[half].size), 100 * sm[half] / sm[far], sm[far]) or "")
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
in words: a guest that does not own the LLC it reports.]])

-- Below these a thread was off its cpu for part of the timed samples.
local RAN_CHASER, RAN_LOADERS = 0.95, 0.90
M.FEW_LOADERS = 4   -- fewer loading cores load the memory too little to move its latency much

-- A row's samples summarised: best, median and worst ns; MB/s over all the
-- samples and the least and most of one.
local function loaded_row(r)
  local ns, mb = stats(r.samples), stats(r.mbps_samples)
  return {delay = r.delay, mbps = r.mbps, min_mbps = mb.min, max_mbps = mb.max, ns = ns.min,
    median_ns = ns.median, max_ns = ns.max, chaser_ran = r.chaser_ran, loaders_ran = r.loaders_ran,
    timed_s = r.timed_s, samples = r.samples, mbps_samples = r.mbps_samples}
end

local function range(lo, hi, fmt) return string.format(fmt .. "-" .. fmt, lo, hi) end

M.loaded_flags = doc(function(res)
  errors.check("loaded_flags", 1, res, "table")
  if type(res.rows) ~= "table" or type(res.idle) ~= "table" then
    errors.argument("loaded_flags", 1, "{rows={...}, idle={ns=, max_ns=}, threads=} expected")
  end
  local rows, idle = {}, res.idle
  for i, r in ipairs(res.rows) do rows[i] = r end
  table.sort(rows, function(a, b) return a.delay < b.delay end)
  local flags = {}
  -- each flag with what it compares (rows, idle): its cause is read from them
  local function flag(kind, text, involved, row, against)
    flags[#flags + 1] = {kind = kind, delay = row and row.delay, against = against and against.delay, text = text,
      involved = involved}
  end
  if idle.before and idle.after and (idle.before.max_ns < idle.after.ns or idle.after.max_ns < idle.before.ns) then
    flag("idle_moved", string.format("idle latency moved from %s ns before the loaded rows to %s ns after",
      range(idle.before.ns, idle.before.max_ns, "%.1f"), range(idle.after.ns, idle.after.max_ns, "%.1f")), {idle})
  end
  for _, r in ipairs(rows) do
    if r.max_ns < idle.ns then
      flag("below_idle", string.format("delay %d reads %s ns, below every idle sample (%s ns)", r.delay,
        range(r.ns, r.max_ns, "%.1f"), range(idle.ns, idle.max_ns, "%.1f")), {idle, r}, r)
    end
  end
  -- lighter load (a longer delay) must not read slower beyond the spread of both rows
  for j, b in ipairs(rows) do
    for i = 1, j - 1 do
      local a = rows[i]
      if a.max_ns < b.ns then
        flag("latency_rises", string.format("delay %d reads %s ns, above delay %d's %s ns under more load",
          b.delay, range(b.ns, b.max_ns, "%.1f"), a.delay, range(a.ns, a.max_ns, "%.1f")), {a, b}, b, a)
        break
      end
    end
    for i = 1, j - 1 do
      local a = rows[i]
      if a.max_mbps and b.min_mbps and a.max_mbps < b.min_mbps then
        flag("bandwidth_rises", string.format("delay %d's loaders read %s MB/s, more than delay %d's %s MB/s "
          .. "with a shorter delay", b.delay, range(b.min_mbps, b.max_mbps, "%.1f"), a.delay,
          range(a.min_mbps, a.max_mbps, "%.1f")), {a, b}, b, a)
        break
      end
    end
  end
  -- the likely cause of each, from what was measured while its rows ran
  local causes = {}
  for _, f in ipairs(flags) do
    local worst_c, worst_l
    for _, r in ipairs(f.involved) do
      if r.chaser_ran and (not worst_c or r.chaser_ran < worst_c.chaser_ran) then worst_c = r end
      if r.loaders_ran and r ~= idle and (not worst_l or r.loaders_ran < worst_l.loaders_ran) then worst_l = r end
    end
    f.involved = nil
    local busy, why = {}, {}
    if worst_c and worst_c.chaser_ran < RAN_CHASER then
      busy[#busy + 1] = string.format("the chaser ran %.0f%% of its timed time (%s)", worst_c.chaser_ran * 100,
        worst_c == idle and "idle" or ("delay " .. worst_c.delay))
    end
    if worst_l and worst_l.loaders_ran < RAN_LOADERS then
      busy[#busy + 1] = string.format("the loaders %.0f%% (delay %d)", worst_l.loaders_ran * 100, worst_l.delay)
    end
    if #busy > 0 then why[#why + 1] = "a busy machine: " .. table.concat(busy, ", ") .. ", other work taking their cpus" end
    if res.threads < M.FEW_LOADERS then
      why[#why + 1] = string.format("too few loaders: %d loading core%s add%s too little traffic for latency to "
        .. "rise above the machine's noise", res.threads, res.threads == 1 and "" or "s", res.threads == 1 and "s" or "")
    end
    if #why == 0 then
      why[1] = string.format("none seen here (the chaser ran at least %.0f%% of the time, the loaders %.0f%%): the "
        .. "memory's own behaviour (some machines serve a lone miss slower than misses under load); run it again to "
        .. "see whether it repeats", RAN_CHASER * 100, RAN_LOADERS * 100)
    end
    f.cause = table.concat(why, "; ")
    if not causes[f.cause] then causes[f.cause] = true; causes[#causes + 1] = f.cause end
  end
  return {flags = flags, cause = #causes > 0 and table.concat(causes, " / ") or nil}
end, "chase.loaded_flags", [[
chase.loaded_flags{rows=, idle=, threads=} -> {flags={{kind=, delay=?, against=?, text=, cause=}, ...},
  cause=?}
What chase.loaded finds wrong with its own curve, for rows measured any
way: rows {{delay=, ns=, max_ns=, min_mbps=?, max_mbps=?, chaser_ran=?,
loaders_ran=?}, ...} (ns the best sample, max_ns the worst), idle {ns=,
max_ns=, chaser_ran=?, before=?, after=?}.  Flagged, each beyond the
spread of the samples (their ranges do not overlap): a row below every
idle sample (below_idle); a row read slower than a row with more load
(latency_rises); loaders that read more with a longer delay
(bandwidth_rises); idle before and after the rows apart (idle_moved).
Each flag's cause names what was measured while the rows it compares ran:
a busy machine (the chaser ran less than 95% of its timed time, or the
loaders less than 90%), too few loaders (fewer than chase.FEW_LOADERS),
or neither; cause is the distinct ones, " / " between them.]])

M.loaded = doc(errors.facade("loaded", function(opts)
  opts = check_opts(opts, "loaded")
  local threads = opts.threads or math.max(1, #machine.cpus() - 1)
  if math.type(threads) ~= "integer" then
    errors.argument("loaded", 1, string.format("threads: an integer expected, got %s", type(threads)), 1)
  end
  if opts.delays ~= nil and type(opts.delays) ~= "table" then
    errors.argument("loaded", 1, string.format("delays: a list of integers expected, got %s", type(opts.delays)), 1)
  end
  local delays = opts.delays or {0, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 20000}
  if opts.size == nil and opts.chain == nil then
    local o = {size = 256 * 1024 * 1024}
    for k, v in pairs(opts) do o[k] = v end
    opts = o
  end
  local c, msg, errno = chain_for(opts)
  if not c then return nil, msg, errno end
  -- idle before and after the loaded rows, measured as they are (no loaders)
  local function idle_run()
    local r, m, e = c:loaded{delays = {0}, threads = 0, samples = opts.samples, sample_ms = opts.sample_ms}
    return r and loaded_row(r[1]), m, e
  end
  local before, rows, after, emsg, eerr
  before, emsg, eerr = idle_run()
  if before then
    rows, emsg, eerr = c:loaded{delays = delays, threads = threads, bw_size = size_of(opts.bw_size, "bw_size"),
      samples = opts.samples, sample_ms = opts.sample_ms}
  end
  if rows then after, emsg, eerr = idle_run() end
  local res = describe({threads = threads}, c)
  if opts.chain == nil then c:close() end
  if not after then return nil, emsg, eerr end
  for i, r in ipairs(rows) do rows[i] = loaded_row(r) end
  local all = table.move(after.samples, 1, #after.samples, #before.samples + 1,
    table.move(before.samples, 1, #before.samples, 1, {}))
  local st = stats(all)
  local idle = {ns = st.min, median_ns = st.median, max_ns = st.max, samples = all,
    chaser_ran = math.min(before.chaser_ran, after.chaser_ran),
    before = {ns = before.ns, median_ns = before.median_ns, max_ns = before.max_ns},
    after = {ns = after.ns, median_ns = after.median_ns, max_ns = after.max_ns}}
  res.rows, res.idle, res.idle_ns = rows, idle, idle.ns
  local still = {}
  for _, r in ipairs(rows) do
    if r.mbps == 0 then still[#still + 1] = r.delay end
  end
  if #still > 0 then   -- started and streaming, then left without a cpu while the chase was timed
    res.note = string.format("the loaders read nothing while delay %s was timed: their cpus were busy with other "
      .. "work, so those rows are idle latency", table.concat(still, ","))
  end
  local f = M.loaded_flags(res)
  res.flags, res.cause = f.flags, f.cause
  return setmetatable(res, KIND.loaded)
end), "chase.loaded", [[
chase.loaded{size="256M", delays={0, 10, ..., 20000}, threads=cpus-1, bw_size="256M",
             order=, stride=, pages=, samples=, sample_ms=}
  -> {rows={{delay=, mbps=, min_mbps=, max_mbps=, ns=, median_ns=, max_ns=, chaser_ran=,
      loaders_ran=, timed_s=, samples=, mbps_samples=}, ...}, idle={ns=, median_ns=, max_ns=, samples=,
      chaser_ran=, before=, after=}, idle_ns=, threads=, flags=, cause=?, note=?, size=, ...}
Loaded latency, as Intel MLC's table: the calling thread chases (k = 1)
while `threads` bandwidth threads, pinned to the other cpus, each read
their own bw_size buffer (THP) one 64-byte line at a time with an injection
delay of `delay` empty-loop iterations (about one cycle each) after every
line.  Per row: mbps, the MB/s (1e6 bytes) the loaders read over the timed
samples, min_mbps..max_mbps that of one sample; ns, median_ns and max_ns
the best, median and worst sample's ns per load; timed_s the samples'
time, chaser_ran and loaders_ran the fraction of the samples' window
(from just before each sample to just after it) the chaser and each loader
ran on their cpus, at most 1 (below 1: other work took them; mbps /
loaders_ran / threads is what a loader reads per second it runs).  idle is the latency with no loaders,
measured alike before and after the rows (idle_ns = idle.ns, the best).
Larger delays, less bandwidth, latency falls toward idle: where the curve
does not (chase.loaded_flags: below idle, or not monotone beyond the
samples' spread) flags lists it ({kind=, delay=, text=, cause=}), each
with its likely cause.  note names any row whose loaders read nothing.]])

for fname in pairs(OWN_KEYS) do complete.options(M[fname], option_keys(fname)) end
complete.options(methods.run, C.run_options)
complete.options(methods.loaded, C.loaded_options)

return doc(M, "chase", [[
pointer chases: memory latency, memory-level parallelism, latency versus size, loaded latency
Dependent-load chains (lmbench lat_mem_rd and par_mem, multichase): a chain
is built once (chase.chain: order, stride, page policy), then chased in one
C call with up to 64 chains interleaved in an unrolled loop (100 steps of
each chain per trip to 16 chains, at least 100 loads a trip beyond).  chase.latency, chase.parallelism, chase.sweep,
chase.loaded build their own chain unless given one.]])
