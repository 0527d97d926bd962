-- pmcsh.stream: the STREAM kernels (McCalpin) as pmcsh measures them:
-- threaded, validated, with a counter group opened only around each timed
-- repetition's loop.  The engine is C (kernels/stream*.c via pmcsh._stream);
-- this module adds the friendly parts: warnings, documentation, disasm
-- (its reading of machine code is pmcsh.stream.disasm).
local C = require("pmcsh._stream")
local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")
local complete = require("pmcsh.complete")
local machine = require("pmcsh.machine")
local statistics = require("pmcsh.statistics")
local format = require("pmcsh.format")
local loops = require("pmcsh.loops")
local disasm = require("pmcsh.stream.disasm")

local M = {}

local function warn(msg)
  io.stderr:write("pmcsh.stream: warning: ", msg, "\n")
end

local function descriptor(name)
  for _, d in ipairs(C.kernels()) do
    if d.name == name then return d end
  end
  return nil
end

M.kernels = doc(function() return setmetatable(C.kernels(), format.kind("pmcsh.records")) end, "stream.kernels", [[
stream.kernels() -> list of descriptors, default (triad) first:
  {name=, description=, symbol=, ref_symbol=, bytes=, bytes_wa=, loads=,
   stores=, flops=, reads={"b","c"}, writes={"a"}, nt=, plain=, reduction=,
   available=}
bytes is per iteration (one element of each array) in the STREAM convention
(copy 16, scale 16, add 24, triad 24); bytes_wa adds the write-allocate read
of every temporally stored line.  The *_nt kernels use non-temporal stores
(available=false when this CPU lacks them).  Reports compute from these.]])

M.loop = loops.open

M.machine = doc(function()
  local m, llc = C.engine(), machine.llc()
  m.llc_bytes, m.llc_count = llc.bytes, llc.count
  m.cpus, m.tick, m.tsc, m.mem_available = machine.cpus(), machine.clock_tick(), machine.tsc(), machine.mem_available()
  return m
end, "stream.machine", [[
stream.machine() -> {llc_bytes=, llc_count=, default_n=, cpus={...}, tick=,
tsc=, nt_isa=, mem_available=, scalar=}: what the engine sees: the sum of
the last-level caches (each shared cache once), STREAM's default n (each
array 4x that), the cpus this process may run on, the observed
CLOCK_MONOTONIC granularity (s) and whether the TSC is constant: the
engine's own facts (stream loops, default n) with pmcsh.machine's.]])

-- The loops' variant: isa=, else PMCSH_ISA, else the best this cpu runs.
local function default_isa()
  local env = os.getenv("PMCSH_ISA")
  return env ~= "" and env or nil
end

M.ARRAYS = 3                  -- STREAM's a, b and c
M.MEM_FRACTION = 1 / 8        -- of the memory available, at most, by default

M.default_n = doc(function(rule_n, avail)
  errors.check("default_n", 1, rule_n, "integer")
  errors.check("default_n", 2, avail, "number?")
  if avail and rule_n * 8 * M.ARRAYS > M.MEM_FRACTION * avail then
    return math.max(1 << 20, math.floor(M.MEM_FRACTION * avail / (8 * M.ARRAYS)) // 4096 * 4096), true
  end
  return rule_n, false
end, "stream.default_n", [[
stream.default_n(rule_n, avail) -> n, capped: the default n of stream.new
and the survey, the one rule: STREAM's (rule_n: stream.machine().default_n,
each array 4x the last-level caches), capped so the three arrays take at
most stream.MEM_FRACTION (1/8) of avail bytes (machine.mem_available(); nil:
no cap), n then a multiple of 4096 and at least 2^20; capped says so.]])

-- n for options without one: the rule capped by this machine's memory.
local function with_n(opts)
  if opts.n ~= nil then return opts end
  local o = {}
  for k, v in pairs(opts) do o[k] = v end
  o.n = M.default_n(C.engine().default_n, machine.mem_available())
  return o
end

local rule_said = {}   -- each n below STREAM's rule is said once a process
M.new = doc(errors.facade("new", function(opts)
  opts = opts or {}
  if type(opts) ~= "table" then
    errors.argument("new", 1, "table of options expected, got " .. type(opts) .. "", 1)
  end
  -- the options are checked once, by the engine (core/lstream.c); rule is the facade's
  local copt = {}
  for k, v in pairs(opts) do copt[k] = v end
  copt.rule = nil
  if copt.isa == nil then copt.isa = default_isa() end
  local s, msg, errno = C.new(with_n(copt))
  if not s then return nil, msg, errno end
  if not opts.quiet then
    local m = M.machine()
    if opts.n and math.type(opts.n) and opts.n < m.default_n and opts.rule ~= false and not rule_said[opts.n] then
      rule_said[opts.n] = true
      warn(string.format("n=%d breaks STREAM's rule: each array (%.1f MiB) should be at least 4x "
        .. "the last-level caches (%.1f MiB in %d), n >= %d; the arrays partly stay in cache",
        opts.n, opts.n * 8 / 2^20, m.llc_bytes / 2^20, m.llc_count, m.default_n))
    end
    if s:info().touched then
      local pg = s:pages()
      local policy = pg.policy
      if policy == "thp" and pg.thp_fraction < 0.5 then
        warn(string.format("pages=\"thp\" asked, but only %.0f%% of the arrays are in transparent huge "
          .. "pages (see /sys/kernel/mm/transparent_hugepage/enabled)", pg.thp_fraction * 100))
      elseif policy == "4k" and pg.thp_fraction > 0 then
        warn(string.format("pages=\"4k\" asked, but %.0f%% of the arrays are in huge pages",
          pg.thp_fraction * 100))
      end
    end
  end
  return s
end), "stream.new", [[
stream.new{n=, threads=, cpus=, pages=, offset=, touch=, pin=, isa=, quiet=, rule=}
  -> stream, or nil, message, errno
Three arrays a, b, c of n doubles (default: STREAM's rule, each array 4x the
sum of the last-level caches, capped at 1/8 of the memory available:
stream.default_n; a smaller n given is warned about, once a process, unless
rule=false: a recipe whose user chose the n).  threads workers
(default 1, as the survey's; at most every cpu this process may run on, or
as many as cpus= names), each pinned to its cpu (cpus= names them), stream a static part; the calling thread runs part 0.
pages: "4k" (default, as the survey and the chases: MADV_NOHUGEPAGE), "thp"
(MADV_HUGEPAGE), "2m" or "1g"
(hugetlbfs pages, which must be reserved).  offset: bytes added to each array
start (STREAM's OFFSET, multiple of 8).  touch=false leaves the arrays
untouched (zero) until the first run, so its first repetition takes the
first-touch page faults.  isa: the variant of the loops ("avx512", "avx2",
"sse2" on x86-64, "generic" elsewhere; default PMCSH_ISA, else the best this
cpu runs: stream.machine().variants lists them); every result says which ran
(isa, symbol).  Methods: run, parts, pages, info, poke, peek, reset,
validate, close.]])

M.check = doc(errors.facade("check", function(opts, ...)
  return C.check(type(opts) == "table" and with_n(opts) or opts, ...)
end), "stream.check", [[
stream.check{n=, threads=, cpus=, pages=, offset=, isa=} -> true, or nil, message, errno
The options stream.new would take, checked as stream.new checks them (a bad
one raises, naming it), and the memory they ask for (huge pages reserved,
memory available) looked for, allocating nothing: a survey checks its
options so before it writes anything.]])

-- Every stream shares C.methods.  The engine's call is s:measure (raw
-- times, ticks and counts); s:run is the facade's, adding the statistics,
-- computed once, here and by statistics.stats.
local methods = C.methods
local stats = statistics.stats
local two_window = statistics.two_window

local RESULT = format.kind("pmcsh.stream_result")

-- The statistics of a raw result r (in place): min, median, max, avg of the
-- times, STREAM's MB/s from the descriptor's bytes and the best time, the
-- TSC rate, and a warning when the best time is too few clock ticks.
-- With alternate windows the time of an iteration is the median of the
-- pairs' slopes (statistics.two_window), without the window's own cost (the
-- smallest slope is noise's, not the best run's: a disturbed pair's may be
-- 0 or less); otherwise the best window's time over its iterations.  A
-- result without mbps says why in mbps_why.
local function summarise(r)
  local st = stats(r.times)
  r.min, r.median, r.max, r.avg = st.min, st.median, st.max, st.mean
  local per_iter, best = {}, nil
  if r.alternate then
    per_iter = two_window(r.work, r.times)
    best, r.mbps_stat = stats(per_iter).median, "median slope"
    if not best then r.mbps_why = "alternate windows with no pair: reps=2 or more"
    elseif best <= 0 then r.mbps_why = "the pairs' median time slope is not positive: noise outweighed the " ..
      "difference in work (longer windows, or more reps)" end
  else
    for i, t in ipairs(r.times) do per_iter[i] = t / r.work[i] end
    best, r.mbps_stat = stats(per_iter).min, "best"
    if best and best <= 0 then r.mbps_why = "a window took no measurable time: use a larger n" end
  end
  if not r.bytes_per_iter then r.mbps_why = r.mbps_why or "the loop does not say its bytes per iteration" end
  r.mbps = best and best > 0 and r.bytes_per_iter and 1e-6 * r.bytes_per_iter / best or nil
  r.mbps_wa = best and best > 0 and r.bytes_per_iter_wa and 1e-6 * r.bytes_per_iter_wa / best or nil
  if r.tsc then
    local ticks = 0
    for _, t in ipairs(r.tsc) do ticks = ticks + t end
    r.tsc_hz = ticks / (st.mean * st.n)
  end
  if st.min < 20 * r.tick then
    r.warnings = {string.format("the shortest repetition (%.14g us) is under 20 clock ticks (%.14g us each): "
      .. "use a larger n", st.min * 1e6, r.tick * 1e6)}
    r.warning_kinds = {"few_ticks"}
  end
  return setmetatable(r, RESULT)   -- names the kind and prints it (pmcsh.format); the table is plain
end

-- A bad argument is raised at run's caller, numbered as the caller wrote
-- it: s:run(kernel, opts), arguments #1 and #2 (the engine counts s).
local measure = methods.measure
-- A user's loop's instruction set, read once from its own code (its
-- disassembly's isa), never pmcsh's variant: nil where nothing reads it.
local loop_isa = setmetatable({}, {__mode = "k"})
local function isa_of(l)
  if loop_isa[l] == nil then
    local d = M.disasm(l)
    loop_isa[l] = d and d.isa or false
  end
  return loop_isa[l] or nil
end

methods.run = errors.facade("run", function(s, kernel, opts)
  local r, msg, errno = measure(s, kernel, opts)
  if not r then return nil, msg, errno end
  if r.loop then r.isa = isa_of(kernel) end
  return summarise(r)
end, -1)

doc(methods.run, "stream:run", [[
s:run(kernel, {reps=10, warmup=true, group=g, reference=false, passes=1, alternate=false, slice=0})
  -> result, or nil, message, errno
Runs warm-up then reps timed repetitions of kernel, all in one C call; the
pmc group g (optional) is enabled only around each timed repetition's loop,
on the calling thread and (by copies) on every worker.  The result:
  times (s, per timed rep), min, median, max, avg, mbps (STREAM: bytes from
  the descriptor * n / min time, MB = 1e6 bytes; alternate: over the
  median slope; mbps_stat says which, mbps_why why there is none), mbps_wa (with
  write-allocate), bytes_per_iter, bytes_per_iter_wa, work (iterations in
  each window), iterations (their sum),
  tsc (ticks per rep) and tsc_hz where the TSC is constant, tick (clock
  granularity), sum (a reduction's sum), counts and per_rep (with a group),
  validation, and warnings (a list of sentences, e.g. when the best time is
  under 20 clock ticks) with warning_kinds, each one's kind in the same
  order (few_ticks), for a caller to tell them apart.
The arrays are then validated as STREAM does (replaying the kernels run,
average relative error <= 1e-13); a failure raises an error.  validation =
{a=, b=, c= (each array's average relative error), bound=, expected={a=,
b=, c=}, sum=, sum_bound= (after a reduction)}.  Ctrl-C stops the engine
between repetitions and raises lua's error "interrupted!" (as the chases
do): pcall catches it, and uncaught it ends a script with status 1.  (Only
inside a coroutine, which the interrupt does not reach until it yields,
does run return nil, "interrupted", EINTR.)
reference=true runs the textbook loop instead (bench-stream's yardstick).
passes=P runs the loop P times in each window.  alternate=true makes the
windows pairs that differ only in the elements counted (odd windows each
thread's first half or so, the rest run right after the window; even
windows all n): statistics.two_window(r.work, counts) then gives exact counts
per iteration and the window's own cost, and mbps comes from the pairs'
time differences.  slice=S makes each window run S elements of each
thread's part (2S in the odd windows of alternate=true), the next window
the next S on, so short windows over large arrays still read memory; the
call ends by running the rest of the pass.  alternate="passes" with slice
runs the odd windows twice over S, on untouched arrays (stream.new{touch=
false}) only: first touch is in every window.  s:measure is the engine's call beneath.]])
doc(methods.measure, "stream:measure", [[
s:measure(kernel, opts) -> raw result, or nil, message, errno: the engine's
call beneath s:run, with its options, without the statistics (times, work,
tsc, counts, per_rep as measured; no min, median, mbps).]])
doc(methods.parts, "stream:parts", [[
s:parts() -> {{first=, count=, cpu=, tid=}, ...}: the static partition of the
n elements over the threads (first is 1-based).]])
doc(methods.pages, "stream:pages", [[
s:pages() -> {policy=, page_size=, thp_fraction=, a={kernel_page=, rss=,
thp=, hugetlb=}, b=, c=}: what /proc/self/smaps says backs the arrays (bytes).]])
doc(methods.poke, "stream:poke", [[
s:poke(array, i, value): overwrite element i (1-based) of array "a", "b" or
"c"; the next validation catches it.  s:peek(array, i) reads one.]])
doc(methods.peek, "stream:peek", [[
s:peek(array, i) -> the value of element i (1-based) of array "a", "b" or "c".]])
doc(methods.reset, "stream:reset", [[
s:reset(): re-initialises a=1, b=2, c=0, each part from the thread that owns it.]])
doc(methods.info, "stream:info", [[
s:info() -> {n=, threads=, pages=, offset=, touched=, array_bytes=,
expected={a=, b=, c=}}: the stream's shape and the value every element of
each array must hold now (what validation checks).]])
doc(methods.close, "stream:close", [[
s:close(): joins the worker threads and unmaps the arrays (also done by
__gc and __close); using the stream afterwards raises an error.]])
doc(methods.validate, "stream:validate", [[
s:validate() -> {a=, b=, c=, bound=, expected={...}} (as a result's
validation), or raises: checks the arrays against the values the kernels run
so far must have left (then re-initialises them on failure).]])

-- disasm: what the compiler made of a kernel's loop (pmcsh.stream.disasm reads it)

-- A loop of the user's as disasm reads it: its symbol in its object, and
-- what says its elements per trip (its descriptor, else its arrays).
local function loop_descriptor(l)
  local i = loops.info(l)
  return {kernel = i.name, symbol = i.symbol, exe = i.object or i.path, loads = i.loads or 0, stores = i.stores or 0,
    elements_per_trip = i.elements_per_trip}
end

M.disasm = doc(function(kernel, opts)
  opts = opts or {}
  kernel = kernel or C.kernels()[1].name
  local d, symbol, exe
  if type(kernel) == "userdata" and loops.is(kernel) then
    d = loop_descriptor(kernel)
    symbol, exe, kernel = d.symbol, opts.exe or d.exe, d.kernel
  elseif type(kernel) == "table" then   -- a symbol of an object not loaded here (another architecture's)
    errors.check("disasm", 1, kernel.symbol, "string")
    errors.check("disasm", 1, kernel.exe, "string")
    d = {loads = 0, stores = 0, elements_per_trip = kernel.elements_per_trip}
    symbol, exe, kernel = kernel.symbol, kernel.exe, kernel.symbol
  else
    d = descriptor(kernel)
    if not d then
      local names = {}
      for _, k in ipairs(C.kernels()) do names[#names + 1] = k.name end
      errors.argument("disasm", 1, string.format("unknown kernel '%s' (kernels: %s)", tostring(kernel), table.concat(names, ", ")), 1)
    end
    local isa = opts.isa or default_isa() or C.engine().isa
    symbol, exe = opts.reference and d.ref_symbol or (d.symbol .. "_" .. isa), opts.exe
  end
  return disasm.read{kernel = kernel, symbol = symbol, exe = exe, d = d, objdump = opts.objdump}
end, "stream.disasm", [[
stream.disasm(kernel|loop, {reference=false, isa=, exe=, objdump=}) -> {kernel=, symbol=, isa=,
  instructions=, elements=, per_element=, from=, to=, lines={...}, loops={...}}
Disassembles pmcsh's own symbol for the kernel (objdump -d), finds its loops
by their backward jumps, and returns the inner loop (the one moving the most
elements per pass, from..to) with the instruction count per iteration and
per element (accounting for unrolling and vector width); it prints nothing
itself: print(stream.disasm("triad")) or the REPL shows the listing, the
counts and how many other loops there are.  What the compiler made of the
loop decides what the counters count per element.  reference=true shows the
textbook loop bench-stream compares against.  Where objdump cannot run, the
figures recorded beside the binary where it was built (EXE.loops: the arm64
lab's cross build writes one), with recorded=true and no lines.  A loop of
your own (stream.loop) is read in its shared object: its elements per trip
from its descriptor, else its arrays; an own-data loop that says neither
has elements=nil (one loop found) or no answer (several: which is the
loop?).  isa is what the inner loop's own code uses: the widest vector
register of its packed instructions ("zmm", "ymm", "xmm"; "sve", "neon"),
else "scalar"; a loop's result (s:run) carries it as its isa.]])

-- REPL: s:run("tr<TAB> and stream.disasm("co<TAB> complete kernel names;
-- the option keys of stream.new{th<TAB> and s:run("copy", {re<TAB> the
-- engine's own lists.
complete.options(M.new, C.new_options)
complete.options(methods.run, C.run_options)
complete.options(methods.measure, C.run_options)
do
  complete.register(function(line, word)
    if not (complete.in_string(line) and (line:match("run%s*%(%s*[\"'][%w_]*$")
        or line:match("disasm%s*%(%s*[\"'][%w_]*$"))) then
      return nil
    end
    local out = {}
    for _, d in ipairs(C.kernels()) do
      if d.name:sub(1, #word) == word then out[#out + 1] = d.name end
    end
    return out
  end)
end

doc(M, "stream", [[
STREAM memory-bandwidth kernels (copy, scale, add, triad, sum, fill and
non-temporal variants), threaded, validated, counters inside the window.
  local s = stream.new{n=2^24, threads=2}
  local r = s:run("triad", {reps=10, group=pmc.group{"page-faults:u"}})
  print(r.mbps, r.counts["page-faults:u"].value)
  stream.disasm("triad")
Your own loop (pmcsh/loop.h) runs the same way: s:run(stream.loop("k.c", "f"), {...}).]])

return M
