-- pmcsh.chase.engine: the facade over the chain engine (kernels/chase.c
-- via pmcsh._chase): chains, their orders and page policies, latency.  A
-- chain is built once, then chased in one C call per measurement.  The
-- analyses (chase/mlp, sweep, steps, loaded) build on the helpers below;
-- pmcsh.chase is their door.
local C = require("pmcsh._chase")
local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")
local statistics = require("pmcsh.statistics")
local parse_size = require("pmcsh.options").parse_size
local format = require("pmcsh.format")
local complete = require("pmcsh.complete")

local M = {}

-- The engine's bounds (core/lchase.c), for option declarations; MAX_K_WHY
-- why no more chains than MAX_K run (kernels/chase.h).
M.MAX_K, M.MAX_DELAY, M.MAX_SAMPLES, M.MAX_SAMPLE_MS = C.max_k, C.max_delay, C.max_samples, C.max_sample_ms
M.MAX_K_WHY = C.max_k_why

-- The chain's options are the engine's list (core/lchase.c, C.chain_options);
-- the measurements forward these of c:run's to it.
local CHAIN_KEYS = {}
for _, k in ipairs(C.chain_options) do CHAIN_KEYS[k] = true end
M.CHAIN_KEYS = CHAIN_KEYS
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

M.size_of = size_of

-- own: a measurement's options beyond the chain's, c:run's and chain=
-- (a set), declared beside it: the one list check_opts checks and Tab
-- proposes (option_keys, pmcsh.complete).
local function check_opts(opts, fname, own)
  local allowed = own
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

M.check_opts = check_opts

-- The keys check_opts accepts beside own, sorted.
local function option_keys(own)
  local out = {"chain"}
  for _, set in ipairs({own, CHAIN_KEYS, RUN_KEYS}) do
    for k in pairs(set) do out[#out + 1] = k end
  end
  table.sort(out)
  return out
end

M.option_keys = option_keys

-- opts' values of keys (a set): what a measurement forwards.
local function pick(opts, keys)
  local t = {}
  for k in pairs(keys) do t[k] = opts[k] end
  return t
end
M.pick = pick

local stats = statistics.stats
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
M.chain_for = chain_for

-- Results are plain tables (they serialise unchanged); the metatable only
-- names their kind and prints it compactly (pmcsh.format).
local LATENCY = format.kind("pmcsh.chase_latency")

-- res with the chain's shape: size, stride, order, pages, footprint.
local function describe(res, c)
  local info = c:info()
  res.size, res.stride, res.order, res.pages = info.size, info.stride, info.order, info.pages
  -- bytes of lines the chain touches: a line per element and cycle, at most the slot's
  res.footprint = info.n * math.min(info.stride, 64) * math.max(1, math.min(info.ways or 1, info.stride // 64))
  return res
end
M.describe = describe

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
  opts = check_opts(opts, "chain", {})
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

local LATENCY_KEYS = {k = true}

M.latency = doc(errors.facade("latency", function(opts)
  opts = check_opts(opts, "latency", LATENCY_KEYS)
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
  return setmetatable(res, LATENCY)
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

local function names(list)
  local t = {}
  for i, e in ipairs(list) do t[i] = e.name end
  return t
end

-- The chain's and sampling options of a chase recipe, declared here beside
-- the engine's bounds and alike in every one.
M.recipe_options = doc(function(before, o, after)
  errors.check("recipe_options", 1, before, "table")
  errors.check("recipe_options", 2, o, "table")
  errors.check("recipe_options", 3, after, "table")
  local out = {}
  for _, opt in ipairs(before) do out[#out + 1] = opt end
  for _, opt in ipairs({
    {name = "order", type = "string", choices = names(C.orders()), default = "random", help = "chain order"},
    o.stride ~= false and {name = "stride", type = "size", min = 8, max = 1 << 35, multiple = 8, help = "bytes per element (a "
      .. "multiple of 8); default: the order's, 64 for random and stride, 256 for page and tlb (see chase.orders)"},
    {name = "pages", type = "string", choices = names(C.page_policies()), default = "4k", help = o.pages_help
      or "page policy"},
    {name = "samples", type = "int", default = o.samples, min = 1, max = M.MAX_SAMPLES,
      help = "timed samples per " .. o.per},
    {name = "sample_ms", type = "number", default = o.sample_ms, positive = true, max = M.MAX_SAMPLE_MS,
      help = "length of one sample (ms)"},
  }) do
    if opt then out[#out + 1] = opt end
  end
  for _, opt in ipairs(after) do out[#out + 1] = opt end
  return out
end, "chase.recipe_options", [[
chase.recipe_options(before, {samples=, sample_ms=, per=, stride=false?, pages_help=?}, after)
  -> a recipe's option list: before, then the chain's and sampling options
     (order, stride, pages, samples, sample_ms), then after, so that every
     chase recipe declares them alike.]])

-- The names order= and pages= take, for the REPL's completion.
M.option_values = {order = names(C.orders()), pages = names(C.page_policies())}

complete.options(M.chain, option_keys({}), M.option_values)
complete.options(M.latency, option_keys(LATENCY_KEYS), M.option_values)
complete.options(methods.run, C.run_options)
complete.options(methods.loaded, C.loaded_options)

return M
