-- pmcsh bench-stream: pmcsh's STREAM kernels against the textbook loops
-- (kernels/ref_stream.c), same arrays, threads and pinning, interleaved.
local loops = require("pmcsh.loops")
local machine = require("pmcsh.machine")
local numbers = require("pmcsh.numbers")
local statistics = require("pmcsh.statistics")
local paths = require("pmcsh.paths")
local recipe = require("pmcsh.recipe")
local sys = require("pmcsh.sys")
local text = require("pmcsh.text")
local results = require("pmcsh.results")
local stream = require("pmcsh.stream")

-- --kernels checked against the descriptors (default: every available one)
local function kernel_list(opts, desc)
  local kernels = {}
  if opts.kernels then
    for _, k in ipairs(opts.kernels) do
      if not desc[k] then error(recipe.usage("unknown kernel '" .. k .. "'")) end
      kernels[#kernels + 1] = k
    end
  else
    for _, d in ipairs(stream.kernels()) do
      if d.available then kernels[#kernels + 1] = d.name end
    end
  end
  return kernels
end

-- --threads as counts ("all": every cpu; default 1 and all), repeats dropped
local function thread_counts(opts, m)
  local threads = {}
  for _, t in ipairs(opts.threads or {"1", tostring(#m.cpus)}) do
    local v = t == "all" and #m.cpus or math.tointeger(tonumber(t))
    if not v or v < 1 or v > 1024 then error(recipe.usage("bad thread count '" .. t .. "'")) end
    if threads[#threads] ~= v then threads[#threads + 1] = v end
  end
  return threads
end

-- Kernel k of stream s against its reference refk, rounds interleaved:
-- {best, best_ref, paired (the median of the rounds' ratios), isa,
-- samples, ref_samples (MB/s of every repetition of every round)}, or
-- nil, message.
local function compare(s, k, refk, opts)
  local best, best_ref, paired, isa = 0, 0, {}, nil
  local samples = {[false] = {}, [true] = {}}
  for round = 1, opts.rounds do
    local this = {}
    -- alternate who goes first, so a drift in the machine hits both
    local order = round % 2 == 1 and {false, true} or {true, false}
    for _, ref in ipairs(order) do
      local r, rerr = s:run(ref and refk or k, {reps = opts.reps, reference = ref and not opts.self})
      if not r then
        return nil, rerr
      end
      if not ref then isa = r.isa end
      for i, t in ipairs(r.times) do table.insert(samples[ref], 1e-6 * r.bytes_per_iter * r.work[i] / t) end
      if ref then best_ref = math.max(best_ref, r.mbps) else best = math.max(best, r.mbps) end
      this[ref] = r.mbps
    end
    paired[#paired + 1] = this[false] / this[true]
  end
  -- the same round's two runs saw the same machine: the median of
  -- their ratios resists noise that best-of alone does not
  return {best = best, best_ref = best_ref, paired = statistics.stats(paired).median, isa = isa,
    samples = samples[false], ref_samples = samples[true]}
end

-- The plain C driver (kernels/loop_driver.c), built once: its path and,
-- where nothing is cached, the private folder to remove after; or nil, message.
local function driver()
  local exe, err, folder = loops.build(paths.root .. "/kernels/loop_driver.c", "-O2 -std=gnu11", "")
  if not exe then return nil, "cannot build the plain C driver: " .. err end
  return exe, folder
end

-- Seconds of each timed call of the driver over `object`'s `symbol`.
local function drive(exe, object, symbol, n, reps, cpu)
  local p = io.popen(string.format("%s %s %s %d %d %d 2>&1", text.shell(exe), text.shell(object), text.shell(symbol),
    n, reps, cpu))
  local out = p:read("a")
  local ok = p:close()
  local times = {}
  for l in out:gmatch("[^\n]+") do times[#times + 1] = tonumber(l) end
  if not ok or #times ~= reps then return nil, "the plain C driver failed: " .. text.inert(out) end
  return times
end

-- A loop of the user's, run by pmcsh and by the plain C driver on one
-- thread, rounds interleaved, and by pmcsh twice in each round (A/A: the
-- noise floor the ratio is read against).  Returns {mbps=, driver_mbps=,
-- ratio=, paired=, aa=} or nil, message.
local function compare_loop(spec, opts, n)
  local path, symbol = loops.split(spec)
  local l, err = loops.open(path, symbol, {cflags = opts.cflags, default_cflags = not opts["no-default-cflags"]})
  if not l then error(recipe.usage(string.format("--loop %s: %s", spec, err))) end
  local i = loops.info(l)
  if i.convention ~= "stream" or not i.bytes then
    error(recipe.usage(string.format("--loop %s: the plain driver runs STREAM's convention on pmcsh's arrays; " ..
      "this loop is on its own data", spec)))
  end
  local exe, folder = driver()
  if not exe then return nil, folder end
  local function done(...)
    if folder then os.remove(exe); os.remove(folder) end
    return ...
  end
  local s, serr = stream.new{n = n, threads = 1, pages = opts.pages, quiet = true}
  if not s then return done(nil, serr) end
  local cpu = s:parts()[1].cpu or 0
  local best, best_drv, paired, aa = 0, 0, {}, {}
  for round = 1, opts.rounds do
    local this = {}
    local order = round % 2 == 1 and {"a", "driver", "b"} or {"driver", "b", "a"}
    for _, who in ipairs(order) do
      if who == "driver" then
        local times, terr = drive(exe, sys.realpath(i.object or i.path) or i.path, i.symbol, n, opts.reps, cpu)
        if not times then s:close(); return done(nil, terr) end
        this.driver = 1e-6 * i.bytes * n / statistics.stats(times).min
        best_drv = math.max(best_drv, this.driver)
      else
        local r, rerr = s:run(l, {reps = opts.reps})
        if not r then s:close(); return done(nil, rerr) end
        this[who] = r.mbps
        best = math.max(best, r.mbps)
      end
    end
    paired[#paired + 1] = this.a / this.driver
    aa[#aa + 1] = this.a / this.b
  end
  s:close(); l:close()
  return done({name = i.name, mbps = best, driver_mbps = best_drv, ratio = best / best_drv,
    paired = statistics.stats(paired).median, aa = statistics.stats(aa).median})
end

-- ---- --stream PATH: the user's own STREAM binary against pmcsh ----------

local STREAM_ORDER = {"copy", "scale", "add", "triad"}

-- STREAM's report (stream.c 5.x): its array size, the threads it counted
-- (OpenMP builds), and each kernel's best rate; nil, why when the output is
-- not STREAM's or its solution did not validate.
local function stream_report(out)
  local n = math.tointeger(tonumber(out:match("Array size = (%d+)")))
  if not n then return nil, "its output holds no 'Array size = N': is it STREAM (stream.c)?" end
  local rates = {}
  for _, k in ipairs(STREAM_ORDER) do
    rates[k] = tonumber(out:match("\n" .. k:sub(1, 1):upper() .. k:sub(2) .. ":%s+([%d.]+)"))
    if not rates[k] then return nil, "its output holds no best rate for " .. k end
  end
  if not out:find("Solution Validates", 1, true) then
    return nil, "its solution did not validate: " .. text.inert((out:match("[^\n]*[Ff]ail[^\n]*") or "no 'Solution Validates'"))
  end
  return {n = n, threads = math.tointeger(tonumber(out:match("Number of Threads counted = (%d+)"))) or 1, mbps = rates}
end

-- One run of the STREAM binary on t threads (OMP_NUM_THREADS): its report, or nil, why.
local function run_stream(path, t)
  local p = io.popen(string.format("OMP_NUM_THREADS=%d %s 2>&1", t, text.shell(path)))
  local out = p:read("a")
  local ok, _, code = p:close()
  if not ok then return nil, string.format("%s exited %s: %s", path, tostring(code), text.inert(out:sub(-300))) end
  return stream_report(out)
end

-- pmcsh's side of a round, as STREAM runs: a fresh process, fresh arrays,
-- the four kernels in STREAM's order ten times, the best of the last nine.
local PMCSH_SIDE = [[
local n, t, pages = %d, %d, %q
local s = assert(stream.new{n = n, threads = t, pages = pages, quiet = true})
local best = {}
for iter = 1, 10 do
  for _, k in ipairs{"copy", "scale", "add", "triad", "copy_nt"} do
    local r = assert(s:run(k, {reps = 1}))
    if iter > 1 and (not best[k] or r.mbps > best[k]) then best[k] = r.mbps end
  end
end
for _, k in ipairs{"copy", "scale", "add", "triad", "copy_nt"} do io.write(k, " ", string.format("%%.17g", best[k]), "\n") end
]]

local function run_pmcsh(n, t, pages)
  local chunk = string.format(PMCSH_SIDE, n, t, pages)
  local p = io.popen(string.format("%s -e %s 2>&1", text.shell(paths.exe), text.shell(chunk)))
  local out = p:read("a")
  local ok = p:close()
  local rates = {}
  for k, v in out:gmatch("([%a_]+) ([%d.e+-]+)") do rates[k] = tonumber(v) end
  if not ok or not rates.triad then return nil, "pmcsh's side failed: " .. text.inert(out:sub(-300)) end
  return rates
end

-- The binary and pmcsh, rounds interleaved (pmcsh twice a round: the A/A
-- floor), on t threads: per kernel {mbps, stream_mbps, paired, aa, samples}.
local function compare_stream(path, n, t, opts)
  local per = {}
  local rows = {table.unpack(STREAM_ORDER)}
  if opts.memcpy then rows[#rows + 1] = "copy_nt" end
  for _, k in ipairs(rows) do per[k] = {pmcsh = {}, stream = {}, paired = {}, aa = {}} end
  for round = 1, opts.rounds do
    local this = {}
    local order = round % 2 == 1 and {"a", "stream", "b"} or {"stream", "b", "a"}
    for _, who in ipairs(order) do
      local rates, err
      if who == "stream" then
        local r
        r, err = run_stream(path, t)
        if r and r.threads ~= t then err = string.format("%s ran %d threads where %d were asked", path, r.threads, t) end
        rates = r and r.mbps
      else
        rates, err = run_pmcsh(n, t, opts.pages)
      end
      if not rates then return nil, err end
      this[who] = rates
    end
    for _, k in ipairs(rows) do
      local c, theirs = per[k], this.stream[k == "copy_nt" and "copy" or k]
      c.pmcsh[#c.pmcsh + 1] = this.a[k]
      c.stream[#c.stream + 1] = theirs
      c.paired[#c.paired + 1] = this.a[k] / theirs
      c.aa[#c.aa + 1] = this.a[k] / this.b[k]
    end
  end
  per.rows = rows
  for _, k in ipairs(rows) do
    local c = per[k]
    c.mbps, c.stream_mbps = statistics.stats(c.pmcsh).max, statistics.stats(c.stream).max
  end
  return per
end

-- Whether the binary's copy is a call to memcpy (GCC -O3 makes one of
-- STREAM's copy loop): then it streams with libc's non-temporal stores
-- past a size, and pmcsh's copy_nt is the like-for-like loop.
local function copy_is_memcpy(path)
  local p = io.popen("objdump -d --no-show-raw-insn " .. text.shell(path) .. " 2>/dev/null")
  local out = p:read("a")
  p:close()
  return out:find("call%s+%x+%s+<memcpy") ~= nil or out:find("jmp%s+%x+%s+<memcpy") ~= nil
end

local function bench_binary(opts, m)
  local path = opts.stream
  if opts.kernels or opts.self or opts.isa or opts.loop then
    error(recipe.usage("--stream compares STREAM's own binary with pmcsh's four kernels: without -k, --self, " ..
      "--isa or --loop"))
  end
  local st = sys.stat(path)
  if not st or st.type ~= "file" then
    error(recipe.usage(string.format("--stream %s: no such file (build STREAM: cc -O3 -march=native " ..
      "-DSTREAM_ARRAY_SIZE=80000000 stream.c -o stream)", text.inert(path))))
  end
  local first, err = run_stream(path, 1)
  if not first then return nil, "--stream " .. path .. ": " .. err end
  local n = first.n
  if opts.n and opts.n ~= n then
    error(recipe.usage(string.format("--n %d: the binary was built for %d elements (STREAM_ARRAY_SIZE); " ..
      "leave --n out", opts.n, n)))
  end
  local threads = thread_counts(opts, m)
  if first.threads == 1 and not path:find("omp") then
    -- a binary without OpenMP counts no threads: it runs one
    local probe = run_stream(path, 2)
    if probe and probe.threads == 1 then threads = {1} end
  end
  local memcpy = copy_is_memcpy(path)
  local cjson = opts.json and require("cjson")
  if opts.json then print(results.head("bench-stream"))
  else
    if memcpy then
      print("its copy is a call to memcpy (the compiler replaced STREAM's loop), whose large copies use " ..
        "non-temporal stores: copy_nt is pmcsh's like-for-like row")
    end
    print(string.format("%s (STREAM) against pmcsh at n=%d (%s per array), pages=%s, %d rounds interleaved: " ..
      "each side a fresh process running STREAM's order (copy, scale, add, triad) 10 times, best of the last 9; " ..
      "pmcsh twice a round (A/A)", text.inert(path), n, numbers.size(n * 8), opts.pages, opts.rounds))
  end
  local worst, worst_aa = math.huge, math.huge
  opts.memcpy = memcpy
  for _, t in ipairs(threads) do
    local per, cerr = compare_stream(path, n, t, opts)
    if not per then return nil, cerr end
    if not opts.json then
      print(string.format("threads=%d\n%-9s %12s %12s %7s %7s %7s", t, "kernel", "pmcsh MB/s", "STREAM MB/s", "ratio",
        "paired", "A/A"))
    end
    for _, k in ipairs(per.rows) do
      local c = per[k]
      local paired, aa = statistics.stats(c.paired).median, statistics.stats(c.aa).median
      -- a memcpy copy is read against copy_nt, not pmcsh's temporal copy
      if not (memcpy and k == "copy") then worst, worst_aa = math.min(worst, paired), math.min(worst_aa, aa) end
      if opts.json then
        print(cjson.encode(results.metric{name = k .. " MB/s", unit = "MB/s", value = c.mbps, stat = "best",
          better = "higher", samples = c.pmcsh, context = {kernel = k, threads = t, n = n, pages = opts.pages},
          stream_mbps = c.stream_mbps, ratio = c.mbps / c.stream_mbps, paired_ratio = paired, aa_ratio = aa,
          stream_samples = c.stream, rounds = opts.rounds, stream = path}))
      else
        print(string.format("%-9s %12.1f %12.1f %7.3f %7.3f %7.3f%s", k, c.mbps, c.stream_mbps, c.mbps / c.stream_mbps,
          paired, aa, k == "copy_nt" and "   against STREAM's copy (memcpy)" or memcpy and k == "copy" and
          "   (temporal stores against memcpy's non-temporal ones)" or ""))
      end
      io.stdout:flush()
    end
  end
  if not opts.json then
    print(string.format("lowest paired ratio against STREAM's binary %.3f (target >= 0.97), beside an A/A of %.3f: " ..
      "differences this size are this machine's noise", worst, worst_aa))
  end
  return 0
end

-- the closing line: the lowest ratios, read against the target (or, with --self, as noise)
local function verdict(opts, worst, worst_paired)
  if not opts.json and worst < math.huge and opts.self then
    print(string.format("A/A: lowest ratio of a kernel against itself: best-of %.3f, paired %.3f: "
      .. "differences this size are this machine's noise", worst, worst_paired))
  elseif not opts.json and worst < math.huge then
    print(string.format("lowest ratio over the plain kernels: best-of %.3f, paired %.3f (target >= 0.98)%s",
      worst, worst_paired, math.max(worst, worst_paired) < 0.98
        and ": below target, rerun with more --rounds to tell noise from a real gap" or ""))
  end
end

-- --loop: each loop of the user's by pmcsh and by the plain C driver, interleaved,
-- with the A/A floor beside it.
local function bench_loops(opts, m)
  if opts.kernels or opts.self or opts.isa then
    error(recipe.usage("--loop compares a loop of yours with the plain C driver: without -k, --self or --isa"))
  end
  local t = thread_counts(opts, m)
  if opts.threads and (#t ~= 1 or t[1] ~= 1) then
    error(recipe.usage("--loop runs one thread (the plain driver's): -t 1 or none"))
  end
  local n = opts.n or m.default_n
  local cjson = opts.json and require("cjson")
  if opts.json then print(results.head("bench-stream"))
  else
    print(string.format("n=%d (%s per array), 1 thread, pages=%s, %d reps x %d rounds, interleaved with a " ..
      "plain C driver (kernels/loop_driver.c) over the same object; A/A: pmcsh against itself in the same rounds",
      n, numbers.size(n * 8), opts.pages, opts.reps, opts.rounds))
    print(string.format("%-12s %12s %12s %7s %7s %7s", "loop", "pmcsh MB/s", "plain MB/s", "ratio", "paired", "A/A"))
  end
  local worst, worst_aa = math.huge, math.huge
  for _, spec in ipairs(opts.loop) do
    local c, err = compare_loop(spec, opts, n)
    if not c then return nil, err end
    worst, worst_aa = math.min(worst, c.paired), math.min(worst_aa, c.aa)
    if opts.json then
      print(cjson.encode(results.metric{name = c.name .. " MB/s", unit = "MB/s", value = c.mbps, stat = "best",
        better = "higher", context = {loop = c.name, threads = 1, n = n, pages = opts.pages},
        driver_mbps = c.driver_mbps, ratio = c.ratio, paired_ratio = c.paired, aa_ratio = c.aa,
        reps = opts.reps, rounds = opts.rounds}))
    else
      print(string.format("%-12s %12.1f %12.1f %7.3f %7.3f %7.3f", c.name, c.mbps, c.driver_mbps, c.ratio, c.paired,
        c.aa))
    end
  end
  if not opts.json then
    print(string.format("lowest paired ratio against the plain driver %.3f (target >= 0.98), beside an A/A of " ..
      "%.3f: differences this size are this machine's noise", worst, worst_aa))
  end
  return 0
end

return {
  description = "pmcsh STREAM kernels vs the textbook reference loops: bandwidth and ratio",
  help = [[
For each thread count and kernel, runs pmcsh's kernel and the plain C
reference loop (McCalpin's textbook STREAM loop, -O3 -march=native,
same arrays, threads and pinning) alternately, `rounds` times each, every run
being `reps` timed repetitions after a warm-up.  Prints the best bandwidth
(STREAM MB/s = 1e6 bytes/s, from the minimum time) of each, their ratio, and
"paired": the median over rounds of the ratio of the two runs of one round;
the *_nt kernels are compared with the plain reference loop they replace.
The target is a ratio >= 0.98 on every kernel.  --self runs pmcsh's own
kernel on both sides (an A/A comparison): its ratios are this machine's
noise floor, against which the real comparison is read.

  pmcsh bench-stream                         1 thread and all threads
  pmcsh bench-stream -t 1 -k triad,copy --rounds 9
  pmcsh bench-stream --json > bench.jsonl
  pmcsh bench-stream --stream ./stream      STREAM's own binary against pmcsh, at its size
With --stream PATH the other side is STREAM's own binary as the user built it
(cc -O3 -march=native -DSTREAM_ARRAY_SIZE=80000000 [-fopenmp] stream.c):
each round runs it and pmcsh's engine (twice: the A/A floor) as fresh
processes, pmcsh running STREAM's order and counting STREAM's best of nine;
an OpenMP build is run at each --threads count (OMP_NUM_THREADS).]],
  options = {
    {name = "n", type = "size", min = 1, help = "elements per array (default: STREAM's rule, 4x the LLCs)"},
    {name = "reps", short = "r", type = "int", default = 3, min = 1, max = 1000000, help = "timed repetitions per run"},
    {name = "rounds", type = "int", min = 1, max = 1000000,
     help = "interleaved runs of each loop (best of rounds x reps; default 20, 5 with --stream)"},
    {name = "threads", short = "t", type = "list", help = "thread counts or all (default: 1 and all cpus)"},
    {name = "kernels", short = "k", type = "list", help = "kernels (default: every available one)"},
    {name = "pages", type = "string", choices = {"4k", "thp", "2m", "1g"},
     help = "page policy (default 4k; with --stream the pages STREAM's arrays get: thp where THP is always)"},
    {name = "self", type = "flag", help = "A/A: pmcsh's kernel on both sides, to see the noise floor"},
    {name = "isa", type = "string", help = "the variant of pmcsh's loops (default: the best this cpu runs)"},
    {name = "json", type = "flag",
     help = "JSON lines: the fingerprint, a metric record per kernel and thread count (its best MB/s; the MB/s of " ..
       "every repetition: samples, ref_samples)"},
    {name = "loop", type = "list",
     help = "your own loop, FILE[:SYMBOL] (STREAM's convention; SYMBOL default: loop): pmcsh against a plain C " ..
       "driver, one thread"},
    loops.OPTIONS.cflags, loops.OPTIONS.no_default,
    {name = "stream", type = "string",
     help = "STREAM's own binary (stream.c, any build): it against pmcsh's kernels, each a fresh process, interleaved"},
  },
  run = function(opts)
    local m = stream.machine()
    opts.rounds = opts.rounds or (opts.stream and 5 or 20)
    if opts.stream then
      -- STREAM's static arrays get huge pages only where THP is "always"
      -- (no madvise in it): pmcsh's side gets the same, unless asked
      opts.pages = opts.pages or (machine.thp_mode() == "always" and "thp" or "4k")
      return bench_binary(opts, m)
    end
    opts.pages = opts.pages or "4k"
    if (opts.cflags or opts["no-default-cflags"]) and not opts.loop then
      error(recipe.usage("--cflags and --no-default-cflags say how --loop's source is built: give --loop"))
    end
    if opts.loop then return bench_loops(opts, m) end
    local desc = {}
    for _, d in ipairs(stream.kernels()) do desc[d.name] = d end
    local kernels = kernel_list(opts, desc)
    local threads = thread_counts(opts, m)

    local cjson = opts.json and require("cjson")
    if opts.json then print(results.head("bench-stream")) end
    local n = opts.n or m.default_n
    local worst, worst_paired = math.huge, math.huge
    for _, t in ipairs(threads) do
      local s, err = stream.new{n = n, threads = t, pages = opts.pages, isa = opts.isa, rule = opts.n == nil}
      if not s then
        return nil, err
      end
      local pg = s:pages()
      if not opts.json then
        print(string.format("n=%d (%s per array), threads=%d, pages=%s (%s pages), %d reps x %d rounds, interleaved; " ..
          "pmcsh's loops: the %s variant, reference: -march=native",
          n, numbers.size(n * 8), t, opts.pages, numbers.size(pg.page_size), opts.reps, opts.rounds,
          opts.isa or m.isa))
        print(string.format("%-9s %12s %12s %7s %7s   %s", "kernel", "pmcsh MB/s", "ref MB/s", "ratio", "paired", "reference loop"))
      end
      for _, k in ipairs(kernels) do
        local d = desc[k]
        local refk = opts.self and k or d.plain or k
        local c, rerr = compare(s, k, refk, opts)
        if not c then return nil, rerr end
        local ratio = c.best / c.best_ref
        -- the nt kernels are a different loop: their ratio is a comparison, not the target
        if not d.nt or opts.self then worst, worst_paired = math.min(worst, ratio), math.min(worst_paired, c.paired) end
        if opts.json then
          print(cjson.encode(results.metric{name = k .. " MB/s", unit = "MB/s", value = c.best, stat = "best",
            better = "higher", samples = c.samples,
            context = {kernel = k, threads = t, n = n, pages = opts.pages, page_size = pg.page_size, isa = c.isa},
            ref_mbps = c.best_ref, ratio = ratio, paired_ratio = c.paired,
            reference = opts.self and ("stream_" .. k) or ("ref_stream_" .. refk),
            reps = opts.reps, rounds = opts.rounds, ref_samples = c.ref_samples}))
        else
          print(string.format("%-9s %12.1f %12.1f %7.3f %7.3f   %s%s", k, c.best, c.best_ref, ratio, c.paired,
            opts.self and "stream_" .. k .. " itself (A/A)" or "ref_stream_" .. refk,
            d.nt and not opts.self and " (temporal stores)" or ""))
        end
        io.stdout:flush()
      end
      s:close()
      if not opts.json then print() end
    end
    verdict(opts, worst, worst_paired)
    return 0
  end,
}
