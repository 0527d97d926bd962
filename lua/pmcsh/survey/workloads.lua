-- The survey's workloads: what it measures, one descriptor per column.
--
-- Every engine gives the survey descriptors of one shape:
--   {name=, title=, unit= (one iteration, in words), what= (the engine, in
--    words), bytes= (bytes per iteration, STREAM convention; nil when the
--    workload moves no STREAM bytes), sized= (it uses the survey's n),
--    note= (nil, or function(hdr) -> a line under the table),
--    run = function(group, reps) -> {times=, iterations=, counts=, per_rep=,
--          warnings=, record=} or nil, message, errno}
-- times: seconds per timed repetition; iterations: over all of them;
-- counts/per_rep: the group's reading over all and per repetition; record:
-- the engine's own fields kept in the results file.  A new engine joins
-- the survey by adding one entry to ENGINES: its names, what it adds to the
-- header from the options, and its descriptors.
local chase_module = require("pmcsh.chase")
local errors = require("pmcsh.errors")
local D = require("pmcsh.survey.defaults")
local chase_C = require("pmcsh._chase")
local statistics = require("pmcsh.statistics")
local stream_module = require("pmcsh.stream")
local loops = require("pmcsh.loops")
local options = require("pmcsh.options")
local sys = require("pmcsh.sys")
local checks = require("pmcsh.survey.checks")

local M = {}

local function title(k) return (k:gsub("^%l", string.upper)) end

-------------------------------------------------------------------------------
-- The STREAM loops: one iteration is one element of the arrays
-------------------------------------------------------------------------------

local stream_engine = {unit = "loop iteration"}

function stream_engine.names(env)
  local out = {}
  for _, d in ipairs(stream_module.kernels()) do out[#out + 1] = d.name end
  return out
end

-- Whether every kernel of the header is a loop on its own data (no
-- workload of the survey touches pmcsh's arrays).
function M.own_data_only(hdr)
  local own = {}
  for _, l in ipairs(hdr.loops or {}) do own[l.name] = l.convention == "own" end
  for _, k in ipairs(hdr.kernels) do if not own[k] then return false end end
  return #hdr.kernels > 0
end

-- The arrays: one stream for the survey, or a new one per window when
-- fresh (first touch inside the window).  Warns about a small n once.
local function arrays(hdr, env)
  local shared, made = nil, 0
  -- loops on their own data only: the arrays are mapped, never touched or warned about
  local own = M.own_data_only(hdr)
  return function()
    if shared then return shared end
    local args = {n = hdr.n, threads = hdr.threads, pages = hdr.pages, quiet = (made > 0 or env.quiet or own) or nil}
    if hdr.fresh or own then args.touch = false end
    local s, err, errno = stream_module.new(args)
    if not s then return nil, err, errno end
    made = made + 1
    if not hdr.fresh then shared = s end
    return s
  end, function() if shared then shared:close(); shared = nil end end
end

-- The windows of a run, in pairs that differ only in the amount of the
-- same work (two-window estimate: statistics.two_window).  Warm arrays: one
-- call, each pair a window over each thread's head and one over all n
-- (stream's alternate).  Fresh arrays: each window on new arrays, one pass
-- then two, so first touch is the window's fixed cost (the intercept).
-- pairs = ceil(reps / 2): the same elements run as reps windows of n.
function M.pairs(reps) return (reps + 1) // 2 end
local function stream_pairs(k, hdr, get, group, reps)
  local pairs = M.pairs(reps)
  if not hdr.fresh then
    local s, err, errno = get()
    if not s then return nil, err, errno end
    return s:run(k, {reps = 2 * pairs, group = group, warmup = true, alternate = true})
  end
  local out = {times = {}, work = {}, per_rep = {}, tsc = {}, iterations = 0}
  for w = 1, 2 * pairs do
    local s, err, errno = get()
    if not s then return nil, err, errno end
    local r
    r, err, errno = s:run(k, {reps = 1, group = group, warmup = false, passes = 2 - w % 2})
    s:close()
    if not r then return nil, err, errno end
    out.times[w], out.work[w], out.per_rep[w] = r.times[1], r.work[1], r.per_rep and r.per_rep[1]
    out.tsc[w] = r.tsc and r.tsc[1]
    out.iterations = out.iterations + r.iterations
    for _, f in ipairs({"bytes_per_iter", "bytes_per_iter_wa", "isa", "tick", "warnings", "warning_kinds"}) do out[f] = r[f] end
  end
  out.counts = group and group:read()
  return out
end

-- The arrays the header asks for, checked by the engine before anything is
-- written (stream.check, the checks of stream.new, allocating nothing):
-- fail(option, why) for the first refused, n, then threads, then pages.
function stream_engine.validate(hdr, env, fail)
  local args = {}
  for _, k in ipairs({"n", "threads", "pages"}) do
    args[k] = hdr[k]
    local ok, good, msg = pcall(stream_module.check, args)
    if not ok then fail(k, good) elseif not good then fail(k, msg) end
  end
end

-- The run of a workload on the STREAM engine: kernel() gives the kernel
-- (a built-in's name, or a user's loop), bytes per iteration as its
-- descriptor says (nil: unknown).
local function stream_run(hdr, get, kernel, bytes)
  return function(group, reps)
    local k, kerr, kerrno = kernel()
    if not k then return nil, kerr, kerrno end
    local r, err, errno = stream_pairs(k, hdr, get, group, reps)
    if not r then return nil, err, errno end
    -- seconds per iteration, per pair: the time's own two-window slope
    local secs = statistics.two_window(r.work, r.times)
    local spi = M.seconds_per_iteration({sec_per_iter = secs, times = r.times, work = r.work})
    local ticks, secs_all = 0, 0
    for i, t in ipairs(r.tsc or {}) do ticks, secs_all = ticks + t, secs_all + r.times[i] end
    return {times = r.times, work = r.work, pairs = true, iterations = r.iterations, counts = r.counts,
      per_rep = r.per_rep, warnings = r.warnings, warning_kinds = r.warning_kinds, record = {
      mbps = bytes and spi and 1e-6 * bytes / spi or nil,
      bytes_per_iter = bytes, tsc = r.tsc, isa = r.isa, sec_per_iter = secs,
      tsc_hz = ticks > 0 and ticks / secs_all or nil,
      min = statistics.stats(secs).min, median = spi}}
  end
end

function stream_engine.workloads(hdr, env, names)
  local desc = {}
  for _, d in ipairs(stream_module.kernels()) do desc[d.name] = d end
  local get = env.arrays
  local out = {}
  for _, k in ipairs(names) do
    local bytes = desc[k] and desc[k].bytes
    out[#out + 1] = {
      name = k, title = title(k), unit = stream_engine.unit, what = "a STREAM loop", sized = true, bytes = bytes,
      run = stream_run(hdr, get, function() return k end, bytes),
      -- what the binary's own disassembly says of the loop (the instructions check)
      disasm = function(rec) return stream_module.disasm(k, {isa = rec.isa, quiet = true}) end,
      checks = {checks.first_touch, checks.clock, checks.instructions},
    }
  end
  return out, function() end
end

-------------------------------------------------------------------------------
-- The user's loops (pmcsh.loops): one iteration is one element of n
-------------------------------------------------------------------------------

local loop_engine = {unit = "loop iteration"}

function loop_engine.names(env)
  local out = {}
  for _, l in ipairs(env.loops or {}) do out[#out + 1] = l.name end
  return out
end

-- --loop PATH[:SYMBOL] (repeatable): each loop opened (built from source
-- when it is one) to check it, then closed; the header keeps where it is
-- and what it is.  With --loop and no -k the loops replace the built-ins.
function loop_engine.configure(opt, hdr, usage)
  if not opt.loops then return end
  if not opt.kernels then hdr.kernels = {} end
  local taken = {}
  for _, k in ipairs(hdr.kernels) do taken[k] = true end
  for _, k in ipairs(M.names({})) do taken[k] = taken[k] or "built-in" end   -- every engine's own names
  hdr.loops = {}
  for _, spec in ipairs(opt.loops) do
    local path, symbol = loops.split(spec)
    local l, err = loops.open(path, symbol, {cflags = opt.cflags})
    if not l then usage(string.format("--loop %s: %s", spec, err)) end
    local i = loops.info(l)
    l:close()
    if taken[i.name] then
      usage(string.format("--loop %s: a column named %s is already there (%s): name the loop in its descriptor " ..
        "(PMCSH_LOOP(f) = {.name = ...})", spec, i.name, taken[i.name] == true and "another loop" or "a built-in"))
    end
    taken[i.name] = true
    hdr.loops[#hdr.loops + 1] = {name = i.name, path = sys.realpath(path) or path, symbol = i.symbol,
      convention = i.convention, bytes = i.bytes, flops = i.flops, command = i.command, cflags = opt.cflags}
    hdr.kernels[#hdr.kernels + 1] = i.name
  end
end

-- A record read from a file: its windows at the header's n, as the built-ins'.
function loop_engine.check_record(hdr, rec) return stream_engine.check_record(hdr, rec) end


function loop_engine.workloads(hdr, env, names)
  local by = {}
  for _, l in ipairs(hdr.loops or {}) do by[l.name] = l end
  local get = env.arrays
  local opened = {}
  -- loaded at its first run, never to render a file: a report runs no code a file names
  local function loop_of(e)
    if not opened[e.name] then
      local l, err, errno = loops.open(e.path, e.symbol, {cflags = e.cflags})
      if not l then return nil, string.format("loop %s: %s", e.name, err), errno end
      opened[e.name] = l
    end
    return opened[e.name]
  end
  local out = {}
  for _, name in ipairs(names) do
    local e = by[name]
    out[#out + 1] = {
      name = name, title = name, unit = loop_engine.unit, sized = true, bytes = e.bytes, loop = e,
      what = string.format("the loop %s of %s", e.symbol, e.path),
      run = stream_run(hdr, get, function() return loop_of(e) end, e.bytes),
      disasm = function()
        local l, err = loop_of(e)
        if not l then return nil, err end
        return stream_module.disasm(l)
      end,
      -- first touch is of pmcsh's arrays: a loop on its own data touches its own
      checks = e.convention == "own" and {checks.clock, checks.instructions} or
        {checks.first_touch, checks.clock, checks.instructions},
    }
  end
  return out, function()
    for k, l in pairs(opened) do l:close(); opened[k] = nil end
  end
end

-- A run or baseline record read from a file: its windows must be the
-- header's n (the table shows that n for it).  Warm arrays: the long
-- windows are n iterations (a short one is each thread's head); fresh:
-- the one-pass windows are n (the two-pass ones 2n).  True, or nil, why.
function stream_engine.check_record(hdr, rec)
  if not rec.work or #rec.work == 0 then return true end
  local lo, hi = math.huge, -math.huge
  for _, w in ipairs(rec.work) do lo, hi = math.min(lo, w), math.max(hi, w) end
  local n = hdr.fresh and lo or hi
  if n ~= hdr.n then
    return nil, string.format("%s windows of %.0f iterations where the header's n is %s", rec.kernel, n,
      tostring(hdr.n))
  end
  return true
end

-------------------------------------------------------------------------------
-- The pointer chase: one iteration is one dependent load
-------------------------------------------------------------------------------

local chase_engine = {unit = "dependent load"}

function chase_engine.names() return {"chase"} end

-- "ORDER:SIZE[:STRIDE]", any part left out taking its default: random,
-- 256M, and the order's own stride (chase.default_stride: 64 for random,
-- 256 for page and tlb).  "random:256M", "64M", "page:64M:128".
-- Returns {order=, size=, stride=} or nil, message.
M.DEFAULT_CHASE = D.chase
function M.parse_chase(spec)
  local chase = chase_module
  local c = {order = M.DEFAULT_CHASE.order, size = M.DEFAULT_CHASE.size}
  if type(spec) == "table" then
    for k, v in pairs(spec) do c[k] = v end
    c.stride = c.stride or chase.default_stride(c.order)
    return c
  end
  local orders, names = {}, {}
  for _, o in ipairs(chase.orders()) do orders[o.name] = true; names[#names + 1] = o.name end
  table.sort(names)
  local parse_size = options.parse_size
  local sizes = 0
  for part in ((spec or "") .. ":"):gmatch("([^:]*):") do
    if orders[part] then c.order = part
    elseif spec ~= nil and spec ~= "" then
      local n = parse_size(part)
      if not n or n <= 0 then
        return nil, string.format("bad chase %q: %q is neither an order (%s) nor a size (256M, 4K)",
          spec, part, table.concat(names, ", "))
      end
      sizes = sizes + 1
      if sizes == 1 then c.size = n elseif sizes == 2 then c.stride = n
      else return nil, string.format("bad chase %q: ORDER:SIZE[:STRIDE] expected", spec) end
    end
  end
  c.stride = c.stride or chase.default_stride(c.order)
  -- the chain this asks for, checked as chase.chain would, before anything runs
  local ok, why = pcall(chase_C.check, {size = c.size, stride = c.stride, order = c.order})
  if not ok then
    return nil, string.format("bad chase %q: %s", spec, M.engine_message(why))
  end
  return c
end

function M.chase_text(c)
  local size = c.size % 2^20 == 0 and string.format("%d MiB", c.size // 2^20)
    or string.format("%d KiB", c.size // 1024)
  return string.format("%s order over %s, %d-byte elements", c.order, size, c.stride)
end

-- --chase alone adds the chase to the kernels; the header keeps the chain
-- and the sample length.
function chase_engine.configure(opt, hdr, usage)
  local has = false
  for _, k in ipairs(hdr.kernels) do has = has or k == "chase" end
  if opt.chase and not has then hdr.kernels[#hdr.kernels + 1] = "chase"; has = true end
  if not has then return end
  local c, err = M.parse_chase(opt.chase)
  if not c then usage(err) end
  hdr.chase, hdr.sample_ms = c, opt.sample_ms or D.sample_ms
end

-- A header read from a file: the chase's chain, which the note and the runs
-- read (pmcsh.results checks only that what is there has its shape).
function chase_engine.check(hdr)
  for _, k in ipairs(hdr.kernels) do
    if k == "chase" and not (hdr.chase and hdr.chase.stride) then
      return nil, "kernel chase without its chain (chase.size and chase.stride)"
    end
  end
  if hdr.chase then   -- the chain, checked as chase.chain checks it
    local c = hdr.chase
    local ok, why = pcall(chase_C.check, {size = c.size, stride = c.stride, order = c.order})
    if not ok then return nil, "chase: " .. M.engine_message(why) end
  end
  return true
end

function chase_engine.workloads(hdr, env)
  local chain
  local d = {
    name = "chase", title = "Chase", unit = chase_engine.unit, what = "a pointer chase",
    note = function(h)
      return string.format("chase: %s, %s pages, %d samples of ~%d ms per run; " ..
        "one iteration = one dependent load: value = count / loads of each sample (then the statistic over the " ..
        "samples); ns per iteration: the median sample", M.chase_text(h.chase),
        tostring(h.pages), h.reps, h.sample_ms or D.sample_ms)
    end,
    -- reps samples of sample_ms each over one chain, built (and touched)
    -- once; the group (if any) around each sample only
    run = function(group, reps)
      local chase = chase_module
      local c = hdr.chase
      if not chain then
        local err, errno
        chain, err, errno = chase.chain{size = c.size, order = c.order, stride = c.stride, pages = hdr.pages}
        if not chain then return nil, err, errno end
      end
      local r, err, errno = chase.latency{chain = chain, samples = reps, sample_ms = hdr.sample_ms, group = group}
      if not r then return nil, err, errno end
      local times = {}
      local per = r.loads_per_sample
      for i, ns in ipairs(r.samples) do times[i] = ns * per * 1e-9 end
      return {times = times, iterations = r.loads, counts = r.counts, per_rep = r.per_rep,
        record = {ns = r.ns, median_ns = r.median_ns, samples = r.samples, loads_per_sample = per,
          min = r.ns * per * 1e-9, median = r.median_ns * per * 1e-9}}
    end,
  }
  return {d}, function() if chain then chain:close(); chain = nil end end
end

-------------------------------------------------------------------------------
-- The engines, and the survey's view of them
-------------------------------------------------------------------------------

local ENGINES = {stream_engine, loop_engine, chase_engine}

-- env: {quiet=, loops=} (the header's loops, for the loop engine's names).
local function env_of(env, hdr)
  env = env or {}
  if hdr and env.loops == nil then env.loops = hdr.loops end
  return env
end

-- Every workload name, engine by engine.
function M.names(env)
  env = env_of(env)
  local out = {}
  for _, e in ipairs(ENGINES) do
    for _, n in ipairs(e.names(env)) do out[#out + 1] = n end
  end
  return out
end

-- The unit of one iteration of each kernel ("loop iteration",
-- "dependent load"; "iteration" for a name no engine here knows), without
-- making any workload.
function M.units(kernels, env)
  env = env_of(env)
  local out = {}
  for _, e in ipairs(ENGINES) do
    for _, n in ipairs(e.names(env)) do out[n] = e.unit end
  end
  for _, k in ipairs(kernels) do out[k] = out[k] or "iteration" end
  return out
end

-- Completes the header from the options (hdr.kernels set): each engine adds
-- what it needs, then every kernel must be one of theirs.
function M.configure(opt, hdr, usage, env)
  for _, e in ipairs(ENGINES) do
    if e.configure then e.configure(opt, hdr, usage) end
  end
  local names = M.names(env_of(env, hdr))
  local known = {}
  for _, n in ipairs(names) do known[n] = true end
  for _, k in ipairs(hdr.kernels) do
    if not known[k] then
      usage(string.format("unknown kernel %q (kernels: %s)", k, table.concat(names, ", ")))
    end
  end
end

-- An engine's refusal (an argument error's text, or its message) in words:
-- what is inside "bad argument #1 to 'f' (...)", for display only.
function M.engine_message(e)
  return errors.is(e) and e.message or tostring(e)
end

-- The engines' own checks of the options the header holds, before anything
-- is written: fail(option, why) for the first one refused.
function M.validate(hdr, env, fail)
  env = env_of(env, hdr)
  local names = {}
  for _, e in ipairs(ENGINES) do
    for _, n in ipairs(e.names(env)) do names[n] = e end
  end
  local seen = {}
  for _, k in ipairs(hdr.kernels) do
    local e = names[k]
    if e and e.validate and not seen[e] then
      seen[e] = true
      e.validate(hdr, env, function(opt, why) fail(opt, M.engine_message(why)) end)
    end
  end
end

-- Whether a header read from a file holds what each engine's kernels need:
-- true, or nil and what is missing.
function M.check(hdr)
  for _, e in ipairs(ENGINES) do
    local ok, why = (e.check or function() return true end)(hdr)
    if not ok then return nil, why end
  end
  return true
end

-- Whether a run or baseline record read from a file belongs to its
-- header: a kernel the header names, measured as it says (the engine's
-- check_record).  True, or nil, why.
function M.check_record(hdr, rec)
  local named = false
  for _, k in ipairs(hdr.kernels) do named = named or k == rec.kernel end
  if not named then return nil, string.format("a %s of kernel %s, which the header does not name", rec.type, rec.kernel) end
  for _, e in ipairs(ENGINES) do
    for _, n in ipairs(e.names(env_of(nil, hdr))) do
      if n == rec.kernel and e.check_record then return e.check_record(hdr, rec) end
    end
  end
  return true
end

-- The descriptors of hdr.kernels, in their order (by name too), and a
-- function that frees what their runs made.  env: {quiet=}.
function M.of(hdr, env)
  env = env_of(env, hdr)
  local close_arrays
  env.arrays, close_arrays = arrays(hdr, env)   -- one set of arrays for the built-ins and the loops
  local out, closers = {}, {close_arrays}
  for _, e in ipairs(ENGINES) do
    local mine, set = {}, {}
    for _, n in ipairs(e.names(env)) do set[n] = true end
    for _, k in ipairs(hdr.kernels) do if set[k] then mine[#mine + 1] = k end end
    if #mine > 0 then
      local ds, close = e.workloads(hdr, env, mine)
      for _, d in ipairs(ds) do out[d.name] = d end
      closers[#closers + 1] = close
    end
  end
  -- a name no engine here knows (a file from another build): its column only
  for i, k in ipairs(hdr.kernels) do
    out[k] = out[k] or {name = k, title = title(k), unit = "iteration", what = "this run"}
    out[i] = out[k]
  end
  return out, function() for _, c in ipairs(closers) do c() end end
end

-- Seconds per iteration of a run record: the median of its pairs' slopes
-- above 0 (a pair whose shorter window was preempted has none), else the
-- median of its windows' times over their iterations, the fixed cost
-- included (a chase's samples): the median either way, as the report says.
function M.seconds_per_iteration(rec)
  if not rec then return nil end
  local positive = {}
  for _, x in ipairs(rec.sec_per_iter or {}) do if x > 0 then positive[#positive + 1] = x end end
  if #positive > 0 then return statistics.stats(positive).median end
  local per = {}
  for i, t in ipairs(rec.times or {}) do
    local w = rec.work and rec.work[i] or (rec.iterations and rec.iterations / #rec.times)
    if w and w > 0 then per[#per + 1] = t / w end
  end
  return statistics.median(per)
end

return M
