-- pmcsh.chase.loaded: loaded latency (Intel MLC's table): chase.loaded
-- measures it, chase.loaded_flags says what is wrong with a curve.
local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")
local machine = require("pmcsh.machine")
local statistics = require("pmcsh.statistics")
local format = require("pmcsh.format")
local complete = require("pmcsh.complete")
local engine = require("pmcsh.chase.engine")

local check_opts, chain_for, describe, size_of = engine.check_opts, engine.chain_for, engine.describe, engine.size_of
local stats = statistics.stats

local M = {}

local OWN_KEYS = {delays = true, threads = true, bw_size = true}   -- beside the chain's
local LOADED = format.kind("pmcsh.chase_loaded")

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
  opts = check_opts(opts, "loaded", OWN_KEYS)
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
  return setmetatable(res, LOADED)
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

complete.options(M.loaded, engine.option_keys(OWN_KEYS), engine.option_values)

return M
