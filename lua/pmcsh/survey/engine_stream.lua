-- The survey's workloads on the STREAM engine: the built-in loops (one
-- iteration is one element of the arrays) and the user's own loops
-- (pmcsh.loops; one iteration is one element of n), two engines over one
-- set of arrays.  Each engine gives pmcsh.survey.workloads its names, its
-- columns (plain data a renderer reads) and its workloads (the columns
-- with the runs that measure them).
local cell = require("pmcsh.survey.cell")
local checks = require("pmcsh.survey.checks")
local errors = require("pmcsh.errors")
local figures = require("pmcsh.survey.figures")
local loops = require("pmcsh.loops")
local statistics = require("pmcsh.statistics")
local stream_module = require("pmcsh.stream")
local sys = require("pmcsh.sys")
local text = require("pmcsh.text")

local M = {}

local function title(k) return (k:gsub("^%l", string.upper)) end

local stream_engine = {unit = "loop iteration"}
M.stream = stream_engine

function stream_engine.names()
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


-- Windows short enough that most are undisturbed on a busy node (a window
-- of a few hundred microseconds between two of the scheduler's slices),
-- over arrays of STREAM's size: a window runs a slice of each thread's part,
-- the next slice on, so its data comes from memory (engine: stream:run's
-- slice).  Elements per thread in a short window (4 MiB of each array; 512
-- KiB fresh: 128 first-touch faults of each array), and how many times the
-- windows of one call pass over the arrays (that call's validation, a pass
-- that reads them all, is then a small part of it), fewer where the run's
-- share of the budget would not hold them at the pace measured so far.
M.SLICE, M.SLICE_FRESH, M.ROUNDS = 512 * 1024, 64 * 1024, 16
M.MAX_CALL_PAIRS = 1024   -- a call's pairs at most, however large n

-- The slice of a survey of n elements over threads (a header's: fixed when
-- it is planned): the default, or less where the parts are short (a round
-- of at least 2 pairs warm, 3 slices a pair; 4 pairs fresh, 2 a pair), a
-- multiple of 512 elements (4 KiB) where it can be.
function M.slice(n, threads, fresh)
  local part = n // threads - 8   -- the shortest part (boundaries on 8 elements)
  local most = part // (fresh and 8 or 6)
  local s = math.min(fresh and M.SLICE_FRESH or M.SLICE, most)
  if s >= 512 then s = s // 512 * 512 end
  return math.max(1, s)
end

-- Appends a call's windows to out (the run so far).
local function append(out, r)
  for _, f in ipairs({"times", "work", "tsc", "per_rep"}) do
    if r[f] then
      out[f] = out[f] or {}
      for _, v in ipairs(r[f]) do out[f][#out[f] + 1] = v end
    end
  end
  out.iterations = (out.iterations or 0) + r.iterations
  for _, f in ipairs({"bytes_per_iter", "bytes_per_iter_wa", "isa", "tick", "warnings", "warning_kinds"}) do
    out[f] = r[f]
  end
end

-- The windows of a run, in pairs that differ only in the amount of the
-- same work (two-window estimate: statistics.two_window), made in calls
-- (batches) while more(out) says so: warm arrays, one call over ROUNDS
-- passes of slices, each pair a slice and two; fresh arrays, one call per
-- new arrays (untouched: made without a fault), each pair a pass and two
-- over untouched slices, so first touch is the window's fixed cost (the
-- intercept).  At least cell.pairs(reps) pairs a call.  deadline (sys.now's
-- clock, or nil): when the run's share of the budget ends.
local per_round   -- seconds a round of slices took in this process's last call
local function stream_pairs(k, hdr, get, group, reps, more, deadline)
  local out, slice = {times = {}, work = {}, iterations = 0}, hdr.slice or M.slice(hdr.n, hdr.threads, hdr.fresh)
  local want = cell.pairs(reps)
  repeat
    local s, err, errno = get()
    if not s then return nil, err, errno end
    local r
    if hdr.fresh then
      local fit = (hdr.n // hdr.threads - 8) // slice // 2
      r, err, errno = s:run(k, {reps = 2 * math.min(M.MAX_CALL_PAIRS, math.max(1, fit)), group = group, warmup = false, alternate = "passes",
        slice = slice})
      s:close()
    else
      local round = math.max(1, (hdr.n // hdr.threads - 8) // (3 * slice))
      local rounds = M.ROUNDS
      if per_round and deadline then
        rounds = math.max(1, math.min(rounds, (deadline - sys.now()) // per_round))
      end
      local pairs = math.min(math.max(M.MAX_CALL_PAIRS, want), math.max(want, rounds * round))
      local t0 = sys.now()
      r, err, errno = s:run(k, {reps = 2 * pairs, group = group, warmup = false,
        alternate = true, slice = slice})
      per_round = (sys.now() - t0) / math.max(1, pairs / round)
    end
    if not r then return nil, err, errno end
    append(out, r)
  until not (more and more(out))
  out.counts = group and group:read()
  return out
end

-- The arrays: one stream for the survey, or a new one per call when
-- fresh (untouched, first touch inside the windows).  Warns about a small
-- n once.  Returns the getter and the function that frees them.
function M.arrays(hdr, env)
  local shared, made = nil, 0
  -- loops on their own data only: the arrays are mapped, never touched or warned about
  local own = M.own_data_only(hdr)
  return function()
    if shared then return shared end
    -- the size line said n (plan.size_line): no word on STREAM's rule
    local args = {n = hdr.n, threads = hdr.threads, pages = hdr.pages, rule = false,
      quiet = (made > 0 or env.quiet or own) or nil}
    if hdr.fresh or own then args.touch = false end
    local s, err, errno = stream_module.new(args)
    if not s then return nil, err, errno end
    made = made + 1
    if not hdr.fresh then shared = s end
    return s
  end, function() if shared then shared:close(); shared = nil end end
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
  return function(group, reps, more, deadline)
    local k, kerr, kerrno = kernel()
    if not k then return nil, kerr, kerrno end
    local r, err, errno = stream_pairs(k, hdr, get, group, reps, more, deadline)
    if not r then return nil, err, errno end
    -- seconds per iteration, per pair: the time's own two-window slope
    local secs = statistics.two_window(r.work, r.times)
    local spi = figures.median_seconds({sec_per_iter = secs, times = r.times, work = r.work})
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

function stream_engine.columns(hdr, names)
  local desc = {}
  for _, d in ipairs(stream_module.kernels()) do desc[d.name] = d end
  local out = {}
  for _, k in ipairs(names) do
    out[#out + 1] = {name = k, title = title(k), unit = stream_engine.unit, what = "a STREAM loop", sized = true,
      bytes = desc[k] and desc[k].bytes}
  end
  return out
end

function stream_engine.workloads(hdr, env, cols)
  for _, w in ipairs(cols) do
    local k = w.name
    w.run = stream_run(hdr, env.arrays, function() return k end, w.bytes)
    -- what the binary's own disassembly says of the loop (the instructions check)
    w.disasm = function(rec) return stream_module.disasm(k, {isa = rec.isa, quiet = true}) end
    w.checks = {checks.first_touch, checks.clock, checks.instructions}
  end
  return function() end
end

-- A run or baseline record read from a file: its windows must be the
-- header's.  Slices (the header says its slice): the short windows are a
-- slice of each thread's part.  An older file's: warm arrays, the long
-- windows are n iterations (a short one is each thread's head); fresh, the
-- one-pass windows are n (the two-pass ones 2n).  True, or nil, why.
function stream_engine.check_record(hdr, rec)
  if not rec.work or #rec.work == 0 then return true end
  local lo, hi = math.huge, -math.huge
  for _, w in ipairs(rec.work) do lo, hi = math.min(lo, w), math.max(hi, w) end
  if hdr.slice then
    local want = hdr.slice * (hdr.threads or 1)
    if lo ~= want or hi ~= 2 * want then
      return nil, string.format("%s windows of %.0f to %.0f iterations where the header's slice makes %d and %d",
        rec.kernel, lo, hi, want, 2 * want)
    end
    return true
  end
  local n = hdr.fresh and lo or hi
  if n ~= hdr.n then
    return nil, string.format("%s windows of %.0f iterations where the header's n is %s", rec.kernel, n,
      tostring(hdr.n))
  end
  return true
end

-------------------------------------------------------------------------------
-- The user's loops (pmcsh.loops): one iteration is one element of n
-------------------------------------------------------------------------------

local loop_engine = {unit = "loop iteration"}
M.loop = loop_engine

function loop_engine.names(env)
  local out = {}
  for _, l in ipairs(env.loops or {}) do out[#out + 1] = l.name end
  return out
end

-- What a loop that fails validation is told to do.
local VALIDATION_HINT = "every element must hold what the loop leaves in one, STREAM's convention (a stencil over " ..
  "interior points does not): give its descriptor a .reference, the plain loop whose one element says it " ..
  "(pmcsh/loop.h), or put the loop on its own data (f(state, begin, end) with f_init_part), which is not validated"

-- Whether a loop of STREAM's convention validates: run once on small fresh
-- arrays of the survey's threads before anything is measured.  nil, or
-- the failed validation's message (a stream that cannot be made here is
-- the survey's own checks' to refuse).
local function fails_validation(l, threads)
  if l:info().convention ~= "stream" then return nil end
  local made, s = pcall(stream_module.new, {n = 1 << 16, threads = threads, quiet = true})
  if not (made and s) then return nil end
  local ok, e = pcall(s.measure, s, l, {reps = 1, warmup = false})
  s:close()
  if ok then return nil end
  if errors.is(e, "validation") then return errors.message(e) end
  error(e, 0)
end

-- --loop PATH[:SYMBOL] (repeatable): each loop opened (built from source
-- when it is one, --cflags added to the default flags) to check it, then
-- closed; the header keeps where it is, what it is and the whole flags it
-- was built with.  A loop that fails validation is left out with a line
-- saying what to do.  With --loop and no -k the loops replace the
-- built-ins.  builtin: every engine's own names, which a loop may not take.
function loop_engine.configure(opt, hdr, usage, builtin)
  if not opt.loops then return end
  if not opt.kernels then hdr.kernels = {} end
  local taken = {}
  for _, k in ipairs(hdr.kernels) do taken[k] = true end
  for _, k in ipairs(builtin) do taken[k] = taken[k] or "built-in" end
  hdr.loops = {}
  local cflags = (opt.cflags or opt.default_cflags == false) and loops.cflags(opt.cflags, opt.default_cflags) or nil
  local left = {}
  for _, spec in ipairs(opt.loops) do
    local path, symbol = loops.split(spec)
    local l, err = loops.open(path, symbol, {cflags = cflags, default_cflags = cflags == nil})
    if not l then usage(string.format("--loop %s: %s", spec, err)) end
    local i = loops.info(l)
    local failed = fails_validation(l, opt.threads)
    l:close()
    if failed then
      left[#left + 1] = string.format("--loop %s left out: %s: %s", spec, failed, VALIDATION_HINT)
    else
      if taken[i.name] then
        usage(string.format("--loop %s: a column named %s is already there (%s): name the loop in its " ..
          "descriptor (PMCSH_LOOP(f) = {.name = ...})", spec, i.name, taken[i.name] == true and "another loop" or
          "a built-in"))
      end
      taken[i.name] = true
      hdr.loops[#hdr.loops + 1] = {name = i.name, path = sys.realpath(path) or path, symbol = i.symbol,
        convention = i.convention, bytes = i.bytes, flops = i.flops, command = i.command, cflags = cflags}
      hdr.kernels[#hdr.kernels + 1] = i.name
    end
  end
  if #hdr.kernels == 0 and #left > 0 then usage(left[1] .. " (nothing else to measure)") end
  for _, line in ipairs(opt.quiet and {} or left) do io.stderr:write("pmcsh survey: ", line, "\n") end
end

-- The loops of a header read back to resume: nothing from a file is a
-- command.  A loop the user names again (--loop, matched by symbol, and by
-- file where two share one) is built from that file; --cflags (added to
-- the defaults, as for a new survey) replaces every loop's flags; else a
-- loop's flags must be ones a file may give (loops.file_flags) and its
-- file the user's own (sys.code_file).  Says on stderr what it is about
-- to build.  Returns true, or nil and why.
function loop_engine.resume(hdr, opt, quiet)
  if hdr.loops ~= nil and type(hdr.loops) ~= "table" then return nil, "loops is not a list" end
  local named, by_symbol = {}, {}
  for _, l in ipairs(hdr.loops or {}) do
    if type(l) ~= "table" or type(l.name) ~= "string" or type(l.path) ~= "string" or type(l.symbol) ~= "string" or
        (l.cflags ~= nil and type(l.cflags) ~= "string") then
      return nil, "a loop that is not {name=, path=, symbol=, cflags=} of strings"
    end
    by_symbol[l.symbol] = (by_symbol[l.symbol] or 0) + 1
  end
  for _, spec in ipairs(opt.loops or {}) do
    local path, symbol = loops.split(spec)
    named[#named + 1] = {path = sys.realpath(path) or path, symbol = symbol or "loop", spec = spec}
  end
  for _, l in ipairs(hdr.loops or {}) do
    local mine
    for _, n in ipairs(named) do
      if n.symbol == l.symbol and (by_symbol[l.symbol] == 1 or n.path == l.path) then mine = n end
    end
    if mine then mine.used, l.path = true, mine.path end
    local named_flags = opt.cflags or opt.default_cflags == false
    if named_flags then l.cflags = loops.cflags(opt.cflags, opt.default_cflags) end
    local ok, why = true, nil
    if not named_flags and l.cflags then ok, why = loops.file_flags(l.cflags) end
    if ok and not mine then
      ok, why = sys.code_file(l.path)
      why = why and text.inert(why)
    end
    if not ok then
      return nil, string.format("loop %s: %s; pmcsh builds and loads nothing a file names unless you name it " ..
        "again: --resume FILE --loop PATH:%s [--cflags FLAGS]", text.inert(l.name), why, text.inert(l.symbol))
    end
    if not quiet then
      io.stderr:write(string.format("pmcsh survey: --resume %s the loop %s from %s%s\n", l.path:match("%.[csS]$") and
        "builds" or "loads", text.inert(l.symbol), text.inert(l.path), l.path:match("%.[csS]$") and
        (" with " .. text.inert(l.cflags or loops.CFLAGS)) or ""))
    end
  end
  for _, n in ipairs(named) do
    if not n.used then return nil, string.format("--loop %s: the survey has no loop %s to take it", n.spec, n.symbol) end
  end
  return true
end

-- A record read from a file: its windows at the header's n, as the built-ins'.
loop_engine.check_record = stream_engine.check_record

function loop_engine.columns(hdr, names)
  local by = {}
  for _, l in ipairs(hdr.loops or {}) do by[l.name] = l end
  local out = {}
  for _, name in ipairs(names) do
    local e = by[name]
    out[#out + 1] = {name = name, title = name, unit = loop_engine.unit, sized = true, bytes = e.bytes,
      what = string.format("the loop %s of %s", e.symbol, e.path)}
  end
  return out
end

function loop_engine.workloads(hdr, env, cols)
  local by = {}
  for _, l in ipairs(hdr.loops or {}) do by[l.name] = l end
  local opened = {}
  -- loaded at its first run, never to render a file: a report runs no code a file names
  local function loop_of(e)
    if not opened[e.name] then
      -- the header's cflags are the whole flags (nil: the defaults)
      local l, err, errno = loops.open(e.path, e.symbol, {cflags = e.cflags, default_cflags = e.cflags == nil})
      if not l then return nil, string.format("loop %s: %s", e.name, err), errno end
      opened[e.name] = l
    end
    return opened[e.name]
  end
  for _, w in ipairs(cols) do
    local e = by[w.name]
    local run = stream_run(hdr, env.arrays, function() return loop_of(e) end, e.bytes)
    -- a validation failed mid-survey (its arrays in another state) says what to do
    w.run = function(...)
      local r = table.pack(pcall(run, ...))
      if r[1] then return table.unpack(r, 2, r.n) end
      if errors.is(r[2], "validation") then r[2].message = r[2].message .. ": " .. VALIDATION_HINT end
      error(r[2], 0)
    end
    w.disasm = function()
      local l, err = loop_of(e)
      if not l then return nil, err end
      return stream_module.disasm(l)
    end
    -- first touch is of pmcsh's arrays: a loop on its own data touches its own
    w.checks = e.convention == "own" and {checks.clock, checks.instructions} or
      {checks.first_touch, checks.clock, checks.instructions}
  end
  return function()
    for k, l in pairs(opened) do l:close(); opened[k] = nil end
  end
end

return M
